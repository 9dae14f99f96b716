"""Real networks: a game's shown frame rate and a key's latency through a
link that loses and delays packets, between two network namespaces joined by
tests/netsim (IP packets over TUN devices: TCP and UDP ride it alike).
Prints numbers; it passes or fails nothing.

    python3 tools/bench_net.py [--only 0,3,5,5j,20,roam] [--seconds 15] [--rtt-ms 50]
                               [--rate-mbit 20] [--transports tcp,udp]

Each case runs weston-simple-egl (60 fps) and the test input client in one
session, rcomp-run on the remote side listening on TCP or UDP (QUIC),
rcomp-view on the local side, at RTT and RATE with random loss each way:
- 0: no loss; 3, 5, 20: that percentage lost each way; 5j: 5% and 10 ms
  of jitter each way; roam: over UDP, the viewer's address changes five
  times, and the time until its next frame is printed.
For each: the game's shown fps (median and worst of the viewer's per-second
counts, a second after the first picture onwards), a key (a virtual
keyboard on the focused input client's window) until the remote app prints
it, every 300 ms (median, 95th percentile, max), and the bytes the link
carried each way.
RCOMP_BUILD picks the build to measure (default: build/).
"""
import argparse
import os
import re
import secrets
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
from rig import (INPUT_CLIENT, RCOMP_RUN, RCOMP_VIEW, NetLink, Rig, wait_for)  # noqa: E402
from bench_priority import focus_input, key_latency  # noqa: E402

CASES = {"0": (0, 0), "3": (3, 0), "5": (5, 0), "5j": (5, 10), "20": (20, 0)}
ONLY = "0,3,5,5j,20,roam"
EGL = "org.freedesktop.weston.simple-egl"
PORT = 7400


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def net_session(rig, link, tag, app, transport, view_args=()):
    token = os.path.join(rig.tmp, "token")
    with open(os.open(token, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
        f.write(secrets.token_hex(16) + "\n")
    addr = "%s:%d" % (NetLink.REMOTE_ADDR, PORT)
    server = rig.start("rc-" + tag, link.wrap("remote", [
        RCOMP_RUN, "--stats", "--listen-" + transport, addr, "--token-file", token, "--",
        "sh", "-c", app]), rig.remote_env)
    wait_for("rcomp-run listening", lambda: "listening" in rig.read_log("rc-" + tag) or
             server.poll() is not None, timeout=20)
    viewer = rig.start("rv-" + tag, link.wrap("local", [
        RCOMP_VIEW, "--stats", "--" + transport, addr, "--token-file", token, *view_args]),
        rig.local_env)
    return server, viewer


def measure(transport, loss, jitter_ms, rtt_ms, rate_mbit, seconds):
    rig = Rig()
    try:
        link = NetLink(rig, delay_ms=rtt_ms / 2, jitter_ms=jitter_ms, loss=loss,
                       rate_mbit=rate_mbit, buffer_kb=256, seed=11)
        tag = "net"
        net_session(rig, link, tag, "%s & exec weston-simple-egl" % INPUT_CLIENT, transport)
        wait_for("the game's window", lambda: rig.window(app_id=EGL), timeout=90)
        kb = focus_input(rig, tag)
        ids = wait_for("the game's window id", lambda: re.findall(
            r"stats window (\d+) \(%s\)" % re.escape(EGL), rig.read_log("rc-" + tag)),
            timeout=30)
        time.sleep(2)
        mark = len(rig.read_log("rv-" + tag))
        before = link.counts()
        keys = []
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            keys.append(key_latency(rig, tag, kb))
            time.sleep(0.3)
        after = link.counts()
        time.sleep(1.2)
        shown = [int(x) for x in re.findall(r"stats window %s: received \d+ fps, presented "
                                            r"(\d+) fps" % ids[-1],
                                            rig.read_log("rv-" + tag)[mark:])]
        shown = shown[1:seconds]
        down = after["a_to_b"]["bytes"] - before["a_to_b"]["bytes"]
        up = after["b_to_a"]["bytes"] - before["b_to_a"]["bytes"]
        packets_down = after["a_to_b"]["forwarded"] - before["a_to_b"]["forwarded"]
        packets_up = after["b_to_a"]["forwarded"] - before["b_to_a"]["forwarded"]
        del kb
        return {
            "fps": statistics.median(shown) if shown else float("nan"),
            "worst": min(shown) if shown else float("nan"),
            "key": statistics.median(keys), "p95": percentile(keys, 95), "max": max(keys),
            "down": down * 8 / seconds / 1e6, "up": up * 8 / seconds / 1e6,
            "pdown": packets_down / seconds, "pup": packets_up / seconds,
        }
    finally:
        rig.close()


def roaming(rtt_ms, rate_mbit, tries=5):
    """ms from the viewer's address change to its next frame, over UDP."""
    rig = Rig()
    times = []
    try:
        link = NetLink(rig, delay_ms=rtt_ms / 2, rate_mbit=rate_mbit, buffer_kb=256)
        net_session(rig, link, "roam", "exec weston-simple-egl", "udp", ["-v"])
        wait_for("frames", lambda: "frame" in rig.read_log("rv-roam"), timeout=60)
        for i in range(tries):
            time.sleep(1)
            mark = len(rig.read_log("rv-roam"))
            t0 = time.monotonic()
            link.readdress("local", "10.99.0.%d" % (10 + i))
            wait_for("a frame from the new address", lambda: re.search(
                r"(\d+\.\d+) debug \S+ window \d+: frame \d+ received",
                rig.read_log("rv-roam")[mark:]), timeout=30)
            stamps = [float(t) for t in re.findall(
                r"(\d+\.\d+) debug \S+ window \d+: frame \d+ received",
                rig.read_log("rv-roam")[mark:])]
            after = [t for t in stamps if t > t0 + 0.001]
            if after:
                times.append((after[0] - t0) * 1000)
        return times
    finally:
        rig.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default=ONLY)
    ap.add_argument("--seconds", type=int, default=15)
    ap.add_argument("--rtt-ms", type=float, default=50)
    ap.add_argument("--rate-mbit", type=float, default=20)
    ap.add_argument("--transports", default="tcp,udp")
    ap.add_argument("--roam", action="store_true", help="only the roaming measurement")
    args = ap.parse_args()
    if args.roam or "roam" in args.only:
        t = roaming(args.rtt_ms, args.rate_mbit)
        print("roaming over UDP, %g ms round trip: the viewer's address changed, next frame "
              "after %s ms (median of %d)" % (args.rtt_ms, "%.0f" % statistics.median(t)
                                               if t else "-", len(t)), flush=True)
        if args.roam:
            return
    print("%g ms round trip, %g Mbit/s, weston-simple-egl and a key every 300 ms:"
          % (args.rtt_ms, args.rate_mbit), flush=True)
    for name in args.only.split(","):
        if name == "roam":
            continue
        loss, jitter = CASES[name]
        for transport in args.transports.split(","):
            r = measure(transport, loss, jitter, args.rtt_ms, args.rate_mbit, args.seconds)
            print("%s, %2d%% loss, %2d ms jitter: shown %4.1f fps (worst second %s); key %.0f "
                  "/ %.0f / %.0f ms (median / p95 / max); link %.2f Mbit/s down, %.2f up "
                  "(%.0f and %.0f packets/s)"
                  % (transport.upper(), loss, jitter, r["fps"], r["worst"], r["key"], r["p95"],
                     r["max"], r["down"], r["up"], r["pdown"], r["pup"]), flush=True)


if __name__ == "__main__":
    main()
