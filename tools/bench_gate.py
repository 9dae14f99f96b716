"""rcomp-gate against its targets. Prints numbers; passes or fails nothing.
Runs as root (it makes accounts, as the tests do).

    python3 tools/bench_gate.py [--only viewers,pages,logins,first,attacks]
                                [--users 20] [--viewers 100] [--pages 100]
                                [--direct 1] [--fps N] [--size 160x120]
                                [--seconds 20] [--against BUILD]

- viewers: USERS accounts, each with one session started at the gate (a
  moving picture, tests/clients/anim-client, 160x120 or --size, lossless), and
  VIEWERS viewers spread over them, each a WebSocket through the gate that
  reads and acks as the page does; beside them, one viewer per session on
  the session's own socket, without the gate. Printed: each gate viewer's
  frame rate against its session's direct viewer (median and worst ratio;
  target at least 0.95), what the gate adds to a frame (the median of a
  frame's arrival through the gate less its arrival direct; target at
  most 1 ms), and the gate's RSS, both its processes (target at most 64 MB
  plus 1 MB a viewer).
- pages: the viewers case with Debian's chromium: one headless chromium
  with PAGES pages of the browser viewer through the gate and, beside them,
  DIRECT pages per session on the session's own browsers' door (its user's
  settings give it one, lossless), a renderer process each; the pages'
  presented frame rates, side by side, once every page shows its window.
  The app draws at each frame callback, or N pictures a second (--fps):
  chromium takes about 2 ms of CPU for each frame a page presents, so on
  a few cores 120 pages starve at 60 a second, direct ones too.
  (The page is copied to /usr/local/share/rcomp/web for the run, where a
  built rcomp-run serves it from: a session the gate starts has a login's
  environment, not the tests' RCOMP_WEB_DIR.)
- logins: wrong logins, 50 a second from one address for SECONDS, while the
  owner of a session (logged in before) attaches 10 times: each attach's
  time to the session's welcome (target: 10 of 10 within 2 s).
- first: Debian's chromium on the gate's page: log in, start foot, until
  its window is presented (target at most 1.5 s on loopback); 3 times.
- attacks: the audit's three (one logged-in user's 150 WebSockets to
  made-up sessions, reopened as they close; a flood of logins from 200
  addresses, a name of its own each; behind HAProxy, one address guessing
  alice's password 8 at a time), each for its own gate: during each, a
  logged-in user's request and a login from an address that logged in
  before, 10 times each (target: 10 of 10 within 2 s). With --against
  BUILD, the same for that build's gate, beside (before and after in one
  run; a gate that knows no [gate] proxies sees HAProxy's address).
RCOMP_BUILD picks the build to measure (default: build/).
"""
import argparse
import base64
import concurrent.futures
import http.client
import json
import os
import pwd
import selectors
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
import rig  # noqa: E402
from rig import ANIM_CLIENT, Rig, wait_for  # noqa: E402
from rig.wire import HELLO_SHARE, Stream, hello, message, records  # noqa: E402
import webdoor  # noqa: E402

FRAME, WELCOME, FRAME_ACK, LINK_ACK = 0x0207, 0x0201, 0x010f, 0x0401
PASSWORD = "bench-Gate-42"
APP_ID = "rcomp-bench-anim"


SIZE = (160, 120)  # the moving picture's (--size)


def bench_users(n, fps=0):
    """rcomp-bench-00.. with PASSWORD, each with a desktop entry for the
    moving picture in its own data directory: drawn at each frame callback,
    or FPS times a second where FPS is given."""
    rig.make_accounts()
    names = ["rcomp-bench-%02d" % i for i in range(n)]
    for name in names:
        rig.make_user(name, PASSWORD)
        p = pwd.getpwnam(name)
        apps = os.path.join(p.pw_dir, ".local", "share", "applications")
        os.makedirs(apps, exist_ok=True)
        with open(os.path.join(apps, APP_ID + ".desktop"), "w") as f:
            f.write("[Desktop Entry]\nType=Application\nName=Bench picture\n"
                    "Exec=%s 86400 %d %d%s\n"
                    % (ANIM_CLIENT, *SIZE, " 0 %g" % fps if fps else ""))
        for d in (os.path.join(p.pw_dir, ".local"), os.path.join(p.pw_dir, ".local", "share"),
                  apps):
            os.chown(d, p.pw_uid, p.pw_gid)
    return names


