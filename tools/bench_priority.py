"""Does the link keep its priorities? Key latency idle and during a paste,
the focused window's frame rate during a paste, and recovery after the link
slows, all through the relay in tests/relay.py. Prints numbers; it passes or
fails nothing.

    python3 tools/bench_priority.py [--paste-mb 10] [--only keys,frames,drop]

- keys: a local key press (a virtual keyboard) until the remote app prints
  it, idle and while N MB pasted local to remote cross a 1 Mbit/s link of
  20 ms round trip; and how long the paste took, against the link's rate.
- frames: the focused animating window's shown fps while N MB paste remote
  to local over 10 Mbit/s, 20 ms round trip.
- game: weston-simple-egl, focused, and foot printing a line every half
  second share 10 Mbit/s with 100 ms round trip: the game's shown fps, and
  how soon after foot's last line its window is pixel exact.
- drop: a lossless animation fills a 50 Mbit/s, 40 ms round trip link that
  falls to 5 Mbit/s; clicks on the focused input window, click to photon
  (grim polling a pixel) about every 300 ms, and how long after the drop it
  stays over round trip + 100 ms.
RCOMP_BUILD picks the build to measure (default: build/).
"""
import argparse
import hashlib
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
from rig import (INPUT_CLIENT, KEY_A, KEY_LEFTSHIFT, RCOMP_RUN, RCOMP_VIEW,  # noqa: E402
                 TEST_CLIENTS, Rig, VirtualKeyboard, VirtualPointer, focused, read_ppm,
                 wait_for, wait_screen_matches)

ANIM = os.path.join(TEST_CLIENTS, "anim-client")


def session(rig, tag, apps, delay_ms, rate_mbit, rate_at=(), options=()):
    """rcomp-run with apps, a relay, a viewer."""
    sock = os.path.join(rig.remote_rt, tag + ".sock")
    cmd = " & ".join(apps[:-1] + ["exec " + apps[-1]]) if len(apps) > 1 else apps[0]
    server = rig.start("rc-" + tag, [RCOMP_RUN, "--stats", *options, "--socket", sock, "--",
                                     "sh", "-c", cmd], rig.remote_env)
    wait_for("rcomp-run", lambda: os.path.exists(sock))
    relay = rig.start_relay(sock, delay_ms=delay_ms / 2, rate_mbit=rate_mbit, buffer_kb=256,
                            name="relay-" + tag, rate_at=rate_at)
    viewer = rig.start("rv-" + tag, [RCOMP_VIEW, "--stats", "--socket", relay.socket],
                       rig.local_env)
    return server, relay, viewer


def focus_input(rig, tag):
    wait_for("the input window", lambda: rig.window(app_id="rcomp-input-test"), timeout=60)
    rig.swaymsg("[app_id=rcomp-input-test] focus")
    wait_for("focus", lambda: focused(rig, "rcomp-input-test"))
    kb = VirtualKeyboard(rig)
    kb.send("tap %d" % KEY_LEFTSHIFT)
    wait_for("keyboard focus remotely", lambda: "key-enter main" in rig.read_log("rc-" + tag),
             timeout=30)
    return kb


def key_latency(rig, tag, kb, timeout=10.0):
    """ms from a key press until the remote app prints it."""
    def count():
        return rig.read_log("rc-" + tag).count("key %d pressed" % KEY_A)
    before = count()
    t0 = time.monotonic()
    kb.send("tap %d" % KEY_A)
    while count() == before:
        if time.monotonic() - t0 > timeout:
            return float("inf")
        time.sleep(0.001)
    return (time.monotonic() - t0) * 1000


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def keys(rig, mb):
    tag = "keys"
    server, relay, viewer = session(rig, tag, [INPUT_CLIENT], 20, 1)
    kb = focus_input(rig, tag)
    time.sleep(1)
    idle = [key_latency(rig, tag, kb) for _ in range(8)]
    big = os.path.join(rig.tmp, "big")
    with open(big, "wb") as f:
        f.write(os.urandom(mb << 20))
    with open(big, "rb") as f:
        subprocess.run(["wl-copy", "--type", "application/x-rcomp-bench"], stdin=f,
                       env=rig.local_env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=30)
    remote = dict(rig.remote_env, WAYLAND_DISPLAY="wayland-0")
    wait_for("the local selection remotely", lambda: "application/x-rcomp-bench" in
             subprocess.run(["wl-paste", "--list-types"], env=remote, capture_output=True,
                            timeout=30).stdout.decode())
    out = os.path.join(rig.tmp, "pasted")
    t0 = time.monotonic()
    with open(out, "wb") as f:
        paste = subprocess.Popen(["wl-paste", "--no-newline", "--type",
                                  "application/x-rcomp-bench"], env=remote, stdout=f)
        during = []
        time.sleep(1)
        while paste.poll() is None:
            during.append(key_latency(rig, tag, kb, timeout=30))
            time.sleep(0.3)
        seconds = time.monotonic() - t0
    intact = sha(out) == sha(big)
    server.terminate()
    return idle, during, seconds, intact


