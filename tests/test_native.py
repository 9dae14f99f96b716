"""Native feel: remote windows behave like local ones where people notice
first. Titles that say where a window runs; windows that draw their own
title bars (GTK) moved and resized by the local desktop, through rcomp as
directly."""
import os
import socket
import struct
import time

import pytest

from rig import (BTN_LEFT, BTN_RIGHT, DND_CLIENT, INPUT_CLIENT, MAGENTA, RCOMP_VIEW, Failure,
                 InputMethod, VirtualKeyboard, VirtualPointer, hello, message, read_messages,
                 records, wait_for)

GTK_APP_ID = "gtk3-demo"


def test_titles_begin_with_the_remote_host_only_with_title_host(desktop):
    # rcomp-run on a host of its own name: the name comes from the remote side.
    server = desktop.start_server([INPUT_CLIENT, "a remote title"], host="far-away-box")
    desktop.start_viewer(server, ["--title-host"], name="with-host")
    wait_for("the title with the host", lambda: desktop.window(
        title="far-away-box: a remote title"))
    plain = desktop.start_server([INPUT_CLIENT, "another title"], name="plain-run",
                                 host="far-away-box")
    desktop.start_viewer(plain, name="without-host")
    wait_for("the plain title", lambda: desktop.window(title="another title"))
    assert desktop.window(title="far-away-box: another title") is None


def gtk_demo(desktop, way):
    """gtk3-demo (a GtkHeaderBar, no xdg-decoration: it draws its own title
    bar and shadow), through rcomp or straight on the desktop; its window
    once it has settled, and a pointer."""
    if way == "through rcomp":
        server = desktop.start_server(["env", "NO_AT_BRIDGE=1", "gtk3-demo"])
        desktop.start_viewer(server)
    else:
        desktop.start("gtk3-demo", ["gtk3-demo"],
                      dict(desktop.local_env, GDK_BACKEND="wayland", NO_AT_BRIDGE="1"))
    wait_for("gtk3-demo's window", lambda: desktop.window(app_id=GTK_APP_ID), timeout=30)
    pointer = VirtualPointer(desktop)
    time.sleep(1.5)  # GTK's first frames, and the pointer device settling
    return desktop.window(app_id=GTK_APP_ID), pointer


