"""A shared session: what one viewer costs the others, and the session.
Prints numbers; it passes or fails nothing.

    python3 tools/bench_share.py [--only slow,many] [--seconds 10]

- slow: weston-simple-egl and glmark2 (800x600), each in a session with
  one viewer on the session's socket, alone and then with a second viewer
  behind 1 Mbit/s and a 100 ms round trip (tests/relay.py). Printed: the
  fast viewer's presented fps (median and worst second) alone and with the
  slow one, and what the slow one presents.
- many: a terminal (foot, scrolling text: lossless) and a moving 480x360
  picture forced to video (tests/clients/anim-client, --codec video), each
  with 1, 2, 4 and 8 viewers on the session's socket. Printed: rcomp-run's
  CPU (percent of a core), what each extra viewer adds, and the least any
  viewer presented.
waypipe, wprs and Weston RDP cannot share a session; Xpra (which can) is
not packaged in Debian 12, so nothing is compared here.
RCOMP_BUILD picks the build to measure (default: build/).
"""
import argparse
import os
import re
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
from rig import ANIM_CLIENT, RCOMP_RUN, RCOMP_VIEW, Rig, wait_for  # noqa: E402

TERMINAL = ("foot", "sh", "-c", "i=0; while :; do i=$((i+1)); seq $i $((i+40)); sleep 0.05; done")


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def presented(rig, name, mark=0):
    return [int(x) for x in re.findall(r"stats window \d+: received \d+ fps, presented (\d+)",
                                       rig.read_log(name)[mark:])]


def session(rig, app, run_args=()):
    sock = os.path.join(rig.remote_rt, "shared.sock")
    server = rig.start("rc", [RCOMP_RUN, "--stats", "--socket", sock, *run_args, "--", *app],
                       rig.remote_env)
    wait_for("rcomp-run", lambda: os.path.exists(sock), timeout=20)
    server.socket = sock
    return server


def slow_case(app, seconds):
    """The fast viewer's shown fps alone, then beside a slow viewer."""
    out = {}
    for with_slow in (False, True):
        rig = Rig()
        try:
            server = session(rig, app)
            rig.start("fast", [RCOMP_VIEW, "--stats", "--socket", server.socket],
                      rig.local_env)
            wait_for("the window", lambda: rig.windows(), timeout=60)
            if with_slow:
                relay = rig.start_relay(server.socket, delay_ms=50, rate_mbit=1, buffer_kb=64)
                rig.start("slow", [RCOMP_VIEW, "--stats", "--share", "--socket", relay.socket],
                          rig.local_env)
                wait_for("the slow viewer's window", lambda: len(rig.windows()) >= 2,
                         timeout=60)
            time.sleep(4)
            mark = len(rig.read_log("fast"))
            slow_mark = len(rig.read_log("slow")) if with_slow else 0
            time.sleep(seconds + 0.5)
            fast = presented(rig, "fast", mark)[:seconds]
            slow = presented(rig, "slow", slow_mark)[:seconds] if with_slow else []
            out[with_slow] = (fast, slow)
        finally:
            rig.close()
    return out


def many_case(app, run_args, counts, seconds):
    """rcomp-run's CPU share with n viewers, and the least any presented."""
    out = {}
    for n in counts:
        rig = Rig(width=1920, height=1080)
        try:
            server = session(rig, app, run_args)
            for i in range(n):
                rig.start("v%d" % i, [RCOMP_VIEW, "--stats", "--share", "--socket",
                                      server.socket], rig.local_env)
            wait_for("%d windows" % n, lambda: len(rig.windows()) >= n, timeout=60)
            time.sleep(4)
            marks = [len(rig.read_log("v%d" % i)) for i in range(n)]
            before = cpu_seconds(server.pid)
            time.sleep(seconds)
            cpu = (cpu_seconds(server.pid) - before) / seconds * 100
            time.sleep(1.2)
            least = min(statistics.median(presented(rig, "v%d" % i, marks[i]) or [0])
                        for i in range(n))
            out[n] = (cpu, least)
        finally:
            rig.close()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="slow,many")
    ap.add_argument("--seconds", type=int, default=10)
    args = ap.parse_args()
    only = args.only.split(",")
    if "slow" in only:
        print("a local viewer, alone and beside one behind 1 Mbit/s, 100 ms:")
        for name, app in (("weston-simple-egl", ("weston-simple-egl",)),
                          ("glmark2 800x600", ("glmark2-es2-wayland", "--size", "800x600",
                                               "--run-forever", "-b", "build"))):
            res = slow_case(app, args.seconds)
            (alone, _), (fast, slow) = res[False], res[True]
            print("  %-18s alone: shown %4.1f fps (worst %s);  beside the slow one: shown "
                  "%4.1f (worst %s); the slow one shows %4.1f" % (
                      name, statistics.median(alone or [0]), min(alone or [0]),
                      statistics.median(fast or [0]), min(fast or [0]),
                      statistics.median(slow or [0])))
            sys.stdout.flush()
    if "many" in only:
        print("rcomp-run's CPU with n viewers on the session's socket:")
        for name, app, run_args in (
                ("terminal (lossless)", TERMINAL, ()),
                ("480x360 motion (video)", (ANIM_CLIENT, "1000"), ("--codec", "video"))):
            res = many_case(app, run_args, (1, 2, 4, 8), args.seconds)
            first = res[1][0]
            for n, (cpu, least) in sorted(res.items()):
                extra = (cpu - first) / (n - 1) if n > 1 else 0
                print("  %-24s %d viewer%s: %5.1f%% of a core (%+5.1f per extra viewer), "
                      "least shown %4.1f fps" % (name, n, " " if n == 1 else "s", cpu, extra,
                                                 least))
                sys.stdout.flush()


if __name__ == "__main__":
    main()
