"""Real networks: tests/netsim joins two network namespaces with a link
that delays and loses IP packets (the kernel here has no netem), and
sessions run across it as they would between two machines."""
import os
import re
import secrets
import subprocess
import time

import pytest

from rig import (ANIM_CLIENT, BTN_LEFT, GREEN, INPUT_CLIENT, KEY_A, KEY_LEFTSHIFT, RCOMP_RUN,
                 RCOMP_VIEW, UDP, NetLink, VirtualKeyboard, VirtualPointer, focused, start_sshd,
                 wait_for, wait_screen_matches)

KEY_B = 48

PORT = 7410

# Namespaces and TUN devices need root (CI runs as root) and /dev/net/tun.
pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists("/dev/net/tun"),
                                reason="tests/netsim needs root and /dev/net/tun")


# A build without ngtcp2 (-Dudp=disabled) has no UDP transport to test.
TRANSPORTS = ["tcp", pytest.param("udp", marks=pytest.mark.skipif(
    not UDP, reason="built without UDP (ngtcp2 and GnuTLS)"))]


def udp_echo(link, count, wait_s, size=200):
    """count datagrams from the local side to an echo on the remote side,
    each given wait_s for its answer; returns (answered, the shortest round
    trip in ms)."""
    server = link.run("remote", ["python3", "-c", ECHO, NetLink.REMOTE_ADDR, str(PORT)])
    # Bound before the first datagram, or that one is answered by nobody.
    wait_for("the echo", lambda: link.check_output(
        "remote", ["ss", "-Huln", "sport = :%d" % PORT]).strip())
    try:
        out = link.check_output("local", ["python3", "-c", PING, NetLink.REMOTE_ADDR, str(PORT),
                                          str(count), str(size), str(wait_s)])
    finally:
        server.kill()
        server.wait()
    answered, fastest = out.split()
    return int(answered), float(fastest)


ECHO = """
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], int(sys.argv[2])))
while True:
    data, peer = s.recvfrom(4096)
    s.sendto(data, peer)
"""

PING = """
import socket, sys, time
addr, port, count, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(float(sys.argv[5]))
answered, fastest = 0, 1e9
for i in range(count):
    t0 = time.monotonic()
    s.sendto(i.to_bytes(4, "little") * (size // 4), (addr, port))
    while True:
        try:
            data = s.recv(4096)
        except socket.timeout:
            break
        if int.from_bytes(data[:4], "little") == i:
            answered += 1
            fastest = min(fastest, (time.monotonic() - t0) * 1000)
            break
print(answered, fastest)
"""


def test_the_simulated_link_delays_and_loses_packets_each_way(desktop):
    link = NetLink(desktop, delay_ms=20, loss=0)
    answered, fastest = udp_echo(link, 20, 1.0)
    assert answered == 20
    assert fastest >= 40, "a round trip took %.1f ms through 2 x 20 ms" % fastest
    link.set(loss=20, delay_ms=1)
    answered, _ = udp_echo(link, 400, 0.1)
    # Each echo crosses twice: 0.8 * 0.8 = 64% come back.
    assert 0.52 * 400 <= answered <= 0.76 * 400, "%d of 400 answered at 20%% each way" % answered
    counts = link.counts()
    assert counts["a_to_b"]["lost"] > 0 and counts["b_to_a"]["lost"] > 0, counts


def test_the_simulated_link_holds_tcp_to_its_rate_and_delivers_every_byte(desktop):
    link = NetLink(desktop, delay_ms=5, rate_mbit=8, loss=2, buffer_kb=64)
    got = {}
    listener = link.run("remote", ["python3", "-c", SINK, NetLink.REMOTE_ADDR, str(PORT)],
                        stdout=True)
    wait_for("the sink", lambda: link.check_output(
        "remote", ["ss", "-Htln", "sport = :%d" % PORT]).strip())
    size = 2 * 1024 * 1024
    out = link.check_output("local", ["python3", "-c", SOURCE, NetLink.REMOTE_ADDR, str(PORT),
                                      str(size)])
    got["seconds"] = float(out)
    received = int(listener.communicate(timeout=30)[0])
    assert received == size
    # 16 Mbit through 8 Mbit/s takes 2 s at least, whatever the machine.
    assert got["seconds"] >= 2.0, "2 MiB crossed 8 Mbit/s in %.2f s" % got["seconds"]
    assert link.counts()["a_to_b"]["lost"] > 0


