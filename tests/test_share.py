"""A shared session: several viewers at once, each at its own pace. Viewers
that join with --share stand beside the others; one has input, a view-only
one has none, and what it tries is refused in the server."""
import os
import re
import signal
import socket
import struct
import subprocess
import time

import pytest

from rig import (ANIM_CLIENT, BTN_LEFT, DND_CLIENT, GREEN, HELLO_SHARE, HELLO_VIEW_ONLY,
                 INPUT_CLIENT, KEY_A, RCOMP_RUN, RCOMP_VIEW, VirtualPointer, free_port, hello, message,
                 read_messages, records, type_text, wait_for, wait_screen_matches, log, VIDEO)


DARK = (0x40, 0x40, 0x40)  # the input client's main surface


def viewer_window(desktop, viewer, app_id):
    return wait_for("viewer %s's window of %s" % (viewer.rcomp_name, app_id),
                    lambda: desktop.window(app_id=app_id, pid=viewer.pid), timeout=30)


def place(desktop, viewer, app_id, x, y):
    """Moves one viewer's window to x, y of the layout; returns it there."""
    viewer_window(desktop, viewer, app_id)
    desktop.swaymsg("[pid=%d] move position %d %d" % (viewer.pid, x, y))
    return wait_for("the window at %d,%d" % (x, y),
                    lambda: (lambda w: w if w and (w["rect"]["x"], w["rect"]["y"]) == (x, y)
                             else None)(desktop.window(app_id=app_id, pid=viewer.pid)))


def received(desktop, name):
    """The frames a viewer received, a second at a time (its --stats)."""
    return [int(x) for x in re.findall(r"stats window \d+: received (\d+) fps",
                                       desktop.read_log(name))]


@pytest.mark.parametrize("codec", ["auto", "video"])
def test_two_viewers_see_the_same_pixels_exactly_after_a_change(desktop, codec):
    """The app moves, then stops: each viewer's window ends equal to the
    app's pixels, and the one that was there first was not taken over. As
    video, the second joins the first's stream (one encode for both): it
    joins only while the two links' round trips are alike, which a loaded
    machine can keep apart for seconds, so the app moves for 8 s."""
    dump = os.path.join(desktop.tmp, "dump")
    os.makedirs(dump)
    server = desktop.start_server([ANIM_CLIENT, "8"], ["-v", "--dump-dir", dump, "--codec",
                                                       codec])
    first = desktop.start_viewer(server)
    place(desktop, first, "rcomp-anim-test", 0, 0)
    second = desktop.start_viewer(server, ["--share"], name="second")
    place(desktop, second, "rcomp-anim-test", 600, 0)
    wait_for("the app to stop moving", lambda: "still after" in desktop.read_log("rcomp-run"),
             timeout=60)
    for viewer in (first, second):
        wait_screen_matches(desktop, "rcomp-anim-test", os.path.join(dump, "window-1.ppm"),
                            timeout=30, pid=viewer.pid)
        desktop.check_alive(viewer)
    assert "took this session over" not in desktop.read_log("rcomp-view")
    assert "2 viewers of session" in desktop.read_log("second")
    if codec == "video":
        assert "gets viewer 1's frames (its stream, anew)" in desktop.read_log("rcomp-run")


