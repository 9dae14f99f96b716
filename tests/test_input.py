"""Input from the local seat reaching the remote app: keys and layouts,
pointer and buttons on the right surface at the right coordinates, touch,
focus, and the app's cursor shown locally."""
import os
import re
import signal
import socket
import struct
import subprocess
import threading
import time

import pytest

from rig import (BLUE, BTN_LEFT, CYAN, INPUT_CLIENT, KEY_2, KEY_A, KEY_LEFTSHIFT, KEY_MINUS, KEY_Y,
                 KEY_Z, MAGENTA, MODEL_CLIENT, RCOMP_VIEW, Failure, VirtualKeyboard, VirtualPointer,
                 focused, hello, message, read_messages, records, step, wait_for)
from webpage import TOKEN, open_input_client, open_model, web_session


def remote_log(desktop):
    return desktop.read_log("rcomp-run")


def test_text_typed_into_the_local_window_reaches_the_remote_app(desktop):
    out = os.path.join(desktop.tmp, "typed.txt")
    script = 'read l; printf "%%s\\n" "$l" > %s' % out
    desktop.start_viewer(desktop.start_server(["foot", "sh", "-c", script]))
    wait_for("the foot window to have focus", lambda: focused(desktop, "foot"))
    text = "Hello rcomp-42 ~/x_y"
    subprocess.run(["wtype", "-k", "Shift_L", "-s", "400", text, "-k", "Return"],
                   env=desktop.local_env, check=True, timeout=20)
    got = wait_for("the typed line in " + out, lambda: os.path.exists(out) and open(out).read())
    assert got.strip("\n") == text


def pointer_on_input_client(desktop):
    """The input test client, and a virtual pointer moved into its window."""
    desktop.start_viewer(desktop.start_server([INPUT_CLIENT]))
    w = wait_for("the test client window", lambda: desktop.window(app_id="rcomp-input-test"))
    pointer = VirtualPointer(desktop)
    # The viewer gets its wl_pointer when the virtual pointer appears.
    time.sleep(0.5)
    pointer.send("move %d %d" % (w["rect"]["x"] + 5, w["rect"]["y"] + 5))
    time.sleep(0.3)
    return w["rect"], pointer


def test_a_click_reaches_the_surface_under_the_pointer_at_its_coordinates(desktop):
    r, pointer = pointer_on_input_client(desktop)
    pointer.send("move %d %d" % (r["x"] + 150, r["y"] + 120))
    wait_for("pointer on the subsurface at 50,20",
             lambda: "sub 50.00 20.00" in remote_log(desktop))
    pointer.send("press %d" % BTN_LEFT, "release %d" % BTN_LEFT)
    wait_for("a click on the subsurface",
             lambda: "button sub 272 released" in remote_log(desktop))
    pointer.send("move %d %d" % (r["x"] + 20, r["y"] + 30))
    wait_for("pointer on the main surface at 20,30",
             lambda: "main 20.00 30.00" in remote_log(desktop))
    pointer.send("press %d" % BTN_LEFT, "release %d" % BTN_LEFT)
    wait_for("a click on the main surface",
             lambda: "button main 272 pressed" in remote_log(desktop))


def test_scrolling_reaches_the_surface_under_the_pointer(desktop):
    r, pointer = pointer_on_input_client(desktop)
    pointer.send("move %d %d" % (r["x"] + 150, r["y"] + 120))
    wait_for("pointer on the subsurface", lambda: "sub 50.00 20.00" in remote_log(desktop))
    pointer.send("scroll 10")
    wait_for("a scroll on the subsurface", lambda: "axis 0 10.00" in remote_log(desktop))


def test_a_clicks_effect_comes_back_as_pixels(desktop):
    r, pointer = pointer_on_input_client(desktop)
    pointer.send("move %d %d" % (r["x"] + 20, r["y"] + 30))
    wait_for("pointer on the main surface", lambda: "main 20.00 30.00" in remote_log(desktop))
    pointer.send("press %d" % BTN_LEFT, "release %d" % BTN_LEFT)
    # The main surface turns red; sway draws a software cursor, so move it
    # off the window first.
    pointer.send("move 2 2")
    wait_for("the click's colour change on screen",
             lambda: desktop.pixel(20, 30, {"rect": r}) == (0xc0, 0x30, 0x30), interval=0.2)
    assert desktop.pixel(150, 150, {"rect": r}) == (0x20, 0xc0, 0x20), \
        "the subsurface changed colour too"


def held_keyboard(desktop):
    """A wtype keyboard that stays a while, so that focus changes show."""
    desktop.start("held-keyboard", ["wtype", "-k", "Shift_L", "-s", "8000", "-k", "Shift_L"],
                  desktop.local_env)
    wait_for("keyboard focus to reach the remote app",
             lambda: "key-enter main" in remote_log(desktop))


KEYBOARD_SETTINGS = ("input type:keyboard repeat_rate 40\n"
                     "input type:keyboard repeat_delay 300\n")


@pytest.mark.desktop(extra=KEYBOARD_SETTINGS)
def test_keyboard_focus_follows_the_local_seat(desktop):
    desktop.start_viewer(desktop.start_server([INPUT_CLIENT]))
    wait_for("the window to have focus", lambda: focused(desktop, "rcomp-input-test"))
    held_keyboard(desktop)
    # Another local window takes focus: the remote app loses it...
    desktop.start("local-client", [INPUT_CLIENT, "local-window"], desktop.local_env)
    wait_for("the local window to take focus", lambda: focused(desktop, "local-window"))
    wait_for("the remote app to lose keyboard focus", lambda: "key-leave" in remote_log(desktop))
    # ...and gets it back when the user focuses the remote window again.
    desktop.swaymsg('[app_id="rcomp-input-test"] focus')
    wait_for("focus to come back", lambda: remote_log(desktop).count("key-enter main") >= 2)


@pytest.mark.desktop(extra=KEYBOARD_SETTINGS)
def test_repeat_info_keymap_and_modifiers_reach_the_remote_app(desktop):
    desktop.start_viewer(desktop.start_server([INPUT_CLIENT]))
    wait_for("the window to have focus", lambda: focused(desktop, "rcomp-input-test"))
    held_keyboard(desktop)
    wait_for("the local repeat info (40/s after 300 ms)",
             lambda: "repeat 40 300" in remote_log(desktop))
    subprocess.run(["wtype", "-M", "ctrl", "-k", "a", "-m", "ctrl"], env=desktop.local_env,
                   check=True, timeout=20)
    # wtype brings its own keymap, so the key code is its choice; what
    # matters is a key press while Control (mask 4) is held.
    wait_for("a key pressed with ctrl held",
             lambda: re.search(r"modifiers 4 0 0 0\n(?:.*\n)*?key \d+ pressed",
                               remote_log(desktop)))
    assert remote_log(desktop).count("keymap ") >= 2, "the local keymap was not forwarded"


def keysyms(desktop):
    return re.findall(r"^keysym (\S+)$", remote_log(desktop), re.M)


def german_keyboard(desktop):
    desktop.start_viewer(desktop.start_server([INPUT_CLIENT]))
    wait_for("the window to have focus", lambda: focused(desktop, "rcomp-input-test"))
    kb = VirtualKeyboard(desktop)
    # The first key of a new keyboard makes it (and its keymap) the seat's.
    kb.take_seat("de", lambda: keysyms(desktop))
    return kb


def test_a_german_keymap_types_german_characters_remotely(desktop):
    kb = german_keyboard(desktop)
    n = len(keysyms(desktop))
    kb.send("tap %d" % KEY_Y, "tap %d" % KEY_Z, "tap %d" % KEY_MINUS,
            "press %d" % KEY_LEFTSHIFT, "tap %d" % KEY_2, "release %d" % KEY_LEFTSHIFT)
    german = ["z", "y", "ssharp", "Shift_L", "quotedbl"]
    wait_for("German characters in the remote app %s" % german,
             lambda: keysyms(desktop)[n:] == german)


