"""Sessions that survive and stay private: reconnection after a broken link,
named sessions with --list and --attach, TCP with a token, and apps that
abuse the compositor. Run one case: python3 test_sessions.py CASE."""
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rig import (free_port, hello, rss_kib, Failure, RCOMP_RUN, RCOMP_VIEW,  # noqa: E402
                 TEST_CLIENTS, log, main, wait_for)

INPUT_CLIENT = os.path.join(TEST_CLIENTS, "input-client")
ABUSE_CLIENT = os.path.join(TEST_CLIENTS, "abuse-client")
GREEN = (0x20, 0xc0, 0x20)
# abuse-client flood ends on this colour, unlike any input-client draws.
FLOOD_GREEN = (0x20, 0xe0, 0x20)


def pixel(rig, w, x=150, y=150):
    return rig.pixel(x, y, w)


def key_events(rig, name="rcomp-run"):
    return len(re.findall(r"^key \d+ pressed$", rig.read_log(name), re.M))


def type_text(rig, text):
    subprocess.run(["wtype", "-k", "Shift_L", "-s", "300", text], env=rig.local_env,
                   check=True, timeout=20)


def case_reconnect(rig):
    """The link breaks (the viewer sees its connection end, the server sees
    nothing): the window stays, marked and dimmed; keys typed meanwhile never
    reach the app; when the link returns the viewer reattaches with backoff,
    takes the session over from its own stale connection, and the same local
    window shows the exact picture again."""
    server = rig.start_server([INPUT_CLIENT])
    relay = rig.start_relay(server.socket, delay_ms=10)
    viewer = rig.start("rcomp-view", [RCOMP_VIEW, "--socket", relay.socket], rig.local_env)
    w = wait_for("the window", lambda: rig.window(app_id="rcomp-input-test"))
    wait_for("the app's pixels", lambda: pixel(rig, w) == GREEN, interval=0.2)
    rig.swaymsg("[app_id=rcomp-input-test] focus")
    type_text(rig, "a")
    # Shift (which wtype may lose while its keymap settles), then a.
    wait_for("the keys to reach the app", lambda: key_events(rig) >= 1)
    time.sleep(0.8)
    keys_before = key_events(rig)

    os.kill(relay.pid, signal.SIGUSR1)  # the link goes down
    marked = wait_for("the window to be marked disconnected",
                      lambda: rig.window(app_id="rcomp-input-test", title=None)
                      if (rig.window(app_id="rcomp-input-test") or {}).get("name", "")
                      .startswith("[disconnected]") else None)
    if marked["id"] != w["id"]:
        raise Failure("the window was replaced while disconnected")
    dim = wait_for("the window to be dimmed",
                   lambda: (lambda p: p if p[1] < 0x80 else None)(pixel(rig, w)),
                   interval=0.2)
    type_text(rig, "stale")  # typed into a disconnected window: must be dropped
    time.sleep(1.5)
    rig.check_alive(server)
    rig.check_alive(viewer)

    os.kill(relay.pid, signal.SIGUSR2)  # the link returns
    t0 = time.monotonic()
    wait_for("the window to be whole again",
             lambda: pixel(rig, w) == GREEN and not rig.window(app_id="rcomp-input-test")
             ["name"].startswith("[disconnected]"), interval=0.05, timeout=30)
    elapsed = time.monotonic() - t0
    after = rig.window(app_id="rcomp-input-test")
    if after["id"] != w["id"]:
        raise Failure("the local window was replaced on reconnection")
    if key_events(rig) != keys_before:
        raise Failure("keys typed while disconnected reached the app (%d -> %d)"
                      % (keys_before, key_events(rig)))
    rig.swaymsg("[app_id=rcomp-input-test] focus")
    type_text(rig, "b")
    wait_for("a key typed after reconnection to reach the app",
             lambda: key_events(rig) > keys_before)
    text = rig.read_log("rcomp-view")
    for needed in ("connection to the server was lost", "reconnecting in",
                   "reattached to session"):
        if needed not in text:
            raise Failure("the viewer did not say %r:\n%s" % (needed, text))
    if "takes the session over" not in rig.read_log("rcomp-run"):
        raise Failure("the server did not replace its stale viewer")
    log("link down: window kept (id %d), dimmed to %s, title marked; stale keys dropped; "
        "picture exact again %.2f s after the link returned (backoff included)"
        % (w["id"], dim, elapsed))


