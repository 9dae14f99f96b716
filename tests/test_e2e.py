"""End-to-end tests of rcomp-run and rcomp-view on the headless-sway rig with
real apps. Run one case: python3 test_e2e.py CASE."""
import os
import re
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rig import (hello, Failure, TEST_CLIENTS, RCOMP_RUN, RCOMP_VIEW, log, main,  # noqa: E402
                 wait_for, wait_screen_matches)

INPUT_CLIENT = os.path.join(TEST_CLIENTS, "input-client")
VPOINTER = os.path.join(TEST_CLIENTS, "vpointer")
BTN_LEFT = 272


def dump_path(rig, window_id=1):
    return os.path.join(rig.tmp, "dump", "window-%d.ppm" % window_id)


def start_with_dump(rig, app, args=()):
    os.makedirs(os.path.join(rig.tmp, "dump"), exist_ok=True)
    server = rig.start_server(app, ["--dump-dir", os.path.join(rig.tmp, "dump"), *args])
    viewer = rig.start_viewer(server)
    return server, viewer


def colours(image):
    w, h, p = image
    return len(set(p[i:i + 3] for i in range(0, len(p), 3 * 7)))


def pixel(image, x, y):
    w, h, p = image
    i = (y * w + x) * 3
    return tuple(p[i:i + 3])


def case_foot_pixels(rig):
    server, viewer = start_with_dump(rig, ["foot"])
    w = wait_for("a local window with app_id foot", lambda: rig.window(app_id="foot"))
    log("local window:", w["rect"], "title:", w.get("name"))
    shot, dump, w = wait_screen_matches(rig, "foot", dump_path(rig))
    if colours(shot) < 3:
        raise Failure("the window shows only %d colours: no real content" % colours(shot))
    log("screenshot %dx%d equals the capture pixel for pixel (%d colours)" % (
        shot[0], shot[1], colours(shot)))
    rig.check_alive(server)
    rig.check_alive(viewer)


def case_typing(rig):
    out = os.path.join(rig.tmp, "typed.txt")
    script = 'read l; printf "%%s\\n" "$l" > %s' % out
    rig.start_server(["foot", "sh", "-c", script])
    rig.start_viewer(rig.procs[-1])
    wait_for("the foot window", lambda: rig.window(app_id="foot"))
    wait_for("the foot window to have focus",
             lambda: (rig.window(app_id="foot") or {}).get("focused"))
    text = "Hello rcomp-42 ~/x_y"
    subprocess.run(["wtype", "-k", "Shift_L", "-s", "400", text, "-k", "Return"],
                   env=rig.local_env, check=True, timeout=20)
    got = wait_for("the typed line in " + out,
                   lambda: os.path.exists(out) and open(out).read())
    if got.strip("\n") != text:
        raise Failure("remote app read %r, expected %r" % (got, text))
    log("remote app read: %r" % got.strip())