def test_a_switch_of_the_local_layout_takes_effect_remotely_at_once(desktop):
    kb = german_keyboard(desktop)
    keymaps = remote_log(desktop).count("keymap ")
    kb.send("layout us")
    n = len(keysyms(desktop))
    kb.send("tap %d" % KEY_Y, "press %d" % KEY_LEFTSHIFT, "tap %d" % KEY_2,
            "release %d" % KEY_LEFTSHIFT)
    us = ["y", "Shift_L", "at"]
    wait_for("US characters after the layout switch %s" % us,
             lambda: keysyms(desktop)[n:] == us)
    assert remote_log(desktop).count("keymap ") > keymaps, "the new keymap never arrived"


def test_a_key_held_when_focus_leaves_is_not_held_when_it_returns(desktop):
    kb = german_keyboard(desktop)
    kb.send("press %d" % KEY_A)
    wait_for("A held in the remote app", lambda: "key %d pressed" % KEY_A in remote_log(desktop))
    desktop.start("local-client", [INPUT_CLIENT, "local-window"], desktop.local_env)
    wait_for("the local window to take focus", lambda: focused(desktop, "local-window"))
    wait_for("the remote app to lose focus", lambda: "key-leave" in remote_log(desktop))
    kb.send("release %d" % KEY_A)
    desktop.swaymsg('[app_id="rcomp-input-test"] focus')

    def enters():
        return re.findall(r"^key-enter main held:(.*)$", remote_log(desktop), re.M)

    wait_for("focus to come back", lambda: len(enters()) >= 2)
    assert not enters()[-1].strip(), "keys %s stuck down" % enters()[-1].strip()


def wire(msg_type, body=b""):
    return struct.pack("<HHI", msg_type, 0, len(body)) + body


def test_touch_points_reach_the_surface_under_them_move_lift_and_cancel(desktop):
    """The local side cannot make touch events on these machines (no uinput;
    sway 1.7 has no virtual touch device), so a client speaking the wire
    protocol plays the viewer: a point goes down on the surface under it
    (the subsurface), moves in that surface's coordinates, goes up; another
    is cancelled."""
    server = desktop.start_server([INPUT_CLIENT])
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(server.socket)
    sock.sendall(hello())
    got = read_messages(sock, 30, until=0x0203)
    assert got and got[-1][0] == 0x0203, "no window_new: %s" % [hex(t) for t, _ in got]
    window = struct.unpack_from("<I", got[-1][1])[0]

    def drain():
        """Keeps reading, so that frames never back up."""
        try:
            while sock.recv(1 << 20):
                pass
        except OSError:
            pass

    threading.Thread(target=drain, daemon=True).start()

    def fx(v):
        return int(v * 256)

    sock.sendall(records(
        wire(0x0113, struct.pack("<Iiii", window, 5, fx(150.5), fx(150.25))) + wire(0x0116) +
        wire(0x0115, struct.pack("<iii", 5, fx(160), fx(170))) + wire(0x0116) +
        wire(0x0114, struct.pack("<i", 5)) + wire(0x0116) +
        wire(0x0113, struct.pack("<Iiii", window, 6, fx(20), fx(30))) +
        wire(0x0116) + wire(0x0117)))
    expected = ["touch-down 5 sub 50.50 50.25", "touch-frame", "touch-motion 5 60.00 70.00",
                "touch-frame", "touch-up 5", "touch-frame", "touch-down 6 main 20.00 30.00",
                "touch-frame", "touch-cancel"]

    def got():
        return [line for line in remote_log(desktop).splitlines()
                if line.startswith("touch-")]

    wait_for("the touch events in the app %s" % expected, lambda: got() == expected)
    sock.shutdown(socket.SHUT_RDWR)
    sock.close()
    desktop.check_alive(server)


def cursor_app(desktop):
    """model-client's cursor script, with the pointer in its window at
    (150,100). Headless sway draws the cursor into its screenshots."""
    server = desktop.start_server([MODEL_CLIENT, "cursor"])
    desktop.start_viewer(server)
    w = wait_for("the window", lambda: desktop.window(title="model cursor"))
    pointer = VirtualPointer(desktop)
    time.sleep(0.5)
    r = w["rect"]
    pointer.send("move %d %d" % (r["x"] + 10, r["y"] + 10))
    px, py = r["x"] + 150, r["y"] + 100
    pointer.send("move %d %d" % (px, py))
    wait_for("the pointer to enter the remote app",
             lambda: "pointer-enter" in remote_log(desktop))

    def at(points, x=px, y=py):
        return all(desktop.pixel(x + dx, y + dy) == c for (dx, dy), c in points.items())

    # 16x16 magenta, hotspot (8,8): from (px-8,py-8) to (px+7,py+7).
    magenta = {(-8, -8): MAGENTA, (7, 7): MAGENTA, (0, 0): MAGENTA, (9, 9): BLUE,
               (-9, -9): BLUE}
    wait_for("the app's cursor under the pointer", lambda: at(magenta), interval=0.2)
    return server, pointer, at, (px, py)


def test_the_apps_cursor_with_its_hotspot_is_the_local_cursor_over_its_window(desktop):
    cursor_app(desktop)


def test_a_changed_cursor_follows_and_a_hidden_one_stays_hidden(desktop):
    server, pointer, at, (px, py) = cursor_app(desktop)
    step(desktop, server, 1)
    # 24x24 cyan, hotspot (0,0): from (px,py) to (px+23,py+23).
    cyan = {(0, 0): CYAN, (23, 23): CYAN, (-2, -2): BLUE, (24, 24): BLUE}
    wait_for("the changed cursor", lambda: at(cyan), interval=0.2)
    step(desktop, server, 2)
    hidden = {(0, 0): BLUE, (5, 5): BLUE, (20, 20): BLUE, (-5, -5): BLUE}
    wait_for("the cursor to hide", lambda: at(hidden), interval=0.2)
    # Still hidden after the pointer moves within the window.
    pointer.send("move %d %d" % (px + 30, py + 20))
    time.sleep(0.5)
    assert at(hidden, px + 30, py + 20), "the hidden cursor came back when the pointer moved"


def test_relative_pointer_motion_reaches_an_app_that_binds_it(desktop):
    """Games read relative motion (relative-pointer-unstable-v1): the local
    pointer moving 7 right and 3 down over the window reaches the app as
    that relative motion, accelerated and not, without any lock."""
    server = desktop.start_server([INPUT_CLIENT])
    desktop.start_viewer(server)
    w = wait_for("the window", lambda: desktop.window(app_id="rcomp-input-test"))
    pointer = VirtualPointer(desktop)
    x, y = w["rect"]["x"] + 50, w["rect"]["y"] + 50
    pointer.send("move %d %d" % (x, y))
    wait_for("the pointer in the app", lambda: "enter main" in desktop.read_log("rcomp-run"))
    pointer.send("move %d %d" % (x + 7, y + 3))
    wait_for("the relative motion in the app", lambda: "relative 7.00 3.00 unaccel 7.00 3.00"
             in desktop.read_log("rcomp-run"))


def gesture(kind, phase, fingers=0, cancelled=0, dx=0.0, dy=0.0, scale=0.0, rotation=0.0):
    return message(0x0128, struct.pack("<IIIIiiii", kind, phase, fingers, cancelled,
                                       round(dx * 256), round(dy * 256), round(scale * 65536),
                                       round(rotation * 256)))


