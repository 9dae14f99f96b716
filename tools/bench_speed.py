"""What rcomp costs the app and the machine. Prints markdown tables; it
measures, it passes or fails nothing.

    python3 tools/bench_speed.py [--only app,idle,writes] [--seconds 10] [--rounds 5]
                                 [--idle 60]

- app: glmark2-es2-wayland 400x300 (build scene, not paced by frame
  callbacks) for --seconds: its own FPS report run directly on the local
  desktop, through rcomp (--codec auto and lossless) and through waypipe,
  all on loopback. What rcomp takes from a fast app shows here. The
  direct rate of this machine wanders by 10% from minute to minute, so
  each of --rounds rounds runs all four, in an order that rotates, and
  each way is reported as the median of its rounds' ratios to that
  round's direct run.
- idle: an idle foot for --idle seconds, attached and then detached:
  rcomp-run's CPU (all its threads, from /proc) and its wake-ups (context
  switches) per second.
- writes: write calls per frame sent, from rcomp-run's --stats, for
  weston-simple-egl and for foot printing lines.
Runs as root on the headless-sway rig (see tests/rig/).
"""
import argparse
import os
import re
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
from rig import RCOMP_RUN, RCOMP_VIEW, Failure, Rig, wait_for  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def glmark(seconds):
    return ["glmark2-es2-wayland", "-s", "400x300", "-b", "build:duration=%d" % seconds]


def glmark_fps(text):
    m = re.findall(r"FPS: (\d+)", text)
    return int(m[-1]) if m else float("nan")


def run_direct(rig, seconds):
    p = rig.start("direct", glmark(seconds), rig.local_env)
    p.wait(timeout=seconds + 60)
    return glmark_fps(rig.read_log("direct"))


def run_rcomp(rig, tag, seconds, codec):
    sock = os.path.join(rig.remote_rt, tag + ".sock")
    server = rig.start(tag, [RCOMP_RUN, "--socket", sock, "--codec", codec, "--", *glmark(seconds)],
                       rig.remote_env)
    wait_for("rcomp-run's socket", lambda: os.path.exists(sock))
    viewer = rig.start(tag + "-view", [RCOMP_VIEW, "--socket", sock], rig.local_env)
    server.wait(timeout=seconds + 60)
    viewer.wait(timeout=30)
    return glmark_fps(rig.read_log(tag))


def run_waypipe(rig, seconds):
    csock = os.path.join(rig.tmp, "wp-client.sock")
    client = rig.start("wp-client", ["waypipe", "--oneshot", "-s", csock, "client"], rig.local_env)
    wait_for("waypipe client's socket", lambda: os.path.exists(csock))
    server = rig.start("wp-server", ["waypipe", "-s", csock, "server", "--", *glmark(seconds)],
                       rig.remote_env)
    server.wait(timeout=seconds + 60)
    client.terminate()
    client.wait(timeout=10)
    return glmark_fps(rig.read_log("wp-server"))


def usage(pid):
    """CPU seconds and context switches of all of pid's threads."""
    cpu, switches = 0.0, 0
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        cpu += (int(fields[11]) + int(fields[12])) / TICKS
        with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
            for line in f:
                if "ctxt_switches" in line:
                    switches += int(line.split()[1])
    return cpu, switches


def measure_idle(pid, seconds):
    cpu0, sw0 = usage(pid)
    time.sleep(seconds)
    cpu1, sw1 = usage(pid)
    return (cpu1 - cpu0) / seconds * 100, (sw1 - sw0) / seconds


def run_idle(rig, seconds):
    sock = os.path.join(rig.remote_rt, "idle.sock")
    server = rig.start("idle", [RCOMP_RUN, "--socket", sock, "--", "foot"], rig.remote_env)
    wait_for("rcomp-run's socket", lambda: os.path.exists(sock))
    viewer = rig.start("idle-view", [RCOMP_VIEW, "--socket", sock], rig.local_env)
    wait_for("foot's window", lambda: rig.window(app_id="foot"), timeout=30)
    time.sleep(3)
    cpu0, sw0 = usage(viewer.pid)
    attached = measure_idle(server.pid, seconds)
    cpu1, sw1 = usage(viewer.pid)
    viewer_use = ((cpu1 - cpu0) / seconds * 100, (sw1 - sw0) / seconds)
    viewer.terminate()
    viewer.wait(timeout=20)
    time.sleep(3)
    detached = measure_idle(server.pid, seconds)
    server.terminate()
    server.wait(timeout=20)
    log = rig.read_log("idle")
    warned = "not releasing buffers" in log or "not releasing buffers" in rig.read_log("idle-view")
    return attached, detached, viewer_use, warned


