"""The picture a player sees: for every picture the viewer shows of a game
clip played through rcomp, its PSNR-Y and SSIM against the frame the app
drew. Prints numbers; it passes or fails nothing.

    python3 tools/bench_quality.py [--clips glmark2,neverball] [--sizes 800x600,1920x1080]
                                   [--mbit 4,8,16,50] [--rtt 20] [--seconds 6] [--cores N]

The clips are real game content, recorded once on a headless desktop with
wf-recorder (losslessly) and kept in $RCOMP_CLIPS (default
~/.cache/rcomp/clips) as raw XRGB8888 frames: glmark2-es2-wayland's
jellyfish scene, and Neverball's title screen, each at 1920x1080 and
800x600. tests/clients/clip-client plays a clip as a game would, one
frame each frame callback at rcomp-run's clock (--fps 60), each frame's
index drawn into its top-left corner as squares a lossy coder keeps
(tests/clients/mark.h); it shows the first frame still until the viewer
has shown it and 2 s more (and, with --typing S, has typed for S
seconds, ten small glyphs a second, as a terminal before a game), then
moves. rcomp-run hosts it behind tests/relay.py at the round trip and
rate asked for; rcomp-view shows it on a 120 Hz headless sway and writes
every picture it hands the desktop to its tap (RCOMP_VIEW_TAP, a FIFO),
which tests/clients/quality-probe reads, matches to the clip's frame by
its index and measures (luma below the mark's rows; a picture shown
smaller, which the desktop scales up, scaled up bilinearly first).

Each line gives, over the motion: the mean and 5th percentile of PSNR-Y
and of SSIM of the pictures shown, the pictures shown a second, the
longest any one picture stayed up, the time from motion's start to the
first moving picture shown and to steady quality (the first moment from
which, over the half second before, the median of each picture's PSNR-Y
less that of the same clip frame shown in the motion's second half stays
within 1 dB: the clip loops every 3 s, so in 6 s of motion the second
half shows the same frames, and the content's own ups and downs, 35 to
41 dB within Neverball's clip, cancel out), the MB the window's frames
took, and how rcomp-run coded them at the end.

Writing each picture to the tap costs rcomp-view a copy (about 1 ms at
800x600 and 5 ms at 1080p on this machine's cores); the pictures are
measured after the run, so the probe costs nothing while it runs.

--cores N pins rcomp-run (its app included) and rcomp-view to the first N
cores this process may use, as bench_game does. Needs
glmark2-es2-wayland, neverball, wf-recorder and ffmpeg to record the clips
(apt-get install glmark2-es2-wayland neverball wf-recorder ffmpeg).
RCOMP_BUILD picks the build to measure (default: build/).
"""
import argparse
import base64
import os
import re
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
from rig import (RCOMP_RUN, RCOMP_VIEW, TEST_CLIENTS, Browser, Rig, free_port,  # noqa: E402
                 pinned, wait_for)

CLIP_CLIENT = os.path.join(TEST_CLIENTS, "clip-client")
PROBE = os.path.join(TEST_CLIENTS, "quality-probe")
CLIPS = os.environ.get("RCOMP_CLIPS", os.path.expanduser("~/.cache/rcomp/clips"))
CLIP_FRAMES = 180  # 3 s at 60 fps, then round again
STILL = 2.0  # s of the first frame, still, before motion


def clip_apps(width, height):
    return {
        "glmark2": ["glmark2-es2-wayland", "--size", "%dx%d" % (width, height), "--fullscreen",
                    "-b", "jellyfish:duration=600"],
        "neverball": [shutil.which("neverball", path=os.environ.get("PATH", "") + ":/usr/games")
                      or "neverball"],
    }


def clip_path(name, width, height):
    return os.path.join(CLIPS, "%s-%dx%d.bgr0" % (name, width, height))