def test_a_touchpads_swipe_pinch_and_hold_reach_the_app_under_the_pointer(desktop):
    """A viewer's gestures (the wire by hand, as rcomp-view sends what its
    desktop's zwp_pointer_gestures_v1 reports: headless sway has no touchpad
    to make them) reach the app under the pointer with their values; an
    update of a gesture not under way is dropped."""
    server = desktop.start_server([INPUT_CLIENT])
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(server.socket)
    s.sendall(hello(minor=9))
    got = read_messages(s, 10.0, until=0x0203)
    window = struct.unpack("<I", [b for t, b in got if t == 0x0203][0][:4])[0]
    s.sendall(records(message(0x0106, struct.pack("<Iii", window, 50 << 8, 50 << 8)) +
                      message(0x010a)))
    wait_for("the pointer in the app", lambda: "enter main" in desktop.read_log("rcomp-run"))
    SWIPE, PINCH, HOLD, BEGIN, UPDATE, END = 1, 2, 3, 0, 1, 2
    s.sendall(records(gesture(PINCH, UPDATE, dx=9, dy=9, scale=9) +  # none under way
                      gesture(SWIPE, BEGIN, fingers=3) +
                      gesture(SWIPE, UPDATE, dx=10.5, dy=-4) +
                      gesture(SWIPE, END) +
                      gesture(PINCH, BEGIN, fingers=2) +
                      gesture(PINCH, UPDATE, dx=1, dy=2, scale=1.5, rotation=15.25) +
                      gesture(PINCH, END, cancelled=1) +
                      gesture(HOLD, BEGIN, fingers=4) +
                      gesture(HOLD, END)))
    lines = ["gesture swipe begin 3", "gesture swipe update 10.50 -4.00", "gesture swipe end 0",
             "gesture pinch begin 2", "gesture pinch update 1.00 2.00 scale 1.500 rotation 15.25",
             "gesture pinch end 1", "gesture hold begin 4", "gesture hold end 0"]
    wait_for("the gestures in the app", lambda: all(
        line in desktop.read_log("rcomp-run") for line in lines))
    log = desktop.read_log("rcomp-run")
    assert [log.index(line) for line in lines] == sorted(log.index(line) for line in lines)
    assert "scale 9.000" not in log
    s.close()


# tablet's changed bits, in the order the server applies them
T_IN, T_MOTION, T_PRESSURE, T_DISTANCE, T_TILT, T_ROTATION, T_SLIDER, T_WHEEL = (
    1, 2, 4, 8, 16, 32, 64, 128)
T_DOWN, T_BUTTON, T_UP, T_OUT = 256, 512, 1024, 2048
PEN, ERASER, BTN_STYLUS = 0x140, 0x141, 0x14b


def tablet(window, changed, tool=PEN, caps=0x3f, serial=0x1234, x=0.0, y=0.0, pressure=0,
           distance=0, tilt=(0.0, 0.0), rotation=0.0, slider=0, wheel=0.0, clicks=0, button=0,
           state=0):
    return message(0x012a, struct.pack(
        "<IIIQIiiIIiiiiiiII", window, tool, caps, serial, changed, round(x * 256),
        round(y * 256), pressure, distance, round(tilt[0] * 256), round(tilt[1] * 256),
        round(rotation * 256), slider, round(wheel * 256), clicks, button, state))


def tablet_session(desktop, env=None, minor=10):
    """input-client in a session, and a viewer by hand of that minor:
    (socket, window)."""
    server = desktop.start_server([INPUT_CLIENT], env=env)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(server.socket)
    s.sendall(hello(minor=minor))
    got = read_messages(s, 10.0, until=0x0203)
    window = struct.unpack("<I", [b for t, b in got if t == 0x0203][0][:4])[0]
    wait_for("the app's window mapped", lambda: "configure" in desktop.read_log("rcomp-run"))
    return s, window


def in_order(desktop, lines, more=None):
    """Waits for lines, in order, in rcomp-run's log (the app's); or with
    more, lines in that log: in_order(desktop, [log name], lines)."""
    name, lines = ("rcomp-run", lines) if more is None else (lines[0], more)
    wait_for("the tablet's events in the app", lambda: all(
        line in desktop.read_log(name) for line in lines))
    log = desktop.read_log(name)
    at, positions = 0, []
    for line in lines:
        at = log.index(line, at)
        positions.append(at)
    return positions


def test_a_pens_proximity_axes_tip_and_buttons_reach_an_app_that_binds_tablets(desktop):
    """A viewer's pen (the wire by hand, as rcomp-view sends what its
    desktop's zwp_tablet_tool_v2 reports: headless sway has no tablet) comes
    to an app that bound zwp_tablet_manager_v2 as a tool of its type and
    serial, with its position, pressure, distance, tilt, rotation, slider,
    wheel, tip and buttons, in order, and leaves; an eraser is another tool."""
    s, w = tablet_session(desktop)
    wait_for("the tablet in the app", lambda: "tablet added" in desktop.read_log("rcomp-run"))
    s.sendall(records(
        tablet(w, T_IN | T_MOTION | T_DISTANCE | T_TILT, x=50, y=50, distance=30000,
               tilt=(10.5, -20)) +
        tablet(w, T_MOTION | T_PRESSURE | T_DOWN, x=60, y=55.5, pressure=32768) +
        tablet(w, T_BUTTON, x=60, y=55.5, button=BTN_STYLUS, state=1) +
        tablet(w, T_ROTATION | T_SLIDER | T_WHEEL, x=60, y=55.5, rotation=45, slider=-65535,
               wheel=15, clicks=1) +
        tablet(w, T_BUTTON, x=60, y=55.5, button=BTN_STYLUS, state=0) +
        tablet(w, T_UP, x=60, y=55.5) +
        tablet(w, T_OUT, x=60, y=55.5)))
    in_order(desktop, [
        "tablet tool serial 4660", "tablet tool 0x140", "tablet in main",
        "tablet motion 50.00 50.00", "tablet distance 30000", "tablet tilt 10.50 -20.00",
        "tablet motion 60.00 55.50", "tablet pressure 32768", "tablet down",
        "tablet button 0x14b 1", "tablet rotation 45.00", "tablet slider -65535",
        "tablet wheel 15.00 1", "tablet button 0x14b 0", "tablet up", "tablet out"])
    s.sendall(records(tablet(w, T_IN | T_MOTION, tool=ERASER, serial=7, x=20, y=20) +
                      tablet(w, T_OUT, tool=ERASER, serial=7, x=20, y=20)))
    in_order(desktop, ["tablet out", "tablet tool serial 7", "tablet tool 0x141",
                       "tablet in main", "tablet motion 20.00 20.00", "tablet out"])
    s.close()


# tablet_pad's events
PAD_ENTER, PAD_LEAVE, PAD_BUTTON, PAD_RING, PAD_STRIP, PAD_MODE = 1, 2, 3, 4, 5, 6


def pad(window, event, number=0, value=0, finger=0, shape=(0, 0, 0, 0, 0)):
    """tablet_pad: shape is (buttons, rings, strips, groups, modes), said at
    an enter."""
    return message(0x012c, struct.pack("<IIIiIIIIII", window, event, number, value, finger,
                                       *shape))


