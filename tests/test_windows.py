"""A faithful window model: popups as local popups, nested, with grabs and
dismissal both ways. Run one case: python3 test_windows.py CASE."""
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rig import (Failure, RCOMP_RUN, TEST_CLIENTS, descendant, hello, log, main,  # noqa: E402
                 wait_for)
from test_e2e import VirtualPointer  # noqa: E402

INPUT_CLIENT = os.path.join(TEST_CLIENTS, "input-client")
MODEL_CLIENT = os.path.join(TEST_CLIENTS, "model-client")
VKEYBOARD = os.path.join(TEST_CLIENTS, "vkeyboard")
KEY_2, KEY_MINUS, KEY_Y, KEY_A, KEY_Z, KEY_LEFTSHIFT = 3, 12, 21, 30, 44, 42


class VirtualKeyboard:
    """tests/clients/vkeyboard: a local keyboard with the layout we choose."""
    def __init__(self, rig):
        self.proc = rig.start("vkeyboard", [VKEYBOARD], rig.local_env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def send(self, *lines):
        for line in lines:
            self.proc.stdin.write(line + "\n")
        self.proc.stdin.write("sync\n")
        self.proc.stdin.flush()
        if self.proc.stdout.readline().strip() != "ok":
            raise Failure("the virtual keyboard did not answer")


def keysyms(rig):
    return re.findall(r"^keysym (\S+)$", rig.read_log("rcomp-run"), re.M)
BTN_LEFT, BTN_RIGHT, BTN_MIDDLE = 272, 273, 274
BLUE, ORANGE = (0x20, 0x40, 0xe0), (0xe0, 0x80, 0x20)
GREY, RED, MAGENTA = (0x80, 0x80, 0x80), (0xe0, 0x20, 0x20), (0xe0, 0x20, 0xe0)
YELLOW, CYAN, GREEN = (0xe0, 0xe0, 0x20), (0x20, 0xe0, 0xe0), (0x20, 0xc0, 0x20)


def step(rig, server, n):
    """Moves model-client on to step n and waits until it has done it."""
    pid = wait_for("model-client's process", lambda: descendant(server.pid, "model-client"))
    os.kill(pid, signal.SIGUSR1)
    wait_for("model-client's step %d" % n,
             lambda: "step %d" % n in rig.read_log("rcomp-run").split("\n"))


def pixels_are(rig, w, expected):
    """True when every window-relative point in expected has its colour."""
    return all(rig.pixel(x, y, w) == c for (x, y), c in expected.items())


def wait_window(rig, title, width, height):
    def sized():
        w = rig.window(title=title)
        return w if w and (w["rect"]["width"], w["rect"]["height"]) == (width, height) else None
    return wait_for("%s at %dx%d" % (title, width, height), sized)


def case_subsurfaces(rig):
    """Subsurfaces are composited in order, nested, below the parent and
    past its edge; synchronized changes land with the parent's commit and a
    desynchronized one's unmapping at once."""
    server = rig.start_server([MODEL_CLIENT, "subsurfaces"])
    rig.start_viewer(server)
    # B (80x80 at 160,110) reaches past the 200x150 toplevel: 240x190.
    w = wait_window(rig, "model subsurfaces", 240, 190)
    first = {(5, 5): GREY, (25, 25): RED, (35, 35): MAGENTA, (55, 55): RED,
             (200, 170): YELLOW, (170, 120): GREY, (199, 149): GREY}
    wait_for("the composited subsurfaces", lambda: pixels_are(rig, w, first), interval=0.2)
    step(rig, server, 1)
    # A moved to (100,40), C turned cyan, B unmapped: 200x150 again.
    w = wait_window(rig, "model subsurfaces", 200, 150)
    second = {(25, 25): GREY, (105, 45): RED, (115, 55): CYAN, (125, 65): CYAN,
              (155, 95): RED, (5, 5): GREY, (170, 120): GREY}
    wait_for("the moved subsurface and the new colour", lambda: pixels_are(rig, w, second),
             interval=0.2)
    rig.check_alive(server)
    log("subsurfaces: nested, below the parent and past its edge (240x190), then moved, "
        "recoloured and unmapped (200x150): every checked pixel right")


def case_windows(rig):
    """One app's several toplevels are several local windows; a dialog keeps
    its parent (headless sway floats a toplevel that has one, and tiles the
    others); windows come and go with the app's; a second app under the same
    rcomp-run gets its own window."""
    server = rig.start_server(["sh", "-c", "%s & exec %s windows" % (INPUT_CLIENT,
                                                                    MODEL_CLIENT)])
    rig.start_viewer(server)
    main_w = wait_for("the main window", lambda: rig.window(title="model main"))
    wait_for("the other app's window", lambda: rig.window(app_id="rcomp-input-test"))
    step(rig, server, 1)
    dialog = wait_for("the dialog", lambda: rig.window(title="model dialog"))
    step(rig, server, 2)
    other = wait_for("the second toplevel", lambda: rig.window(title="model other"))
    main_w = rig.window(title="model main")
    kinds = {t: rig.window(title=t)["type"] for t in ("model main", "model dialog",
                                                      "model other")}
    if kinds != {"model main": "con", "model dialog": "floating_con", "model other": "con"}:
        raise Failure("only the dialog should float above its parent: %r" % kinds)
    wait_for("the dialog's pixels", lambda: rig.pixel(80, 50, dialog) == GREEN, interval=0.2)
    wait_for("the main window's pixels", lambda: rig.pixel(20, 20, main_w) == BLUE,
             interval=0.2)
    wait_for("the second toplevel's pixels", lambda: rig.pixel(20, 20, other) == ORANGE,
             interval=0.2)
    step(rig, server, 3)
    wait_for("the dialog to go", lambda: rig.window(title="model dialog") is None)
    step(rig, server, 4)
    wait_for("the second toplevel to go", lambda: rig.window(title="model other") is None)
    if not rig.window(title="model main") or not rig.window(app_id="rcomp-input-test"):
        raise Failure("a window that should stay went")
    # Title and app_id changes show live.
    step(rig, server, 5)
    wait_for("the new title and app_id", lambda: rig.window(title="model renamed") and
             rig.window(title="model renamed")["app_id"] == "rcomp-model-renamed")
    rig.check_alive(server)
    # Real apps: two under one rcomp-run, each its own local window.
    apps = rig.start_server(["sh", "-c", "foot & exec weston-terminal"], name="two-apps")
    rig.start_viewer(apps, name="two-apps-viewer")
    wait_for("foot's and weston-terminal's windows",
             lambda: rig.window(app_id="foot") and
             rig.window(app_id="org.freedesktop.weston.wayland-terminal"), timeout=30)
    rig.check_alive(apps)
    log("windows: main, a dialog with a parent (floated by sway, as for a local dialog), "
        "a second toplevel and a second app's window appeared; the dialog and the "
        "second toplevel went when the app destroyed them; a new title and app_id "
        "showed live; foot and weston-terminal under one rcomp-run are two windows")


def case_popups(rig):
    """A right click opens the app's popup, which appears as a local popup
    reaching past its parent's edges (so it cannot be clipped into the
    parent's picture); a nested one opens from it; the app closes the nested
    one itself (on a middle click); a click outside dismisses the first
    locally and the app hears popup_done."""
    server = rig.start_server([INPUT_CLIENT])
    rig.start_viewer(server)
    w = wait_for("the window", lambda: rig.window(app_id="rcomp-input-test"))
    r = w["rect"]
    rig.swaymsg("[app_id=rcomp-input-test] focus")
    pointer = VirtualPointer(rig)
    time.sleep(0.5)
    ox, oy = r["x"], r["y"]
    pointer.send("move %d %d" % (ox + 10, oy + 10))
    time.sleep(0.2)
    pointer.send("move %d %d" % (ox + 350, oy + 250))
    wait_for("the pointer at 350,250", lambda: "main 350.00 250.00" in rig.read_log("rcomp-run"))
    pointer.send("press %d" % BTN_RIGHT, "release %d" % BTN_RIGHT)
    wait_for("the app to open its popup", lambda: "popup-open 0" in rig.read_log("rcomp-run"))
    # 120x80 from (350,250) of a 400x300 window: 70 px past the right edge.
    outside = (ox + 440, oy + 320)
    inside = (ox + 380, oy + 270)
    wait_for("the popup's pixels past the parent's edge",
             lambda: rig.pixel(*outside) == BLUE and rig.pixel(*inside) == BLUE,
             interval=0.2)
    if len([x for x in rig.windows() if x["app_id"] == "rcomp-input-test"]) != 1:
        raise Failure("the popup became a toplevel window")

    # A nested popup from inside the first.
    pointer.send("move %d %d" % (ox + 410, oy + 290))
    wait_for("the pointer on the popup at 60,40",
             lambda: "popup0 60.00 40.00" in rig.read_log("rcomp-run"))
    pointer.send("press %d" % BTN_RIGHT, "release %d" % BTN_RIGHT)
    wait_for("the nested popup", lambda: "popup-open 1" in rig.read_log("rcomp-run"))
    nested = (ox + 500, oy + 340)  # (410,290) + 100x60, past both popups' edges
    wait_for("the nested popup's pixels", lambda: rig.pixel(*nested) == ORANGE,
             interval=0.2)

    # The app closes the nested one (on a middle click): the local popup goes.
    pointer.send("press %d" % BTN_MIDDLE, "release %d" % BTN_MIDDLE)
    wait_for("the app to close its nested popup",
             lambda: "popup-closed 1" in rig.read_log("rcomp-run"))
    wait_for("the nested popup to vanish", lambda: rig.pixel(*nested) != ORANGE,
             interval=0.2)
    if rig.pixel(*outside) != BLUE:
        raise Failure("the first popup went with the nested one")

    # A click outside every window dismisses the popup here, and there.
    pointer.send("move 3 3")
    time.sleep(0.3)
    pointer.send("press %d" % BTN_LEFT, "release %d" % BTN_LEFT)
    wait_for("the app to hear popup_done", lambda: "popup-done 0" in rig.read_log("rcomp-run"))
    wait_for("the popup to vanish", lambda: rig.pixel(*outside) != BLUE, interval=0.2)
    rig.check_alive(server)
    log("popup at (350,250) 120x80 drawn past the parent's edge at %s; nested popup drawn at "
        "%s; the app closed the nested one; a click outside dismissed the "
        "first (app printed popup-done)" % (outside, nested))


def case_cursor(rig):
    """The cursor the app sets becomes the local cursor over its window, with
    its hotspot; a change follows; a hidden cursor stays hidden. (Headless
    sway draws the cursor into its screenshots.)"""
    server = rig.start_server([MODEL_CLIENT, "cursor"])
    rig.start_viewer(server)
    w = wait_for("the window", lambda: rig.window(title="model cursor"))
    pointer = VirtualPointer(rig)
    time.sleep(0.5)
    r = w["rect"]
    pointer.send("move %d %d" % (r["x"] + 10, r["y"] + 10))
    px, py = r["x"] + 150, r["y"] + 100
    pointer.send("move %d %d" % (px, py))
    wait_for("the pointer to enter the remote app",
             lambda: "pointer-enter" in rig.read_log("rcomp-run"))
    at = lambda points: all(rig.pixel(px + dx, py + dy) == c  # noqa: E731
                            for (dx, dy), c in points.items())
    # 16x16 magenta, hotspot (8,8): from (px-8,py-8) to (px+7,py+7).
    magenta = {(-8, -8): MAGENTA, (7, 7): MAGENTA, (0, 0): MAGENTA, (9, 9): BLUE,
               (-9, -9): BLUE}
    wait_for("the app's cursor under the pointer", lambda: at(magenta), interval=0.2)
    step(rig, server, 1)
    # 24x24 cyan, hotspot (0,0): from (px,py) to (px+23,py+23).
    cyan = {(0, 0): CYAN, (23, 23): CYAN, (-2, -2): BLUE, (24, 24): BLUE}
    wait_for("the changed cursor", lambda: at(cyan), interval=0.2)
    step(rig, server, 2)
    hidden = {(0, 0): BLUE, (5, 5): BLUE, (20, 20): BLUE, (-5, -5): BLUE}
    wait_for("the cursor to hide", lambda: at(hidden), interval=0.2)
    # Still hidden after the pointer moves within the window.
    pointer.send("move %d %d" % (px + 30, py + 20))
    px, py = px + 30, py + 20
    time.sleep(0.5)
    if not at(hidden):
        raise Failure("the hidden cursor came back when the pointer moved")
    rig.check_alive(server)
    log("cursor: the app's 16x16 cursor drawn with its (8,8) hotspot, its change to "
        "24x24 with (0,0), and hiding it, all followed locally")


def case_scale(rig):
    """At sway output scale 2 the app renders at scale 2 and the viewer shows
    its buffer at buffer_scale 2: a checkerboard of single buffer pixels
    reaches the screen pixel for pixel, in a window of the app's logical
    size."""
    server = rig.start_server([MODEL_CLIENT, "scale"])
    rig.start_viewer(server)
    w = wait_window(rig, "model scale", 200, 150)
    wait_for("the app to draw at scale 2",
             lambda: "scale 2" in rig.read_log("rcomp-run").split("\n"))
    last = {}

    def sharp():
        w = rig.window(title="model scale")
        rect = {"x": w["rect"]["x"] + 50, "y": w["rect"]["y"] + 50, "width": 20, "height": 20}
        width, height, px = rig.screenshot(rect)
        last["size"] = (width, height)
        if (width, height) != (40, 40):
            return False
        wrong = sum(1 for y in range(40) for x in range(40)
                    if px[(y * 40 + x) * 3:(y * 40 + x) * 3 + 3]
                    != (b"\xff\xff\xff" if (x + y) % 2 else b"\0\0\0"))
        last["wrong"] = wrong
        return wrong == 0
    try:
        wait_for("a pixel-sharp checkerboard (20x20 at scale 2 = 40x40 pixels)", sharp,
                 interval=0.3)
    except Failure:
        raise Failure("not pixel-sharp: %r" % last)
    w = rig.window(title="model scale")
    if (w["rect"]["width"], w["rect"]["height"]) != (200, 150):
        raise Failure("the window is %dx%d, not 200x150" % (w["rect"]["width"],
                                                          w["rect"]["height"]))
    rig.check_alive(server)
    log("scale 2: the app drew at scale 2, 40x40 screen pixels of a one-pixel "
        "checkerboard all exact, the window 200x150 logical")


def case_states(rig):
    """Size hints reach the local compositor before the window maps (sway
    floats a window whose minimum and maximum size agree); fullscreen works
    both ways; the activated state follows local focus."""
    server = rig.start_server([MODEL_CLIENT, "states"])
    rig.start_viewer(server)
    w = wait_for("the window", lambda: rig.window(title="model states"))
    if w["type"] != "floating_con" or (w["rect"]["width"], w["rect"]["height"]) != (300, 200):
        raise Failure("a 300x200 window with fixed size hints should float at 300x200, "
                      "not %s %dx%d" % (w["type"], w["rect"]["width"], w["rect"]["height"]))
    configures = lambda: re.findall(r"^configure (\d+) (\d+)(.*)$",  # noqa: E731
                                    rig.read_log("rcomp-run"), re.M)
    wait_for("the app to be activated", lambda: "activated" in configures()[-1][2])
    fullscreen = lambda: rig.window(title="model states")["fullscreen_mode"] == 1  # noqa: E731
    # The app asks: the local window goes fullscreen and the app hears so.
    step(rig, server, 1)
    wait_for("the local window to go fullscreen", fullscreen)
    wait_for("the app to be told it is fullscreen",
             lambda: configures()[-1][:2] == ("1280", "800") and "fullscreen"
             in configures()[-1][2])
    step(rig, server, 2)
    wait_for("the local window to leave fullscreen", lambda: not fullscreen())
    wait_for("the app to be told", lambda: "fullscreen" not in configures()[-1][2])
    # The user asks, locally.
    rig.swaymsg('[title="model states"] fullscreen enable')
    wait_for("the app to be told it is fullscreen",
             lambda: "fullscreen" in configures()[-1][2])
    rig.swaymsg('[title="model states"] fullscreen disable')
    wait_for("the app to be told it is not", lambda: "fullscreen" not in configures()[-1][2])
    # Focus moves to a local window: the remote app is deactivated.
    rig.start("local-client", [INPUT_CLIENT, "local-window"], rig.local_env)
    wait_for("the app to be deactivated", lambda: "activated" not in configures()[-1][2])
    rig.swaymsg('[title="model states"] focus')
    wait_for("the app to be activated again", lambda: "activated" in configures()[-1][2])
    # sway 1.7 implements neither maximize nor minimize; the requests must
    # still pass without harm.
    for n in (3, 4, 5):
        step(rig, server, n)
    rig.check_alive(server)
    log("states: fixed-size hints floated the window at 300x200 before it mapped; "
        "fullscreen asked by the app and by the user reached the other side; "
        "activated followed local focus")


def title_bar_drawn_by_app(rig, app_id):
    """True if the app drew something else at the top of its window (its own
    title bar) than deep in it (its content)."""
    w = rig.window(app_id=app_id)
    x = w["rect"]["x"] + w["window_rect"]["x"] + 40
    y = w["rect"]["y"] + w["window_rect"]["y"]
    return rig.pixel(x, y + 6) != rig.pixel(x, y + 80)


def case_decorations(rig):
    """rcomp-run offers xdg-decoration. foot asks for server-side decorations
    (floating windows, where sway leaves apps that draw their own alone):
    as sway draws them, foot gets them and sway draws the title bar, foot
    none. An app without xdg-decoration draws its own, and sway none. With
    rcomp-view --app-decorations, foot draws its own and sway none."""
    server = rig.start_server(["sh", "-c", "%s & exec foot" % INPUT_CLIENT])
    viewer = rig.start_viewer(server)
    wait_for("foot's window", lambda: rig.window(app_id="foot"))
    wait_for("the other window", lambda: rig.window(app_id="rcomp-input-test"))
    wait_for("sway to decorate foot",
             lambda: rig.window(app_id="foot")["border"] == "normal", interval=0.2)
    if rig.window(app_id="rcomp-input-test")["border"] != "csd":
        raise Failure("sway decorates the app that draws its own: %s"
                      % rig.window(app_id="rcomp-input-test")["border"])
    time.sleep(1)
    if title_bar_drawn_by_app(rig, "foot"):
        raise Failure("foot drew its own title bar under sway's")
    viewer.terminate()
    viewer.wait(timeout=20)
    wait_for("the windows to go", lambda: not rig.window(app_id="foot"))
    rig.start_viewer(server, ["--app-decorations"], name="app-decorations-viewer")
    wait_for("foot's window", lambda: rig.window(app_id="foot"))
    wait_for("foot to draw its own title bar", lambda: title_bar_drawn_by_app(rig, "foot"),
             interval=0.3)
    if rig.window(app_id="foot")["border"] != "csd":
        raise Failure("sway still decorates foot: %s" % rig.window(app_id="foot")["border"])
    rig.check_alive(server)
    log("decorations: with sway drawing them foot drew none (border normal, one title "
        "bar); an app without xdg-decoration drew its own (border csd); with "
        "--app-decorations foot drew its own and sway none")


def sha(path):
    import hashlib
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def case_clipboard(rig):
    """Clipboard and primary selection both ways, with wl-copy and wl-paste
    on each side: every offered MIME type is kept, data moves only when
    pasted, and 10 MB arrive intact."""
    server = rig.start_server([INPUT_CLIENT])
    rig.start_viewer(server)
    wait_for("the window to have focus",
             lambda: (rig.window(app_id="rcomp-input-test") or {}).get("focused"))
    # A keyboard, so that the viewer has focus and serials to set selections.
    kb = VirtualKeyboard(rig)
    kb.send("tap %d" % KEY_LEFTSHIFT)
    wait_for("keyboard focus in the remote app", lambda: "key-enter main" in
             rig.read_log("rcomp-run"))
    remote = dict(rig.remote_env, WAYLAND_DISPLAY="wayland-0")
    local = rig.local_env

    def run(env, *argv, **kw):
        if argv[0] == "wl-copy":
            # It forks to serve the selection: its output never closes.
            kw.setdefault("stdout", subprocess.DEVNULL)
            kw["stderr"] = subprocess.DEVNULL
        elif "stdout" not in kw:
            kw["capture_output"] = True
        return subprocess.run(list(argv), env=env, timeout=60, **kw)

    def types(env, primary=False):
        r = run(env, "wl-paste", "--list-types", *(["--primary"] if primary else []))
        return sorted(r.stdout.decode().split()) if r.returncode == 0 else []

    # Remote to local: text, with every type wl-copy offers.
    run(remote, "wl-copy", "remote text")
    offered = types(remote)
    wait_for("the remote text's types locally %s" % offered,
             lambda: offered and types(local) == offered)
    got = run(local, "wl-paste", "--no-newline").stdout
    if got != b"remote text":
        raise Failure("local paste gave %r" % got)

    # 10 MB, both ways; nothing moves until a paste.
    big = os.path.join(rig.tmp, "big")
    with open(big, "wb") as f:
        f.write(os.urandom(10 << 20))
    with open(big, "rb") as f:
        run(remote, "wl-copy", "--type", "application/x-rcomp-test", stdin=f)
    wait_for("the big selection's type locally",
             lambda: types(local) == ["application/x-rcomp-test"])
    moved = lambda: re.findall(r"clipboard: moved (\d+) bytes to the viewer",  # noqa: E731
                               rig.read_log("rcomp-run"))
    before = len(moved())
    time.sleep(0.5)
    if len(moved()) != before:
        raise Failure("clipboard data moved before anyone pasted")
    out = os.path.join(rig.tmp, "pasted-local")
    start = time.monotonic()
    with open(out, "wb") as f:
        pasting = subprocess.Popen(["wl-paste", "--no-newline", "--type",
                                    "application/x-rcomp-test"], env=local, stdout=f)
        # The other window keeps working meanwhile.
        kb.send("tap %d" % KEY_A)
        pasting.wait(timeout=60)
    local_s = time.monotonic() - start
    wait_for("a key typed during the paste", lambda: "key %d pressed" % KEY_A
             in rig.read_log("rcomp-run"))
    if sha(out) != sha(big):
        raise Failure("10 MB pasted locally differ (%d bytes)" % os.path.getsize(out))
    if moved()[-1:] != [str(10 << 20)]:
        raise Failure("rcomp-run did not report the 10 MB: %s" % moved())

    with open(big, "rb") as f:
        run(local, "wl-copy", "--type", "text/x-local", stdin=f)
    # wl-copy adds the plain text types to a text/ type.
    wait_for("the local selection's types remotely",
             lambda: "text/x-local" in types(remote) and types(remote) == types(local))
    out = os.path.join(rig.tmp, "pasted-remote")
    start = time.monotonic()
    with open(out, "wb") as f:
        run(remote, "wl-paste", "--no-newline", "--type", "text/x-local", stdout=f)
    remote_s = time.monotonic() - start
    if sha(out) != sha(big):
        raise Failure("10 MB pasted remotely differ (%d bytes)" % os.path.getsize(out))

    # Primary selection, both ways.
    run(remote, "wl-copy", "--primary", "remote primary")
    wait_for("the remote primary selection locally",
             lambda: run(local, "wl-paste", "--primary", "--no-newline").stdout
             == b"remote primary")
    run(local, "wl-copy", "--primary", "local primary")
    wait_for("the local primary selection remotely",
             lambda: run(remote, "wl-paste", "--primary", "--no-newline").stdout
             == b"local primary")
    rig.check_alive(server)
    log("clipboard: types %s kept; 10 MB remote to local in %.2f s (%.0f MB/s), local to "
        "remote in %.2f s (%.0f MB/s), intact; primary both ways"
        % (offered, local_s, 10 / local_s, remote_s, 10 / remote_s))


def wire(msg_type, body=b""):
    return struct.pack("<HHI", msg_type, 0, len(body)) + body


def case_touch(rig):
    """Touch from the viewer reaches the app: a point goes down on the
    surface under it (here the subsurface), moves in that surface's
    coordinates, goes up; another is cancelled. The local side cannot make
    touch events on these machines (no uinput; sway 1.7 has no virtual touch
    device), so a client speaking the wire protocol plays the viewer."""
    server = rig.start_server([INPUT_CLIENT])
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(server.socket)
    sock.sendall(hello())
    window = None
    data = b""
    while window is None:
        chunk = sock.recv(1 << 20)
        if not chunk:
            raise Failure("rcomp-run closed the connection")
        data += chunk
        while len(data) >= 8:
            msg_type, _, length = struct.unpack_from("<HHI", data)
            if len(data) < 8 + length:
                break
            if msg_type == 0x0203:
                window = struct.unpack_from("<I", data, 8)[0]
            data = data[8 + length:]
    def drain():
        """Keeps reading, so that frames never back up."""
        try:
            while sock.recv(1 << 20):
                pass
        except OSError:
            pass
    threading.Thread(target=drain, daemon=True).start()
    fx = lambda v: int(v * 256)  # noqa: E731
    sock.sendall(wire(0x0113, struct.pack("<Iiii", window, 5, fx(150.5), fx(150.25))) +
                 wire(0x0116) +
                 wire(0x0115, struct.pack("<iii", 5, fx(160), fx(170))) + wire(0x0116) +
                 wire(0x0114, struct.pack("<i", 5)) + wire(0x0116) +
                 wire(0x0113, struct.pack("<Iiii", window, 6, fx(20), fx(30))) +
                 wire(0x0116) + wire(0x0117))
    expected = ["touch-down 5 sub 50.50 50.25", "touch-frame", "touch-motion 5 60.00 70.00",
                "touch-frame", "touch-up 5", "touch-frame", "touch-down 6 main 20.00 30.00",
                "touch-frame", "touch-cancel"]
    got = lambda: [l for l in rig.read_log("rcomp-run").splitlines()  # noqa: E731
                   if l.startswith("touch-")]
    wait_for("the touch events in the app %s" % expected, lambda: got() == expected)
    sock.shutdown(socket.SHUT_RDWR)
    sock.close()
    rig.check_alive(server)
    log("touch: down on the subsurface at its own 50.5,50.25, motion, up, and a cancelled "
        "point reached the app as sent")


def case_x11(rig):
    """X11 apps run through Xwayland, started on demand: xlogo's pixels, keys
    typed into xterm, and xterm's override-redirect menu shown as a popup
    outside its window. With --no-xwayland an X11 app cannot connect, not
    even to an outer DISPLAY."""
    server = rig.start_server(["sh", "-c", "xlogo -bg '#2040e0' -fg '#e0e020' & "
                               "exec xterm -bg '#2040e0' -fg white -geometry 40x10 "
                               "-e sh -c 'read line; echo \"$line\" > %s/typed; "
                               "sleep 60'" % rig.tmp], ["-v"])
    rig.start_viewer(server)
    logo = wait_for("xlogo's window", lambda: rig.window(app_id="XLogo"), timeout=30)
    wait_for("xlogo's pixels (logo and background)",
             lambda: rig.pixel(3, 3, logo) == YELLOW and rig.pixel(50, 3, logo) == BLUE,
             interval=0.2)
    term = wait_for("xterm's window", lambda: rig.window(app_id="XTerm"), timeout=30)
    rig.swaymsg("[app_id=XTerm] focus")
    wait_for("xterm to have focus", lambda: rig.window(app_id="XTerm")["focused"])
    kb = VirtualKeyboard(rig)
    kb.send("tap %d" % KEY_LEFTSHIFT)
    time.sleep(0.5)
    kb.send("tap 35", "tap 23", "tap 28")  # h i Enter
    typed = os.path.join(rig.tmp, "typed")
    wait_for("what was typed into xterm", lambda: os.path.exists(typed) and
             open(typed).read() == "hi\n")
    # Control and a left click open xterm's main menu: an X11
    # override-redirect window, shown as a local popup of the xterm.
    term = rig.window(app_id="XTerm")
    r = term["rect"]
    pointer = VirtualPointer(rig)
    time.sleep(0.5)
    x, y = r["x"] + r["width"] - 20, r["y"] + r["height"] - 20
    pointer.send("move %d %d" % (r["x"] + 10, r["y"] + 10), "move %d %d" % (x, y))
    outside = (x + 30, y + 40)  # past xterm's bottom right corner
    before = rig.pixel(*outside)
    kb.send("press 29")  # left control
    pointer.send("press %d" % BTN_LEFT)
    wait_for("xterm's menu as a new X11 popup",
             lambda: "(override-redirect)" in rig.read_log("rcomp-run"))
    wait_for("the menu drawn outside xterm's window", lambda: rig.pixel(*outside) != before,
             interval=0.2)
    pointer.send("release %d" % BTN_LEFT)
    kb.send("release 29")
    rig.check_alive(server)

    # Even with DISPLAY naming a live X server (the first session's
    # Xwayland), an app under --no-xwayland must not reach it.
    display = re.search(r"DISPLAY=(:\d+)", rig.read_log("rcomp-run")).group(1)
    blocked = rig.start("no-xwayland", [RCOMP_RUN, "--socket",
                                        os.path.join(rig.remote_rt, "blocked.sock"),
                                        "--no-xwayland", "--", "xlogo"],
                        dict(rig.remote_env, DISPLAY=display))
    if blocked.wait(timeout=20) == 0:
        raise Failure("xlogo ran with --no-xwayland")
    if "xwayland" in rig.read_log("no-xwayland").lower():
        raise Failure("--no-xwayland still set up Xwayland")
    log("X11: xlogo's pixels exact, 'hi' typed into xterm arrived, xterm's menu shown "
        "outside its window as a popup; --no-xwayland (with DISPLAY=%s, a live X server, "
        "outside) kept xlogo from any X server" % display)


def case_maximize(rig):
    """Maximize both ways, on a local compositor that implements it: sway 1.7
    does not, so the viewer shows the remote window on a headless weston
    (desktop shell). The app asks to be maximized and weston's answer
    reaches it; so does the way back; a minimize request passes unharmed."""
    weston_rt = os.path.join(rig.tmp, "weston-rt")
    os.mkdir(weston_rt, 0o700)
    weston_env = dict(rig.local_env, XDG_RUNTIME_DIR=weston_rt, WAYLAND_DISPLAY="wl-weston")
    weston_env.pop("SWAYSOCK", None)
    rig.start("weston", ["weston", "--backend=headless-backend.so", "--use-pixman",
                         "--socket=wl-weston", "--width=1024", "--height=768",
                         "--idle-time=0"], weston_env)
    wait_for("weston's socket", lambda: os.path.exists(os.path.join(weston_rt, "wl-weston")))
    server = rig.start_server([MODEL_CLIENT, "maximize"])
    argv = [os.path.join(os.path.dirname(RCOMP_RUN), "..", "viewer", "rcomp-view"),
            "--socket", server.socket]
    rig.start("rcomp-view", argv, weston_env)
    configures = lambda: re.findall(r"^configure (\d+) (\d+)(.*)$",  # noqa: E731
                                    rig.read_log("rcomp-run"), re.M)
    wait_for("the window on weston", lambda: "frame clock" in rig.read_log("rcomp-run"))
    step(rig, server, 1)
    wait_for("the app to be told it is maximized",
             lambda: configures() and "maximized" in configures()[-1][2])
    width, height = (int(v) for v in configures()[-1][:2])
    if not (900 <= width <= 1024 and 600 <= height <= 768):
        raise Failure("maximized to %dx%d on a 1024x768 weston" % (width, height))
    step(rig, server, 2)
    wait_for("the app to be told it is not", lambda: "maximized" not in configures()[-1][2])
    step(rig, server, 3)
    rig.check_alive(server)
    log("on weston: the app asked to be maximized, weston maximized the local window to "
        "%dx%d and the app heard it; unmaximize likewise; minimize passed"
        % (width, height))


def case_keyboard_layout(rig):
    """The local keymap is forwarded at connect and whenever it changes: a
    German layout types German characters in the remote app, a switch to US
    takes effect at once; a key held when focus leaves never sticks."""
    server = rig.start_server([INPUT_CLIENT])
    rig.start_viewer(server)
    wait_for("the window to have focus",
             lambda: (rig.window(app_id="rcomp-input-test") or {}).get("focused"))
    kb = VirtualKeyboard(rig)
    kb.send("layout de")
    # The first key of a new keyboard makes it (and its keymap) the seat's.
    kb.send("tap %d" % KEY_LEFTSHIFT)
    wait_for("the first key", lambda: keysyms(rig))
    keymaps = rig.read_log("rcomp-run").count("keymap ")
    n = len(keysyms(rig))
    kb.send("tap %d" % KEY_Y, "tap %d" % KEY_Z, "tap %d" % KEY_MINUS,
            "press %d" % KEY_LEFTSHIFT, "tap %d" % KEY_2, "release %d" % KEY_LEFTSHIFT)
    german = ["z", "y", "ssharp", "Shift_L", "quotedbl"]
    wait_for("German characters in the remote app %s" % german,
             lambda: keysyms(rig)[n:] == german)
    kb.send("layout us")
    n = len(keysyms(rig))
    kb.send("tap %d" % KEY_Y, "press %d" % KEY_LEFTSHIFT, "tap %d" % KEY_2,
            "release %d" % KEY_LEFTSHIFT)
    us = ["y", "Shift_L", "at"]
    wait_for("US characters after the layout switch %s" % us,
             lambda: keysyms(rig)[n:] == us)
    if rig.read_log("rcomp-run").count("keymap ") <= keymaps:
        raise Failure("the new keymap never reached the remote app")

    # Hold A, move focus to a local window, let A go there, come back.
    kb.send("press %d" % KEY_A)
    wait_for("A held in the remote app", lambda: "key %d pressed" % KEY_A
             in rig.read_log("rcomp-run"))
    rig.start("local-client", [INPUT_CLIENT, "local-window"], rig.local_env)
    wait_for("the local window to take focus",
             lambda: (rig.window(app_id="local-window") or {}).get("focused"))
    wait_for("the remote app to lose focus", lambda: "key-leave" in rig.read_log("rcomp-run"))
    kb.send("release %d" % KEY_A)
    rig.swaymsg('[app_id="rcomp-input-test"] focus')
    enters = lambda: re.findall(r"^key-enter main held:(.*)$",  # noqa: E731
                                rig.read_log("rcomp-run"), re.M)
    wait_for("focus to come back", lambda: len(enters()) >= 2)
    if enters()[-1].strip():
        raise Failure("keys %s stuck down in the remote app after focus came back"
                      % enters()[-1].strip())
    rig.check_alive(server)
    log("keymap: de typed %s, then us typed %s; a key held while focus left was not "
        "held when it came back" % (" ".join(german), " ".join(us)))


if __name__ == "__main__":
    case = sys.argv[1] if len(sys.argv) > 1 else ""
    body = globals().get("case_" + case)
    if not body:
        print("unknown case %r" % case)
        sys.exit(2)
    # Tiled, so that sway's floating of a dialog shows that it has a parent.
    tiled = ("windows", "states")
    # sway draws title bars on floating windows unless the app draws its own
    # (on tiled ones it draws them always, local apps alike).
    extra = {
        "decorations": 'default_border normal\ndefault_floating_border normal\n',
        # Both X11 windows would float centred, one over the other.
        "x11": 'for_window [app_id="XLogo"] move position 0 0\n',
    }.get(case, "")
    main(body, floating=case not in tiled, scale=2 if case == "scale" else 1, extra=extra)