def test_a_view_only_viewers_keys_clicks_and_scrolls_never_reach_the_app_and_the_full_viewers_do(
        desktop):
    server = desktop.start_server([INPUT_CLIENT], ["-v"])
    full = desktop.start_viewer(server)
    full_window = place(desktop, full, "rcomp-input-test", 0, 0)
    watcher = desktop.start_viewer(server, ["--view-only"], name="watcher")
    watch_window = place(desktop, watcher, "rcomp-input-test", 600, 0)
    wait_for("the watcher told it watches only",
             lambda: "this one watches only" in desktop.read_log("watcher"))
    pointer = VirtualPointer(desktop)
    time.sleep(0.5)
    pointer.send("move 500 700")  # on neither window
    time.sleep(0.5)
    log = lambda: desktop.read_log("rcomp-run")  # noqa: E731
    before = len(log())

    def act_on(window):
        r = window["rect"]
        pointer.send("move %d %d" % (r["x"] + 20, r["y"] + 30))
        time.sleep(0.2)
        pointer.send("move %d %d" % (r["x"] + 25, r["y"] + 35))
        pointer.send("press %d" % BTN_LEFT, "release %d" % BTN_LEFT)
        pointer.send("scroll 10")
        desktop.swaymsg("[con_id=%d] focus" % window["id"])
        wait_for("the window focused", lambda: desktop.window(
            app_id="rcomp-input-test", pid=window["pid"]).get("focused"))
        type_text(desktop, "a")

    act_on(watch_window)
    for what in ("pointer_button", "pointer_axis", "key"):
        wait_for("the watcher's %s refused" % what,
                 lambda: "%s refused (it watches only)" % what in log())
    # The app heard none of it: not even the pointer's arrival.
    heard = log()[before:]
    assert not re.search(r"^(button|axis|key \d+|enter|motion) ", heard, re.M), heard
    assert "watches only: its" in log()

    act_on(full_window)
    wait_for("the full viewer's click", lambda: "button main 272 pressed" in log())
    wait_for("the full viewer's scroll", lambda: "axis 0 10.00" in log())
    wait_for("the full viewer's key", lambda: "keysym a" in log())
    desktop.check_alive(watcher)


def fake_viewer(desktop, server, flags):
    """A viewer by hand on the session's socket, with hello flags; read to
    the end of its snapshot."""
    s = socket.socket(socket.AF_UNIX)
    s.connect(server.socket)
    s.sendall(hello(minor=4, flags=flags))
    read_messages(s, 10, until=0x0208)
    return s


def selection(types):
    return message(0x0301, struct.pack("<II", 0, len(types)) + b"".join(
        struct.pack("<H", len(t)) + t for t in types))


def drag_over(window, types):
    """dnd_enter at 150,100 of window with types offered (copy or move),
    a motion, and the drop."""
    fixed = lambda v: v * 256  # noqa: E731
    listed = b"".join(struct.pack("<H", len(t)) + t for t in types)
    return (message(0x011d, struct.pack("<IiiII", window, fixed(150), fixed(100), 3,
                                        len(types)) + listed) +
            message(0x011e, struct.pack("<ii", fixed(152), fixed(101))) + message(0x0120))


def remote_types(desktop):
    env = dict(desktop.remote_env, WAYLAND_DISPLAY="wayland-0")
    r = subprocess.run(["wl-paste", "--list-types"], env=env, capture_output=True, timeout=60)
    return r.stdout.decode().split() if r.returncode == 0 else None


def test_a_view_only_viewers_paste_and_drop_never_reach_the_app_and_the_full_viewers_do(
        desktop):
    """Refused in the server, not only hidden in a window: a viewer that
    speaks the protocol by hand and joined to watch offers a selection and
    drops on the app; neither reaches it. A full viewer's do."""
    server = desktop.start_server([DND_CLIENT, "target", "dnd-remote"], ["-v"])
    log = lambda: desktop.read_log("rcomp-run")  # noqa: E731
    wait_for("the app's window", lambda: "window 1 mapped" in log())
    watcher = fake_viewer(desktop, server, HELLO_VIEW_ONLY)
    touch = message(0x0113, struct.pack("<Iiii", 1, 5, 150 * 256, 100 * 256))
    resize = message(0x0104, struct.pack("<IiiI", 1, 200, 150, 0))
    watcher.sendall(records(selection([b"text/x-watcher"]) + drag_over(1, [b"text/plain"]) +
                            touch + resize))
    for what in ("selection", "dnd_enter", "dnd_motion", "dnd_drop", "touch_down",
                 "configure"):
        wait_for("the watcher's %s refused" % what,
                 lambda: "%s refused (it watches only)" % what in log())
    assert remote_types(desktop) is None, "the watcher's selection reached the app"
    assert "target-" not in log(), "the watcher's drag reached the app"

    full = fake_viewer(desktop, server, HELLO_SHARE)
    full.sendall(records(selection([b"text/x-full"])))
    wait_for("the full viewer's selection in the app",
             lambda: remote_types(desktop) == ["text/x-full"])
    full.sendall(records(drag_over(1, [b"text/plain"])))
    wait_for("the full viewer's drag over the app", lambda: "target-enter" in log())
    for s in (watcher, full):
        s.close()


