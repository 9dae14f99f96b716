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
  of jitter each way; 0j: the jitter alone; roam: over UDP, the viewer's address changes five
  times, and the time until its next frame is printed; share: an 8 Mbit/s
  link carries glmark2 at 800x600 (which alone wants more than the link)
  and a bulk TCP download at once, and what each got is printed; text: at
  5% loss and 10 ms jitter, a terminal scrolls text for 5 s, and each
  lossless frame's time from sent to received is printed (both ends log on
  one clock), against the round trip.
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

CASES = {"0": (0, 0), "0j": (0, 10), "3": (3, 0), "5": (5, 0), "5j": (5, 10), "20": (20, 0)}
ONLY = "0,3,5,5j,20,roam,share,text"
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


# A bulk download from the remote side: as much as it can for SECONDS.
BULK_SOURCE = """
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen()
c, _ = s.accept()
end = time.monotonic() + float(sys.argv[3])
chunk = b"x" * 65536
while time.monotonic() < end:
    c.send(chunk)
c.close()
"""

BULK_SINK = """
import socket, sys, time
c = socket.create_connection((sys.argv[1], int(sys.argv[2])))
n, t0 = 0, time.monotonic()
while True:
    data = c.recv(65536)
    if not data:
        break
    n += len(data)
print(n * 8 / (time.monotonic() - t0) / 1e6)
"""


def bulk_download(link, seconds):
    """Mbit/s a TCP download from the remote side got over seconds."""
    source = link.run("remote", ["python3", "-c", BULK_SOURCE, NetLink.REMOTE_ADDR,
                                 str(PORT + 1), str(seconds)])
    try:
        wait_for("the bulk source", lambda: link.check_output(
            "remote", ["ss", "-Htln", "sport = :%d" % (PORT + 1)]).strip())
        return float(link.check_output("local", ["python3", "-c", BULK_SINK,
                                                 NetLink.REMOTE_ADDR, str(PORT + 1)],
                                       timeout=seconds + 60))
    finally:
        source.kill()
        source.wait()


def share(transport, rtt_ms, rate_mbit, seconds):
    """A game and a bulk TCP download on one link: what each got."""
    rig = Rig()
    try:
        link = NetLink(rig, delay_ms=rtt_ms / 2, rate_mbit=rate_mbit, buffer_kb=128)
        alone = bulk_download(link, 5)
        game = "exec glmark2-es2-wayland --size 800x600 --swap-mode fifo -b build:duration=600"
        net_session(rig, link, "share", game, transport)
        wait_for("the game's window", lambda: rig.windows(), timeout=90)
        time.sleep(3)
        mark = len(rig.read_log("rv-share"))
        before = link.counts()
        tcp = bulk_download(link, seconds)
        after = link.counts()
        shown = [int(x) for x in re.findall(r"stats window \d+: received \d+ fps, presented "
                                            r"(\d+) fps", rig.read_log("rv-share")[mark:])]
        down = (after["a_to_b"]["bytes"] - before["a_to_b"]["bytes"]) * 8 / seconds / 1e6
        return {"alone": alone, "tcp": tcp, "game": max(down - tcp, 0.0),
                "fps": statistics.median(shown[1:]) if len(shown) > 1 else float("nan")}
    finally:
        rig.close()


SCROLL = ("for i in $(seq 1 250); do echo \"line $i: the quick brown fox jumps over the lazy "
          "dog 0123456789\"; sleep 0.02; done; exec sleep 600")


def text_frames(transport, rtt_ms, rate_mbit):
    """ms from each lossless frame's send to its arrival, while a terminal
    scrolls text through 5% loss and 10 ms jitter each way."""
    rig = Rig()
    try:
        link = NetLink(rig, delay_ms=rtt_ms / 2, jitter_ms=10, loss=5, rate_mbit=rate_mbit,
                       buffer_kb=256, seed=11)
        token = os.path.join(rig.tmp, "token")
        with open(os.open(token, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
            f.write(secrets.token_hex(16) + "\n")
        addr = "%s:%d" % (NetLink.REMOTE_ADDR, PORT)
        rig.start("rc-text", link.wrap("remote", [
            RCOMP_RUN, "-v", "--codec", "lossless", "--listen-" + transport, addr,
            "--token-file", token, "--", "foot", "sh", "-c", "sleep 2; " + SCROLL]),
            rig.remote_env)
        wait_for("rcomp-run listening", lambda: "listening" in rig.read_log("rc-text"),
                 timeout=20)
        rig.start("rv-text", link.wrap("local", [
            RCOMP_VIEW, "-v", "--" + transport, addr, "--token-file", token]), rig.local_env)
        wait_for("the terminal", lambda: rig.window(app_id="foot"), timeout=60)
        time.sleep(10)
        sent = {int(s): float(t) for t, s in re.findall(
            r"(\d+\.\d+) debug \S+ window 1: frame (\d+) sent", rig.read_log("rc-text"))}
        got = {int(s): float(t) for t, s in re.findall(
            r"(\d+\.\d+) debug \S+ window 1: frame (\d+) received", rig.read_log("rv-text"))}
        return [(got[s] - sent[s]) * 1000 for s in sorted(sent) if s in got]
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
        if name == "text":
            for transport in args.transports.split(","):
                d = text_frames(transport, args.rtt_ms, args.rate_mbit)
                if d:
                    print("%s, 5%% loss, 10 ms jitter, a terminal scrolling: %d lossless frames, "
                          "sent to received %.0f / %.0f / %.0f ms (median / p95 / max); "
                          "%.1f%% within one round trip (%g ms); the last %.0f ms"
                          % (transport.upper(), len(d), statistics.median(d),
                             percentile(d, 95), max(d),
                             100.0 * sum(1 for x in d if x <= args.rtt_ms) / len(d),
                             args.rtt_ms, d[-1]), flush=True)
            continue
        if name == "share":
            for transport in args.transports.split(","):
                r = share(transport, args.rtt_ms, 8, args.seconds)
                print("%s, sharing 8 Mbit/s with a bulk TCP download (%.1f Mbit/s alone): "
                      "the download %.1f Mbit/s, the game %.1f Mbit/s at %.0f fps shown"
                      % (transport.upper(), r["alone"], r["tcp"], r["game"], r["fps"]),
                      flush=True)
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