def drag(pointer, x, y, dx, dy, steps=20):
    """Presses at x, y, moves by dx, dy in steps as a hand would, releases."""
    pointer.send("move %d %d" % (x, y))
    time.sleep(0.3)
    pointer.send("press %d" % BTN_LEFT)
    time.sleep(0.2)
    for i in range(1, steps + 1):
        pointer.send("move %d %d" % (x + dx * i // steps, y + dy * i // steps))
        time.sleep(0.03)
    time.sleep(0.3)
    pointer.send("release %d" % BTN_LEFT)
    time.sleep(0.5)


WAYS = ["through rcomp", "directly"]


@pytest.mark.parametrize("way", WAYS)
def test_dragging_a_gtk_header_bar_moves_the_local_window(desktop, way):
    window, pointer = gtk_demo(desktop, way)
    before = window["rect"]
    drag(pointer, before["x"] + before["width"] // 2 - 100, before["y"] + 20, 100, 60)
    after = wait_for("the window to move", lambda: desktop.window(app_id=GTK_APP_ID)["rect"]
                     if desktop.window(app_id=GTK_APP_ID)["rect"] != before else None)
    moved = (after["x"] - before["x"], after["y"] - before["y"])
    # GTK starts the move once the pointer passed its drag threshold: the
    # window follows the rest of the drag.
    assert 75 <= moved[0] <= 100 and 40 <= moved[1] <= 60, moved
    assert (after["width"], after["height"]) == (before["width"], before["height"])


# Where a window that draws its own decorations is resized from: the band
# just outside its edges. sway gives the pointer only to what lies inside a
# window's geometry, so this runs on a desktop that gives the whole surface
# as GNOME does: rcomp-run itself, watched through its protocol by a viewer
# by hand that presses there and reads what the desktop is asked to do.
RESIZE_POINTS = {
    "left": (lambda w, h: (-4, h // 2), 4),
    "bottom right": (lambda w, h: (w + 4, h + 4), 10),
}


def desk_and_hand(desktop, app):
    """rcomp-run as the desktop, hosting app; a hand-made viewer attached to
    it; returns the socket and the app's window id and size there."""
    desk = desktop.start_server(app, name="desk")
    hand = socket.socket(socket.AF_UNIX)
    hand.connect(desk.socket)
    hand.sendall(hello(minor=1))
    found = {}

    def mapped():
        for msg_type, body in read_messages(hand, 0.5):
            if msg_type == 0x0203:  # window_new
                window, _, width, height = struct.unpack_from("<IIii", body)
                found["window"] = (window, width, height)
        return found.get("window")

    window, width, height = wait_for("the window on the desktop", mapped, timeout=30)
    time.sleep(1)  # the app's first frames
    read_messages(hand, 0.5)
    return hand, window, width, height


def gtk_on_desk(desktop, way):
    """The command that puts gtk3-demo on the desk: directly, or through
    rcomp (a viewer of its own rcomp-run)."""
    if way == "through rcomp":
        gtk = desktop.start_server(["env", "NO_AT_BRIDGE=1", "gtk3-demo"], name="gtk-run")
        return [RCOMP_VIEW, "--socket", gtk.socket]
    return ["env", "NO_AT_BRIDGE=1", "gtk3-demo"]


def press_and_read_grab(hand, window, x, y, mark=7, timeout=15, button=BTN_LEFT):
    hand.sendall(records(
        message(0x0106, struct.pack("<Iii", window, x * 256, y * 256)) +  # pointer_motion
        message(0x010a) +  # pointer_frame
        message(0x0108, struct.pack("<II", button, 1)) +  # pointer_button
        message(0x0118, struct.pack("<II", window, mark)) +  # input_mark
        message(0x010a)))
    grabs = []

    def asked():
        grabs.extend(struct.unpack_from("<IIIIii", body) for msg_type, body
                     in read_messages(hand, 0.5) if msg_type == 0x0214)  # window_grab
        return grabs
    return wait_for("the desktop to be asked", asked, timeout=timeout)[0]


@pytest.mark.parametrize("where", list(RESIZE_POINTS))
@pytest.mark.parametrize("way", WAYS)
def test_a_press_just_outside_a_gtk_windows_edge_asks_the_desktop_to_resize_from_it(
        desktop, way, where):
    hand, window, width, height = desk_and_hand(desktop, gtk_on_desk(desktop, way))
    point, edges = RESIZE_POINTS[where]
    grab = press_and_read_grab(hand, window, *point(width, height))
    assert grab[:4] == (window, 2, 7, edges)  # resize, for our press, from that edge


@pytest.mark.parametrize("way", WAYS)
def test_a_right_click_on_a_gtk_header_bar_asks_the_desktop_for_its_window_menu(desktop, way):
    hand, window, width, height = desk_and_hand(desktop, gtk_on_desk(desktop, way))
    grab = press_and_read_grab(hand, window, width // 2, 20, button=BTN_RIGHT)
    # The window menu, for our press, where the click was.
    assert grab[:3] == (window, 3, 7) and abs(grab[4] - width // 2) <= 2 and \
        abs(grab[5] - 20) <= 2, grab


@pytest.mark.parametrize("way", WAYS)
def test_a_tiled_gtk_window_has_no_resize_edge_outside_it(desktop, way):
    """Tiled (configure states bits 4-7), a window has neighbours, not a
    border: a press just outside it asks for nothing."""
    hand, window, width, height = desk_and_hand(desktop, gtk_on_desk(desktop, way))
    hand.sendall(records(message(0x0104, struct.pack("<IiiI", window, width, height, 0xf0))))
    time.sleep(1.5)  # the configure's way to the app and back
    read_messages(hand, 0.5)
    with pytest.raises(Failure):
        press_and_read_grab(hand, window, -4, height // 2, timeout=3)


@pytest.mark.parametrize("scale", [1, 2])
def test_touch_on_the_viewers_window_reaches_the_app_where_it_touched(desktop, scale):
    """sway 1.7 has no touch device to drive, so the viewer runs on a desktop
    that has one: rcomp-run, touched through its protocol by a hand-made
    viewer. Down, motion and up on the viewer's window, then a point that is
    cancelled, reach input-client behind a real rcomp-view at the same
    window coordinates, on its subsurface and on its main surface, each with
    its frame; at scale 2 as at 1."""
    app = desktop.start_server([INPUT_CLIENT], name="app-run")
    hand, window, _, _ = desk_and_hand(desktop, [RCOMP_VIEW, "--socket", app.socket])
    if scale != 1:
        hand.sendall(records(message(0x0110, struct.pack("<IIi", window, 60000, scale))))
        wait_for("the app to draw at scale %d" % scale,
                 lambda: "window 1: scale %d" % scale in desktop.read_log("app-run"))

    def fx(v):
        return int(v * 256)

    hand.sendall(records(
        message(0x0113, struct.pack("<Iiii", window, 5, fx(150.5), fx(150.25))) +
        message(0x0116) +
        message(0x0115, struct.pack("<iii", 5, fx(160), fx(170))) + message(0x0116) +
        message(0x0114, struct.pack("<i", 5)) + message(0x0116) +
        message(0x0113, struct.pack("<Iiii", window, 6, fx(20), fx(30))) + message(0x0116) +
        message(0x0117)))
    expected = ["touch-down 5 sub 50.50 50.25", "touch-frame", "touch-motion 5 60.00 70.00",
                "touch-frame", "touch-up 5", "touch-frame", "touch-down 6 main 20.00 30.00",
                "touch-frame", "touch-cancel"]

    def got():
        read_messages(hand, 0.1)  # keep the desktop's frames flowing
        return [line for line in desktop.read_log("app-run").splitlines()
                if line.startswith("touch-")]

    wait_for("the touch events in the app %s" % expected, lambda: got() == expected)


def app_lines(desktop, name, prefix):
    return [line for line in desktop.read_log(name).splitlines() if line.startswith(prefix)]


def test_an_input_method_on_the_desktop_composes_into_a_remote_app(desktop):
    """The desktop's input method (im-client, input-method-v2 on sway) sees
    the remote app's surrounding text and content type; its preedit and
    deletion reach the app's text-input-v3, each as one change, and the
    text that ends a composition reaches the app typed."""
    im = InputMethod(desktop)
    VirtualKeyboard(desktop)  # keyboard focus needs a keyboard on the seat
    server = desktop.start_server([INPUT_CLIENT])
    desktop.start_viewer(server)
    wait_for("the window", lambda: desktop.window(app_id="rcomp-input-test"))
    desktop.swaymsg("[app_id=rcomp-input-test] focus")
    wait_for("the input method to be activated for the remote app", lambda: [
        "activate", "surrounding hello world|5|5", "cause 1", "content 2 6", "done"]
        == desktop.read_log("im").splitlines()[-5:])
    im.send("preedit 0 6 日本", "done")
    wait_for("the preedit in the app", lambda: app_lines(desktop, "rcomp-run", "ti-")[-2:]
             == ["ti-preedit 日本|0|6", "ti-done"])
    # The text that ends a composition is typed, once the preedit is gone
    # (foot drops a text input's commit that races its own).
    im.send("commit 日本語", "done")
    wait_for("the committed text in the app", lambda: app_lines(
        desktop, "rcomp-run", "keysym U")[-3:] == ["keysym U65E5", "keysym U672C", "keysym U8A9E"])
    assert app_lines(desktop, "rcomp-run", "ti-")[-1:] == ["ti-done"]
    assert not app_lines(desktop, "rcomp-run", "ti-commit")
    im.send("delete 5 0", "preedit 3 3 かな", "done")
    wait_for("a deletion and a new preedit as one change", lambda: app_lines(
        desktop, "rcomp-run", "ti-")[-3:] == ["ti-delete 5 0", "ti-preedit かな|3|3", "ti-done"])


def test_foot_takes_text_from_the_desktops_input_method(desktop):
    """A real app with text-input-v3: what the input method commits is
    typed into foot, whose shell (its terminal raw, so no key need end the
    line) writes it to a file."""
    im = InputMethod(desktop)
    VirtualKeyboard(desktop)  # keyboard focus needs a keyboard on the seat
    out = os.path.join(desktop.tmp, "typed")
    server = desktop.start_server(["foot", "--app-id", "foot-im", "sh", "-c",
                                   "stty raw -echo; exec cat > %s" % out])
    desktop.start_viewer(server)
    wait_for("foot's window", lambda: desktop.window(app_id="foot-im"), timeout=30)
    desktop.swaymsg("[app_id=foot-im] focus")
    wait_for("the input method to be activated for foot",
             lambda: "activate" in desktop.read_log("im").splitlines())
    # foot drops a change that answers an older state of its text input
    # (done names its commits): let its first commits settle, as a person
    # would before typing.
    seen = []

    def settled():
        seen.append(desktop.read_log("im"))
        return len(seen) > 5 and seen[-1] == seen[-6]
    wait_for("foot's text input to settle", settled, interval=0.1)
    # Only a commit: foot answers a preedit with a commit of its own, and a
    # second change sent before that commit arrives names an older state,
    # which foot drops (with any desktop); preedits are input-client's test.
    im.send("commit rcomp 日本語", "done")
    wait_for("the text in foot's shell", lambda: os.path.exists(out) and
             open(out, encoding="utf-8").read() == "rcomp 日本語")


def test_the_caret_rectangle_reaches_the_desktop_in_window_coordinates(desktop):
    """sway 1.7 gives input methods no caret rectangle, so the viewer runs on
    rcomp-run, read through its protocol: the remote app's caret (30,40 2x16
    on its surface) is where the viewer's text input says, and what comes
    back the way a local input method's text would reaches the app."""
    app = desktop.start_server([INPUT_CLIENT], name="app-run")
    hand, window, _, _ = desk_and_hand(desktop, [RCOMP_VIEW, "--socket", app.socket])
    hand.sendall(records(message(0x010b, struct.pack("<II", window, 0))))  # keyboard_enter
    states = []

    def enabled():
        states.extend(body for t, body in read_messages(hand, 0.3) if t == 0x0216)
        return [s for s in states if struct.unpack_from("<II", s)[1] & 1]
    state = wait_for("the viewer's text input on the desktop", enabled)[-1]
    fields = struct.unpack_from("<IIIIIIIiiii", state)
    assert fields[0] == window and fields[2:4] == (5, 5) and fields[5:7] == (2, 6)
    assert fields[7:11] == (30, 40, 2, 16), fields
    assert state[44:] == b"hello world"
    preedit, commit = "候補".encode(), "変換".encode()
    hand.sendall(records(message(0x011c, struct.pack(
        "<IIiiIIHH", window, 1, 0, len(preedit), 0, 0, len(preedit), len(commit)) +
        preedit + commit)))
    wait_for("the text in the app", lambda: app_lines(desktop, "app-run", "ti-")[-3:] == [
        "ti-commit 変換", "ti-preedit 候補|0|6", "ti-done"])


def fnv1a(data):
    h = 2166136261
    for b in data:
        h = ((h ^ b) * 16777619) & 0xffffffff
    return h


DND_BYTES = bytes((i * 31 + 7) & 0xff for i in range(300000))
DND_APART = ('for_window [app_id="dnd-local"] move position 0 0\n'
             'for_window [app_id="dnd-remote"] move position 600 0\n')


def drag_between(desktop, source, target, source_log, target_log, ask=False):
    """Drags with the pointer from the middle of window source to the
    middle of window target (app ids) as a hand would, and drops. The drop
    waits for the target to hear the action agreed (with ask, ask over the
    target, and move once the target picked it at the drop)."""
    pointer = desktop.dnd_pointer
    src = wait_for("the source window", lambda: desktop.window(app_id=source), timeout=30)
    dst = wait_for("the target window", lambda: desktop.window(app_id=target), timeout=30)
    sx, sy = src["rect"]["x"] + 150, src["rect"]["y"] + 100
    tx, ty = dst["rect"]["x"] + 150, dst["rect"]["y"] + 100
    pointer.send("move %d %d" % (sx - 5, sy))
    time.sleep(0.3)
    pointer.send("move %d %d" % (sx, sy))
    wait_for("the pointer over the source",
             lambda: "pointer-enter" in desktop.read_log(source_log))
    pointer.send("press %d" % BTN_LEFT)
    wait_for("the drag to start", lambda: "source-drag-started" in desktop.read_log(source_log))
    for i in range(1, 21):
        pointer.send("move %d %d" % (sx + (tx - sx) * i // 20, sy + (ty - sy) * i // 20))
        time.sleep(0.02)
    hovering = "target-action 4" if ask else "target-action 2"
    wait_for("the target to take the drag as " + ("an ask" if ask else "a move"),
             lambda: hovering in desktop.read_log(target_log))
    # The drag's icon from the pointer (past the cursor), over the target.
    wait_for("the drag icon at the pointer", lambda: desktop.pixel(tx + 24, ty + 24) == MAGENTA
             and desktop.pixel(tx - 10, ty - 10) != MAGENTA, interval=0.2)
    pointer.send("release %d" % BTN_LEFT)
    if ask:
        wait_for("the target to ask", lambda: "target-asked" in desktop.read_log(target_log))
    expected = "target-dropped %d %d action 2" % (len(DND_BYTES), fnv1a(DND_BYTES))
    wait_for("every byte in the target", lambda: expected in desktop.read_log(target_log))
    wait_for("the source to hear it finished",
             lambda: "source-finished" in desktop.read_log(source_log))
    log = desktop.read_log(source_log)
    assert "source-drop-performed" in log and "source-action 2" in log
    assert "source-cancelled" not in log


@pytest.mark.parametrize("way", ["local to remote", "remote to local", "remote to remote"])
@pytest.mark.desktop(extra=DND_APART)
def test_a_drag_drops_with_all_its_data_and_the_action_both_agree_on(desktop, way):
    """An app drags 300 KB (copy or move) onto another that takes them
    preferring move: the target gets every byte, both agree on move, and the
    source hears the drop done and finished. Local to remote, remote to
    local, and between two remote windows (where it stays remote)."""
    desktop.dnd_pointer = VirtualPointer(desktop)
    if way == "local to remote":
        desktop.start("dnd-local", [DND_CLIENT, "source", "dnd-local"], desktop.local_env)
        desktop.start_viewer(desktop.start_server([DND_CLIENT, "target", "dnd-remote"]))
        drag_between(desktop, "dnd-local", "dnd-remote", "dnd-local", "rcomp-run")
    elif way == "remote to local":
        desktop.start("dnd-local", [DND_CLIENT, "target", "dnd-local"], desktop.local_env)
        desktop.start_viewer(desktop.start_server([DND_CLIENT, "source", "dnd-remote"]))
        drag_between(desktop, "dnd-remote", "dnd-local", "rcomp-run", "dnd-local")
    else:
        server = desktop.start_server(["sh", "-c", "%s source dnd-local & exec %s target "
                                       "dnd-remote" % (DND_CLIENT, DND_CLIENT)])
        desktop.start_viewer(server, ["-v"])
        drag_between(desktop, "dnd-local", "dnd-remote", "rcomp-run", "rcomp-run")
        # Between the apps: no byte of it crossed the link.
        assert "bytes from the server" not in desktop.read_log("rcomp-view")


@pytest.mark.parametrize("way", ["local to remote", "remote to local", "remote to remote"])
@pytest.mark.desktop(extra=DND_APART)
def test_a_drop_that_asks_ends_with_the_action_the_target_picked(desktop, way):
    """The source offers copy, move or ask and the target prefers ask: both
    hear ask while the drag is over the target, and at the drop the target
    picks move (as from a menu), which the source hears before it finishes."""
    desktop.dnd_pointer = VirtualPointer(desktop)
    local, remote = (("source", "target") if way == "local to remote" else
                     ("target", "source"))
    if way == "remote to remote":
        server = desktop.start_server(["sh", "-c", "%s source dnd-local ask & exec %s target "
                                       "dnd-remote ask" % (DND_CLIENT, DND_CLIENT)])
        desktop.start_viewer(server)
        drag_between(desktop, "dnd-local", "dnd-remote", "rcomp-run", "rcomp-run", ask=True)
        return
    desktop.start("dnd-local", [DND_CLIENT, local, "dnd-local", "ask"], desktop.local_env)
    desktop.start_viewer(desktop.start_server([DND_CLIENT, remote, "dnd-remote", "ask"]))
    if way == "local to remote":
        drag_between(desktop, "dnd-local", "dnd-remote", "dnd-local", "rcomp-run", ask=True)
    else:
        drag_between(desktop, "dnd-remote", "dnd-local", "rcomp-run", "dnd-local", ask=True)