def test_a_slow_viewer_does_not_lower_a_fast_viewers_rate(desktop):
    """One viewer on the session's socket, another behind 1 Mbit/s and a
    100 ms round trip, both of lossless motion: each gets frames at its own
    link's pace (one flow for both would hold both to the slow one's), and
    the slow one still gets them."""
    server = desktop.start_server([ANIM_CLIENT, "30", "320", "240"],
                                  ["--stats", "--codec", "lossless"])
    fast = desktop.start_viewer(server, ["--stats"], name="fast")
    viewer_window(desktop, fast, "rcomp-anim-test")
    relay = desktop.start_relay(server.socket, delay_ms=50, rate_mbit=1, buffer_kb=64)
    slow = desktop.start("slow", [RCOMP_VIEW, "--socket", relay.socket, "--share", "--stats"],
                         desktop.local_env)
    wait_for("the slow viewer's frames", lambda: len(received(desktop, "slow")) >= 6,
             timeout=60)
    fast_rates, slow_rates = received(desktop, "fast")[-5:], received(desktop, "slow")[-5:]
    assert sum(slow_rates) > 0, "the slow viewer got no frames"
    assert sum(fast_rates) > 2 * sum(slow_rates), (fast_rates, slow_rates)
    assert re.search(r"stats window \d+ .*\[viewer 2", desktop.read_log("rcomp-run"))
    for p in (fast, slow):
        desktop.check_alive(p)


def test_a_viewer_killed_with_kill_9_leaves_the_others_running(desktop):
    server = desktop.start_server(["weston-simple-egl"])
    keep = desktop.start_viewer(server, ["--stats"], name="keep")
    viewer_window(desktop, keep, None)
    doomed = desktop.start_viewer(server, ["--share"], name="doomed")
    wait_for("the second viewer attached",
             lambda: "2 viewers of session" in desktop.read_log("doomed"))
    os.kill(doomed.pid, signal.SIGKILL)
    # Its end of the socket closed: rcomp-run reads the end, or its next
    # write finds the pipe broken first, whichever comes first.
    wait_for("rcomp-run to see it go", lambda: re.search(
        r"viewer disconnected|viewer connection lost", desktop.read_log("rcomp-run")))
    seen = len(received(desktop, "keep"))
    wait_for("the first viewer's frames after the kill",
             lambda: [r for r in received(desktop, "keep")[seen:] if r > 0][2:])
    desktop.check_alive(server)
    desktop.check_alive(keep)


def watch_session(desktop, transport):
    """rcomp-run listening on TCP or UDP with a watch token; its port and
    the two token files."""
    port = free_port()
    server = desktop.start("rcomp-run", [RCOMP_RUN, "--name", "shared", "-v",
                                         "--listen-%s" % transport, "127.0.0.1:%d" % port,
                                         "--watch-token", "--", INPUT_CLIENT],
                           desktop.remote_env)
    token = os.path.join(desktop.session_dir, "shared.token")
    watch = os.path.join(desktop.session_dir, "shared.watch-token")
    wait_for("the token files", lambda: os.path.exists(watch) and os.path.getsize(watch) > 0
             and os.path.exists(token) and os.path.getsize(token) > 0)
    wait_for("the listener", lambda: "listening on" in desktop.read_log("rcomp-run")
             and ("UDP" if transport == "udp" else "TCP") in desktop.read_log("rcomp-run"))
    return server, port, token, watch