def test_a_pads_buttons_ring_strip_and_mode_reach_the_app_on_a_pad_of_the_viewers_shape(
        desktop):
    """A viewer's pad (the wire by hand, as rcomp-view sends what its
    desktop's zwp_tablet_pad_v2 reports) comes to an app that bound tablets
    as a pad of the same shape, entering the window the viewer names, with
    its buttons, ring (a finger's angle, then its stop), strip and mode
    switches, in order; a pad of another shape replaces it, and a button
    held as the viewer goes is released."""
    s, w = tablet_session(desktop, minor=12)
    wait_for("the tablet in the app", lambda: "tablet added" in desktop.read_log("rcomp-run"))
    s.sendall(records(
        pad(w, PAD_ENTER, shape=(9, 1, 2, 1, 4)) +
        pad(w, PAD_BUTTON, 3, 1) + pad(w, PAD_BUTTON, 3, 0) +
        pad(w, PAD_RING, 0, round(90.5 * 256), finger=1) + pad(w, PAD_RING, 0, -1, finger=1) +
        pad(w, PAD_STRIP, 1, 32768) + pad(w, PAD_STRIP, 1, -1) +
        pad(w, PAD_MODE, 0, 2) +
        # not where the pad is, or past its shape: nothing
        pad(w + 1, PAD_BUTTON, 0, 1) + pad(w, PAD_BUTTON, 12, 1) + pad(w, PAD_RING, 1, 256) +
        pad(w, PAD_MODE, 0, 7) +
        pad(w, PAD_LEAVE)))
    lines = ["pad buttons 9", "pad group 0 modes 4", "pad added: 1 rings, 2 strips",
             "pad enter main", "pad group 0 mode 0", "pad button 3 1", "pad button 3 0",
             "pad ring 0 source 1", "pad ring 0 angle 90.50", "pad ring frame",
             "pad ring 0 stop", "pad strip 1 position 32768", "pad strip 1 stop",
             "pad group 0 mode 2", "pad leave main"]
    in_order(desktop, lines)
    text = desktop.read_log("rcomp-run")
    assert "pad group 0 buttons 0 1 2 3 4 5 6 7 8" in text
    assert "pad button 0 1" not in text and "pad button 12" not in text
    assert "pad ring 1" not in text and "mode 7" not in text
    # Another shape: the old pad is removed and a new one made.
    s.sendall(records(pad(w, PAD_ENTER, shape=(4, 0, 0, 2, 1)) + pad(w, PAD_BUTTON, 1, 1)))
    in_order(desktop, lines + ["pad removed", "pad buttons 4", "pad group 0 buttons 0 2",
                               "pad group 1 buttons 1 3", "pad added: 0 rings, 0 strips",
                               "pad enter main", "pad button 1 1"])
    s.close()
    in_order(desktop, lines + ["pad button 1 1", "pad button 1 0", "pad leave main"])


def nested_view(desktop, relay=False):
    """input-client in a session shown by rcomp-view, whose desktop is a
    second rcomp-run (headless sway has no tablet) with a viewer by hand:
    (that viewer's socket, rcomp-view's window in the second session);
    relay: rcomp-view's link goes through one (desktop's relay process, in
    .relay of the socket)."""
    inner = desktop.start_server([INPUT_CLIENT], name="inner-run")
    link = inner.socket
    if relay:
        relay = desktop.start_relay(inner.socket, delay_ms=5, name="inner-relay")
        link = relay.socket
    outer = desktop.start_server([RCOMP_VIEW, "--socket", link], name="outer-run")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(outer.socket)
    s.sendall(hello(minor=12))
    got = read_messages(s, 20.0, until=0x0203)
    w = struct.unpack("<I", [b for t, b in got if t == 0x0203][0][:4])[0]
    wait_for("the tablet in the app", lambda: "tablet added" in desktop.read_log("inner-run"))
    return s, w, relay


def test_rcomp_view_carries_its_desktops_pen_to_the_app(desktop):
    """rcomp-view takes the tools its desktop gives it (zwp_tablet_tool_v2)
    and carries each frame, with the tool's type, serial and axes, to the
    app under it."""
    s, w, _ = nested_view(desktop)
    # One at a time: frames that come together, wlroots (the second
    # rcomp-run's) sends as one.
    for frame in [
            tablet(w, T_IN | T_MOTION | T_TILT, serial=99, x=30, y=20, tilt=(5, -7.5)),
            tablet(w, T_MOTION | T_PRESSURE | T_DOWN, serial=99, x=31, y=22, pressure=40000),
            tablet(w, T_BUTTON, serial=99, x=31, y=22, button=BTN_STYLUS, state=1),
            tablet(w, T_UP, serial=99, x=31, y=22),
            tablet(w, T_OUT, serial=99, x=31, y=22)]:
        s.sendall(records(frame))
        time.sleep(0.2)
    in_order(desktop, ["inner-run"], [
        "tablet tool serial 99", "tablet tool 0x140", "tablet in main",
        "tablet motion 30.00 20.00", "tablet tilt 5.00 -7.50", "tablet motion 31.00 22.00",
        "tablet pressure 40000", "tablet down", "tablet button 0x14b 1", "tablet up",
        "tablet out"])
    s.close()


def test_rcomp_view_carries_its_desktops_pad_to_the_app(desktop):
    """rcomp-view takes the pad its desktop gives it (zwp_tablet_pad_v2)
    and carries its shape, focus, buttons, ring, strip and modes to the
    session, where the pad is put on the window rcomp-view shows."""
    s, w, _ = nested_view(desktop)
    s.sendall(records(
        pad(w, PAD_ENTER, shape=(6, 2, 1, 2, 3)) +
        pad(w, PAD_BUTTON, 5, 1) + pad(w, PAD_BUTTON, 5, 0) +
        pad(w, PAD_RING, 1, round(270.25 * 256), finger=1) + pad(w, PAD_RING, 1, -1, finger=1) +
        pad(w, PAD_STRIP, 0, 1000) +
        pad(w, PAD_MODE, 1, 2) +
        pad(w, PAD_LEAVE)))
    wait_for("the pad in the app", lambda: "pad leave main" in desktop.read_log("inner-run"),
             timeout=20)
    text = desktop.read_log("inner-run")
    lines = ["pad buttons 6", "pad added: 2 rings, 1 strips", "pad enter main",
             "pad button 5 1", "pad button 5 0", "pad ring 1 source 1", "pad ring 1 angle 270.25",
             "pad ring 1 stop", "pad strip 0 position 1000", "pad group 1 mode 2",
             "pad leave main"]
    at = 0
    for line in lines:
        assert line in text[at:], (line, text[-4000:])
        at = text.index(line, at)
    assert "pad group 0 buttons 0 2 4" in text and "pad group 1 buttons 1 3 5" in text
    assert "pad group 0 modes 3" in text
    s.close()


def test_a_pad_on_rcomp_views_window_is_there_again_after_its_link_returns(desktop):
    """rcomp-view's link breaks and returns while its desktop's pad is on
    its window: the session hears the pad leave with the old connection and
    enter again with the new one, and its buttons work."""
    s, w, relay = nested_view(desktop, relay=True)
    s.sendall(records(pad(w, PAD_ENTER, shape=(4, 0, 0, 1, 1))))
    wait_for("the pad in the app", lambda: "pad enter main" in desktop.read_log("inner-run"))
    os.kill(relay.pid, signal.SIGUSR1)  # the link goes down
    wait_for("rcomp-view to see it", lambda: "connection to the server was lost" in
             desktop.read_log("outer-run"), timeout=30)
    os.kill(relay.pid, signal.SIGUSR2)  # and returns
    wait_for("the pad in the app again", lambda: desktop.read_log("inner-run").count(
        "pad enter main") >= 2, timeout=30)
    s.sendall(records(pad(w, PAD_BUTTON, 2, 1)))
    in_order(desktop, ["inner-run"], ["pad enter main", "pad leave main", "pad enter main",
                                      "pad button 2 1"])
    s.close()


def test_a_pen_over_an_app_without_tablets_points_and_its_tip_clicks(desktop):
    """An app that has not bound tablets (most X11 and older apps) gets the
    pen as the pointer, the tip as the left button, as on sway."""
    s, w = tablet_session(desktop, env={"INPUT_CLIENT_NO_TABLET": "1"})
    s.sendall(records(tablet(w, T_IN | T_MOTION | T_PRESSURE, x=40, y=30, pressure=100) +
                      tablet(w, T_MOTION | T_DOWN, x=42, y=31) +
                      tablet(w, T_MOTION, x=45, y=33) +
                      tablet(w, T_UP | T_OUT, x=45, y=33)))
    in_order(desktop, ["enter main 40.00 30.00", "button main %d pressed" % BTN_LEFT,
                       "motion main 45.00 33.00", "button main %d released" % BTN_LEFT])
    assert "tablet" not in desktop.read_log("rcomp-run")
    s.close()


