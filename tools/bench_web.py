"""The browser viewer against rcomp-view, on the same session and the same
link: frames presented a second, input to photon, bytes on the wire and
CPU per frame; and the page's load to its first window. Prints numbers;
it passes or fails nothing.

    python3 tools/bench_web.py [--only egl,glmark,1080p,load,sound] [--seconds 8]
                               [--rtt-ms 20] [--mbit 50]

Each case runs one rcomp-run (with --listen-web) hosting the app beside the
test input client, and measures two viewers of it one after the other, each
through tests/relay.py at the same round trip and rate: rcomp-view (its
--stats; clicks from a virtual pointer) and the page in Debian's chromium,
headless, driven by puppeteer-core (tests/web/drive.mjs; clicks from
puppeteer). Both click the input client every 200 ms for input to photon
(the viewer's count from its input_mark to presenting the frame that
answers it). Bytes are what the relay carried down in the measured
seconds. CPU is the viewer's (for the page: all of chromium's processes)
over the measured seconds, per frame presented. Headless chromium shows
nothing: "presented" in the page is a picture drawn into its canvas.

- egl: weston-simple-egl (targets: the page >= 57 fps, photon within 10 ms
  of rcomp-view's, bytes within 10%).
- glmark: glmark2-es2-wayland at 800x600, --codec video (target >= 55).
- 1080p: glmark2-es2-wayland at 1920x1080, --codec video (reported).
  glmark2 runs as bench_game runs it, swap mode fifo: at the frame
  clock's pace, as a game with vsync does, not at hundreds of frames a
  second on the cores both viewers share (which cost the page, the
  heavier viewer, 5-10 fps on two cores).

The page's CPU is also shown by chromium process (renderer: WebCodecs'
software decoder, the JavaScript, the canvas; gpu-process: the
compositor, which scales a picture sent smaller than its window), with
the pictures a newer one replaced before they were drawn.
- load: a fresh page to its first window presented, over loopback, five
  times (target: under 1 s).
- sound: the apps' sound in each viewer: how late it is heard at the same
  round trip (a 1 kHz burst every second, its onset in the session's sink
  and in the laptop's, as bench_sound.py's latency), and, with 10 ms of
  jitter and 1% of the stream held up a retransmission besides (as
  bench_sound.py's clicks), in 10 s of a steady 440 Hz tone the gaps and
  splices and the time stood in for; then 10 s more, the link stalling
  for 100 ms every 2.5 s.
"""
import argparse
import json
import os
import re
import signal
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
from rig import (BTN_LEFT, INPUT_CLIENT, RCOMP_RUN, RCOMP_VIEW, Browser, LocalSound,  # noqa: E402
                 Rig, VirtualPointer, free_port, sound_defects, tone_command, wait_for)
from bench_game import cpu_seconds, glmark, median  # noqa: E402
from bench_sound import TimedRecorder, onset_delays, session_sound  # noqa: E402

TOKEN = "bench-web-token-0123456789abcdef"


def cpu_of(pids):
    """CPU seconds of these processes so far, those gone left out."""
    total = 0.0
    for pid in pids:
        try:
            total += cpu_seconds(pid)
        except OSError:
            pass
    return total


def tree(pid):
    """pid and all its descendants."""
    out = [pid]
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % p) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        if ppid == pid:
            out += tree(int(p))
    return out


def kind(pid):
    """A chromium process's part: its --type (renderer, gpu-process,
    utility...), "browser" for the one without, "driver" for node."""
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            cmdline = f.read()
    except OSError:
        return "gone"
    if cmdline.split(b"\0")[0].endswith(b"node"):
        return "driver"
    # Chromium's children rewrite their command line as one string.
    m = re.search(rb"--type=([\w-]+)", cmdline)
    return m.group(1).decode() if m else "browser"


def cpu_by_kind(pids):
    """CPU seconds so far of each kind of process among pids."""
    out = {}
    for pid in pids:
        k = kind(pid)
        try:
            out[k] = out.get(k, 0.0) + cpu_seconds(pid)
        except OSError:
            pass
    return out


def relay_bytes(path):
    try:
        with open(path) as f:
            return json.load(f).get("down", 0)
    except (OSError, ValueError):
        return 0


