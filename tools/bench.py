"""Bytes on the wire: the same workloads through rcomp and through waypipe at
equal compression, counted by the relay in tests/relay.py. Prints a table;
it measures, it does not pass or fail.

    python3 tools/bench.py [--workloads seq,lines,wterm,less,egl] [--compress lz4,zstd]
                           [--delay-ms 20] [--codec auto] [--runs 3] [--against BUILD]

--delay-ms is the relay's round trip (half each way): a remote link, where
rcomp's codec choice sees a link that is not local. --codec is rcomp-run's
(lossless by default, like with like; auto is what a user gets). --against
runs a second build of rcomp (another checkout's build folder) in the same
run, each workload once per build in turn, for a before and after.

Runs as root on the headless-sway rig (see tests/rig/).
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
from rig import RCOMP_RUN, RCOMP_VIEW, Failure, Rig, wait_for  # noqa: E402

import re  # noqa: E402

RELAY = os.path.join(HERE, "..", "tests", "relay.py")

LINES = ('for i in $(seq 1 300); do echo "line $i: the quick brown fox jumps over the lazy '
         'dog"; sleep 0.01; done')


def script(rig, name, text):
    path = os.path.join(rig.tmp, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + text + "\n")
    os.chmod(path, 0o755)
    return path


def long_file(rig):
    path = os.path.join(rig.tmp, "long.txt")
    words = "the quick brown fox jumps over the lazy dog while a remote display keeps up".split()
    with open(path, "w") as f:
        for i in range(3000):
            f.write("%5d  %s\n" % (i, " ".join(words[(i * 7 + k) % len(words)]
                                             for k in range(4 + i % 9))))
    return path


def page_through(rig, app_id):
    """Twenty pages down, then sixty lines one at a time, then quit."""
    wait_for("the pager's window", lambda: rig.window(app_id=app_id), timeout=30)
    time.sleep(1)
    keys = ["-k", "Shift_L", "-s", "300"]
    keys += ["-k", "space", "-s", "150"] * 20 + ["-k", "Down", "-s", "50"] * 60 + ["q"]
    subprocess.run(["wtype", *keys], env=rig.local_env, check=True, timeout=60)


# name: (title, app's argv for this rig, what drives it once it shows or None)
WORKLOADS = {
    "seq": ("foot printing seq 1 2000000", lambda rig: ["foot", "seq", "1", "2000000"], None),
    "lines": ("foot printing 300 lines 10 ms apart", lambda rig: ["foot", "sh", "-c", LINES],
              None),
    "wterm": ("weston-terminal printing 300 lines 10 ms apart",
              lambda rig: ["weston-terminal", "--shell=" + script(rig, "lines.sh", LINES)],
              None),
    "less": ("foot paging a long file in less (20 pages, 60 lines)",
             lambda rig: ["foot", "less", long_file(rig)], lambda rig: page_through(rig, "foot")),
    "egl": ("weston-simple-egl for 10 s", lambda rig: ["timeout", "10", "weston-simple-egl"],
            None),
}
# (rcomp option, waypipe option) pairs at the same algorithm and level.
COMPRESSIONS = {
    "lz4": ("lz4", "lz4"),
    "zstd": ("zstd:5", "zstd=5"),
}


def relay(rig, name, listen, connect, extra=()):
    stats = os.path.join(rig.tmp, name + ".json")
    p = rig.start(name, [sys.executable, RELAY, "--listen", listen, "--connect", connect,
                         "--once", "--stats", stats, *extra], rig.local_env)
    wait_for("the relay socket", lambda: os.path.exists(listen))
    return p, stats


def finish(rig, procs, timeout):
    start = time.monotonic()
    for p in procs:
        left = max(1, timeout - (time.monotonic() - start))
        try:
            p.wait(timeout=left)
        except subprocess.TimeoutExpired:
            raise Failure("%s did not finish in %d s" % (p.rcomp_name, timeout))


def read_stats(path):
    wait_for("relay stats", lambda: os.path.exists(path), timeout=10)
    with open(path) as f:
        return json.load(f)


def delay(args):
    return ["--delay-ms", str(args.delay_ms / 2)] if args.delay_ms else []


def run_rcomp(rig, args, build, app, compress, tag, drive=None):
    sock = os.path.join(rig.remote_rt, tag + ".sock")
    run = os.path.join(build, "compositor", "rcomp-run")
    view = os.path.join(build, "viewer", "rcomp-view")
    # -v and --stats for the codec's log: streams started, scrolls sent.
    server = rig.start("rcomp-run-" + tag, [run, "-v", "--stats", "--socket", sock, "--compress", compress,
                                           "--codec", args.codec, "--", *app], rig.remote_env)
    wait_for("rcomp-run's socket", lambda: os.path.exists(sock))
    rsock = os.path.join(rig.tmp, tag + "-relay.sock")
    relay_proc, stats = relay(rig, "relay-" + tag, rsock, sock, delay(args))
    t0 = time.monotonic()
    viewer = rig.start("rcomp-view-" + tag, [view, "--socket", rsock], rig.local_env)
    if drive:
        drive(rig)
    finish(rig, [server, viewer, relay_proc], 300)
    s = read_stats(stats)
    log = rig.read_log("rcomp-run-" + tag, 10 ** 8)
    # The viewer dials the relay: what flows down goes to the viewer.
    return {"down": s["down"], "up": s["up"],
            "video": len(re.findall(r"window \d+: video with", log)),
            "scrolls": sum(int(n) for n in re.findall(r"stats window .*?, (\d+) scrolls", log))
            }, time.monotonic() - t0


def run_waypipe(rig, args, app, compress, tag, drive=None):
    csock = os.path.join(rig.tmp, tag + "-client.sock")
    client = rig.start("waypipe-client-" + tag, ["waypipe", "--oneshot", "-c", compress, "-s",
                                                 csock, "client"], rig.local_env)
    wait_for("waypipe client's socket", lambda: os.path.exists(csock))
    rsock = os.path.join(rig.tmp, tag + "-relay.sock")
    relay_proc, stats = relay(rig, "relay-" + tag, rsock, csock, delay(args))
    t0 = time.monotonic()
    server = rig.start("waypipe-server-" + tag, ["waypipe", "-c", compress, "-s", rsock,
                                                 "server", "--", *app], rig.remote_env)
    if drive:
        drive(rig)
    finish(rig, [server, relay_proc, client], 300)
    s = read_stats(stats)
    # Here the remote side dials the relay: its "up" goes to the local side.
    return {"down": s["up"], "up": s["down"]}, time.monotonic() - t0


def mb(n):
    return "%.3f" % (n / 1e6)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workloads", default="seq,lines,wterm,less,egl")
    ap.add_argument("--compress", default="lz4,zstd")
    ap.add_argument("--delay-ms", type=float, default=0, help="the relay's round trip")
    ap.add_argument("--codec", default="lossless", help="rcomp-run's --codec")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--against", help="a second build folder of rcomp, measured beside")
    args = ap.parse_args()
    builds = [("rcomp", os.path.dirname(os.path.dirname(RCOMP_RUN)))]
    if args.against:
        builds.append(("against", os.path.abspath(args.against)))
    rows = []
    rig = Rig()
    try:
        for w in args.workloads.split(","):
            title, make_app, drive = WORKLOADS[w]
            app = make_app(rig)
            for c in args.compress.split(","):
                rc_opt, wp_opt = COMPRESSIONS[c]
                for n in range(args.runs):
                    tag = "%s-%s-%d" % (w, c, n)
                    for name, build in builds:
                        rc, rc_time = run_rcomp(rig, args, build, app, rc_opt,
                                                "%s-%s" % (name, tag), drive)
                        wp, wp_time = run_waypipe(rig, args, app, wp_opt, "wp-%s-%s" % (
                            name, tag), drive)
                        rows.append((title, c, name, rc, wp))
                        print("%-36s %-5s %s %s MB down %s MB up (%.1f s), %d video streams, "
                              "%d scrolls | waypipe %s MB down %s MB up (%.1f s)" % (
                                  title, c, name, mb(rc["down"]), mb(rc["up"]), rc_time,
                                  rc["video"], rc["scrolls"], mb(wp["down"]), mb(wp["up"]),
                                  wp_time), flush=True)
    except Failure as e:
        print("benchmark failed:", e)
        for p in rig.procs:
            print("---- %s ----\n%s" % (p.rcomp_name, rig.read_log(p.rcomp_name, 3000)))
        return 1
    finally:
        rig.close()

    print()
    print("round trip %g ms, rcomp --codec %s" % (args.delay_ms, args.codec))
    print("| workload | compression | build | rcomp to viewer (MB) | waypipe to viewer (MB) | "
          "rcomp to app side (MB) | waypipe to app side (MB) | video streams | scrolls | "
          "rcomp / waypipe (total) |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for title, c, name, rc, wp in rows:
        total_rc = rc["down"] + rc["up"]
        total_wp = wp["down"] + wp["up"]
        print("| %s | %s | %s | %s | %s | %s | %s | %d | %d | %.2f |" % (
            title, c, name, mb(rc["down"]), mb(wp["down"]), mb(rc["up"]), mb(wp["up"]),
            rc["video"], rc["scrolls"], total_rc / total_wp if total_wp else float("nan")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