def test_a_watch_token_admits_watching_and_no_input_and_a_wrong_one_nothing(desktop):
    server, port, token, watch = watch_session(desktop, "tcp")
    assert oct(os.stat(watch).st_mode & 0o777) == "0o600"
    assert open(watch).read().strip() != open(token).read().strip()
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(hello(open(watch).read().strip().encode(), minor=4))
    got = read_messages(s, 10, until=0x021e)
    viewers = [body for t, body in got if t == 0x021e]
    assert viewers and struct.unpack("<II", viewers[0][:8]) == (1, 2), viewers
    # A key, and a click: refused.
    s.sendall(records(message(0x010d, struct.pack("<II", KEY_A, 1)) +
                      message(0x0108, struct.pack("<II", BTN_LEFT, 1))))
    log = lambda: desktop.read_log("rcomp-run")  # noqa: E731
    wait_for("the key refused", lambda: "key refused (it watches only)" in log())
    wait_for("the click refused", lambda: "pointer_button refused (it watches only)" in log())
    assert "key %d pressed" % KEY_A not in log()
    # A wrong token: nothing, a goodbye that says so.
    wrong = socket.create_connection(("127.0.0.1", port), timeout=10)
    wrong.sendall(hello(b"watch-" + b"0" * 64, minor=4))
    data = wrong.recv(4096)
    assert data[:2] == b"\x02\x02" and data[12:16] == b"\x06\x00\x00\x00", data[:40]
    # The session's own token: input.
    viewer = desktop.start("rcomp-view", [RCOMP_VIEW, "--tcp", "127.0.0.1:%d" % port,
                                          "--token-file", token, "--share"], desktop.local_env)
    wait_for("the full viewer told it has input",
             lambda: "this one has input" in desktop.read_log("rcomp-view"))
    desktop.check_alive(viewer)
    s.close()


def test_a_watch_token_over_udp_admits_a_viewer_that_only_watches(desktop):
    """Over QUIC the watch token is a pre-shared key of its own: the viewer
    gets in, and its input is refused."""
    server, port, token, watch = watch_session(desktop, "udp")
    watcher = desktop.start("watcher", [RCOMP_VIEW, "--udp", "127.0.0.1:%d" % port,
                                        "--token-file", watch], desktop.local_env)
    w = viewer_window(desktop, watcher, "rcomp-input-test")
    wait_for("the watcher told it watches only",
             lambda: "this one watches only" in desktop.read_log("watcher"))
    desktop.swaymsg("[con_id=%d] focus" % w["id"])
    type_text(desktop, "a")
    wait_for("its key refused",
             lambda: "key refused (it watches only)" in desktop.read_log("rcomp-run"))
    assert "keysym a" not in desktop.read_log("rcomp-run")
    desktop.check_alive(server)


def test_rcomp_run_list_counts_a_shared_sessions_viewers(desktop):
    server = desktop.start("rcomp-run", [RCOMP_RUN, "--name", "twice", "--", INPUT_CLIENT],
                           desktop.remote_env)
    sock = os.path.join(desktop.session_dir, "twice.sock")
    wait_for("the session's socket", lambda: os.path.exists(sock))
    server.socket = sock
    first = desktop.start_viewer(server)
    viewer_window(desktop, first, "rcomp-input-test")  # a plain attach takes over: first
    desktop.start_viewer(server, ["--share"], name="second")

    def listing():
        return subprocess.run([RCOMP_RUN, "--list"], env=desktop.remote_env,
                              capture_output=True, text=True, timeout=10).stdout
    wait_for("two viewers listed", lambda: re.search(r"^twice\s.*\s2 attached\s", listing(),
                                                     re.M))


def test_a_watchers_desktop_giving_less_room_scales_the_window_down_there_alone(desktop):
    """One size: the app keeps the size the viewer with input gave it; a
    watcher whose desktop gives the window half the room shows all of it,
    scaled down (the app's 100x100 green subsurface at 100,100 shows at
    50,50 there)."""
    server = desktop.start_server([INPUT_CLIENT], ["-v"])
    full = desktop.start_viewer(server)
    place(desktop, full, "rcomp-input-test", 0, 0)
    watcher = desktop.start_viewer(server, ["--view-only"], name="watcher")
    place(desktop, watcher, "rcomp-input-test", 600, 0)
    desktop.swaymsg("[pid=%d] resize set 200 150" % watcher.pid)
    w = wait_for("the watcher's window at half the size", lambda: (lambda w: w if w and (
        w["rect"]["width"], w["rect"]["height"]) == (200, 150) else None)(
            desktop.window(app_id="rcomp-input-test", pid=watcher.pid)))
    wait_for("the subsurface at half its place and size",
             lambda: desktop.pixel(75, 75, w) == GREEN and desktop.pixel(45, 45, w) == DARK,
             interval=0.2)
    log = desktop.read_log("rcomp-run")
    assert "configure 200 150" not in log and "configure refused" in log
    assert desktop.window(app_id="rcomp-input-test", pid=full.pid)["rect"]["width"] == 400