def session(rig, app, run_args):
    sock = os.path.join(rig.remote_rt, "web.sock")
    port = free_port()
    token_file = os.path.join(rig.tmp, "token")
    with open(token_file, "w") as f:
        f.write(TOKEN + "\n")
    os.chmod(token_file, 0o600)
    apps = "%s & exec %s" % (INPUT_CLIENT, " ".join(app))
    argv = [RCOMP_RUN, "--stats", "--socket", sock, "--listen-web", "127.0.0.1:%d" % port,
            "--token-file", token_file, *run_args, "--", "sh", "-c", apps]
    server = rig.start("rcomp-run", argv, rig.remote_env)
    wait_for("rcomp-run", lambda: "listening for browsers" in rig.read_log("rcomp-run"))
    return server, sock, port


def with_rcomp_view(rig, sock, seconds, rtt_ms, mbit):
    link = rig.start_relay(sock, delay_ms=rtt_ms / 2, rate_mbit=mbit, buffer_kb=1024,
                           name="view-link")
    viewer = rig.start("rcomp-view", [RCOMP_VIEW, "--stats", "--socket", link.socket],
                       rig.local_env)
    wait_for("the app's window", lambda: [w for w in rig.windows()
                                          if w.get("app_id") != "rcomp-input-test"], timeout=60)
    box = wait_for("the input client", lambda: rig.window(app_id="rcomp-input-test"), timeout=60)
    rig.swaymsg("[app_id=rcomp-input-test] focus")
    pointer = VirtualPointer(rig, 2200, 1400)
    r = box["rect"]
    pointer.send("move %d %d" % (r["x"] + 20, r["y"] + 30))
    time.sleep(4)
    mark = len(rig.read_log("rcomp-view"))
    cpu = cpu_of([viewer.pid])
    down = relay_down(link)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pointer.send("press %d" % BTN_LEFT, "release %d" % BTN_LEFT)
        time.sleep(0.2)
    cpu = cpu_of([viewer.pid]) - cpu
    down = relay_down(link) - down
    time.sleep(1.2)
    log = rig.read_log("rcomp-view")[mark:]
    viewer.terminate()
    viewer.wait(10)
    link.terminate()
    link.wait(10)
    # The busiest window is the app's (the input client changes on clicks).
    per = {}
    for wid, fps in re.findall(r"stats window (\d+): received \d+ fps, presented (\d+) fps", log):
        per.setdefault(wid, []).append(int(fps))
    game = max(per, key=lambda k: sum(per[k])) if per else "0"
    shown = per.get(game, [])
    photon = [float(x) for x in re.findall(r"input to photon ([\d.]+) ms", log)]
    frames = max(1, sum(shown[:seconds]))
    return {"fps": median(shown), "photon": median(photon), "bytes": down,
            "cpu_ms": cpu * 1000 / frames}


def relay_down(link):
    """The bytes the relay has carried down so far (it writes them on SIGHUP)."""
    if os.path.exists(link.stats):
        os.unlink(link.stats)
    link.send_signal(signal.SIGHUP)
    wait_for("the relay's count", lambda: os.path.exists(link.stats))
    return relay_bytes(link.stats)


def with_page(rig, port, seconds, rtt_ms, mbit):
    near = free_port()
    link = rig.start_relay("tcp:127.0.0.1:%d" % port, delay_ms=rtt_ms / 2, rate_mbit=mbit,
                           buffer_kb=1024, name="page-link", listen="tcp:127.0.0.1:%d" % near)
    page = Browser(rig)
    try:
        page.open("http://127.0.0.1:%d/#token=%s" % (near, TOKEN))
        page.wait("window.rcomp.stats().filter((w) => w.presented > 0).length >= 2", 60)
        box = page.canvas_box("rcomp input test")
        page.click(box[0] + 20, box[1] + 30)
        time.sleep(4)
        game = [w for w in page.stats() if w["title"] != "rcomp input test"][0]["window"]
        count = "window.rcomp.stats().find((w) => w.window === %d).presented" % game
        skipped = "window.rcomp.stats().find((w) => w.window === %d).skipped" % game
        skipped_before = page.eval(skipped)
        chromium = tree(page.proc.pid)
        cpu = cpu_of(chromium)
        parts = cpu_by_kind(chromium)
        down = relay_down(link)
        before = page.eval(count)
        bytes_before = page.eval("window.rcomp.session().bytes")
        start = time.monotonic()
        end = start + seconds
        while time.monotonic() < end:
            page.click(box[0] + 20, box[1] + 30)
            time.sleep(0.2)
        frames = page.eval(count) - before
        superseded = page.eval(skipped) - skipped_before
        took = time.monotonic() - start
        got = page.eval("window.rcomp.session().bytes") - bytes_before
        cpu = cpu_of(chromium) - cpu
        parts = {k: v - parts.get(k, 0.0) for k, v in cpu_by_kind(chromium).items()}
        down = relay_down(link) - down
        photon = page.eval("window.rcomp.stats().find((w) => w.title === 'rcomp input test')"
                           ".inputToPhotonMs")
        return {"fps": frames / took, "photon": photon if photon is not None else float("nan"),
                "bytes": down or got, "cpu_ms": cpu * 1000 / max(1, frames),
                "parts": {k: v * 1000 / max(1, frames) for k, v in parts.items()},
                "skipped": superseded / took}
    finally:
        page.close()
        link.terminate()
        link.wait(10)