def bench_gate(r, names, viewers):
    """A gate for the bench (every viewer comes from this one address), and
    each user logged in with a session of the moving picture started:
    (gate, [(user, its client, its session's name)])."""
    gate = rig.Gate(r, sessions_per_user=2, viewers_per_user=16, logins_at_once=32,
                    connections_per_address=viewers + 64)
    sessions = []
    for name in names:
        c = gate.client()
        status, body, _ = c.login(name, PASSWORD)
        assert status == 200, (name, status, body)
        sessions.append((name, c, c.start(APP_ID)))
    return gate, sessions


class Viewer:
    """One viewer in the bench's one loop: through the gate (a WebSocket
    with the login's cookie) or direct (the session's socket); it reads
    what comes, acks as the page does, and notes when each frame came."""

    def __init__(self, sel, sock, ws, session):
        self.sock, self.ws, self.session = sock, ws, session
        self.stream = Stream()
        self.buf = b""
        self.frames = {}  # (window, seq): arrival, monotonic seconds
        self.welcomed = None
        sock.setblocking(False)
        sel.register(sock, selectors.EVENT_READ, self)
        self.send(hello(flags=HELLO_SHARE, caps=1), first=True)

    def send(self, data, first=False):
        payload = data
        if self.ws:
            payload = webdoor.frame(payload)
        self.sock.setblocking(True)
        self.sock.sendall(payload)
        self.sock.setblocking(False)

    def readable(self):
        try:
            chunk = self.sock.recv(1 << 20)
        except BlockingIOError:
            return True
        except OSError:
            chunk = b""
        if not chunk:
            return False
        now = time.monotonic()
        data = chunk
        if self.ws:
            self.buf += chunk
            data = b""
            while len(self.buf) >= 2:
                n, at = self.buf[1] & 0x7F, 2
                if n == 126:
                    if len(self.buf) < 4:
                        break
                    n, at = struct.unpack(">H", self.buf[2:4])[0], 4
                elif n == 127:
                    if len(self.buf) < 10:
                        break
                    n, at = struct.unpack(">Q", self.buf[2:10])[0], 10
                if len(self.buf) < at + n:
                    break
                data += self.buf[at:at + n]
                self.buf = self.buf[at + n:]
        out = b""
        for msg_type, body in self.stream.feed(data):
            if msg_type == WELCOME:
                self.welcomed = now
            elif msg_type == FRAME:
                window, seq = struct.unpack_from("<II", body)
                self.frames[(window, seq)] = now
                out += records(message(FRAME_ACK, struct.pack("<IIQ", window, seq,
                                                              int(now * 1e6))), 0)
        if self.stream.received - self.stream.acked >= 1024:
            self.stream.acked = self.stream.received
            out += records(message(LINK_ACK, struct.pack("<Q", self.stream.received)), 5)
        if out:
            self.send(out)
        return True


def ws_connect(client, session):
    """The viewer's WebSocket to session through the gate, open."""
    s = client.websocket(session)
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(1)
        if not chunk:
            raise RuntimeError("the gate closed the WebSocket of %s" % session)
        head += chunk
    if not head.startswith(b"HTTP/1.1 101"):
        raise RuntimeError("no WebSocket for %s: %r" % (session, head[:100]))
    return s


