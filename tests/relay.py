"""A network simulator for tests and benchmarks: a unix-socket relay with a
one-way delay, a rate limit and a bounded buffer per direction, counting the
bytes that cross it. The kernel here has no netem, so this stands in for it.
It can also add jitter and the effect loss has on a byte stream: a chunk
that TCP lost arrives a retransmission later, and everything behind it waits.

Backpressure is real: when a direction's buffer is full the relay stops
reading from that side, so the sender's socket fills and its writes block, as
on a real link.

    python3 relay.py --listen A.sock --connect B.sock [--delay-ms 25]
                     [--rate-mbit 10] [--buffer-kb 256] [--stats FILE]
                     [--rate-at SECONDS:MBIT ...] [--jitter-ms 10]
                     [--loss PERCENT [--stall-ms MS]] [--outage-ms MS]
                     [--seed N]

Each accepted connection on A is paired with a new connection to B. A and
B are unix socket paths, or tcp:HOST:PORT (a browser's link to its page).
SIGUSR1 breaks the link the way a network does: every connection's A side is
cut (the viewer sees its connection end) while the B side stays open and
silent (the server learns nothing), and new connections are closed at once.
SIGUSR2 mends it: new connections work again. SIGWINCH stalls the link
for --outage-ms (default 100), both ways, as a radio link that fades for a
moment: what is in flight or read until then arrives when it ends. --rate-at changes the rate
of every connection, both ways, that many seconds after the relay started
(repeat it for several changes), as when a link falls from 50 to 5 Mbit/s.
--jitter-ms delays each chunk by a further random 0 to MS (never before the
one ahead of it: a stream stays in order). --loss delays that share of the
chunks by --stall-ms more (default: a round trip plus 10 ms, what a fast
retransmission costs), as a lost segment holds up a TCP stream. On exit
(SIGTERM/SIGINT, or after --once when the pair closes), and on SIGHUP, it
writes JSON stats: bytes up (listen side to connect side) and down.
"""
import argparse
import collections
import json
import os
import random
import signal
import socket
import sys
import threading
import time

CHUNK = 65536


class Direction:
    """One direction of one connection: reader thread -> bounded queue ->
    writer thread that releases each chunk after the delay, at the rate."""

    def __init__(self, src, dst, delay, rate, limit, counter, key):
        self.src, self.dst = src, dst
        self.delay, self.rate, self.limit = delay, rate, limit
        self.queue = collections.deque()
        self.queued = 0
        self.cond = threading.Condition()
        self.eof = False
        self.counter, self.key = counter, key
        self.threads = [threading.Thread(target=self.read, daemon=True),
                        threading.Thread(target=self.write, daemon=True)]

    def start(self):
        for t in self.threads:
            t.start()

    def read(self):
        try:
            while True:
                with self.cond:
                    while self.queued >= self.limit:
                        self.cond.wait()
                # On a slow link, a few milliseconds of it at a time: a
                # byte arrives about when a real link would deliver it, not
                # after the rest of a 64 KiB read.
                rate = self.rate_now()
                size = min(CHUNK, self.limit)
                if rate:
                    size = min(size, max(1024, int(rate * 0.004)))
                data = self.src.recv(size)
                if not data:
                    break
                with self.cond:
                    self.queue.append((self.due(), data))
                    self.queued += len(data)
                    self.cond.notify_all()
        except OSError:
            pass
        with self.cond:
            self.eof = True
            self.cond.notify_all()

    def write(self):
        next_free = time.monotonic()
        try:
            while True:
                with self.cond:
                    while not self.queue and not self.eof:
                        self.cond.wait()
                    if not self.queue:
                        break
                    due, data = self.queue[0]
                due = max(due, Direction.held_until)
                now = time.monotonic()
                if due > now:
                    time.sleep(due - now)
                rate = self.rate_now()
                if rate:
                    # Serialisation delay of this chunk on the link.
                    start = max(next_free, time.monotonic())
                    next_free = start + len(data) / rate
                    wait = next_free - time.monotonic()
                    if wait > 0:
                        time.sleep(wait)
                self.dst.sendall(data)
                with self.counter_lock:
                    self.counter[self.key] += len(data)
                with self.cond:
                    self.queue.popleft()
                    self.queued -= len(data)
                    self.cond.notify_all()
        except OSError:
            pass
        if self.cut is not None and self.cut.is_set():
            return  # a broken link tells the far side nothing
        try:
            self.dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    jitter = 0.0
    loss = 0.0
    stall = 0.0
    last_due = 0.0
    held_until = 0.0  # an outage of the whole link (SIGWINCH) ends then

    def due(self):
        """When a chunk read now leaves: the delay, the jitter and a
        retransmission's stall, never before the chunk ahead of it."""
        at = max(time.monotonic() + self.delay, Direction.held_until)
        if self.jitter:
            at += random.uniform(0, self.jitter)
        if self.loss and random.random() < self.loss:
            at += self.stall
        self.last_due = max(at, self.last_due)
        return self.last_due

    counter_lock = threading.Lock()
    cut = None
    started = time.monotonic()
    changes = []  # (seconds after start, bytes per second), in order

    def rate_now(self):
        rate = self.rate
        for at, r in self.changes:
            if time.monotonic() - self.started >= at:
                rate = r
        return rate