def compare(name, app, run_args, args, target):
    rig = Rig(width=2200, height=1400)
    try:
        _, sock, port = session(rig, app, run_args)
        view = with_rcomp_view(rig, sock, args.seconds, args.rtt_ms, args.mbit)
        page = with_page(rig, port, args.seconds, args.rtt_ms, args.mbit)
    finally:
        rig.close()
    for who, r in (("rcomp-view", view), ("page", page)):
        print("%-10s %-8s presented %5.1f fps, input to photon %5.1f ms, %7.0f KiB down, "
              "CPU %5.1f ms a frame" % (name, who, r["fps"], r["photon"], r["bytes"] / 1024,
                                        r["cpu_ms"]))
    print("%-10s page: %.1f decoded pictures a second a newer one replaced before a paint"
          % (name, page["skipped"]))
    print("%-10s page's CPU a frame by process: %s" % (name, ", ".join(
        "%s %.1f ms" % kv for kv in sorted(page["parts"].items(), key=lambda kv: -kv[1]))))
    ratio = page["bytes"] / view["bytes"] if view["bytes"] else float("nan")
    print("%-10s page/rcomp-view: photon %+.1f ms, bytes %.2fx   (%s)" % (
        name, page["photon"] - view["photon"], ratio, target))
    sys.stdout.flush()


def load(args):
    rig = Rig()
    try:
        _, _, port = session(rig, [INPUT_CLIENT], [])
        times = []
        for _ in range(5):
            page = Browser(rig)
            try:
                page.open("http://127.0.0.1:%d/#token=%s" % (port, TOKEN))
                ms = page.wait("window.rcomp.session().firstFrameMs", 30)
                times.append(ms)
            finally:
                page.close()
        print("load       page load to first window: median %.0f ms, worst %.0f ms "
              "(target < 1000)" % (median(times), max(times)))
    finally:
        rig.close()


def sound_session(rig, app):
    """rcomp-run playing app's sound to viewers and browsers; (its unix
    socket, its web port, its own sink's server)."""
    server, sock, port = session(rig, ["sh", "-c", "'%s'" % app], [])
    own = session_sound(rig)
    wait_for("the session's sound server", lambda: os.path.exists(own[len("unix:"):]),
             timeout=30)
    return sock, port, own


def sound_viewer(rig, who, sock, port, sound, name, link):
    """One viewer of the session's sound through a relay.py link; returns
    (stop, stats, relay): stats() says what its playout did so far."""
    if who == "rcomp-view":
        relay = rig.start_relay(sock, name=name + "-link", **link)
        viewer = rig.start(name, [RCOMP_VIEW, "--stats", "--socket", relay.socket],
                           sound.env("speaker"))

        def stats():
            lines = re.findall(r"(\d+) concealed \(\d+ from FEC\), (\d+) underruns",
                               rig.read_log(name))
            # 10 ms frames stood in for, over the lines so far.
            return {"stood_in_ms": 10 * sum(int(c) for c, _ in lines)}

        def stop():
            viewer.terminate()
            viewer.wait(10)
            relay.terminate()
            relay.wait(10)
        return stop, stats, relay
    near = free_port()
    relay = rig.start_relay("tcp:127.0.0.1:%d" % port, listen="tcp:127.0.0.1:%d" % near,
                            name=name + "-link", **link)
    page = Browser(rig, env=sound.env("speaker"))
    page.open("http://127.0.0.1:%d/#token=%s" % (near, TOKEN))
    page.wait("window.rcomp.session().sound && window.rcomp.session().sound.packets > 0", 30)

    def stats():
        s = page.eval("window.rcomp.session().sound")
        return {"stood_in_ms": s.get("concealedMs", 0), "wait_ms": s.get("waitMs"),
                "path_ms": s.get("latencyMs", 0) - (s.get("waitMs") or 0)}

    def stop():
        page.close()
        relay.terminate()
        relay.wait(10)
    return stop, stats, relay