def case_list_attach(rig):
    """Named sessions: --list shows them, rcomp-view --attach NAME finds one,
    a second --name of the same name is refused."""
    env = rig.remote_env
    rig.start("rcomp-run", [RCOMP_RUN, "--name", "work", "--", INPUT_CLIENT], env)
    sock = os.path.join(rig.session_dir, "work.sock")
    wait_for("the session's socket", lambda: os.path.exists(sock))
    mode = stat.S_IMODE(os.stat(rig.session_dir).st_mode)
    if mode != 0o700:
        raise Failure("the session directory has mode %o" % mode)

    def listing():
        return subprocess.run([RCOMP_RUN, "--list"], env=env, capture_output=True, text=True,
                              timeout=10).stdout

    out = listing()
    if not re.search(r"^work\s+\d+\s+\S+ \S+\s+detached\s+.*input-client", out, re.M):
        raise Failure("--list does not show the detached session:\n" + out)
    dup = subprocess.run([RCOMP_RUN, "--name", "work", "--", "true"], env=env,
                         capture_output=True, text=True, timeout=10)
    if dup.returncode == 0 or "running already" not in dup.stderr:
        raise Failure("a second session named work was not refused: %s" % dup.stderr)
    rig.start("rcomp-view", [RCOMP_VIEW, "--attach", "work"], rig.local_env)
    wait_for("the window", lambda: rig.window(app_id="rcomp-input-test"))
    out = wait_for("--list to show the viewer",
                   lambda: (lambda o: o if re.search(r"^work\s.*\sattached\s", o, re.M)
                            else None)(listing()))
    gone = subprocess.run([RCOMP_VIEW, "--attach", "nosuch"], env=rig.local_env,
                          capture_output=True, text=True, timeout=10)
    if gone.returncode == 0:
        raise Failure("attaching to a missing session succeeded")
    log("--list:\n%s--attach nosuch: %s" % (out, gone.stderr.strip().splitlines()[-1]))


def case_tcp(rig):
    """--listen-tcp requires the token: a generated one in a 0600 file. A
    wrong token is refused with one log line and costs nothing; the right one
    works; both sides warn that TCP is not encrypted."""
    port = free_port()
    server = rig.start("rcomp-run", [RCOMP_RUN, "--name", "lan", "--listen-tcp",
                                     "127.0.0.1:%d" % port, "--", INPUT_CLIENT],
                       rig.remote_env)
    token_file = os.path.join(rig.session_dir, "lan.token")
    wait_for("the token file", lambda: os.path.exists(token_file) and
             os.path.getsize(token_file) > 0)
    mode = stat.S_IMODE(os.stat(token_file).st_mode)
    if mode != 0o600:
        raise Failure("the token file has mode %o" % mode)
    token = open(token_file).read().strip()
    if len(token) < 32:
        raise Failure("the token is short: %d characters" % len(token))
    wait_for("the TCP listener", lambda: "listening on TCP" in rig.read_log("rcomp-run"))
    if "not encrypted" not in rig.read_log("rcomp-run"):
        raise Failure("rcomp-run did not warn that TCP is not encrypted")

    # Wrong and missing tokens, by hand and with the viewer.
    before = rss_kib(server.pid)
    for attempt in (b"", b"x" * 64, token[:-1].encode() + b"0"):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(hello(attempt))
        data = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        s.close()
        if data[:2] != b"\x02\x02" or data[12:16] != b"\x06\x00\x00\x00":
            raise Failure("a bad token got %r" % data[:40])
    bad = os.path.join(rig.tmp, "bad.token")
    with open(bad, "w") as f:
        f.write("0" * 64 + "\n")
    refused = subprocess.run([RCOMP_VIEW, "--tcp", "127.0.0.1:%d" % port, "--token-file", bad],
                             env=rig.local_env, capture_output=True, text=True, timeout=20)
    if refused.returncode == 0 or "wrong token" not in refused.stderr:
        raise Failure("a viewer with a wrong token: %d %s" % (refused.returncode,
                                                            refused.stderr))
    if rig.windows():
        raise Failure("a window appeared for a refused viewer")
    lines = [l for l in rig.read_log("rcomp-run").splitlines() if "refused a viewer" in l]
    if len(lines) != 4:
        raise Failure("expected one log line per refused viewer, got:\n" + "\n".join(lines))
    viewer = rig.start("rcomp-view", [RCOMP_VIEW, "--tcp", "127.0.0.1:%d" % port,
                                      "--token-file", token_file], rig.local_env)
    w = wait_for("the window over TCP", lambda: rig.window(app_id="rcomp-input-test"))
    wait_for("the app's pixels over TCP", lambda: pixel(rig, w) == GREEN, interval=0.2)
    rig.check_alive(viewer)
    if "not encrypted" not in rig.read_log("rcomp-view"):
        raise Failure("rcomp-view did not warn that TCP is not encrypted")
    after = rss_kib(server.pid)
    log("TCP: token file mode 0600, %d characters; 4 bad tokens refused with one line each, "
        "RSS %d -> %d KiB; e.g. %s" % (len(token), before, after, lines[0].strip()))