def test_a_pen_in_the_page_reaches_the_app_as_a_tablet_tool_with_its_pressure_tilt_and_tip(
        desktop, page):
    """A pen in the browser (Pointer Events of type pen, as chromium makes
    them from CDP's pen events) comes to an app that bound tablets as a pen
    with its place, pressure, tilt and twist, its tip down and up."""
    x, y, _, _ = open_input_client(desktop, page)
    wait_for("the tablet in the app", lambda: "tablet added" in remote_log(desktop))
    pen = {"tiltX": 20, "tiltY": -10, "twist": 30}
    page.command("pen", events=[
        dict(pen, type="mouseMoved", x=x + 30, y=y + 40),
        dict(pen, type="mousePressed", x=x + 30, y=y + 40, button="left", buttons=1, force=0.5),
        dict(pen, type="mouseMoved", x=x + 35, y=y + 42, buttons=1, force=0.75),
        dict(pen, type="mouseReleased", x=x + 35, y=y + 42, button="left")])
    in_order(desktop, [
        "tablet tool 0x140", "tablet in main", "tablet motion 30.00 40.00",
        "tablet tilt 20.00 -10.00", "tablet rotation 30.00", "tablet pressure 32768",
        "tablet down", "tablet motion 35.00 42.00", "tablet pressure 49151", "tablet up"])
    assert "button main" not in remote_log(desktop)


def test_a_trackpads_pinch_in_the_page_is_a_pinch_and_ctrl_with_a_wheel_stays_a_wheel(
        desktop, page):
    """A trackpad's pinch in chromium (wheel events with Ctrl and
    fractional deltas) reaches the app under the pointer as one pinch
    gesture to about the pinch's scale; Ctrl with a mouse's wheel stays Ctrl
    and a wheel (an app zooms on it as it chooses)."""
    x, y, _, _ = open_input_client(desktop, page)
    page.command("mouse", do="move", x=x + 50, y=y + 50)
    wait_for("the pointer in the app", lambda: "enter main" in remote_log(desktop))
    page.command("pinch", x=x + 50, y=y + 50, scale=2)
    wait_for("the pinch's end", lambda: "gesture pinch end 0" in remote_log(desktop))
    log = remote_log(desktop)
    assert log.count("gesture pinch begin 2") == 1, log[-2000:]
    scales = [float(v) for v in re.findall(r"gesture pinch update \S+ \S+ scale (\S+)", log)]
    assert scales and abs(scales[-1] - 2.0) < 0.1, scales
    assert "axis" not in log
    page.key("Control", "down")
    page.command("mouse", do="wheel", deltaY=100)
    page.key("Control", "up")
    wait_for("Ctrl and the wheel", lambda: "axis 0" in remote_log(desktop))
    assert remote_log(desktop).count("gesture pinch begin") == 1


KEY_L, KEY_U, KEY_C = 38, 22, 46  # input-client: lock, end, confine


def constrainable(desktop):
    """input-client under a virtual pointer, with keyboard focus, on a seat
    that grants pointer constraints: (pointer, keyboard, x, y)."""
    desktop.swaymsg("seat seat0 fallback true")  # headless sway grants them only then
    server = desktop.start_server([INPUT_CLIENT])
    desktop.start_viewer(server)
    w = wait_for("the window", lambda: desktop.window(app_id="rcomp-input-test"))
    pointer = VirtualPointer(desktop)
    kb = VirtualKeyboard(desktop)
    x, y = w["rect"]["x"] + 50, w["rect"]["y"] + 50
    pointer.send("move %d %d" % (x, y))
    wait_for("the pointer in the app", lambda: "enter main" in desktop.read_log("rcomp-run"))
    desktop.swaymsg("[app_id=rcomp-input-test] focus")
    kb.send("tap %d" % KEY_LEFTSHIFT)
    wait_for("the keyboard in the app", lambda: "key-enter main" in desktop.read_log("rcomp-run"))
    return pointer, kb, x, y


def test_a_pointer_lock_the_app_asks_for_is_taken_locally_and_ends_when_the_app_ends_it(desktop):
    """The app locks the pointer (its L key): the viewer locks the local
    pointer on the window, and the app hears "locked" only then; motion
    now reaches it as relative motion alone. The app ends the lock (U) and
    the local lock ends too: the pointer moves the app's pointer again."""
    pointer, kb, x, y = constrainable(desktop)

    def motions():
        return len(re.findall(r"^motion main", desktop.read_log("rcomp-run"), re.M))

    kb.send("tap %d" % KEY_L)
    wait_for("the lock, granted locally", lambda: re.search(
        r"^locked$", desktop.read_log("rcomp-run"), re.M))
    before = motions()
    pointer.send("move %d %d" % (x + 9, y + 4))
    wait_for("relative motion while locked", lambda: "relative 9.00 4.00" in
             desktop.read_log("rcomp-run"))
    time.sleep(0.3)
    assert motions() == before, "the locked pointer moved in the app"
    kb.send("tap %d" % KEY_U)
    step = [0]

    def moved_again():
        step[0] += 1
        pointer.send("move %d %d" % (x + 9 + step[0], y + 4))
        return motions() > before

    wait_for("the pointer to move the app's pointer again", moved_again, interval=0.2)


def test_the_locks_cursor_hint_places_the_local_pointer_when_the_lock_ends(desktop):
    """input-client locks with a cursor hint of 10,20. The mouse moves while
    locked (the pointer stays put), the app ends the lock, and the next
    motion starts from the hint: the app sees 11,21, not where the pointer
    was locked."""
    pointer, kb, x, y = constrainable(desktop)
    kb.send("tap %d" % KEY_L)
    wait_for("the lock, granted locally", lambda: re.search(
        r"^locked$", desktop.read_log("rcomp-run"), re.M))
    pointer.send("by 30 30", "by 30 30")
    wait_for("relative motion while locked", lambda: "relative 30.00 30.00" in
             desktop.read_log("rcomp-run"))
    kb.send("tap %d" % KEY_U)  # the app destroys its lock: no "unlocked" for it
    time.sleep(0.5)
    pointer.send("by 1 1")
    wait_for("motion from the hint", lambda: "motion main 11.00 21.00" in
             desktop.read_log("rcomp-run"))


def test_a_lock_the_local_desktop_breaks_on_focus_loss_ends_for_the_app(desktop):
    """The local compositor ends the lock when another local window takes
    the focus: the app hears "unlocked"."""
    pointer, kb, x, y = constrainable(desktop)
    kb.send("tap %d" % KEY_L)
    wait_for("the lock, granted locally", lambda: re.search(
        r"^locked$", desktop.read_log("rcomp-run"), re.M))
    desktop.start("local-foot", ["foot", "--app-id", "local-foot"], desktop.local_env)
    wait_for("a local window", lambda: desktop.window(app_id="local-foot"))
    desktop.swaymsg("[app_id=local-foot] focus")
    wait_for("the app to hear the lock end", lambda: re.search(
        r"^unlocked$", desktop.read_log("rcomp-run"), re.M))


SDL_RELATIVE = "/usr/libexec/installed-tests/SDL2/testrelative"