def memory_kib(pid, field):
    """VmRSS (from status) or Pss (from smaps_rollup) of a process, KiB."""
    path = "/proc/%d/%s" % (pid, "status" if field == "VmRSS" else "smaps_rollup")
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def cpu_seconds(pid):
    """The CPU time a process has used, user and system, in seconds."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def gate_memory(gate):
    """(the monitor's and the network process's RSS, and the keepers' (one
    root child per session, holding its PAM session): how many and their
    PSS in all), KiB."""
    children = [int(x) for x in subprocess.run(["pgrep", "-P", str(gate.proc.pid)],
                                                capture_output=True, text=True).stdout.split()]
    net = gate.net_pid()
    keepers = [p for p in children if p != net]
    own = memory_kib(gate.proc.pid, "VmRSS") + memory_kib(net, "VmRSS")
    return own, len(keepers), sum(memory_kib(p, "Pss") for p in keepers)


def viewers_case(users, nviewers, seconds):
    r = Rig()
    try:
        names = bench_users(users)
        gate, sessions = bench_gate(r, names, nviewers)
        for name, c, s in sessions:
            wait_for("session %s" % s, lambda: [x for x in c.sessions() if x["name"] == s])
        sel = selectors.DefaultSelector()
        direct, through = {}, []
        for i, (name, c, s) in enumerate(sessions):
            uid = pwd.getpwnam(name).pw_uid
            sock = socket.socket(socket.AF_UNIX)
            sock.connect("/tmp/rcomp-%d/%s.sock" % (uid, s))
            direct[s] = Viewer(sel, sock, False, s)
        for i in range(nviewers):
            name, c, s = sessions[i % len(sessions)]
            through.append(Viewer(sel, ws_connect(c, s), True, s))
        rss0 = gate_memory(gate)[0]
        net_pid = gate.net_pid()
        end = time.monotonic() + seconds + 3
        cpu0 = None
        while time.monotonic() < end:
            if cpu0 is None and time.monotonic() >= end - seconds:
                cpu0 = cpu_seconds(net_pid)
            for key, _ in sel.select(0.1):
                if not key.data.readable():
                    sel.unregister(key.fileobj)
        cpu = (cpu_seconds(net_pid) - (cpu0 or 0)) / seconds
        rss, keepers, keepers_kib = gate_memory(gate)
        # The last SECONDS (the first 3 are the start).
        since = end - seconds
        ratios, delays = [], []
        for v in through:
            d = direct[v.session]
            mine = [k for k, t in v.frames.items() if t >= since]
            theirs = [k for k, t in d.frames.items() if t >= since]
            ratios.append(len(mine) / max(1, len(theirs)))
            delays += [(v.frames[k] - d.frames[k]) * 1000 for k in mine if k in d.frames]
        fps = [len([t for t in v.frames.values() if t >= since]) / seconds for v in through]
        dfps = [len([t for t in v.frames.values() if t >= since]) / seconds
                for v in direct.values()]
        print("viewers: %d users, %d sessions, %d viewers through the gate, %d direct"
              % (users, len(sessions), len(through), len(direct)))
        print("  fps through the gate: median %.1f, least %.1f; direct: median %.1f, least %.1f"
              % (statistics.median(fps), min(fps), statistics.median(dfps), min(dfps)))
        print("  through/direct: median %.3f, worst %.3f (target >= 0.95)"
              % (statistics.median(ratios), min(ratios)))
        if delays:
            print("  the gate's delay per frame: median %.2f ms, p90 %.2f ms (target <= 1 ms)"
                  % (statistics.median(delays), sorted(delays)[len(delays) * 9 // 10]))
        print("  the gate's RSS (monitor and network process): %.1f MB with the viewers "
              "(%.1f MB before they read); target <= %d MB" % (rss / 1024, rss0 / 1024,
                                                              64 + len(through)))
        print("  the network process's CPU: %.1f%% of a core" % (cpu * 100))
        print("  the sessions' keepers (root, one a session, holding its PAM session): "
              "%d, %.1f MB PSS in all" % (keepers, keepers_kib / 1024))
    finally:
        for name in ["rcomp-bench-%02d" % i for i in range(users)]:
            rig.end_sessions(name)
        r.close()


def pages_case(users, npages, seconds, ndirect=1, fps=0):
    """The viewers case with browser pages: one headless chromium holds
    NPAGES pages through the gate (each session's share) and, beside them,
    NDIRECT pages per session on the session's own browsers' door (its
    user's settings give it one, with a token file), all at once."""
    r = Rig()
    web = "/usr/local/share/rcomp/web"  # where a built rcomp-run serves its page from
    made = not os.path.exists(web)
    try:
        if made:
            # The sessions the gate starts have a login's environment, so
            # not the tests' RCOMP_WEB_DIR: the page goes where rcomp-run
            # looks by default, for the run.
            shutil.copytree(rig.WEB_DIR, web)
        names = bench_users(users, fps)
        doors = {}
        for name in names:
            p = pwd.getpwnam(name)
            conf = os.path.join(p.pw_dir, ".config", "rcomp")
            os.makedirs(conf, exist_ok=True)
            token = base64.b16encode(os.urandom(16)).decode().lower()
            port = rig.free_port()
            with open(os.path.join(conf, "token"), "w") as f:
                f.write(token + "\n")
            with open(os.path.join(conf, "rcomp.ini"), "w") as f:
                # Lossless: what the gate carries is then the larger, and
                # each picture the app draws is one frame a page presents.
                f.write("[run]\nlisten-web = 127.0.0.1:%d\ntoken-file = %s\ncodec = lossless\n"
                        % (port, os.path.join(conf, "token")))
            for d in (os.path.join(p.pw_dir, ".config"), conf):
                os.chown(d, p.pw_uid, p.pw_gid)
            for f in ("token", "rcomp.ini"):
                os.chown(os.path.join(conf, f), p.pw_uid, p.pw_gid)
                os.chmod(os.path.join(conf, f), 0o600)
            doors[name] = (port, token)
        gate, sessions = bench_gate(r, names, npages)
        for name, c, s in sessions:
            wait_for("session %s's own door" % s, lambda: rig.accepts(doors[name][0]),
                     timeout=30)
        # Session by session, its direct pages then its pages through the
        # gate, so that the two kinds load into chromium side by side.
        pages = []
        for k, (name, c, s) in enumerate(sessions):
            port, token = doors[name]
            for _ in range(ndirect):
                pages.append({"url": "http://127.0.0.1:%d/#token=%s&share=1&sound=0"
                              % (port, token), "cookie": None, "session": s, "gate": False})
            for _ in range(k, npages, len(sessions)):
                pages.append({"url": gate.url + "index.html#gate=%s&share=1&sound=0" % s,
                              "cookie": {"name": "rcomp-gate", "value": c.cookie,
                                         "url": gate.url},
                              "session": s, "gate": True})
        plan = os.path.join(r.tmp, "pages.json")
        with open(plan, "w") as f:
            json.dump({"pages": pages, "warm": 5, "seconds": seconds}, f)
        rss0 = gate_memory(gate)[0]
        out = subprocess.run(["node", os.path.join(HERE, "..", "tests", "web", "pages.mjs"), plan],
                             capture_output=True, text=True, timeout=600 + 2 * seconds)
        rss = gate_memory(gate)[0]
        got = json.loads(out.stdout.strip().splitlines()[-1]) if out.stdout.strip() else {}
        again = [line for line in out.stderr.splitlines() if line.startswith("pages: ")]
        if not isinstance(got, list):
            print("pages: the browser failed: %s\n%s" % (got, out.stderr[-2000:]))
            print("the gate's log, its end:\n" + r.read_log("rcomp-gate")[-3000:])
            return
        if os.environ.get("BENCH_VERBOSE"):
            for p, g in zip(pages, got):
                print("   ", p["session"], "gate" if p["gate"] else "direct", g)
        # A session's direct rate: the mean of its direct pages.
        directs = {}
        for p, g in zip(pages, got):
            if not p["gate"]:
                directs.setdefault(p["session"], []).append(g["fps"])
        direct = {k: statistics.mean(v) for k, v in directs.items()}
        through = [(p["session"], g["fps"]) for p, g in zip(pages, got) if p["gate"]]
        ratios = [f / direct[s] if direct[s] else 0 for s, f in through]
        rates = [f for _, f in through]
        print("pages: %d users, %d pages through the gate and %d on the sessions' own doors, "
              "in one chromium; the app draws %s"
              % (users, len(through), len(direct) * ndirect,
                 "%g pictures a second" % fps if fps else "at each frame callback"))
        print("  fps through the gate: median %.1f, least %.1f; direct: median %.1f, least %.1f"
              % (statistics.median(rates), min(rates), statistics.median(direct.values()),
                 min(direct.values())))
        print("  through/direct: median %.3f, worst %.3f (target >= 0.95)"
              % (statistics.median(ratios), min(ratios)))
        print("  pages loaded again after a failed load: %d%s"
              % (len(again), "".join("\n    " + line for line in again)))
        bare = [(p, g) for p, g in zip(pages, got) if not g["windows"]]
        print("  pages with no window: %d" % len(bare))
        log = r.read_log("rcomp-gate").splitlines()
        for p, g in bare:
            print("    %s (%s) shows %r; the gate's log of it:%s"
                  % (p["session"], "gate" if p["gate"] else "direct", g.get("says"),
                     "".join("\n      " + line for line in log if p["session"] in line)))
        print("  the gate's RSS (monitor and network process): %.1f MB with the pages "
              "(%.1f MB before); target <= %d MB" % (rss / 1024, rss0 / 1024, 64 + len(through)))
    finally:
        for name in ["rcomp-bench-%02d" % i for i in range(users)]:
            rig.end_sessions(name)
            shutil.rmtree(os.path.join(pwd.getpwnam(name).pw_dir, ".config", "rcomp"),
                          ignore_errors=True)
        if made:
            shutil.rmtree(web, ignore_errors=True)
        r.close()


def logins_case(seconds):
    r = Rig()
    try:
        rig.make_accounts()
        gate = rig.Gate(r)
        owner = gate.client()
        owner.login(rig.ALICE)
        s = owner.start("foot")
        wait_for("the session", lambda: owner.sessions())
        stop = threading.Event()
        answers = {}

        def flood():
            pool = concurrent.futures.ThreadPoolExecutor(64)
            start = time.monotonic()
            n = 0
            while not stop.is_set():
                due = start + n / 50.0
                if time.monotonic() < due:
                    time.sleep(due - time.monotonic())
                    continue
                pool.submit(lambda: answers.setdefault(
                    gate.client().login("guess-%d" % (n % 7), "wrong")[0], []).append(1))
                n += 1
            pool.shutdown(wait=True)
            return n

        f = concurrent.futures.ThreadPoolExecutor(1).submit(flood)
        time.sleep(2)
        took = []
        for i in range(10):
            time.sleep(max(0.0, (seconds - 4) / 10))
            t0 = time.monotonic()
            sock = ws_connect(owner, s)
            sock.sendall(webdoor.frame(hello(flags=HELLO_SHARE, caps=1)))
            msg, _ = webdoor.first_message(sock, timeout=10)
            took.append(time.monotonic() - t0 if msg == WELCOME else float("inf"))
            sock.close()
        stop.set()
        sent = f.result()
        print("logins: %d wrong logins in %.0f s from one address (%s)"
              % (sent, seconds, ", ".join("%d: %d" % (k, len(v))
                                          for k, v in sorted(answers.items()))))
        print("  the owner's attaches, s to the welcome: %s; %d of 10 within 2 s"
              % (" ".join("%.2f" % t for t in took), sum(t <= 2 for t in took)))
    finally:
        rig.end_sessions(rig.ALICE)
        r.close()


def first_case():
    """From the login's click to foot's first frame on the page, with the
    start clicked as soon as the menu shows (the driver's round trips, a
    few ms each, count against it)."""
    r = Rig()
    try:
        rig.make_accounts()
        gate = rig.Gate(r)
        times = []
        for _ in range(3):
            page = rig.Browser(r)
            try:
                page.open(gate.url)
                page.wait("!document.getElementById('door').hidden")
                page.eval("document.getElementById('user').value = %r; "
                          "document.getElementById('password').value = %r"
                          % (rig.ALICE, rig.USERS[rig.ALICE]))
                t0 = time.monotonic()
                page.eval("document.getElementById('enter').click()")
                page.wait("document.querySelector('li[data-app=\"foot\"] button')")
                page.eval("document.querySelector('li[data-app=\"foot\"] button').click()")
                page.window("foot")
                times.append(time.monotonic() - t0)
            finally:
                page.close()
            rig.end_sessions(rig.ALICE)
        print("first window: login to foot's first frame %s s (median %.2f; target <= 1.5)"
              % (" ".join("%.2f" % t for t in times), statistics.median(times)))
    finally:
        r.close()


def attack_gate(r, name, program, modern, **settings):
    if not modern:
        settings.pop("proxies", None)
    return rig.Gate(r, name=name, program=program, state=modern, **settings)


def timed(fn, n=10):
    out = []
    for _ in range(n):
        t0 = time.monotonic()
        try:
            status = fn()
        except (OSError, http.client.HTTPException):
            status = None
        out.append((status, time.monotonic() - t0))
    return out


def show(label, results):
    ok = sum(1 for s, t in results if s == 200 and t <= 2)
    print("    %s: %d of 10 within 2 s (%s)" % (label, ok, " ".join(
        "%s/%.2f" % (s, t) for s, t in results)))


def attack(gate, start_flood, user_client, home_login):
    stop = threading.Event()
    threads = start_flood(stop)
    try:
        time.sleep(2)
        show("a logged-in user's request", timed(lambda: user_client.get("sessions")[0]))
        show("a login from a known address", timed(home_login))
    finally:
        stop.set()
        for t in threads:
            t.join()


def attacks_case(against):
    builds = [("this build", rig.RCOMP_GATE, True)]
    if against:
        builds.append(("against", os.path.join(os.path.abspath(against), "gate", "rcomp-gate"),
                       False))
    r = Rig()
    try:
        rig.make_accounts()
        for label, program, modern in builds:
            print("attacks, %s (%s):" % (label, program))
            # 1. One user's WebSockets to made-up sessions.
            gate = attack_gate(r, "gate-1-" + label[:4], program, modern)
            alice = gate.client("127.0.0.5")
            alice.login(rig.ALICE)
            bob = gate.client("127.0.0.6")
            bob.login(rig.BOB)

            def viewers(stop):
                ts = [threading.Thread(target=rig.flood_made_up_viewers,
                                       args=(alice, "127.0.1.%d" % i, stop)) for i in (1, 2, 3)]
                for t in ts:
                    t.start()
                return ts
            print("  1. 150 viewers of alice's to made-up sessions:")
            attack(gate, viewers, bob, lambda: gate.client("127.0.0.6").login(rig.BOB)[0])
            gate.stop()
            # 2. Logins from 200 addresses.
            gate = attack_gate(r, "gate-2-" + label[:4], program, modern)
            alice = gate.client("127.0.0.5")
            alice.login(rig.ALICE)

            def logins(stop):
                def run(i):
                    c = gate.client("127.2.%d.%d" % (i // 200, 1 + i % 200))
                    while not stop.is_set():
                        try:
                            c.login("flood-%d-%s" % (i, os.urandom(3).hex()), "wrong")
                        except OSError:
                            time.sleep(0.05)
                ts = [threading.Thread(target=run, args=(i,)) for i in range(200)]
                for t in ts:
                    t.start()
                return ts
            print("  2. logins from 200 addresses, a new name each:")
            attack(gate, logins, alice, lambda: gate.client("127.0.0.5").login(rig.ALICE)[0])
            gate.stop()
            # 3. Behind HAProxy, one guesser.
            if not shutil.which("haproxy"):
                print("  3. no haproxy")
                continue
            gate = attack_gate(r, "gate-3-" + label[:4], program, modern,
                               proxies=rig.PROXY_SOURCE)
            lb = rig.Balancer(r, {"gate": gate}, proxy=modern)
            alice = lb.client("127.0.4.5")
            alice.login(rig.ALICE)

            def guesses(stop):
                def one(_):
                    try:
                        lb.client("127.0.4.1").login(rig.BOB, "wrong")
                    except (OSError, http.client.HTTPException):
                        pass

                def run():
                    pool = concurrent.futures.ThreadPoolExecutor(8)
                    while not stop.is_set():
                        list(pool.map(one, range(8)))
                    pool.shutdown()
                t = threading.Thread(target=run)
                t.start()
                return [t]
            print("  3. behind HAProxy, one address guessing bob's password 8 at a time:")
            attack(gate, guesses, alice, lambda: lb.client("127.0.4.5").login(rig.ALICE)[0])
            lb.proc.terminate()
            lb.proc.wait(timeout=10)
            gate.stop()
    finally:
        for u in rig.USERS:
            rig.end_sessions(u)
        r.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default="viewers,logins,first")
    ap.add_argument("--users", type=int, default=20)
    ap.add_argument("--viewers", type=int, default=100)
    ap.add_argument("--pages", type=int, default=100)
    ap.add_argument("--direct", type=int, default=1, help="direct pages per session")
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--size", default="160x120", help="the moving picture's, WxH")
    ap.add_argument("--fps", type=float, default=0,
                    help="pages: the app's pictures a second (default: each frame callback)")
    ap.add_argument("--against", help="attacks: a second build folder, measured beside")
    args = ap.parse_args()
    global SIZE
    SIZE = tuple(int(x) for x in args.size.split("x"))
    if os.geteuid() != 0:
        sys.exit("bench_gate.py makes accounts and runs the gate: run it as root")
    only = args.only.split(",")
    print("cores: %d" % os.cpu_count())
    if "viewers" in only:
        viewers_case(args.users, args.viewers, args.seconds)
    if "pages" in only:
        pages_case(args.users, args.pages, args.seconds, args.direct, args.fps)
    if "logins" in only:
        logins_case(args.seconds)
    if "first" in only:
        first_case()
    if "attacks" in only:
        attacks_case(args.against)


if __name__ == "__main__":
    main()