class VirtualPointer:
    def __init__(self, rig):
        self.proc = rig.start("vpointer", [VPOINTER, "1280", "800"], rig.local_env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def send(self, *lines):
        for line in lines:
            self.proc.stdin.write(line + "\n")
        self.proc.stdin.write("sync\n")
        self.proc.stdin.flush()
        if self.proc.stdout.readline().strip() != "ok":
            raise Failure("the virtual pointer did not answer")


def case_click(rig):
    server = rig.start_server([INPUT_CLIENT])
    rig.start_viewer(server)
    w = wait_for("the test client window", lambda: rig.window(app_id="rcomp-input-test"))
    r = w["rect"]
    if (r["width"], r["height"]) != (400, 300):
        raise Failure("local window is %dx%d, expected 400x300" % (r["width"], r["height"]))
    if w.get("name") != "rcomp input test":
        raise Failure("local window title is %r" % w.get("name"))
    pointer = VirtualPointer(rig)
    # The viewer gets its wl_pointer when the virtual pointer appears.
    time.sleep(0.5)
    pointer.send("move %d %d" % (r["x"] + 5, r["y"] + 5))
    time.sleep(0.3)
    pointer.send("move %d %d" % (r["x"] + 150, r["y"] + 120))
    wait_for("pointer on the subsurface at 50,20",
             lambda: "sub 50.00 20.00" in rig.read_log("rcomp-run"))
    pointer.send("press %d" % BTN_LEFT, "release %d" % BTN_LEFT)
    wait_for("a click on the subsurface",
             lambda: "button sub 272 released" in rig.read_log("rcomp-run"))
    pointer.send("scroll 10")
    wait_for("a scroll on the subsurface", lambda: "axis 0 10.00" in rig.read_log("rcomp-run"))
    pointer.send("move %d %d" % (r["x"] + 20, r["y"] + 30))
    wait_for("pointer on the main surface at 20,30",
             lambda: "main 20.00 30.00" in rig.read_log("rcomp-run"))
    pointer.send("press %d" % BTN_LEFT, "release %d" % BTN_LEFT)
    wait_for("a click on the main surface",
             lambda: "button main 272 pressed" in rig.read_log("rcomp-run"))
    # The click's effect comes back as pixels: the main surface turns red.
    # sway draws a software cursor, so move it off the window first.
    pointer.send("move 2 2")
    wait_for("the click's colour change on screen",
             lambda: pixel(rig.screenshot(r), 20, 30) == (0xc0, 0x30, 0x30), interval=0.2)
    shot = rig.screenshot(r)
    if pixel(shot, 150, 150) != (0x20, 0xc0, 0x20):
        raise Failure("subsurface pixel is %s, expected green" % (pixel(shot, 150, 150),))
    log("clicks landed on sub at 50,20 and main at 20,30; colour change seen")


def case_resize(rig):
    server, viewer = start_with_dump(rig, ["foot"])
    wait_for("the foot window", lambda: rig.window(app_id="foot"))
    wait_screen_matches(rig, "foot", dump_path(rig))
    rig.swaymsg('[app_id="foot"] resize set width 500 px height 400 px')

    def resized():
        w = rig.window(app_id="foot")
        return w and (w["rect"]["width"], w["rect"]["height"]) == (500, 400)

    wait_for("the local window to become 500x400", resized)
    shot, dump, w = wait_screen_matches(rig, "foot", dump_path(rig))
    if (dump[0], dump[1]) != (500, 400):
        raise Failure("remote capture is %dx%d, expected 500x400" % (dump[0], dump[1]))
    log("remote foot resized to 500x400 and its new content arrived")


def run_app_5s(rig, app):
    # The dump shows lossless frames: this checks the lossless path.
    server, viewer = start_with_dump(rig, app, ["--codec", "lossless"])
    wait_for("the app's window", lambda: rig.windows())
    path = dump_path(rig)
    wait_for("a first frame", lambda: os.path.exists(path))
    seen = set()
    end = time.monotonic() + 5
    while time.monotonic() < end:
        try:
            with open(path, "rb") as f:
                seen.add(hash(f.read()))
        except OSError:
            pass
        time.sleep(0.25)
    rig.check_alive(server)
    rig.check_alive(viewer)
    if not rig.windows():
        raise Failure("the app's window is gone")
    if len(seen) < 5:
        raise Failure("only %d distinct frames in 5 s: the animation stalled" % len(seen))
    text = rig.read_log("rcomp-run")
    for bad in ("error", "abort", "busy", "Segmentation"):
        if bad in text.lower():
            raise Failure("log mentions %r:\n%s" % (bad, text))
    log("%s ran 5 s: %d distinct frames sampled, no errors" % (app[0], len(seen)))


def case_simple_shm(rig):
    run_app_5s(rig, ["weston-simple-shm"])


def case_simple_egl(rig):
    run_app_5s(rig, ["weston-simple-egl"])


def case_takeover(rig):
    """A second viewer takes the session over; the first is told why and ends."""
    server = rig.start_server([INPUT_CLIENT])
    first = rig.start_viewer(server)
    w1 = wait_for("the first viewer's window", lambda: rig.window(app_id="rcomp-input-test"))
    second = rig.start_viewer(server, name="second-viewer")
    code = first.wait(timeout=20)
    text = rig.read_log("rcomp-view")
    if code != 0 or "another viewer took this session over" not in text:
        raise Failure("the first viewer exited %d with: %s" % (code, text))
    w2 = wait_for("the second viewer's window",
                  lambda: [w for w in rig.windows() if w["app_id"] == "rcomp-input-test"
                           and w["pid"] == second.pid])
    rig.check_alive(second)
    rig.check_alive(server)
    if len([w for w in rig.windows() if w["app_id"] == "rcomp-input-test"]) != 1:
        raise Failure("expected exactly one window after the takeover")
    if "takes the session over" not in rig.read_log("rcomp-run"):
        raise Failure("rcomp-run did not log the takeover")
    log("takeover: the first viewer (pid %d, window %d) said: %s; the second shows window %d"
        % (first.pid, w1["id"], text.strip().splitlines()[-1], w2[0]["id"]))


def read_goodbye(sock):
    sock.settimeout(10)
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    pos = 0
    while pos + 8 <= len(data):
        t, _, n = struct.unpack_from("<HHI", data, pos)
        if t == 0x0202:
            status, reason = struct.unpack_from("<iI", data, pos + 8)
            return reason, data[pos + 16:pos + 8 + n].decode()
        pos += 8 + n
    return None, None


def case_malformed(rig):
    server = rig.start_server([INPUT_CLIENT])
    bad_inputs = [
        ("an unknown message type", hello() + struct.pack("<HHI", 0x0177, 0, 0)),
        ("an oversized keymap", hello() + struct.pack("<HHI", 0x0102, 0, 0x7fffffff)),
        ("garbage before hello", bytes(range(256)) * 4),
        ("a key with state 9", hello() + struct.pack("<HHIII", 0x010D, 0, 8, 30, 9)),
    ]
    for what, data in bad_inputs:
        s = socket.socket(socket.AF_UNIX)
        s.connect(server.socket)
        s.sendall(data)
        reason, text = read_goodbye(s)
        s.close()
        if reason != 3:
            raise Failure("after %s the server answered %r %r" % (what, reason, text))
        log("%s -> goodbye: %s" % (what, text))
    rig.check_alive(server)
    viewer = rig.start_viewer(server)
    wait_for("a window for the next, well-behaved viewer",
             lambda: rig.window(app_id="rcomp-input-test"))
    rig.check_alive(viewer)
    text = rig.read_log("rcomp-run")
    if text.count("viewer sent bad data") + text.count("refused a viewer") != len(bad_inputs):
        raise Failure("expected one log line per bad viewer:\n" + rig.read_log("rcomp-run"))


def case_exit_status(rig):
    r = subprocess.run([RCOMP_RUN, "--socket", os.path.join(rig.remote_rt, "exit7.sock"),
                        "--", "sh", "-c", "exit 7"], env=rig.remote_env,
                       capture_output=True, text=True, timeout=20)
    if r.returncode != 7:
        raise Failure("rcomp-run -- sh -c 'exit 7' exited %s:\n%s" % (r.returncode, r.stderr))
    server = rig.start_server([INPUT_CLIENT])
    viewer = rig.start_viewer(server)
    wait_for("the window", lambda: rig.window(app_id="rcomp-input-test"))
    # Closing the local window asks the app to close; it exits 0.
    rig.swaymsg('[app_id="rcomp-input-test"] kill')
    if server.wait(timeout=20) != 0:
        raise Failure("rcomp-run exited %s after the app closed" % server.returncode)
    if viewer.wait(timeout=20) != 0:
        raise Failure("rcomp-view exited %s: %s" % (viewer.returncode,
                                                    rig.read_log("rcomp-view")))
    if "session ended" not in rig.read_log("rcomp-view"):
        raise Failure("the viewer did not say why it ended")
    log("exit status 7 passed through; closing the window ended app, server and viewer")


def case_local(rig):
    viewer = rig.start("local", [RCOMP_VIEW, "--local", "--", INPUT_CLIENT], rig.local_env)
    w = wait_for("the window", lambda: rig.window(app_id="rcomp-input-test"))

    def content():
        shot = rig.screenshot(w["rect"])
        return pixel(shot, 150, 150) == (0x20, 0xc0, 0x20) and \
            pixel(shot, 10, 10) == (0x40, 0x40, 0x40)

    wait_for("the app's pixels", content, interval=0.2)
    viewer.terminate()
    if viewer.wait(timeout=20) != 0:
        raise Failure("rcomp-view --local exited %s" % viewer.returncode)
    wait_for("the window to go", lambda: not rig.window(app_id="rcomp-input-test"))
    log("--local showed the app and shut down cleanly")


def case_keyboard(rig):
    server = rig.start_server([INPUT_CLIENT])
    rig.start_viewer(server)
    wait_for("the window to have focus",
             lambda: (rig.window(app_id="rcomp-input-test") or {}).get("focused"))
    remote_log = lambda: rig.read_log("rcomp-run")  # noqa: E731
    # A keyboard that stays for a while, so that focus changes can be seen.
    rig.start("held-keyboard", ["wtype", "-k", "Shift_L", "-s", "8000", "-k", "Shift_L"],
              rig.local_env)
    wait_for("keyboard focus to reach the remote app", lambda: "key-enter main" in remote_log())
    wait_for("the local repeat info (40/s after 300 ms)", lambda: "repeat 40 300" in remote_log())
    # Another local window takes focus: the remote app must lose it...
    rig.start("local-client", [INPUT_CLIENT, "local-window"], rig.local_env)
    wait_for("the local window to take focus",
             lambda: (rig.window(app_id="local-window") or {}).get("focused"))
    wait_for("the remote app to lose keyboard focus", lambda: "key-leave" in remote_log())
    # ...and get it back when the user focuses the remote window again.
    rig.swaymsg('[app_id="rcomp-input-test"] focus')
    wait_for("focus to come back", lambda: remote_log().count("key-enter main") >= 2)
    subprocess.run(["wtype", "-M", "ctrl", "-k", "a", "-m", "ctrl"], env=rig.local_env,
                   check=True, timeout=20)
    # wtype brings its own keymap, so the key code is its choice; what matters
    # is a key press while Control (mask 4) is held.
    wait_for("a key pressed with ctrl held",
             lambda: re.search(r"modifiers 4 0 0 0\n(?:.*\n)*?key \d+ pressed", remote_log()))
    keymaps = remote_log().count("keymap ")
    if keymaps < 2:
        raise Failure("the local keymap was not forwarded (%d keymap events)" % keymaps)
    log("focus, repeat info, keymap and modifiers reached the remote app")


def case_signals(rig):
    server = rig.start_server([INPUT_CLIENT])
    viewer = rig.start_viewer(server)
    wait_for("the window", lambda: rig.window(app_id="rcomp-input-test"))
    server.terminate()
    if server.wait(timeout=20) != 0:
        raise Failure("rcomp-run exited %s on SIGTERM" % server.returncode)
    if viewer.wait(timeout=20) != 0 or "shutting down" not in rig.read_log("rcomp-view"):
        raise Failure("viewer exited %s: %s" % (viewer.returncode, rig.read_log("rcomp-view")))
    wait_for("the window to go", lambda: not rig.window(app_id="rcomp-input-test"))
    server = rig.start_server([INPUT_CLIENT], name="killed-server")
    viewer = rig.start_viewer(server, name="orphan-viewer")
    wait_for("the window", lambda: rig.window(app_id="rcomp-input-test"))
    os.killpg(server.pid, 9)
    if viewer.wait(timeout=20) == 0:
        raise Failure("the viewer exited 0 although its server was killed")
    if "connection to the server was lost" not in rig.read_log("orphan-viewer"):
        raise Failure("the viewer did not say why it ended: " + rig.read_log("orphan-viewer"))
    log("SIGTERM: clean exit 0 on both sides; SIGKILL: the viewer said: %s"
        % rig.read_log("orphan-viewer").strip())


def case_refresh(rig):
    server = rig.start_server(["weston-simple-egl"], ["--stats"])
    rig.start_viewer(server)
    wait_for("the window", lambda: rig.windows())
    wait_for("the frame clock to follow the 30 Hz output",
             lambda: "frame clock 30.000 Hz (the viewer's output)" in rig.read_log("rcomp-run"))
    time.sleep(3.5)
    rates = [int(x) for x in re.findall(r"app (\d+) fps", rig.read_log("rcomp-run"))][-2:]
    # Loose bounds: they tell 30 Hz from 60 Hz even on a slow machine.
    if not rates or not all(15 <= r <= 40 for r in rates):
        raise Failure("app frame rates %s on a 30 Hz output" % rates)
    log("frame clock followed the 30 Hz local output: app at %s fps" % rates)


RIG_ARGS = {
    "refresh": {"refresh": 30},
    "keyboard": {"extra": "input type:keyboard repeat_rate 40\n"
                          "input type:keyboard repeat_delay 300\n"},
}

if __name__ == "__main__":
    case = sys.argv[1] if len(sys.argv) > 1 else ""
    body = globals().get("case_" + case)
    if not body:
        print("unknown case %r" % case)
        sys.exit(2)
    main(body, **RIG_ARGS.get(case, {}))