@pytest.mark.parametrize("driver", ["wayland", "x11"])
def test_an_sdl2_game_in_relative_mouse_mode_moves_by_the_mouse_motion(desktop, driver):
    """SDL2's own relative-mode test program (a red square moved by relative
    mouse motion, starting at 320,240 of its 640x480 window), natively and
    through Xwayland: after a first small motion, five mouse motions, 20,10
    to 24,14, move the square by exactly their sum, 110,60, in the local
    window. (SDL's X11 backend drops
    a raw motion equal to the one before it within the same millisecond, as
    a duplicate: the motions differ so that all five count.)"""
    desktop.swaymsg("seat seat0 fallback true")  # headless sway grants locks only then
    server = desktop.start_server(["env", "SDL_VIDEODRIVER=" + driver,
                                   "SDL_RENDER_DRIVER=software", SDL_RELATIVE], args=["-v"])
    desktop.start_viewer(server)
    w = wait_for("the game's window", lambda: desktop.window(title=SDL_RELATIVE), timeout=30)
    pointer = VirtualPointer(desktop)
    kb = VirtualKeyboard(desktop)
    rect = w["rect"]
    pointer.send("move %d %d" % (rect["x"] + 100, rect["y"] + 100))
    desktop.swaymsg("[pid=%d] focus" % w["pid"])
    kb.send("tap %d" % KEY_LEFTSHIFT)

    def red_square():
        width, height, px = desktop.screenshot(rect)
        red = [(i % width, i // width) for i in range(width * height)
               if px[3 * i] > 200 and px[3 * i + 1] < 50 and px[3 * i + 2] < 50]
        return (min(red), max(red)) if red else None
    wait_for("the square at the start", lambda: red_square() == ((320, 240), (329, 249)))
    # The game takes the pointer before it reads the mouse. Through
    # Xwayland that is a lock, and motion before the lock holds moves the
    # pointer, not the square: wait until the viewer holds it (a second was
    # too little for a loaded CI machine). SDL's Wayland backend reads
    # relative motion without one; give it its round trip.
    if driver == "x11":
        wait_for("the lock, held by the viewer", lambda: re.search(
            r"the app locks the pointer.*\n(.*\n)*?.*the viewer holds the constraint",
            desktop.read_log("rcomp-run")), timeout=30)
    # Where SDL's first motion starts from is a race of its own: through
    # Xwayland, SDL warps the X pointer to the window's middle when it gains
    # the keyboard, and the pointer entering at its own place may come
    # before that warp or after it; when after, SDL's first motion is
    # measured from the middle to where the pointer entered (seen twice in
    # loaded sanitizer runs, the square at 100,100 plus the motions). So one
    # small motion first, wherever it puts the square, and then five whose
    # sum the square must follow exactly.
    time.sleep(0.5)
    pointer.send("by 5 3")
    seen = []
    wait_for("the first motion to move the square", lambda: seen.append(red_square()) or
             seen[-1] not in (None, ((320, 240), (329, 249))), interval=0.3)
    wait_for("the square to rest", lambda: seen.append(red_square()) or seen[-1] == seen[-2],
             interval=0.3)
    (x0, y0), _ = start = seen[-1]
    for i in range(5):
        pointer.send("by %d %d" % (20 + i, 10 + i))
    want = ((x0 + 110, y0 + 60), (x0 + 119, y0 + 69))
    try:
        wait_for("the square moved by 110,60", lambda: seen.append(red_square()) or
                 seen[-1] == want, interval=0.3)
    except Failure:
        said = [line for line in desktop.read_log("rcomp-run").splitlines()
                if re.search(r"constraint|the app (locks|confines|frees)|viewer", line)]
        raise Failure("the square went from %s to %s, not to %s; rcomp-run said:\n%s"
                      % (start, seen[-1], want, "\n".join(said[-20:])))


def test_a_confinement_the_app_asks_for_is_taken_locally(desktop):
    """The app confines the pointer to its window (its C key): it hears
    "confined" once the local compositor has confined the local pointer."""
    pointer, kb, x, y = constrainable(desktop)
    kb.send("tap %d" % KEY_C)
    wait_for("the confinement, granted locally", lambda: re.search(
        r"^confined$", desktop.read_log("rcomp-run"), re.M))


SHORTCUT_FLAG = "/tmp/rcomp-test-shortcut-%d" % os.getpid()
KEY_I, KEY_O, KEY_K, KEY_LEFTMETA = 23, 24, 37, 125


@pytest.mark.desktop(extra="bindsym Mod4+k exec touch %s\n" % SHORTCUT_FLAG)
def test_an_app_that_inhibits_shortcuts_gets_the_desktops_key_combinations(desktop):
    """Super+K is a shortcut of the local desktop. While the remote app
    inhibits shortcuts (its I key), the viewer inhibits them on its window,
    and Super+K reaches the app instead; once the app stops (O), the desktop
    has it again."""
    if os.path.exists(SHORTCUT_FLAG):
        os.unlink(SHORTCUT_FLAG)
    server = desktop.start_server([INPUT_CLIENT])
    desktop.start_viewer(server)
    wait_for("the window", lambda: desktop.window(app_id="rcomp-input-test"))
    kb = VirtualKeyboard(desktop)
    desktop.swaymsg("[app_id=rcomp-input-test] focus")
    kb.send("tap %d" % KEY_LEFTSHIFT)
    wait_for("the keyboard in the app", lambda: "key-enter main" in desktop.read_log("rcomp-run"))
    kb.send("tap %d" % KEY_I)
    wait_for("shortcuts inhibited locally", lambda: re.search(
        r"^inhibit-active$", desktop.read_log("rcomp-run"), re.M))
    kb.send("press %d" % KEY_LEFTMETA, "tap %d" % KEY_K, "release %d" % KEY_LEFTMETA)
    wait_for("Super+K in the app", lambda: "key %d pressed" % KEY_K in
             desktop.read_log("rcomp-run"))
    time.sleep(0.3)
    assert not os.path.exists(SHORTCUT_FLAG), "the desktop took Super+K while inhibited"
    kb.send("tap %d" % KEY_O)  # the app destroys its inhibitor; the viewer follows
    time.sleep(0.5)
    kb.send("press %d" % KEY_LEFTMETA, "tap %d" % KEY_K, "release %d" % KEY_LEFTMETA)
    wait_for("the desktop to run its Super+K", lambda: os.path.exists(SHORTCUT_FLAG))
    os.unlink(SHORTCUT_FLAG)


@pytest.mark.desktop(extra="bindsym Mod4+k exec touch %s\n" % SHORTCUT_FLAG)
@pytest.mark.parametrize("driver", ["wayland", "x11"])
def test_a_keyboard_grabbing_sdl2_game_gets_the_desktops_key_combinations(desktop, driver):
    """SDL2's testrelative with --keyboard-grab, natively (SDL inhibits
    shortcuts) and through Xwayland (SDL grabs the X keyboard, and Xwayland
    asks rcomp-run for a keyboard grab): Super+K reaches the game, not the
    local desktop's binding."""
    if os.path.exists(SHORTCUT_FLAG):
        os.unlink(SHORTCUT_FLAG)
    server = desktop.start_server(["env", "SDL_VIDEODRIVER=" + driver,
                                   "SDL_RENDER_DRIVER=software", SDL_RELATIVE,
                                   "--keyboard-grab", "--info", "event"])
    desktop.start_viewer(server, ["-v"])
    w = wait_for("the game's window", lambda: desktop.windows(), timeout=30)[0]
    kb = VirtualKeyboard(desktop)
    desktop.swaymsg("[pid=%d] focus" % w["pid"])

    def typed():
        # An X11 window takes the keyboard a little after it is activated:
        # a key before that reaches nobody.
        kb.send("tap %d" % KEY_LEFTSHIFT)
        return "key pressed" in desktop.read_log("rcomp-run")
    wait_for("the keyboard in the game", typed, interval=0.3)
    wait_for("shortcuts inhibited locally", lambda: "shortcuts inhibited" in
             desktop.read_log("rcomp-view"))
    kb.send("press %d" % KEY_LEFTMETA, "tap %d" % KEY_K, "release %d" % KEY_LEFTMETA)
    wait_for("Super+K in the game", lambda: re.search(r"key pressed .* = K\b",
                                                      desktop.read_log("rcomp-run")))
    time.sleep(0.3)
    assert not os.path.exists(SHORTCUT_FLAG), "the desktop took Super+K from the game"


# The same behaviours in the browser viewer.


def test_a_click_in_the_browser_reaches_the_app_at_its_place(desktop, page):
    x, y, _, _ = open_input_client(desktop, page)
    page.click(x + 150, y + 120)
    wait_for("the click on the subsurface", lambda: "button sub 272 released"
             in remote_log(desktop))
    assert "sub 50.00 20.00" in remote_log(desktop)
    page.click(x + 20, y + 30, button="right")
    wait_for("the right click on the main surface", lambda: "button main 273 pressed"
             in remote_log(desktop))


def test_keys_typed_in_the_browser_reach_the_app_as_the_layout_types_them(desktop, page):
    x, y, _, _ = open_input_client(desktop, page)
    page.click(x + 20, y + 30)
    wait_for("keyboard focus on the app", lambda: "key-enter main" in remote_log(desktop))
    page.key("KeyA")
    wait_for("the key a", lambda: "key 30 pressed" in remote_log(desktop))
    assert "keysym a" in remote_log(desktop)
    page.key("ShiftLeft", "down")
    page.key("KeyA")
    page.key("ShiftLeft", "up")
    wait_for("shift and a typing A", lambda: "keysym A" in remote_log(desktop))
    assert 'keymap: layout "us"' in remote_log(desktop)


def test_a_layout_named_in_the_address_is_the_sessions_keymap(desktop, page):
    x, y, _, _ = open_input_client(desktop, page, "&layout=de")
    page.click(x + 20, y + 30)
    wait_for("keyboard focus on the app", lambda: "key-enter main" in remote_log(desktop))
    wait_for("the German keymap", lambda: 'keymap: layout "de"' in remote_log(desktop))
    # A German browser's z is the key by the T, which types z in the
    # session's German keymap: the key the character came from is kept.
    page.command("keyevents", events=[
        {"type": "keyDown", "key": "z", "code": "KeyY", "text": "z"},
        {"type": "keyUp", "key": "z", "code": "KeyY"}])
    wait_for("the key by the T typing z", lambda: "keysym z" in remote_log(desktop))
    assert "key 21 pressed" in remote_log(desktop)


def test_the_mouses_back_and_forward_buttons_reach_the_app_and_the_page_stays(desktop, page):
    """Buttons a game or an app uses: the browser would go back or forward
    in its history on their release (held as long as a click, 150 ms), and
    leave the session."""
    x, y, _, _ = open_input_client(desktop, page)
    page.eval("history.pushState(null, '', location.href + '&stay=1')")
    # (input-client takes the back button as its resize grip, and a
    # window being resized hears no release.)
    for button, heard in (("back", "button main 275 pressed"),
                          ("forward", "button main 276 released")):
        page.mouse("move", x + 200, y + 30)
        page.mouse("down", button=button)
        time.sleep(0.15)
        page.mouse("up", button=button)
        wait_for("the %s button in the app" % button, lambda: heard in remote_log(desktop))
        time.sleep(0.3)
        assert page.eval("location.hash.endsWith('&stay=1') && "
                         "window.rcomp.session().connected"), "the page went %s" % button


def test_the_wheel_in_the_browser_scrolls_the_app(desktop, page):
    x, y, _, _ = open_input_client(desktop, page)
    page.mouse("move", x + 20, y + 30)
    page.mouse("wheel", deltaY=120)
    wait_for("a scroll on the app", lambda: "axis 0 " in remote_log(desktop))


def test_a_view_only_browser_viewer_cannot_type_or_click(desktop, page):
    server, url = web_session(desktop, (INPUT_CLIENT,))
    desktop.start_viewer(server)
    wait_for("rcomp-view's window", lambda: desktop.window(title="rcomp input test"))
    page.open(url + "#token=" + TOKEN + "&view-only=1")
    page.window("rcomp input test")
    x, y, _, _ = page.canvas_box("rcomp input test")
    before = remote_log(desktop).count("button ")
    page.click(x + 20, y + 30)
    page.key("KeyA")
    page.wait("window.rcomp.session().viewers && window.rcomp.session().viewers.count === 2")
    time.sleep(1)
    assert remote_log(desktop).count("button ") == before
    assert "key 30 pressed" not in remote_log(desktop)


def test_a_pointer_lock_the_app_asks_for_is_taken_at_the_next_click_and_moves_by_relative_motion(
        desktop, page):
    """input-client locks the pointer (its L key). A browser locks only on a
    user's gesture: the next click in the window takes the lock, the app
    hears "locked", and the mouse's motion reaches it as relative motion,
    not as the pointer moving. The app ends the lock (U) and the page's
    lock ends with it."""
    x, y, _, _ = open_input_client(desktop, page)
    page.click(x + 20, y + 30)
    wait_for("keyboard focus on the app", lambda: "key-enter main" in remote_log(desktop))
    page.key("KeyL")
    page.wait("window.rcomp.session().pointerConstraint === 'lock'")
    assert not page.eval("window.rcomp.session().pointerLocked"), "locked without a gesture"
    assert not re.search(r"^locked$", remote_log(desktop), re.M)
    page.click(x + 40, y + 40)
    page.wait("window.rcomp.session().pointerLocked")
    wait_for("the lock, granted by the page", lambda: re.search(
        r"^locked$", remote_log(desktop), re.M))
    motions = len(re.findall(r"^motion main", remote_log(desktop), re.M))
    page.mouse("move", x + 49, y + 44)
    wait_for("relative motion while locked", lambda: "relative 9.00 4.00" in remote_log(desktop))
    assert len(re.findall(r"^motion main", remote_log(desktop), re.M)) == motions, \
        "the locked pointer moved in the app"
    page.key("KeyU")
    page.wait("window.rcomp.session().pointerLocked === false")


def test_an_app_that_asks_for_fullscreen_after_a_key_fills_the_screen_with_the_keyboard_locked(
        desktop, page):
    """As a game goes fullscreen on a key: within the browser's seconds of
    the user's gesture the page takes the screen and locks the keyboard
    (so Escape and the browser's shortcuts go to the app); the app hears it
    is fullscreen. The app leaves fullscreen, and so does the page."""
    server = open_model(desktop, page, "states", "model states")
    x, y, _, _ = page.canvas_box("model states")
    page.click(x + 10, y + 10)
    step(desktop, server, 1)  # set_fullscreen
    page.wait("window.rcomp.session().fullscreen && window.rcomp.session().keyboardLocked")
    wait_for("the app's fullscreen configure", lambda: re.search(
        r"^configure \d+ \d+ .*fullscreen", remote_log(desktop), re.M))
    step(desktop, server, 2)  # unset_fullscreen
    page.wait("!window.rcomp.session().fullscreen && !window.rcomp.session().keyboardLocked")


def test_a_composition_in_the_browser_shows_in_the_apps_text_input_and_its_end_is_typed(
        desktop, page):
    """The preedit is the app's text input's; the text that ends it comes
    once, as a key typing it, after a change that clears the preedit (foot
    drops a text input's commit that races its own)."""
    x, y, _, _ = open_input_client(desktop, page)
    page.click(x + 20, y + 30)
    wait_for("the app's text input", lambda: "ti-enter" in remote_log(desktop))
    page.command("compose", text="ni")
    wait_for("the preedit", lambda: "ti-preedit ni|2|2" in remote_log(desktop))
    page.type("\u4f60")
    wait_for("the character typed", lambda: "keysym U4F60" in remote_log(desktop))
    after = remote_log(desktop).split("ti-preedit ni|2|2\n", 1)[1]
    before_key = [line for line in after.split("keysym U4F60")[0].splitlines()
                  if line.startswith("ti-")]
    assert before_key[:2] == ["ti-done", "ti-done"], before_key
    assert "ti-commit" not in remote_log(desktop)


def test_a_tap_in_the_browser_is_a_touch_on_the_app(desktop, page):
    x, y, _, _ = open_input_client(desktop, page)
    page.command("touch", **{"do": "tap", "x": x + 40, "y": y + 50})
    wait_for("the touch", lambda: "touch-down" in remote_log(desktop) and "touch-up"
             in remote_log(desktop))
    assert re.search(r"touch-down \d+ main 40\.00 50\.00", remote_log(desktop))


def test_keymap_names_that_are_not_names_are_refused_and_the_keymap_stays(desktop, page):
    x, y, _, _ = open_input_client(desktop, page, "&layout=../../etc/passwd")
    wait_for("the refusal", lambda: "keymap names have a byte 0x2e no name has"
             in remote_log(desktop))
    page.click(x + 20, y + 30)
    wait_for("keyboard focus on the app", lambda: "key-enter main" in remote_log(desktop))
    page.key("KeyA")
    wait_for("the key typing a under the keymap kept", lambda: "keysym a" in remote_log(desktop))


# Characters as typed (the page's key_char): a printable character goes as
# that character whatever the browser's layout or the key event's modifiers
# say; shortcuts keep their physical keys.

# Where a layout has a character: its key (KeyboardEvent.code) and the
# modifier that reaches it (Shift, AltGraph or none).
GERMAN = {"$": ("Digit4", "Shift"), "(": ("Digit8", "Shift"), ")": ("Digit9", "Shift"),
          "*": ("BracketRight", "Shift"), "|": ("IntlBackslash", "AltGraph"),
          "~": ("BracketRight", "AltGraph"), "@": ("KeyQ", "AltGraph"),
          "{": ("Digit7", "AltGraph"), "}": ("Digit0", "AltGraph"), "z": ("KeyY", None),
          "y": ("KeyZ", None), "\u00e4": ("Quote", None), "-": ("Slash", None)}
US = {"$": ("Digit4", "Shift"), "(": ("Digit9", "Shift"), ")": ("Digit0", "Shift"),
      "*": ("Digit8", "Shift"), "|": ("Backslash", "Shift"), "~": ("Backquote", "Shift"),
      "@": ("Digit2", "Shift"), "{": ("BracketLeft", "Shift"), "}": ("BracketRight", "Shift"),
      "z": ("KeyZ", None), "y": ("KeyY", None), "-": ("Minus", None)}
MODIFIER_KEYS = {"Shift": ("ShiftLeft", 8), "AltGraph": ("AltRight", 0)}


def layout_events(text, layout):
    """The key events a browser with layout makes for text: each character
    on its key, with Shift or AltGr held around it as that layout needs."""
    events = []
    for ch in text:
        code, held = layout.get(ch, ("Digit" + ch if ch.isdigit() else "Key" + ch.upper(), None))
        mods = 0
        if held:
            mcode, mods = MODIFIER_KEYS[held]
            events.append({"type": "keyDown", "key": held, "code": mcode, "modifiers": mods})
        events.append({"type": "keyDown", "key": ch, "code": code, "modifiers": mods, "text": ch})
        events.append({"type": "keyUp", "key": ch, "code": code, "modifiers": mods})
        if held:
            events.append({"type": "keyUp", "key": held, "code": MODIFIER_KEYS[held][0]})
    return events


def typing_line(desktop, page, app, fragment="", run=False):
    """app (foot or xterm) reading one line into a file (and with run, its
    shell running it), focused in the page; returns that file's path."""
    out = os.path.join(desktop.tmp, "typed.txt")
    script = 'read l; printf "%%s\\n" "$l" > %s' % out + ('; eval "$l"' if run else "")
    argv = {"foot": ["foot", "sh", "-c", script],
            "xterm": ["xterm", "-e", "sh", "-c", script]}[app]
    _, url = web_session(desktop, argv)
    page.open(url + "#token=" + TOKEN + fragment)
    page.wait("window.rcomp.stats().find((w) => w.presented > 0)")
    x, y, _, _ = page.eval("(() => { const r = document.querySelector('.rcomp-window canvas')"
                           ".getBoundingClientRect(); return [r.left, r.top, r.width, "
                           "r.height]; })()")
    page.click(x + 40, y + 40)
    wait_for("the keymap and the focus", lambda: "keymap: layout" in remote_log(desktop))
    time.sleep(0.5)  # the app has its keymap
    return out


@pytest.mark.parametrize("app", ["foot", "xterm"])
def test_characters_whose_key_events_carry_no_shift_reach_the_app_as_typed(desktop, page, app):
    """puppeteer's keyboard.type sends '$' as the key Digit4 with no Shift;
    the shell gets the command as written and runs it. The 'é' no key of
    the US keymap types reaches both on a spare key of the keymap (foot's text
    input would drop a commit sent as it moved its cursor)."""
    out = typing_line(desktop, page, app, run=True)
    page.command("keyboard_type", text="echo answered-$((6*7))-\u00e9 | tee ~/proof.txt")
    page.key("Enter")
    got = wait_for("the typed line", lambda: os.path.exists(out) and open(out).read())
    assert got == "echo answered-$((6*7))-\u00e9 | tee ~/proof.txt\n", repr(got)
    proof = os.path.join(desktop.tmp, "proof.txt")
    wait_for("the shell's proof", lambda: os.path.exists(proof) and open(proof).read())
    assert open(proof).read() == "answered-42-\u00e9\n"


@pytest.mark.parametrize("browser,session", [("de", "us"), ("us", "de")])
def test_a_browser_layout_other_than_the_sessions_types_its_own_characters(desktop, page,
                                                                            browser, session):
    """Key events as a German browser makes them against a US session, and
    US ones against a German session: each character arrives as the
    browser's layout typed it, not as the session's layout reads the
    physical key."""
    text = "zy$((6*7))|~@{}-" + ("\u00e4" if browser == "de" else "")
    out = typing_line(desktop, page, "foot", "&layout=" + session)
    wait_for("the session's layout", lambda: 'keymap: layout "%s"' % session
             in remote_log(desktop))
    page.command("keyevents", events=layout_events(text, GERMAN if browser == "de" else US))
    page.key("Enter")
    got = wait_for("the typed line", lambda: os.path.exists(out) and open(out).read())
    assert got == text + "\n", repr(got)


def test_a_shortcut_keeps_its_physical_key_whatever_the_browsers_layout(desktop, page):
    """Ctrl with the key a German layout calls z (KeyY) reaches the app as
    Ctrl and that key (KEY_Y, 21), as on the local desktop; without Ctrl
    the same key types z."""
    x, y, _, _ = open_input_client(desktop, page, "&layout=us")
    page.click(x + 20, y + 30)
    wait_for("keyboard focus on the app", lambda: "key-enter main" in remote_log(desktop))
    page.command("keyevents", events=[
        {"type": "keyDown", "key": "Control", "code": "ControlLeft", "modifiers": 2},
        {"type": "keyDown", "key": "z", "code": "KeyY", "modifiers": 2},
        {"type": "keyUp", "key": "z", "code": "KeyY", "modifiers": 2},
        {"type": "keyUp", "key": "Control", "code": "ControlLeft"}])
    wait_for("Ctrl and the key Y", lambda: "key 21 pressed" in remote_log(desktop))
    before, after = remote_log(desktop).split("key 21 pressed", 1)
    assert before.rstrip().endswith("modifiers 4 0 0 0"), before[-300:]
    assert after.split("\n")[1] == "keysym y"
    page.command("keyevents", events=layout_events("z", GERMAN))
    wait_for("the key that types z", lambda: "keysym z" in remote_log(desktop))