LINES = ('for i in $(seq 1 300); do echo "line $i: the quick brown fox jumps over the lazy '
         'dog"; sleep 0.01; done')


def run_writes(rig, tag, app):
    sock = os.path.join(rig.remote_rt, tag + ".sock")
    server = rig.start(tag, [RCOMP_RUN, "--stats", "--socket", sock, "--", *app], rig.remote_env)
    wait_for("rcomp-run's socket", lambda: os.path.exists(sock))
    viewer = rig.start(tag + "-view", [RCOMP_VIEW, "--socket", sock], rig.local_env)
    server.wait(timeout=120)
    viewer.wait(timeout=30)
    found = re.findall(r"(\d+) writes for (\d+) frames", rig.read_log(tag))
    if not found:
        return float("nan"), 0, 0
    writes, frames = (int(x) for x in found[-1])
    return writes / frames if frames else float("nan"), writes, frames


def run_app(rig, seconds, rounds):
    ways = [("direct", lambda: run_direct(rig, seconds)),
            ("rcomp auto", lambda: run_rcomp(rig, "rc-auto", seconds, "auto")),
            ("rcomp lossless", lambda: run_rcomp(rig, "rc-lossless", seconds, "lossless")),
            ("waypipe", lambda: run_waypipe(rig, seconds))]
    print("\nglmark2 400x300, build scene, %d s, loopback (app FPS; each way's ratio to "
          "the direct run of its round)\n" % seconds)
    print("| round | " + " | ".join(name for name, _ in ways) + " |")
    print("|---:|" + "---:|" * len(ways))
    ratios = {name: [] for name, _ in ways[1:]}
    for r in range(rounds):
        fps = {}
        for name, run in ways[r % len(ways):] + ways[:r % len(ways)]:
            fps[name] = run()
        cells = [str(fps["direct"])]
        for name, _ in ways[1:]:
            ratios[name].append(fps[name] / fps["direct"])
            cells.append("%s (%.2fx)" % (fps[name], ratios[name][-1]))
        print("| %d | %s |" % (r + 1, " | ".join(cells)), flush=True)
    print("| median | | " + " | ".join(
        "%.3fx" % statistics.median(ratios[name]) for name, _ in ways[1:]) + " |", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="app,idle,writes")
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--idle", type=int, default=60)
    args = ap.parse_args()
    only = args.only.split(",")
    rig = Rig()
    try:
        if "app" in only:
            run_app(rig, args.seconds, args.rounds)
        if "idle" in only:
            (a_cpu, a_sw), (d_cpu, d_sw), (v_cpu, v_sw), warned = run_idle(rig, args.idle)
            print("\nidle foot, %d s each (all threads)\n" % args.idle)
            print("| | CPU (% of a core) | wake-ups per s |")
            print("|---|---:|---:|")
            print("| rcomp-run, attached | %.3f | %.1f |" % (a_cpu, a_sw))
            print("| rcomp-run, detached | %.3f | %.1f |" % (d_cpu, d_sw))
            print("| rcomp-view | %.3f | %.1f |" % (v_cpu, v_sw))
            print("foot warned of buffers not released: %s" % ("yes" if warned else "no"),
                  flush=True)
        if "writes" in only:
            print("\nwrite calls per frame sent (rcomp-run --stats)\n")
            print("| workload | writes | frames | writes per frame |")
            print("|---|---:|---:|---:|")
            for tag, title, app in (
                    ("w-egl", "weston-simple-egl 10 s", ["timeout", "10", "weston-simple-egl"]),
                    ("w-lines", "foot printing 300 lines", ["foot", "sh", "-c", LINES])):
                per, writes, frames = run_writes(rig, tag, app)
                print("| %s | %d | %d | %.3f |" % (title, writes, frames, per), flush=True)
    except Failure as e:
        print("benchmark failed:", e)
        for p in rig.procs:
            print("---- %s ----\n%s" % (p.rcomp_name, rig.read_log(p.rcomp_name, 3000)))
        return 1
    finally:
        rig.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