def shown_fps(text, window):
    return [int(x) for x in re.findall(r"stats window %d: .*?presented (\d+) fps" % window,
                                         text)]


def window_id(rig, tag, app_id):
    m = re.search(r"stats window (\d+) \(%s\)" % app_id, rig.read_log("rc-" + tag))
    return int(m.group(1)) if m else 0


def frames(rig, mb):
    tag = "frames"
    server, relay, viewer = session(rig, tag, [INPUT_CLIENT, ANIM + " 1000"], 20, 10)
    wait_for("the animation", lambda: rig.window(app_id="rcomp-anim-test"), timeout=60)
    kb = focus_input(rig, tag)
    remote = dict(rig.remote_env, WAYLAND_DISPLAY="wayland-0")
    big = os.path.join(rig.tmp, "big-remote")
    with open(big, "wb") as f:
        f.write(os.urandom(mb << 20))
    with open(big, "rb") as f:
        subprocess.run(["wl-copy", "--type", "application/x-rcomp-bench"], stdin=f, env=remote,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30)
    wait_for("the remote selection locally", lambda: "application/x-rcomp-bench" in
             subprocess.run(["wl-paste", "--list-types"], env=rig.local_env,
                            capture_output=True, timeout=30).stdout.decode())
    rig.swaymsg("[app_id=rcomp-anim-test] focus")
    time.sleep(2)
    anim = window_id(rig, tag, "rcomp-anim-test")
    start = len(shown_fps(rig.read_log("rv-" + tag), anim))
    time.sleep(5)
    mark = len(shown_fps(rig.read_log("rv-" + tag), anim))
    before = shown_fps(rig.read_log("rv-" + tag), anim)[start:mark]
    out = os.path.join(rig.tmp, "pasted-local")
    t0 = time.monotonic()
    with open(out, "wb") as f:
        subprocess.run(["wl-paste", "--no-newline", "--type", "application/x-rcomp-bench"],
                       env=rig.local_env, stdout=f, timeout=600)
    seconds = time.monotonic() - t0
    # Whole seconds of the paste only.
    fps = shown_fps(rig.read_log("rv-" + tag), anim)[mark:]
    during = fps[1:max(1, int(seconds))]
    intact = sha(out) == sha(big)
    del kb
    server.terminate()
    return before, during, seconds, intact


def grey_or_red(rig, x, y, path):
    subprocess.run(["grim", "-t", "ppm", "-g", "%d,%d 1x1" % (x, y), path], env=rig.local_env,
                   check=True, capture_output=True)
    w, h, p = read_ppm(path)
    return p[0] > 0xb0 and p[1] < 0x50


def photon(rig, pointer, x, y, timeout=10.0):
    """ms from a click on the input window until the screen shows it."""
    path = os.path.join(rig.tmp, "probe.ppm")
    red = grey_or_red(rig, x, y, path)
    t0 = time.monotonic()
    pointer.send("press 272", "release 272")
    while grey_or_red(rig, x, y, path) == red:
        if time.monotonic() - t0 > timeout:
            return float("inf")
    return (time.monotonic() - t0) * 1000


def drop(rig):
    tag = "drop"
    # Lossless, so that the animation fills the link before the drop; the
    # input window, which has focus, is clicked and watched.
    server, relay, viewer = session(rig, tag, [INPUT_CLIENT, ANIM + " 1000"], 40, 50,
                                    rate_at=[(20, 5)], options=["--codec", "lossless"])
    t_start = time.monotonic()
    wait_for("the animation", lambda: rig.window(app_id="rcomp-anim-test"), timeout=60)
    wait_for("the input window", lambda: rig.window(app_id="rcomp-input-test"), timeout=60)
    pointer = VirtualPointer(rig)
    r = rig.window(app_id="rcomp-input-test")["rect"]
    x, y = r["x"] + 50, r["y"] + 50
    pointer.send("move %d %d" % (x, y))
    kb = focus_input(rig, tag)  # keyboard focus: the server's focus class
    samples = []
    while time.monotonic() - t_start < 30:
        t = time.monotonic() - t_start
        samples.append((t, photon(rig, pointer, x + 20, y + 20)))
        time.sleep(0.2)
    del kb
    server.terminate()
    return samples