def address(spec):
    """A unix socket path, or tcp:HOST:PORT: its family and address."""
    if spec.startswith("tcp:"):
        host, port = spec[4:].rsplit(":", 1)
        return socket.AF_INET, (host, int(port))
    return socket.AF_UNIX, spec


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--listen", required=True)
    ap.add_argument("--connect", required=True)
    ap.add_argument("--delay-ms", type=float, default=0.0, help="one-way delay")
    ap.add_argument("--rate-mbit", type=float, default=0.0, help="0: unlimited")
    ap.add_argument("--buffer-kb", type=int, default=256, help="per direction")
    ap.add_argument("--stats", help="write JSON stats here on exit")
    ap.add_argument("--once", action="store_true", help="exit after one connection")
    ap.add_argument("--rate-at", action="append", default=[], metavar="SECONDS:MBIT",
                    help="change the rate at that time after start (0: unlimited)")
    ap.add_argument("--jitter-ms", type=float, default=0.0,
                    help="a further random delay of 0 to MS per chunk")
    ap.add_argument("--loss", type=float, default=0.0, metavar="PERCENT",
                    help="this share of chunks waits a retransmission (--stall-ms)")
    ap.add_argument("--stall-ms", type=float, help="default: the round trip plus 10 ms")
    ap.add_argument("--outage-ms", type=float, default=100.0,
                    help="how long the link stalls at SIGWINCH")
    ap.add_argument("--seed", type=int, help="for a repeatable run")
    args = ap.parse_args()
    if args.seed is not None:
        random.seed(args.seed)
    Direction.jitter = args.jitter_ms / 1000.0
    Direction.loss = args.loss / 100.0
    Direction.stall = (args.stall_ms if args.stall_ms is not None
                       else 2 * args.delay_ms + 10) / 1000.0
    Direction.changes = sorted((float(a), float(m) * 1e6 / 8) for a, m in
                               (c.split(":") for c in args.rate_at))

    counter = {"up": 0, "down": 0, "connections": 0}
    listen_family, listen_at = address(args.listen)
    connect_family, connect_at = address(args.connect)
    listener = socket.socket(listen_family, socket.SOCK_STREAM)
    if listen_family == socket.AF_UNIX:
        try:
            os.unlink(args.listen)
        except OSError:
            pass
    else:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(listen_at)
    listener.listen(8)
    delay = args.delay_ms / 1000.0
    rate = args.rate_mbit * 1e6 / 8
    limit = args.buffer_kb * 1024
    done = threading.Event()

    def finish(*_):
        done.set()

    pairs = []
    down = threading.Event()
    Direction.cut = down

    def link_down(*_):
        down.set()
        for a, _b in pairs:
            try:
                a.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def write_stats(*_):
        if args.stats:
            with open(args.stats + ".tmp", "w") as f:
                json.dump(counter, f)
            os.rename(args.stats + ".tmp", args.stats)

    signal.signal(signal.SIGTERM, finish)
    signal.signal(signal.SIGINT, finish)
    signal.signal(signal.SIGHUP, write_stats)
    signal.signal(signal.SIGUSR1, link_down)
    signal.signal(signal.SIGUSR2, lambda *_: down.clear())

    def outage(*_):
        Direction.held_until = time.monotonic() + args.outage_ms / 1000.0

    signal.signal(signal.SIGWINCH, outage)

    def serve():
        while not done.is_set():
            try:
                a, _ = listener.accept()
            except OSError:
                return
            if down.is_set():
                a.close()
                continue
            b = socket.socket(connect_family, socket.SOCK_STREAM)
            try:
                b.connect(connect_at)
            except OSError as e:
                print("relay: cannot connect to %s: %s" % (args.connect, e), file=sys.stderr)
                a.close()
                continue
            counter["connections"] += 1
            pairs.append((a, b))
            up = Direction(a, b, delay, rate, limit, counter, "up")
            back = Direction(b, a, delay, rate, limit, counter, "down")
            up.start()
            back.start()
            if args.once:
                for t in up.threads + back.threads:
                    t.join()
                done.set()
                return

    threading.Thread(target=serve, daemon=True).start()
    while not done.is_set():
        done.wait(0.2)
    write_stats()


if __name__ == "__main__":
    main()