def record_clip(name, width, height):
    """Records CLIP_FRAMES frames of the named app filling a desktop of
    width x height, losslessly, and keeps them as raw XRGB8888."""
    path = clip_path(name, width, height)
    os.makedirs(CLIPS, exist_ok=True)
    for tool in ("wf-recorder", "ffmpeg", clip_apps(width, height)[name][0]):
        if not shutil.which(tool):
            sys.exit("recording the %s clip needs %s (apt-get install glmark2-es2-wayland "
                     "neverball wf-recorder ffmpeg)" % (name, tool))
    print("recording %s at %dx%d into %s" % (name, width, height, path), flush=True)
    rig = Rig(width=width, height=height, floating=False, refresh=60)
    try:
        env = dict(rig.local_env, SDL_VIDEODRIVER="wayland")
        # Neverball: windowed at the desktop's size, which sway's tiling fills.
        home = os.path.join(rig.tmp, "home")
        os.makedirs(os.path.join(home, ".neverball"), exist_ok=True)
        with open(os.path.join(home, ".neverball", "neverballrc"), "w") as f:
            f.write("width %d\nheight %d\nfullscreen 0\naudio_buff 2048\nsound_volume 0\n"
                    "music_volume 0\n" % (width, height))
        env["HOME"] = home
        rig.start("app", clip_apps(width, height)[name], env)
        wait_for("the app's window", lambda: rig.windows(), timeout=60)
        time.sleep(4)  # past its loading and first pictures
        mkv = os.path.join(rig.tmp, "clip.mkv")
        rec = rig.start("wf-recorder", ["wf-recorder", "-y", "-c", "libx264rgb", "-p", "crf=0",
                                        "-p", "preset=ultrafast", "-f", mkv], rig.local_env)
        # Pictures come as fast as the app draws them; the clip is frames,
        # not seconds.
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and rec.poll() is None:
            time.sleep(1)
            if os.path.exists(mkv) and os.path.getsize(mkv) > 0 and \
                    time.monotonic() > deadline - 80 and frames_in(mkv) >= CLIP_FRAMES + 5:
                break
        rec.send_signal(signal.SIGINT)
        rec.wait(timeout=30)
        tmp = path + ".part"
        # (The muxer complains of the recording's repeated timestamps,
        # which passthrough keeps; every frame is kept once.)
        conv = subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", mkv, "-fps_mode",
                               "passthrough", "-frames:v", str(CLIP_FRAMES), "-vf",
                               "scale=%d:%d" % (width, height), "-pix_fmt", "bgr0", "-f",
                               "rawvideo", tmp], capture_output=True, text=True)
        if conv.returncode != 0:
            sys.exit("ffmpeg could not convert the recording:\n" + conv.stderr[-2000:])
        got = os.path.getsize(tmp) // (width * height * 4)
        if got < CLIP_FRAMES // 2:
            sys.exit("only %d frames of %s were recorded" % (got, name))
        os.rename(tmp, path)
        print("recorded %d frames" % got, flush=True)
    finally:
        rig.close()
    return path


def frames_in(mkv):
    out = subprocess.run(["ffprobe", "-v", "error", "-count_packets", "-select_streams", "v:0",
                          "-show_entries", "stream=nb_read_packets", "-of", "csv=p=0", mkv],
                         capture_output=True, text=True)
    try:
        return int(out.stdout.strip() or 0)
    except ValueError:
        return 0


def percentile(values, p):
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(p / 100 * len(s)))]


TOKEN = "bench-quality-token-0123456789abcdef"
TAP_MAGIC_LUMA = 0x4c415452  # viewer/tap.h


def page_pictures(page, path):
    """What the page painted (web/tap.js), as a tap stream of luma for
    quality-probe; their times in CLOCK_MONOTONIC microseconds."""
    offset = time.time() - time.monotonic()
    with open(path, "wb") as f:
        for i in range(page.eval("window.rcomp.tap.count()")):
            p = page.eval("window.rcomp.tap.take(%d)" % i)
            us = int((p["ms"] / 1000 - offset) * 1e6)
            f.write(struct.pack("<IIiiQ", TAP_MAGIC_LUMA, p["window"], p["width"], p["height"],
                                us))
            f.write(base64.b64decode(p["luma"]))