def test_viewers_in_step_share_one_encode_and_each_sees_the_change_exactly(desktop):
    """Two viewers that hold the same picture get the frames of one encode;
    a click's change reaches both, exact. (Viewers join when their frames'
    round trips are alike: on a loaded machine the first few can differ,
    so it clicks again, each click a change, until they have joined.)"""
    dump = os.path.join(desktop.tmp, "dump")
    os.makedirs(dump)
    server = desktop.start_server([INPUT_CLIENT], ["-v", "--stats", "--dump-dir", dump])
    first = desktop.start_viewer(server)
    place(desktop, first, "rcomp-input-test", 0, 0)
    second = desktop.start_viewer(server, ["--share"], name="second")
    w = place(desktop, second, "rcomp-input-test", 600, 0)
    log = lambda: desktop.read_log("rcomp-run")  # noqa: E731
    shared = lambda: re.search(r"window 1: viewer \d gets viewer \d's frames", log())  # noqa: E731
    pointer = VirtualPointer(desktop)
    time.sleep(0.5)
    r = w["rect"]
    for clicks in range(1, 7):
        pointer.send("move %d %d" % (r["x"] + 20, r["y"] + 30))
        time.sleep(0.2)
        pointer.send("move %d %d" % (r["x"] + 22, r["y"] + 31), "press %d" % BTN_LEFT,
                     "release %d" % BTN_LEFT, "move 500 700")
        wait_for("click %d" % clicks,
                 lambda: log().count("button main 272 pressed") == clicks)
        # Each click toggles the window's colour.
        colour = (0xc0, 0x30, 0x30) if clicks % 2 else (0x40, 0x40, 0x40)
        for viewer in (first, second):
            wait_screen_matches(desktop, "rcomp-input-test", os.path.join(dump, "window-1.ppm"),
                                shows=lambda shot: tuple(shot[2][(30 * shot[0] + 20) * 3:][:3])
                                == colour, pid=viewer.pid)
        if shared():
            break
        time.sleep(1.0)  # pictures are compared at most once a second
    assert shared(), log()
    wait_for("a viewer's frames encoded once with the other's",
             lambda: re.search(r"stats window 1 .*encoded once with viewer \d's", log()))


@pytest.mark.skipif(not VIDEO, reason="built without video")
def test_a_watcher_that_comes_and_goes_four_times_a_second_costs_the_full_viewer_one_stream_start_in_5_s(
        desktop):
    """The full viewer streams a moving window as video; a watcher (rcomp-view
    --view-only, which decodes what it decodes) attaches and is ended four
    times a second for 10 s. Each used to start the shared stream anew (a
    keyframe for the full viewer each time); now the stream starts anew for
    a newcomer at most once in 5 s, and one that comes between encodes on
    its own."""
    server = desktop.start_server([ANIM_CLIENT, "60", "640", "480"], ["-v", "--codec", "video"])
    full = desktop.start_viewer(server, ["-v"])
    place(desktop, full, "rcomp-anim-test", 0, 0)
    starts = lambda: desktop.read_log("rcomp-view").count("starts a video stream")  # noqa: E731
    # A stream also starts anew at a new size (a slow machine's video goes
    # at half size to keep the rate, and back) or preset (for the cores at
    # hand): those are not the watchers'.
    resizes = lambda: sum(desktop.read_log("rcomp-run").count(w) for w in (  # noqa: E731
        "video at 1/", "video back at ", "video at ultrafast", "video at superfast",
        "video at veryfast"))
    wait_for("the full viewer's stream", lambda: starts() >= 1)
    time.sleep(1)
    before, resized = starts(), resizes()
    t0 = time.monotonic()
    comers = 0
    while time.monotonic() - t0 < 10:
        watcher = desktop.start_viewer(server, ["--view-only"], name="watcher%d" % comers)
        time.sleep(0.25)
        watcher.terminate()
        watcher.wait(timeout=10)
        comers += 1
    during = starts() - before
    resized = resizes() - resized
    joined = desktop.read_log("rcomp-run").count("its stream, anew")
    log("%d watchers came and went in 10 s: the full viewer's stream started anew %d times "
        "(%d joins, %d new sizes)" % (comers, during, joined, resized))
    desktop.check_alive(full)
    assert comers >= 20
    assert during - resized <= 3, "the full viewer's stream started anew %d times in 10 s" % (
        during - resized)