def sound_case(args):
    for who in ("rcomp-view", "page"):
        # How late: a burst a second, its onset in both sinks.
        rig = Rig()
        try:
            sound = LocalSound(rig)
            sock, port, own = sound_session(rig, tone_command(1000, burst_ms=100))
            stop, stats, _ = sound_viewer(rig, who, sock, port, sound, "lat",
                                          {"delay_ms": args.rtt_ms / 2})
            time.sleep(6)
            remote = TimedRecorder(own, "rcomp")
            local = TimedRecorder(sound.server, "speaker")
            time.sleep(args.seconds + 2)
            remote.stop()
            local.stop()
            delays = onset_delays(remote, local)
            extra = stats()
            stop()
        finally:
            rig.close()
        # Whole: a steady tone, then the same with the link stalling.
        rig = Rig()
        try:
            sound = LocalSound(rig)
            sock, port, _ = sound_session(rig, tone_command(440))
            stop, stats, relay = sound_viewer(rig, who, sock, port, sound, "clicks", {
                "delay_ms": args.rtt_ms / 2, "jitter_ms": 10, "loss": 1, "seed": 3})
            time.sleep(8)
            before = stats()
            gaps, splices = sound_defects(sound.record("speaker", 10.0), 440)
            middle = stats()
            stalls = []

            def stall():
                while len(stalls) < 4:
                    time.sleep(2.5)
                    relay.send_signal(signal.SIGWINCH)
                    stalls.append(1)
            t = threading.Thread(target=stall)
            t.start()
            sgaps, ssplices = sound_defects(sound.record("speaker", 10.0), 440)
            t.join()
            after = stats()
            stop()
        finally:
            rig.close()
        print("sound      %-10s heard %s after the session's sink%s" % (
            who, "%.0f ms (median of %d)" % (median(delays), len(delays)) if delays
            else "never", "" if who == "rcomp-view" else
            "; of it waiting in the playout %s ms, the browser's own path %.0f ms" % (
                "%.0f" % extra["wait_ms"] if extra.get("wait_ms") is not None else "?",
                extra["path_ms"])))
        print("sound      %-10s 10 s of tone: %d gaps, %d splices, %.0f ms stood in; "
              "with 4 stalls of 100 ms: %d gaps, %d splices, %.0f ms stood in" % (
                  who, gaps, splices, middle["stood_in_ms"] - before["stood_in_ms"],
                  sgaps, ssplices, after["stood_in_ms"] - middle["stood_in_ms"]))
        sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="egl,glmark,1080p,load,sound")
    ap.add_argument("--seconds", type=int, default=8)
    ap.add_argument("--rtt-ms", type=float, default=20)
    ap.add_argument("--mbit", type=float, default=50)
    args = ap.parse_args()
    only = args.only.split(",")
    print("link: %g ms round trip, %g Mbit/s; %d s a viewer" % (args.rtt_ms, args.mbit,
                                                               args.seconds))
    if "egl" in only:
        compare("egl", ["weston-simple-egl"], [], args,
                "page >= 57 fps, photon within 10 ms, bytes within 10%")
    if "glmark" in only:
        compare("glmark", glmark(800, 600),
                ["--codec", "video"], args, "page >= 55 fps as video")
    if "1080p" in only:
        compare("1080p", glmark(1920, 1080),
                ["--codec", "video"], args, "reported")
    if "load" in only:
        load(args)
    if "sound" in only:
        sound_case(args)


if __name__ == "__main__":
    main()