def game(rig):
    """weston-simple-egl, focused, and foot printing a line every 0.5 s share
    10 Mbit/s with 100 ms round trip: the game's shown fps, and how long
    after foot's last line the local foot window equals what rcomp-run
    captured."""
    tag = "game"
    dump = os.path.join(rig.tmp, "dump")
    os.makedirs(dump)
    done = os.path.join(rig.tmp, "printed")
    foot = ("foot -a bench-foot sh -c 'for i in $(seq 1 24); do echo line $i of the "
            "remote terminal; sleep 0.5; done; touch %s; sleep 600'" % done)
    server, relay, viewer = session(rig, tag, ["weston-simple-egl", foot], 100, 10,
                                    options=["--dump-dir", dump])
    egl_id = "org.freedesktop.weston.simple-egl"
    wait_for("both windows", lambda: rig.window(app_id=egl_id) and
             rig.window(app_id="bench-foot"), timeout=60)
    rig.swaymsg('[app_id="%s"] focus' % egl_id)
    kb = VirtualKeyboard(rig)
    kb.send("tap %d" % KEY_LEFTSHIFT)
    wait_for("the game first", lambda: re.search(r"\(%s\).*focus \(its" % re.escape(egl_id),
                                                 rig.read_log("rc-" + tag)), timeout=30)
    wait_for("foot's last line", lambda: os.path.exists(done), timeout=60)
    t0 = time.monotonic()
    game_id = window_id(rig, tag, egl_id)
    mark = len(shown_fps(rig.read_log("rv-" + tag), game_id))
    foot_id = window_id(rig, tag, "bench-foot")
    try:
        wait_screen_matches(rig, "bench-foot", os.path.join(dump, "window-%d.ppm" % foot_id),
                            timeout=30)
        exact = time.monotonic() - t0
    except Exception:
        exact = float("inf")
    time.sleep(5)
    fps = shown_fps(rig.read_log("rv-" + tag), game_id)[max(0, mark - 10):]
    del kb
    server.terminate()
    return fps, exact


def in_rig(scenario, *args, **rig_args):
    """Runs scenario(rig, *args) on a desktop of its own."""
    rig = Rig(**rig_args)
    try:
        return scenario(rig, *args)
    finally:
        rig.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--paste-mb", type=int, default=10)
    ap.add_argument("--only", default="keys,frames,drop,game")
    args = ap.parse_args()
    only = args.only.split(",")
    print("build: %s" % os.path.dirname(os.path.dirname(RCOMP_RUN)), flush=True)
    if "keys" in only:
        idle, during, seconds, intact = in_rig(keys, args.paste_mb)
        rate = (args.paste_mb << 20) * 8 / seconds / 1e6
        print("keys, 1 Mbit/s, 20 ms RTT: idle median %.0f ms (max %.0f); during a %d MB "
              "local-to-remote paste median %.0f ms (max %.0f, %d presses); paste %.1f s = "
              "%.2f Mbit/s (%.0f%% of the link), %s" % (
                  statistics.median(idle), max(idle), args.paste_mb,
                  statistics.median(during) if during else float("nan"),
                  max(during) if during else float("nan"), len(during), seconds, rate,
                  rate * 100, "intact" if intact else "CORRUPT"), flush=True)
    if "frames" in only:
        before, fps, seconds, intact = in_rig(frames, args.paste_mb)
        print("frames, 10 Mbit/s, 20 ms RTT: focused animation shown fps median %.0f before; "
              "during a %d MB remote-to-local paste median %.0f, min %d (%d s); paste %.1f s = "
              "%.2f Mbit/s, %s" % (
                  statistics.median(before) if before else float("nan"),
                  args.paste_mb, statistics.median(fps) if fps else float("nan"),
                  min(fps) if fps else -1, len(fps), seconds,
                  (args.paste_mb << 20) * 8 / seconds / 1e6,
                  "intact" if intact else "CORRUPT"), flush=True)
    if "drop" in only:
        samples = in_rig(drop)
        bound = 40 + 100
        before = [ms for t, ms in samples if 10 <= t < 20]
        after = [(t, ms) for t, ms in samples if t >= 20]
        late = [t for t, ms in after if ms > bound]
        recovered = (max(late) - 20) if late else 0.0
        print("drop, 50 -> 5 Mbit/s at 20 s, 40 ms RTT, a lossless animation behind: click to "
              "photon on the focused window before median %.0f ms; "
              "after the drop max %.0f ms, median %.0f ms; over RTT + 100 ms until %.1f s "
              "after the drop" % (
                  statistics.median(before) if before else float("nan"),
                  max(ms for t, ms in after) if after else float("nan"),
                  statistics.median(ms for t, ms in after) if after else float("nan"),
                  recovered), flush=True)
        print("  samples: " + " ".join("%.1f:%.0f" % s for s in samples if s[0] >= 18),
              flush=True)


    if "game" in only:
        fps, exact = in_rig(game, extra='for_window [app_id="org.freedesktop.weston.simple-egl"] '
                            'move position 800 0\nfor_window [app_id="bench-foot"] move '
                            'position 0 0\n')
        print("game, 10 Mbit/s, 100 ms RTT: focused weston-simple-egl shown fps median %.0f, "
              "min %d (%d s); foot pixel exact %.2f s after its last line" % (
                  statistics.median(fps) if fps else float("nan"), min(fps) if fps else -1,
                  len(fps), exact), flush=True)


if __name__ == "__main__":
    main()