SINK = """
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen()
c, _ = s.accept()
n = 0
while True:
    data = c.recv(65536)
    if not data:
        break
    n += len(data)
c.sendall(b"done")
print(n)
"""

SOURCE = """
import socket, sys, time
c = socket.create_connection((sys.argv[1], int(sys.argv[2])))
t0 = time.monotonic()
c.sendall(b"x" * int(sys.argv[3]))
c.shutdown(socket.SHUT_WR)
c.recv(16)
print(time.monotonic() - t0)
"""


def token_file(desktop):
    token = os.path.join(desktop.tmp, "token")
    with open(os.open(token, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
        f.write(secrets.token_hex(16) + "\n")
    return token


# What rcomp-view says when its connection goes (not --stats' count of
# datagrams lost, which a link that loses none reports as 0.0%).
LINK_LOST = re.compile(r"connection to the server was lost|link is lost")


def session_across(desktop, link, transport, app, run_args=(), view_args=()):
    """rcomp-run with app on the remote side of link, listening on transport
    ("tcp" or "udp"), and rcomp-view on the local side connected to it."""
    token = token_file(desktop)
    addr = "%s:%d" % (NetLink.REMOTE_ADDR, PORT)
    server = desktop.start("rcomp-run", link.wrap("remote", [
        RCOMP_RUN, "--listen-" + transport, addr, "--token-file", token, *run_args, "--",
        *app]), desktop.remote_env)
    wait_for("rcomp-run listening", lambda: "listening on %s" % transport.upper()
             in desktop.read_log("rcomp-run"))
    viewer = desktop.start("rcomp-view", link.wrap("local", [
        RCOMP_VIEW, "--" + transport, addr, "--token-file", token, *view_args]),
        desktop.local_env)
    return server, viewer


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_session_through_a_lossy_jittery_link_is_pixel_exact(desktop, transport):
    """5% loss and 10 ms of jitter each way at 50 ms round trip: what the
    app drew, moving and then still, arrives exactly."""
    link = NetLink(desktop, delay_ms=25, jitter_ms=10, loss=5, rate_mbit=20)
    dump = os.path.join(desktop.tmp, "dump")
    os.makedirs(dump)
    session_across(desktop, link, transport, [ANIM_CLIENT, "3"],
                   ["--dump-dir", dump, "-v"])
    wait_for("the app to stop moving", lambda: "still after" in desktop.read_log("rcomp-run"),
             timeout=60)
    shot, _, _ = wait_screen_matches(desktop, "rcomp-anim-test",
                                     os.path.join(dump, "window-1.ppm"), timeout=30)
    counts = link.counts()
    assert counts["a_to_b"]["lost"] > 0 and counts["b_to_a"]["lost"] > 0, counts


# A terminal scrolling text for about three seconds, then still.
SCROLLING_TEXT = ["foot", "sh", "-c", "for i in $(seq 1 150); do echo \"line $i: the quick "
                  "brown fox jumps over the lazy dog 0123456789\"; sleep 0.02; done; "
                  "echo still; exec sleep 600"]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_terminals_scrolling_text_through_a_lossy_jittery_link_is_pixel_exact(desktop,
                                                                                 transport):
    """The same link: a terminal scrolls text (moves and new lines) and
    stops; the text on screen ends exactly as the app drew it."""
    link = NetLink(desktop, delay_ms=25, jitter_ms=10, loss=5, rate_mbit=20)
    dump = os.path.join(desktop.tmp, "dump")
    os.makedirs(dump)
    session_across(desktop, link, transport, SCROLLING_TEXT, ["--dump-dir", dump])
    wait_for("the terminal", lambda: desktop.window(app_id="foot"), timeout=60)
    time.sleep(5)  # its three seconds of scrolling
    wait_screen_matches(desktop, "foot", os.path.join(dump, "window-1.ppm"), timeout=30)
    counts = link.counts()
    assert counts["a_to_b"]["lost"] > 0 and counts["b_to_a"]["lost"] > 0, counts


@pytest.mark.skipif(not UDP, reason="built without UDP (ngtcp2 and GnuTLS)")
def test_the_viewers_address_changes_mid_session_and_windows_keep_updating(desktop):
    """The laptop moves to another network: its address changes under the
    running viewer. The QUIC connection moves with it (no reconnect, no
    second attach) and frames keep arriving, to a pixel-exact end."""
    link = NetLink(desktop, delay_ms=10, rate_mbit=50)
    dump = os.path.join(desktop.tmp, "dump")
    os.makedirs(dump)
    session_across(desktop, link, "udp", [ANIM_CLIENT, "6"], ["--dump-dir", dump, "-v"],
                   ["--stats"])
    wait_for("frames shown", lambda: "presented" in desktop.read_log("rcomp-view"), timeout=30)
    mark = len(desktop.read_log("rcomp-view"))
    link.readdress("local", "10.99.0.3")
    wait_for("the app to stop moving", lambda: "still after" in desktop.read_log("rcomp-run"),
             timeout=60)
    wait_screen_matches(desktop, "rcomp-anim-test", os.path.join(dump, "window-1.ppm"),
                        timeout=30)
    after = desktop.read_log("rcomp-view")[mark:]
    shown = [int(n) for n in re.findall(r"presented (\d+) fps", after)]
    assert sum(shown) > 30, after
    assert not LINK_LOST.search(after) and "reconnect" not in after, after
    # The viewer moved the connection itself, on the address change.
    assert re.search(r"stats udp .*, [1-9]\d* moves", after), after
    assert desktop.read_log("rcomp-run").count("viewer attached") == 1


@pytest.mark.skipif(not UDP, reason="built without UDP (ngtcp2 and GnuTLS)")
def test_a_file_sent_while_the_viewers_address_changes_goes_on_and_arrives_whole(desktop):
    """rcomp-run --send of 12 MB over QUIC at 20 Mbit/s; a third of the way
    the laptop's address changes: the connection moves with it and the
    file goes on from where it was (no reconnect, no start again), whole."""
    import hashlib
    link = NetLink(desktop, delay_ms=10, rate_mbit=20)
    session_across(desktop, link, "udp", [INPUT_CLIENT], [], ["--stats"])
    wait_for("the window", lambda: desktop.window(app_id="rcomp-input-test"), timeout=60)
    big = os.path.join(desktop.tmp, "big.bin")
    with open(big, "wb") as f:
        f.write(os.urandom(12 << 20))
    name = subprocess.run([RCOMP_RUN, "--list"], env=desktop.remote_env, capture_output=True,
                          text=True, timeout=10).stdout.splitlines()[1].split()[0]
    sender = subprocess.Popen([RCOMP_RUN, "--send", big],
                              env=dict(desktop.remote_env, RCOMP_SESSION=name),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def done_mb():
        return [float(m) for m in re.findall(r"files from the session: big\.bin, ([\d.]+) of",
                                             desktop.read_log("rcomp-view"))]
    wait_for("a third of it across", lambda: any(v > 4 for v in done_mb()), timeout=60)
    mark = len(desktop.read_log("rcomp-view"))
    link.readdress("local", "10.99.0.3")
    out, _ = sender.communicate(timeout=120)
    assert sender.returncode == 0, out
    got = os.path.join(desktop.local_env["XDG_DOWNLOAD_DIR"], "big.bin")
    digest = [hashlib.sha256(open(p, "rb").read()).hexdigest() for p in (got, big)]
    assert digest[0] == digest[1]
    after = done_mb()[[i for i, v in enumerate(done_mb()) if v > 4][0]:]
    assert min(after) > 3.5, "it began again: %s" % after
    log = desktop.read_log("rcomp-view")[mark:]
    assert not LINK_LOST.search(log) and "reconnect" not in log, log
    assert desktop.read_log("rcomp-run").count("viewer attached") == 1


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_keys_under_loss_arrive_all_and_in_order_and_a_paste_arrives_intact(desktop, transport):
    """10% loss each way at 40 ms round trip: sixty keys typed as fast as
    the keyboard sends them reach the app, every one and in order; a
    1 MiB local copy pastes remotely byte for byte."""
    link = NetLink(desktop, delay_ms=20, loss=10, rate_mbit=20, seed=5)
    session_across(desktop, link, transport, [INPUT_CLIENT])
    wait_for("the window to have focus", lambda: focused(desktop, "rcomp-input-test"),
             timeout=60)
    kb = VirtualKeyboard(desktop)
    kb.send("tap %d" % KEY_LEFTSHIFT)
    wait_for("keyboard focus in the remote app",
             lambda: "key-enter main" in desktop.read_log("rcomp-run"), timeout=30)
    keys = [KEY_A if (i * 7) % 3 else KEY_B for i in range(60)]
    kb.send(*["tap %d" % k for k in keys])

    def typed():
        return [int(k) for k in re.findall(r"key (\d+) pressed", desktop.read_log("rcomp-run"))
                if int(k) in (KEY_A, KEY_B)]
    wait_for("sixty keys", lambda: len(typed()) >= len(keys), timeout=60)
    assert typed() == keys
    data = os.urandom(1 << 20)
    local = desktop.local_env
    remote = dict(desktop.remote_env, WAYLAND_DISPLAY="wayland-0")
    subprocess.run(["wl-copy", "--type", "text/x-bench"], input=data, env=local, timeout=30,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def offered():
        r = subprocess.run(["wl-paste", "--list-types"], env=remote, capture_output=True,
                           timeout=30)
        return b"text/x-bench" in r.stdout
    wait_for("the local copy offered remotely", offered, timeout=30)
    pasted = subprocess.run(["wl-paste", "--no-newline", "--type", "text/x-bench"], env=remote,
                            capture_output=True, timeout=120).stdout
    assert len(pasted) == len(data) and pasted == data
    assert link.counts()["b_to_a"]["lost"] > 0


def ssh_session_across(desktop, link, app_id, opts=None):
    """rcomp-view ssh from the local side to an sshd on the remote side
    (started here unless its ssh options are given), running the input
    test client; returns the viewer and its window."""
    opts = opts or start_sshd(desktop, link)
    viewer = desktop.start("rcomp-view", link.wrap("local", [
        RCOMP_VIEW, "--remote-bin", RCOMP_RUN, "ssh", *opts, "root@" + NetLink.REMOTE_ADDR, "--",
        INPUT_CLIENT, app_id]), desktop.local_env)
    w = wait_for("the remote window over ssh", lambda: desktop.window(app_id=app_id),
                 timeout=60)
    wait_for("the app's pixels over ssh", lambda: desktop.pixel(150, 150, w) == GREEN,
             interval=0.2, timeout=30)
    return viewer, w


def ssh_children(viewer):
    return subprocess.run(["pgrep", "-P", str(viewer.pid), "-x", "ssh"], capture_output=True,
                          text=True).stdout.split()


def a_click_reaches_the_app(desktop, w):
    """A click on the window reaches the remote app: it turns the main
    surface red, and the red comes back as pixels (the app's own output is
    the persistent session's, which keeps none)."""
    pointer = VirtualPointer(desktop)
    time.sleep(0.5)  # the viewer gets its wl_pointer when the pointer appears
    r = w["rect"]
    pointer.send("move %d %d" % (r["x"] + 20, r["y"] + 30))
    time.sleep(0.3)
    pointer.send("press %d" % BTN_LEFT, "release %d" % BTN_LEFT)
    pointer.send("move 2 2")  # sway draws a software cursor: off the window
    wait_for("the click's colour change on screen",
             lambda: desktop.pixel(20, 30, w) == (0xc0, 0x30, 0x30), interval=0.2, timeout=30)


@pytest.mark.skipif(not UDP, reason="built without UDP (ngtcp2 and GnuTLS)")
def test_rcomp_view_ssh_moves_the_session_to_udp_where_it_can(desktop):
    """ssh starts the session and hands over a port and a key of the
    viewer's own; the session then runs over UDP alone: ssh has ended, the
    window is the same, a click still reaches the app, and the viewer says
    it attached once (it did not reattach)."""
    link = NetLink(desktop, delay_ms=10, rate_mbit=20)
    viewer, w = ssh_session_across(desktop, link, "ssh-udp")
    wait_for("the move to UDP", lambda: "the session moves to UDP at %s:" % NetLink.REMOTE_ADDR
             in desktop.read_log("rcomp-view"), timeout=30)
    wait_for("ssh to end", lambda: not ssh_children(viewer), timeout=30)
    wait_for("the same window, whole again", lambda: desktop.pixel(150, 150, w) == GREEN
             and desktop.window(app_id="ssh-udp")["id"] == w["id"], interval=0.2)
    a_click_reaches_the_app(desktop, w)
    desktop.check_alive(viewer)
    log = desktop.read_log("rcomp-view")
    assert log.count("attached to session") == 1 and "reattached" not in log, log
    assert re.search(r"viewer 1 comes over to UDP from ", desktop.read_log("rcomp-run") +
                     session_log(desktop))


def session_log(desktop):
    """The logs of the persistent sessions ssh started (in the session
    directory while they run)."""
    text = ""
    for name in os.listdir(desktop.session_dir):
        if name.endswith(".log"):
            with open(os.path.join(desktop.session_dir, name), errors="replace") as f:
                text += f.read()
    return text


@pytest.mark.skipif(not UDP, reason="built without UDP (ngtcp2 and GnuTLS)")
def test_a_viewer_that_comes_over_to_udp_stays_itself_and_the_others_count_it_once(desktop):
    """A session on UDP, a watcher on its socket, then a second viewer over
    ssh that comes over to UDP: it is the same viewer (its number), it
    takes nobody over, and the watcher counts three viewers throughout,
    never four as the old link and the new overlap."""
    link = NetLink(desktop, delay_ms=10, rate_mbit=20)
    opts = start_sshd(desktop, link)
    first, w = ssh_session_across(desktop, link, "ssh-share", opts)
    wait_for("the first viewer on UDP", lambda: "moves to UDP" in desktop.read_log(
        "rcomp-view"), timeout=30)
    name = wait_for("the session's name", lambda: re.search(
        r"attached to session (\S+)", desktop.read_log("rcomp-view")), timeout=30).group(1)
    watcher = desktop.start("watcher", [RCOMP_VIEW, "--view-only", "--attach", name],
                            desktop.local_env)
    wait_for("the watcher", lambda: "2 viewers of session" in desktop.read_log("watcher"))
    second = desktop.start("second", link.wrap("local", [
        RCOMP_VIEW, "--remote-bin", RCOMP_RUN, "--share", "ssh", *opts,
        "root@" + NetLink.REMOTE_ADDR, "--attach", name]), desktop.local_env)
    wait_for("the second viewer on UDP", lambda: "moves to UDP" in desktop.read_log("second"),
             timeout=30)
    wait_for("the second viewer settled", lambda: re.search(
        r"viewer (\d+) comes over to UDP", session_log(desktop)) and not ssh_children(second),
        timeout=30)
    time.sleep(1)
    counts = re.findall(r"(\d+) viewers of session", desktop.read_log("watcher"))
    assert counts == ["2", "3"], counts
    number = re.search(r"viewer (\d+) comes over to UDP", session_log(desktop)).group(1)
    assert re.search(r"viewer attached \(viewer %s," % number, session_log(desktop))
    assert "takes the session over" not in session_log(desktop)
    for p in (first, watcher, second):
        desktop.check_alive(p)


@pytest.mark.skipif(not UDP, reason="built without UDP (ngtcp2 and GnuTLS)")
def test_rcomp_view_ssh_stays_on_ssh_where_udp_is_blocked_and_says_so_once(desktop):
    """A path that lets TCP through and drops every UDP datagram: the viewer
    says once that UDP is blocked, and the session goes on over ssh."""
    link = NetLink(desktop, delay_ms=10, rate_mbit=20)
    link.set(block_udp=1)
    viewer, w = ssh_session_across(desktop, link, "ssh-blocked")
    wait_for("the viewer to give UDP up", lambda: "is blocked" in desktop.read_log(
        "rcomp-view"), timeout=30)
    a_click_reaches_the_app(desktop, w)
    assert len(ssh_children(viewer)) == 1
    log = desktop.read_log("rcomp-view")
    assert log.count("is blocked") == 1, log
    assert "moves to UDP" not in log
    assert link.counts()["a_to_b"]["dropped"] > 0 or link.counts()["b_to_a"]["dropped"] > 0


@pytest.mark.skipif(not UDP, reason="built without UDP (ngtcp2 and GnuTLS)")
def test_rcomp_view_ssh_goes_back_to_ssh_when_udp_is_blocked_mid_session(desktop):
    """The session moved to UDP; then the laptop joins a network that drops
    every UDP datagram. Once UDP has been silent for its timeout, ssh brings
    the session back (the same window), says once that UDP is blocked, and
    a click reaches the app again."""
    link = NetLink(desktop, delay_ms=10, rate_mbit=20)
    viewer, w = ssh_session_across(desktop, link, "ssh-fallback")
    wait_for("the move to UDP", lambda: "the session moves to UDP" in desktop.read_log(
        "rcomp-view"), timeout=30)
    wait_for("ssh to end", lambda: not ssh_children(viewer), timeout=30)
    link.set(block_udp=1)
    wait_for("the viewer to go back to ssh", lambda: "back to ssh" in desktop.read_log(
        "rcomp-view"), timeout=40)
    wait_for("the viewer to give UDP up", lambda: "is blocked" in desktop.read_log(
        "rcomp-view"), timeout=40)
    a_click_reaches_the_app(desktop, w)
    assert len(ssh_children(viewer)) == 1
    assert desktop.window(app_id="ssh-fallback")["id"] == w["id"]
    log = desktop.read_log("rcomp-view")
    assert log.count("is blocked") == 1, log
    desktop.check_alive(viewer)


@pytest.mark.skipif(not UDP, reason="built without UDP (ngtcp2 and GnuTLS)")
def test_an_idle_udp_session_stays_attached_past_quics_idle_timeout(desktop):
    """A terminal nobody types in sends nothing for longer than QUIC's idle
    timeout (15 s): keep-alives hold the connection (and a NAT's binding),
    so the viewer is never dropped and never reattaches."""
    link = NetLink(desktop, delay_ms=10, rate_mbit=20)
    server, viewer = session_across(desktop, link, "udp", [INPUT_CLIENT, "idle-udp"])
    wait_for("the window", lambda: desktop.window(app_id="idle-udp"), timeout=60)
    time.sleep(20)
    desktop.check_alive(server)
    desktop.check_alive(viewer)
    run = desktop.read_log("rcomp-run")
    assert run.count("viewer attached") == 1 and "disconnected" not in run, run
    assert not LINK_LOST.search(desktop.read_log("rcomp-view"))


@pytest.mark.skipif(not UDP, reason="built without UDP (ngtcp2 and GnuTLS)")
def test_stats_lines_carry_the_time_say_the_cores_once_and_count_no_loss_on_a_clean_link(desktop):
    """Both ends' --stats over UDP through a link that loses nothing: every
    line begins with the time of day, the cores line is printed only when
    what it says changes (not each second), and the lanes' line reports no datagram lost
    (the guess parity starts from is shown apart, as a guess)."""
    link = NetLink(desktop, delay_ms=5, rate_mbit=50)
    session_across(desktop, link, "udp", [ANIM_CLIENT, "5"], ["--stats"], ["--stats"])
    for name in ("rcomp-run", "rcomp-view"):
        wait_for("%s's lanes measured" % name, lambda: re.search(
            r"stats .*lanes: [\d.]+% of datagrams lost", desktop.read_log(name)), timeout=60)
        wait_for("four seconds of %s's stats" % name,
                 lambda: len(set(re.findall(r"^%s: (\d\d:\d\d:\d\d)\.\d{3} stats " % name,
                                            desktop.read_log(name), re.M))) >= 4, timeout=30)
    counts = link.counts()
    assert counts["a_to_b"]["lost"] == 0 and counts["b_to_a"]["lost"] == 0, counts
    for name in ("rcomp-run", "rcomp-view"):
        stats = [line for line in desktop.read_log(name).splitlines()
                 if re.match(r"%s: (\S+ )?stats " % name, line)]
        untimed = [line for line in stats if not re.match(
            r"%s: \d\d:\d\d:\d\d\.\d{3} stats " % name, line)]
        assert not untimed, untimed
        cores = [line.split(" stats ", 1)[1] for line in stats if " stats cores " in line]
        seconds = len(set(line.split()[1][:8] for line in stats))
        assert cores and len(cores) < seconds, (cores, seconds)
        assert all(a != b for a, b in zip(cores, cores[1:])), cores
        losses = re.findall(r"lanes: ([\d.]+)% of datagrams lost \(parity sized for ([\d.]+)%\)",
                            "\n".join(stats))
        assert losses and all(float(lost) == 0 for lost, _ in losses), losses


GARBAGE = """
import os, socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
end = time.monotonic() + float(sys.argv[3])
sent = 0
while time.monotonic() < end:
    n = int.from_bytes(os.urandom(2), "little") % 1400 + 1
    data = os.urandom(n)
    if sent % 2:
        # A QUIC long header, as an Initial of version 1 would start.
        data = bytes([0xc0, 0, 0, 0, 1, 8]) + data
    s.sendto(data, (sys.argv[1], int(sys.argv[2])))
    sent += 1
    time.sleep(0.001)
print(sent)
"""


@pytest.mark.skipif(not UDP, reason="built without UDP (ngtcp2 and GnuTLS)")
def test_forged_replayed_truncated_and_garbage_datagrams_are_dropped_and_the_session_goes_on(
        desktop):
    """The path corrupts, cuts and replays 3% of datagrams each way, and a
    stranger sprays the server's port with random datagrams and fake
    Initials: each is dropped, the picture still ends exact, and the viewer
    never reconnects."""
    link = NetLink(desktop, delay_ms=10, rate_mbit=50, corrupt=3, truncate=3, duplicate=3)
    dump = os.path.join(desktop.tmp, "dump")
    os.makedirs(dump)
    session_across(desktop, link, "udp", [ANIM_CLIENT, "4"], ["--dump-dir", dump, "-v"])
    sprayed = link.check_output("local", ["python3", "-c", GARBAGE, NetLink.REMOTE_ADDR,
                                          str(PORT), "3"])
    assert int(sprayed) > 500
    wait_for("the app to stop moving", lambda: "still after" in desktop.read_log("rcomp-run"),
             timeout=60)
    wait_screen_matches(desktop, "rcomp-anim-test", os.path.join(dump, "window-1.ppm"),
                        timeout=30)
    counts = link.counts()
    assert counts["a_to_b"]["tampered"] > 0 and counts["b_to_a"]["tampered"] > 0, counts
    assert not LINK_LOST.search(desktop.read_log("rcomp-view"))
    assert desktop.read_log("rcomp-run").count("viewer attached") == 1