def measure(clip, width, height, mbit, rtt_ms, seconds, cores=None, logs=None, viewer="view",
            typing=0, verbose=False):
    """One run of the clip through rcomp to rcomp-view ("view") or the
    browser page ("page"); the numbers of its motion."""
    rig = Rig(width=max(1280, width + 200), height=max(800, height + 200), refresh=120)
    page = None
    try:
        sock = os.path.join(rig.remote_rt, "clip.sock")
        go = os.path.join(rig.tmp, "go")
        web = []
        if viewer == "page":
            port = free_port()
            token_file = os.path.join(rig.tmp, "web.token")
            with open(token_file, "w") as f:
                f.write(TOKEN + "\n")
            os.chmod(token_file, 0o600)
            web = ["--listen-web", "127.0.0.1:%d" % port, "--token-file", token_file]
        run_argv = [RCOMP_RUN, "--stats", *(["-v"] if verbose else []), "--fps", "60", "--socket", sock, *web, "--",
                    CLIP_CLIENT, clip, str(width), str(height), str(STILL), str(seconds), go,
                    str(typing)]
        rig.start("rc-clip", pinned(cores, run_argv) if cores else run_argv, rig.remote_env)
        wait_for("rcomp-run", lambda: os.path.exists(sock))
        shown_path = os.path.join(rig.tmp, "shown.txt")
        if viewer == "page":
            wait_for("rcomp-run to serve browsers",
                     lambda: "listening for browsers" in rig.read_log("rc-clip"))
            near = free_port()
            rig.start_relay("tcp:127.0.0.1:%d" % port, listen="tcp:127.0.0.1:%d" % near,
                            delay_ms=rtt_ms / 2, rate_mbit=mbit, buffer_kb=1024)
            page = Browser(rig)
            page.open("http://127.0.0.1:%d/#token=%s&tap=1" % (near, TOKEN))
            page.wait("window.rcomp.stats().length && window.rcomp.stats()[0].presented > 0",
                      timeout=120)
        else:
            relay = rig.start_relay(sock, delay_ms=rtt_ms / 2, rate_mbit=mbit, buffer_kb=1024)
            fifo = os.path.join(rig.tmp, "tap")
            os.mkfifo(fifo)
            probe = subprocess.Popen([PROBE, clip, str(width), str(height), fifo],
                                     stdout=open(shown_path, "w"))
            view_argv = [RCOMP_VIEW, "--stats", "--socket", relay.socket]
            viewer_proc = rig.start("rv-clip", pinned(cores, view_argv) if cores else view_argv,
                                    dict(rig.local_env, RCOMP_VIEW_TAP=fifo))
            # Motion once the first picture is shown, whole, however long the
            # link took to carry it.
            wait_for("the first picture", lambda: re.search(
                r"stats window \d+: received \d+ fps, presented [1-9]", rig.read_log("rv-clip")),
                timeout=120)
        time.sleep(STILL)
        open(go, "w").close()
        done = wait_for("the clip's end", lambda: re.search(
            r"done after (\d+) frames", rig.read_log("rc-clip")), timeout=typing + seconds + 60)
        time.sleep(1.5)  # the last pictures over the link
        if viewer == "page":
            pictures = os.path.join(rig.tmp, "page.tap")
            page_pictures(page, pictures)
            with open(shown_path, "w") as out:
                subprocess.run([PROBE, clip, str(width), str(height), pictures], stdout=out,
                               check=True, timeout=600)
        else:
            viewer_proc.terminate()
            viewer_proc.wait(timeout=10)
            probe.wait(timeout=600)
        run_log = rig.read_log("rc-clip")
        with open(shown_path) as f:
            rows = [line.split() for line in f if line.startswith("shown ")]
        if not rows:
            sys.exit("no picture reached the probe; the viewer said:\n" +
                     rig.read_log("rv-clip" if viewer == "view" else "chromium")[-3000:])
        if logs:
            os.makedirs(logs, exist_ok=True)
            stem = os.path.join(logs, "%s-%dx%d-%gmbit-%s" % (
                os.path.basename(clip).split("-")[0], width, height, mbit, viewer))
            for name in ("rc-clip", "rv-clip" if viewer == "view" else "chromium"):
                with open("%s.%s.log" % (stem, name), "w") as f:
                    f.write(rig.read_log(name))
            shutil.copy(shown_path, stem + ".shown.txt")
        motion = int(re.search(r"motion (\d+)", run_log).group(1))
        drawn = int(done.group(1))
    finally:
        if page:
            page.close()
        rig.close()
    end = motion + int(seconds * 1e6)
    pics = [(int(r[1]), int(r[2]), float(r[3]) if r[3] != "-" else None,
             float(r[4]) if r[4] != "-" else None, int(r[5]), int(r[6])) for r in rows]
    during = [p for p in pics if motion <= p[0] <= end]
    measured = [p for p in during if p[2] is not None]
    psnrs = [p[2] for p in measured]
    ssims = [p[3] for p in measured]
    times = [pics[i][0] for i in range(len(pics)) if pics[i][0] <= end]
    # How long each picture stayed up while the app moved (the still
    # picture counts from motion's start).
    holds = [(b - max(a, motion)) / 1000 for a, b in zip(times, times[1:]) if b > motion]
    moving = next((p[0] for p in during if p[1] > 0), None)
    # Steady: the half second before each picture, against the same clip
    # frames in the motion's second half (the clip loops every
    # CLIP_FRAMES, so a content's own ups and downs cancel).
    steady_at = None
    if measured:
        half = motion + (end - motion) / 2
        by_index = {}
        for p in measured:
            if p[0] >= half:
                by_index.setdefault(p[1], []).append(p[2])
        ref = {k: statistics.median(v) for k, v in by_index.items()}
        late = statistics.median([p[2] for p in measured if p[0] >= half] or psnrs)
        rolling = []
        first = 0
        for i, p in enumerate(measured):
            while measured[first][0] < p[0] - 500000:
                first += 1
            window = [q[2] - ref.get(q[1], late) for q in measured[first:i + 1]]
            rolling.append((p[0], statistics.median(window)))
        off = [t for t, m in rolling if abs(m) > 1]
        # Steady from the end of the last half second that was off.
        steady_at = max(off[-1], motion) if off else motion
    mbs = [float(x) for x in re.findall(r"stats window \d+ \([^)]*\): app \d+ fps, sent \d+ "
                                        r"fps, .*?, \d+ scrolls, ([\d.]+) MB/s", run_log)]
    codec = re.findall(r"stats window \d+ \([^)]*\): app \d+ fps, sent \d+ fps, (.*?), \d+ "
                       r"scrolls", run_log)
    sizes = sorted(set("%dx%d" % (p[4], p[5]) for p in during))
    return {
        "psnr": statistics.mean(psnrs) if psnrs else float("nan"),
        "psnr5": percentile(psnrs, 5), "psnr50": percentile(psnrs, 50),
        "ssim": statistics.mean(ssims) if ssims else float("nan"),
        "ssim5": percentile(ssims, 5),
        "fps": len(during) / seconds, "drawn": drawn / seconds,
        "unread": len(during) - len(measured),
        "hold": max(holds) if holds else float("nan"),
        "to_motion": (moving - motion) / 1000 if moving else float("nan"),
        "to_steady": (steady_at - motion) / 1000 if steady_at else float("nan"),
        "mb": sum(mbs[int(STILL + typing):int(STILL + typing + seconds)]),
        "codec": codec[-1] if codec else "?", "sizes": ",".join(sizes),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clips", default="glmark2,neverball")
    ap.add_argument("--sizes", default="800x600,1920x1080")
    ap.add_argument("--mbit", default="4,8,16,50")
    ap.add_argument("--rtt", type=float, default=20)
    ap.add_argument("--seconds", type=float, default=6)
    ap.add_argument("--cores", type=int, default=0)
    ap.add_argument("--typing", type=float, default=0,
                    help="seconds the app types, as a terminal does, before motion")
    ap.add_argument("--record", action="store_true", help="record the clips again")
    ap.add_argument("--logs", help="keep each run's logs and per-picture numbers here")
    ap.add_argument("--verbose", action="store_true",
                    help="rcomp-run's debug log, with times, in the logs (costs it some CPU)")
    ap.add_argument("--viewers", default="view,page",
                    help="rcomp-view (view), the browser page (page), or both")
    args = ap.parse_args()
    if args.cores and args.cores > len(os.sched_getaffinity(0)):
        sys.exit("--cores %d: this machine gives this process %d cores"
                 % (args.cores, len(os.sched_getaffinity(0))))
    for tool in (CLIP_CLIENT, PROBE, RCOMP_RUN, RCOMP_VIEW):
        if not os.access(tool, os.X_OK):
            sys.exit("%s is not built (meson setup build && ninja -C build)" % tool)
    pin = " [%d core%s]" % (args.cores, "" if args.cores == 1 else "s") if args.cores else ""
    if args.typing:
        pin += ", after %g s of typing" % args.typing
    for name in args.clips.split(","):
        for size in args.sizes.split(","):
            width, height = (int(v) for v in size.split("x"))
            clip = clip_path(name, width, height)
            if args.record or not os.path.exists(clip):
                record_clip(name, width, height)
            for mbit, viewer in [(float(v), w) for v in args.mbit.split(",")
                                 for w in args.viewers.split(",")]:
                r = measure(clip, width, height, mbit, args.rtt, args.seconds,
                            args.cores or None, args.logs, viewer, args.typing,
                            args.verbose)
                print("%s %s, %g Mbit/s, %g ms%s, %s: PSNR-Y mean %.2f dB (5th pct "
                      "%.2f, median %.2f), SSIM mean %.4f (5th pct %.4f); shown %.1f fps of "
                      "%.1f drawn, %d unread; longest hold %.0f ms; to motion %.0f ms, to "
                      "steady %.0f ms; %.2f MB; shown at %s; %s" % (
                          name, size, mbit, args.rtt, pin,
                          "rcomp-view" if viewer == "view" else "browser page", r["psnr"], r["psnr5"], r["psnr50"],
                          r["ssim"], r["ssim5"], r["fps"], r["drawn"], r["unread"], r["hold"],
                          r["to_motion"], r["to_steady"], r["mb"], r["sizes"], r["codec"]),
                      flush=True)


if __name__ == "__main__":
    main()
