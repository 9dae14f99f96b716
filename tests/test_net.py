"""Real networks: tests/netsim joins two network namespaces with a link
that delays and loses IP packets (the kernel here has no netem), and
sessions run across it as they would between two machines."""
import os
import re
import secrets
import subprocess

import pytest

from rig import (ANIM_CLIENT, RCOMP_RUN, RCOMP_VIEW, UDP, NetLink, wait_for,
                 wait_screen_matches)

PORT = 7410


# A build without ngtcp2 (-Dudp=disabled) has no UDP transport to test.
TRANSPORTS = ["tcp", pytest.param("udp", marks=pytest.mark.skipif(
    not UDP, reason="built without UDP (ngtcp2 and GnuTLS)"))]


def udp_echo(link, count, wait_s, size=200):
    """count datagrams from the local side to an echo on the remote side,
    each given wait_s for its answer; returns (answered, the shortest round
    trip in ms)."""
    server = link.run("remote", ["python3", "-c", ECHO, NetLink.REMOTE_ADDR, str(PORT)])
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
    assert "lost" not in after and "reconnect" not in after, after
    assert desktop.read_log("rcomp-run").count("viewer attached") == 1