def check_other_window_works(rig):
    w = wait_for("the well-behaved window", lambda: rig.window(app_id="rcomp-input-test"))
    wait_for("its pixels", lambda: pixel(rig, w) == GREEN, interval=0.2)
    return w


def case_huge_buffer(rig):
    """An app commits a 16384x16384 buffer next to a well-behaved one."""
    server = rig.start_server(["sh", "-c", "%s & exec %s huge" % (INPUT_CLIENT, ABUSE_CLIENT)])
    rig.start_viewer(server)
    check_other_window_works(rig)
    wait_for("the huge buffer to be committed", lambda: "committed 16384x16384"
             in rig.read_log("rcomp-run"))
    big = wait_for("the huge window", lambda: rig.window(app_id="rcomp-abuse"), timeout=30)
    time.sleep(2)
    rig.check_alive(server)
    check_other_window_works(rig)
    text = rig.read_log("rcomp-run")
    lines = [l for l in text.splitlines() if "past the" in l]
    if len(lines) != 1:
        raise Failure("expected one log line about the huge window:\n" + text[-3000:])
    rss = rss_kib(server.pid)
    if rss > 600 * 1024 and os.environ.get("RCOMP_SANITIZED") != "1":
        raise Failure("rcomp-run uses %d KiB with a huge window" % rss)
    log("16384x16384: %s; local window %dx%d; rcomp-run RSS %d KiB; the other window works"
        % (lines[0].strip(), big["rect"]["width"], big["rect"]["height"], rss))


def case_commit_flood(rig):
    """An app commits as fast as it can for 8 s next to a well-behaved one."""
    server = rig.start_server(["sh", "-c", "%s & exec %s flood 8" % (INPUT_CLIENT,
                                                                   ABUSE_CLIENT)], args=["--stats"])
    rig.start_viewer(server)
    w = check_other_window_works(rig)
    wait_for("the flooding window", lambda: rig.window(app_id="rcomp-abuse"))
    time.sleep(2)
    a, b = w["rect"], rig.window(app_id="rcomp-abuse")["rect"]
    if a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"] and \
            a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"]:
        raise Failure("the flooding window %r covers the other one %r" % (b, a))
    first = rss_kib(server.pid)
    # The other window still answers input while the flood goes on.
    rig.swaymsg("[app_id=rcomp-input-test] focus")
    type_text(rig, "q")
    wait_for("a key to reach the well-behaved app", lambda: key_events(rig) >= 1)
    check_other_window_works(rig)
    m = wait_for("the flood to end", lambda: re.search(r"^commits (\d+)$",
                                                       rig.read_log("rcomp-run"), re.M), timeout=30)
    last = rss_kib(server.pid)
    flood = rig.window(app_id="rcomp-abuse")
    wait_for("the flooder's last (green) frame",
             lambda: pixel(rig, flood, 100, 100) == FLOOD_GREEN, interval=0.2)
    rig.check_alive(server)
    text = rig.read_log("rcomp-run")
    lines = [l for l in text.splitlines() if "times a second" in l]
    if len(lines) != 1:
        raise Failure("expected one log line about the flood:\n" + text[-3000:])
    if last - first > 8192 and os.environ.get("RCOMP_SANITIZED") != "1":
        raise Failure("rcomp-run grew from %d to %d KiB during the flood" % (first, last))
    log("flood: %s commits in 8 s; %s; RSS %d -> %d KiB; the other window kept working"
        % (m.group(1), lines[0].strip(), first, last))


if __name__ == "__main__":
    case = sys.argv[1] if len(sys.argv) > 1 else ""
    body = globals().get("case_" + case)
    if not body:
        print("unknown case %r" % case)
        sys.exit(2)
    # The abusive window must never cover the well-behaved one, whose
    # pixels the cases check: both float centred, so move the flooder to the
    # corner. sway 1.7 does not clip a huge surface to its rectangle, so the
    # huge window goes to a workspace of its own.
    extra = {
        "huge_buffer": 'for_window [app_id="rcomp-abuse"] move container to workspace 2\n',
        "commit_flood": 'for_window [app_id="rcomp-abuse"] move position 0 0\n',
    }
    main(body, **({"extra": extra[case]} if case in extra else {}))
