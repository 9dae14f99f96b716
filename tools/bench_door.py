"""The door and what a viewer may hold: numbers, it passes or fails nothing.

    python3 tools/bench_door.py [--only flood,memory] [--tries 20]

- flood: the owner's attach over UDP (rcomp-view --udp to a session on
  loopback, until rcomp-run has it attached), first with nothing else
  there, then during a sustained flood of handshakes that never finish
  from 16 ports (tests/clients/quic-flood, a new one from each port every
  300 ms, 53 a second). Printed: each attach's time, the median and the
  worst, and how many got in within 1 s of the calm median.
- memory: rcomp-run's resident memory with a 4096x4096 window of changing
  pixels (tests/clients/anim-client, --codec lossless) and one viewer
  (rcomp-view) that reads, then with 6 and then 15 viewers more that join
  to watch (hello caps 0: no compression, no video) on the session's
  socket and never read a byte; and the same with 200 windows of 256x256.
  Printed: RSS before, 5 s after they joined and what each added, and 15 s
  after (past the stall timeout, which drops them).
RCOMP_BUILD picks the build to measure (default: build/).
"""
import argparse
import os
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
from rig import (ANIM_CLIENT, HELLO_SHARE, HELLO_VIEW_ONLY, RCOMP_RUN, RCOMP_VIEW,  # noqa: E402
                 TEST_CLIENTS, Rig, free_port, hello, rss_kib, wait_for)

QUIC_FLOOD = os.path.join(TEST_CLIENTS, "quic-flood")


def attach_seconds(rig, addr, token, name):
    before = rig.read_log("rc").count("viewer attached")
    t0 = time.monotonic()
    viewer = rig.start(name, [RCOMP_VIEW, "--udp", addr, "--token-file", token], rig.local_env)
    took = None
    while time.monotonic() - t0 < 15:
        if rig.read_log("rc").count("viewer attached") > before:
            took = time.monotonic() - t0
            break
        time.sleep(0.005)
    viewer.terminate()
    viewer.wait(timeout=10)
    time.sleep(0.2)
    return took


def flood_case(tries):
    rig = Rig()
    try:
        addr = "127.0.0.1:%d" % free_port()
        token = os.path.join(rig.tmp, "token")
        with open(os.open(token, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write(os.urandom(16).hex() + "\n")
        rig.start("rc", [RCOMP_RUN, "--listen-udp", addr, "--token-file", token, "--",
                         ANIM_CLIENT, "1000"], rig.remote_env)
        wait_for("rcomp-run", lambda: "listening on UDP" in rig.read_log("rc"), timeout=20)
        calm = [attach_seconds(rig, addr, token, "calm%d" % i) for i in range(5)]
        flood = rig.start("flood", [QUIC_FLOOD, addr, "--sources", "16", "--interval", "300",
                                    "--seconds", "600"], rig.remote_env, stdout=subprocess.PIPE)
        time.sleep(2)
        during = [attach_seconds(rig, addr, token, "owner%d" % i) for i in range(tries)]
        flood.terminate()
        out = flood.communicate(timeout=10)[0].decode().strip()
    finally:
        rig.close()
    calm_median = statistics.median(t for t in calm if t is not None)
    got = [t for t in during if t is not None]
    within = sum(1 for t in got if t <= calm_median + 1)
    print("owner's attach over UDP, calm: %s s (median %.3f)" % (
        " ".join("%.3f" % t if t is not None else "none" for t in calm), calm_median))
    print("during a 16-port flood (%s): %s" % (out, " ".join(
        "%.3f" % t if t is not None else "none" for t in during)))
    print("  median %s s, worst %s; %d of %d within 1 s of the calm median" % (
        "%.3f" % statistics.median(got) if got else "-", "%.3f" % max(got) if got else "-",
        within, tries))


def watcher(path):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(hello(caps=0, flags=HELLO_SHARE | HELLO_VIEW_ONLY))
    return s


def memory_case(label, app):
    rig = Rig()
    try:
        sock = os.path.join(rig.remote_rt, "mem.sock")
        # Lossless: the reading viewer's own costs stay put (video
        # encoders come and go, and change size, with the load).
        server = rig.start("rc", [RCOMP_RUN, "--codec", "lossless", "--socket", sock, "--",
                                  *app], rig.remote_env)
        wait_for("rcomp-run", lambda: os.path.exists(sock), timeout=20)
        rig.start("viewer", [RCOMP_VIEW, "--socket", sock], rig.local_env)
        wait_for("the viewer attached", lambda: "viewer attached" in rig.read_log("rc"),
                 timeout=30)
        time.sleep(8)
        base = rss_kib(server.pid)
        rows = []
        for count in (6, 15):
            mark = len(rig.read_log("rc"))
            watchers = [watcher(sock) for _ in range(count)]
            time.sleep(5)
            at5 = rss_kib(server.pid)
            time.sleep(10)
            at15 = rss_kib(server.pid)
            dropped = rig.read_log("rc")[mark:].count("took nothing for")
            rows.append((count, at5, at15, dropped, server.poll() is None))
            for s in watchers:
                s.close()
            time.sleep(2)
            base_after = rss_kib(server.pid)
    finally:
        rig.close()
    print("%s: one reading viewer (lossless), rcomp-run RSS %.0f MB" % (label, base / 1024))
    for count, at5, at15, dropped, alive in rows:
        print("  + %2d watchers that never read: %.0f MB 5 s after they joined (+%.0f MB, "
              "%.1f MB each); 15 s after, %d of them dropped, %.0f MB%s" % (
                  count, at5 / 1024, (at5 - base) / 1024, (at5 - base) / 1024 / count,
                  dropped, at15 / 1024, "" if alive else "; rcomp-run died"))
    print("  at the end, with the reading viewer alone again: %.0f MB" % (base_after / 1024))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default="flood,memory")
    parser.add_argument("--tries", type=int, default=20)
    args = parser.parse_args()
    only = args.only.split(",")
    if "flood" in only:
        flood_case(args.tries)
    if "memory" in only:
        memory_case("one 4096x4096 window", [ANIM_CLIENT, "100000", "4096", "4096"])
        many = "for i in $(seq 200); do %s 100000 256 256 & done; wait" % ANIM_CLIENT
        memory_case("200 windows of 256x256", ["sh", "-c", many])


if __name__ == "__main__":
    main()
