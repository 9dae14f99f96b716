"""Faults and hostile peers: bad input drops that peer alone with one clear
log line, memory stays bounded, and other windows keep working."""
import os
import random
import re
import signal
import socket
import struct
import subprocess
import time

import pytest

from rig import (ABUSE_CLIENT, ANIM_CLIENT, GREEN, INPUT_CLIENT, RCOMP_RUN, RCOMP_VIEW,
                 SANITIZED, TEST_CLIENTS, Stream, descendant, fake_server, frame, free_port,
                 hello, log, message, read_messages, records, rss_kib, type_text, wait_for,
                 welcome, window_new)


def attach_again(desktop, server, app_id, name):
    """A new, well-behaved viewer gets the session's windows."""
    viewer = desktop.start_viewer(server, name=name)
    wait_for("%s's window for the next viewer" % app_id, lambda: desktop.window(app_id=app_id))
    return viewer


def read_goodbye(sock):
    """The goodbye's reason and text, reading until the server closes."""
    sock.settimeout(10)
    stream = Stream()
    found = []
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        found += stream.feed(chunk)
    for t, body in found:
        if t == 0x0202:
            status, reason = struct.unpack_from("<iI", body)
            return reason, body[8:].decode()
    return None, None


def test_malformed_viewer_input_drops_that_viewer_and_the_next_one_is_served(desktop):
    server = desktop.start_server([INPUT_CLIENT])
    bad_inputs = [
        ("an unknown message type", hello() + records(struct.pack("<HHI", 0x0177, 0, 0), 0)),
        ("an oversized keymap",
         hello() + records(struct.pack("<HHI", 0x0102, 0, 0x7fffffff), 0)),
        ("garbage before hello", bytes(range(256)) * 4),
        ("a key with state 9", hello() + records(struct.pack("<HHIII", 0x010D, 0, 8, 30, 9))),
        ("a bad record", hello() + struct.pack("<BBH", 7, 0, 4) + b"abcd"),
        ("a key in the bulk class", hello() + records(struct.pack("<HHIII", 0x010D, 0, 8, 30,
                                                                  1), 4)),
        ("a hello flag no version defines", hello(flags=1 << 5)),
    ]
    for what, data in bad_inputs:
        s = socket.socket(socket.AF_UNIX)
        s.connect(server.socket)
        s.sendall(data)
        reason, text = read_goodbye(s)
        s.close()
        assert reason == 3, "after %s the server answered %r %r" % (what, reason, text)
        log("%s -> goodbye: %s" % (what, text))
    desktop.check_alive(server)
    viewer = attach_again(desktop, server, "rcomp-input-test", "rcomp-view")
    desktop.check_alive(viewer)
    text = desktop.read_log("rcomp-run")
    assert text.count("viewer sent bad data") + text.count("refused a viewer") == len(
        bad_inputs), "expected one log line per bad viewer"


def test_a_hello_with_an_undefined_flag_is_refused_naming_the_field_and_the_viewer_stays(
        desktop):
    server = desktop.start_server([INPUT_CLIENT])
    viewer = desktop.start_viewer(server)
    wait_for("the window", lambda: desktop.window(app_id="rcomp-input-test"))
    for bit in (5, 31):
        s = socket.socket(socket.AF_UNIX)
        s.connect(server.socket)
        s.sendall(hello(flags=(1 << bit) | 2))
        reason, text = read_goodbye(s)
        s.close()
        assert reason == 3 and "flags" in text, (reason, text)
    desktop.check_alive(viewer)
    assert desktop.window(app_id="rcomp-input-test")
    assert "2 viewers" not in desktop.read_log("rcomp-view")


def test_64_kib_of_random_bytes_drop_that_peer_alone_with_one_log_line(desktop):
    server = desktop.start_server([INPUT_CLIENT])
    rng = random.Random(1234)
    for with_hello in (False, True):
        s = socket.socket(socket.AF_UNIX)
        s.connect(server.socket)
        data = (hello() if with_hello else b"") + bytes(rng.getrandbits(8) for _ in range(65536))
        try:
            s.sendall(data)
        except OSError:
            pass  # the server may close before reading it all: that is the point
        s.settimeout(10)
        try:
            while s.recv(65536):
                pass
        except OSError:
            pass
        s.close()
    desktop.check_alive(server)
    errors = [line for line in desktop.read_log("rcomp-run").splitlines()
              if "bad data" in line or "refused a viewer" in line]
    assert len(errors) == 2, errors
    attach_again(desktop, server, "rcomp-input-test", "viewer")


def test_a_viewer_sending_a_copy_rect_is_dropped_and_the_session_goes_on(desktop):
    """copy_rect is the server's message: a viewer that sends one is told
    why, in a goodbye and in rcomp-run's log, and dropped; the next viewer
    is served."""
    server = desktop.start_server([INPUT_CLIENT])
    s = socket.socket(socket.AF_UNIX)
    s.connect(server.socket)
    s.sendall(hello() + records(message(0x0210, struct.pack("<Iiiiiii", 1, 0, 0, 10, 10, 0, 5))))
    reason, text = read_goodbye(s)
    s.close()
    assert reason == 3 and "copy_rect message may not be sent by a viewer" in text, text
    desktop.check_alive(server)
    viewer = attach_again(desktop, server, "rcomp-input-test", "rcomp-view")
    desktop.check_alive(viewer)
    assert "copy_rect message may not be sent by a viewer" in desktop.read_log("rcomp-run")


def test_a_viewer_killed_mid_stream_leaves_the_session_serving_the_next_one(desktop):
    server = desktop.start_server([ANIM_CLIENT, "1000"], ["--codec", "lossless"])
    viewer = desktop.start_viewer(server)
    wait_for("the window", lambda: desktop.window(app_id="rcomp-anim-test"))
    time.sleep(1)
    os.killpg(viewer.pid, signal.SIGKILL)
    viewer.wait()

    def said():
        return [line for line in desktop.read_log("rcomp-run").splitlines()
                if "viewer disconnected" in line or "viewer connection" in line]

    wait_for("the server to notice", said)
    time.sleep(1)
    desktop.check_alive(server)
    attach_again(desktop, server, "rcomp-anim-test", "second-viewer")
    assert len(said()) == 1, said()


def test_an_app_killed_takes_only_its_own_window_with_it(desktop):
    server = desktop.start_server(["sh", "-c", "%s & exec %s 1000" % (INPUT_CLIENT,
                                                                     ANIM_CLIENT)])
    desktop.start_viewer(server)
    wait_for("both windows", lambda: desktop.window(app_id="rcomp-anim-test")
             and desktop.window(app_id="rcomp-input-test"))
    # This session's app only: other tests may run theirs at the same time.
    os.kill(wait_for("the app's process", lambda: descendant(server.pid, "anim-client")),
            signal.SIGKILL)
    wait_for("the killed app's window to go",
             lambda: not desktop.window(app_id="rcomp-anim-test"))
    time.sleep(1)
    desktop.check_alive(server)
    assert desktop.window(app_id="rcomp-input-test"), "the other app's window went too"


def test_200_connects_and_100_idle_ones_leave_memory_bounded_and_the_viewer_working(desktop):
    """100 connects in a row (half say hello and so take the session over),
    then, with a viewer attached, 100 connections held open without a hello:
    at most 16 wait for their hello, the rest are closed at once, and the
    attached viewer never notices."""
    server = desktop.start_server([INPUT_CLIENT])
    time.sleep(0.5)
    before = rss_kib(server.pid)
    for i in range(100):
        s = socket.socket(socket.AF_UNIX)
        s.connect(server.socket)
        if i % 2:
            s.sendall(hello())
        s.close()
    viewer = desktop.start_viewer(server)
    wait_for("the window", lambda: desktop.window(app_id="rcomp-input-test"))
    idle = []
    for i in range(100):
        s = socket.socket(socket.AF_UNIX)
        s.connect(server.socket)
        idle.append(s)
    time.sleep(1)
    closed = 0
    for s in idle:
        s.settimeout(0.05)
        try:
            if s.recv(64) == b"":
                closed += 1
        except socket.timeout:
            pass
    for s in idle:
        s.close()
    time.sleep(0.5)
    desktop.check_alive(server)
    desktop.check_alive(viewer)
    after = rss_kib(server.pid)
    assert closed >= 100 - 16, "only %d of 100 idle connections were closed" % closed
    if not SANITIZED:
        assert after - before <= 4096, "RSS grew from %d to %d KiB" % (before, after)
    assert desktop.window(app_id="rcomp-input-test"), "the attached viewer's window is gone"
    assert "too many connections in the handshake" in desktop.read_log("rcomp-run")
    log("RSS %d -> %d KiB; %d of 100 idle connections closed at once" % (before, after,
                                                                          closed))


def test_a_viewer_that_stops_reading_costs_bounded_memory(desktop):
    server = desktop.start_server([ANIM_CLIENT, "1000"], ["--codec", "lossless"])
    s = socket.socket(socket.AF_UNIX)
    s.connect(server.socket)
    s.sendall(hello())
    time.sleep(2)
    first = rss_kib(server.pid)
    time.sleep(6)
    last = rss_kib(server.pid)
    desktop.check_alive(server)
    assert last <= (200 if SANITIZED else 64) * 1024, "RSS %d KiB" % last
    if not SANITIZED:
        assert last - first <= 4096, "RSS grew from %d to %d KiB" % (first, last)
    s.close()
    wait_for("the server to drop the stalled viewer",
             lambda: "disconnected" in desktop.read_log("rcomp-run")
             or "lost" in desktop.read_log("rcomp-run"))
    attach_again(desktop, server, "rcomp-anim-test", "viewer")


def other_window_works(desktop):
    w = wait_for("the well-behaved window", lambda: desktop.window(app_id="rcomp-input-test"))
    wait_for("its pixels", lambda: desktop.pixel(150, 150, w) == GREEN, interval=0.2)
    return w


# sway 1.7 does not clip a huge surface to its rectangle: the huge window goes
# to a workspace of its own.
@pytest.mark.desktop(extra='for_window [app_id="rcomp-abuse"] move container to workspace 2\n')
def test_an_app_committing_a_16384x16384_buffer_is_cropped_and_the_other_window_works(
        desktop):
    server = desktop.start_server(["sh", "-c", "%s & exec %s huge" % (INPUT_CLIENT,
                                                                     ABUSE_CLIENT)])
    desktop.start_viewer(server)
    other_window_works(desktop)
    wait_for("the huge buffer to be committed",
             lambda: "committed 16384x16384" in desktop.read_log("rcomp-run"))
    wait_for("the huge window", lambda: desktop.window(app_id="rcomp-abuse"), timeout=30)
    time.sleep(2)
    desktop.check_alive(server)
    other_window_works(desktop)
    lines = [line for line in desktop.read_log("rcomp-run").splitlines() if "past the" in line]
    assert len(lines) == 1, "expected one log line about the huge window: %s" % lines
    if not SANITIZED:
        assert rss_kib(server.pid) <= 600 * 1024


# abuse-client's flood ends on this colour, unlike any input-client draws.
FLOOD_GREEN = (0x20, 0xe0, 0x20)


# The flooder must never cover the well-behaved window, whose pixels are
# checked: both float centred, so the flooder goes to the corner.
@pytest.mark.desktop(extra='for_window [app_id="rcomp-abuse"] move position 0 0\n')
def test_an_app_flooding_commits_costs_bounded_memory_and_the_other_window_works(desktop):
    server = desktop.start_server(["sh", "-c", "%s & exec %s flood 8" % (INPUT_CLIENT,
                                                                       ABUSE_CLIENT)],
                                  args=["--stats"])
    desktop.start_viewer(server)
    w = other_window_works(desktop)
    wait_for("the flooding window", lambda: desktop.window(app_id="rcomp-abuse"))
    time.sleep(2)
    a, b = w["rect"], desktop.window(app_id="rcomp-abuse")["rect"]
    assert not (a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"] and
                a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"]), \
        "the flooding window %r covers the other one %r" % (b, a)
    first = rss_kib(server.pid)
    # The other window still answers input while the flood goes on.
    desktop.swaymsg("[app_id=rcomp-input-test] focus")
    type_text(desktop, "q")
    wait_for("a key to reach the well-behaved app",
             lambda: re.search(r"^key \d+ pressed$", desktop.read_log("rcomp-run"), re.M))
    other_window_works(desktop)
    m = wait_for("the flood to end", lambda: re.search(r"^commits (\d+)$",
                                                       desktop.read_log("rcomp-run"), re.M),
                 timeout=30)
    last = rss_kib(server.pid)
    flood = desktop.window(app_id="rcomp-abuse")
    wait_for("the flooder's last (green) frame",
             lambda: desktop.pixel(100, 100, flood) == FLOOD_GREEN, interval=0.2)
    desktop.check_alive(server)
    lines = [line for line in desktop.read_log("rcomp-run").splitlines()
             if "times a second" in line]
    assert len(lines) == 1, "expected one log line about the flood: %s" % lines
    if not SANITIZED:
        assert last - first <= 8192, "RSS grew from %d to %d KiB" % (first, last)
    log("%s commits in 8 s; RSS %d -> %d KiB" % (m.group(1), first, last))


VALGRIND = ["valgrind", "--error-exitcode=42", "--leak-check=full",
            "--errors-for-leak-kinds=definite",
            "--suppressions=" + os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                             "valgrind.supp")]


def valgrind_cannot_run():
    """Why valgrind cannot run our programs on this machine, or None: the
    libraries they load (libavcodec's libjxl and its libhwy) may use
    instructions of this processor that this valgrind does not know."""
    for program in (RCOMP_RUN, RCOMP_VIEW):
        out = subprocess.run(["valgrind", "-q", program, "--version"], capture_output=True,
                             text=True, timeout=120)
        if "Illegal opcode" in out.stderr or "Unrecognised instruction" in out.stderr:
            where = [line for line in out.stderr.splitlines() if " at 0x" in line][:1]
            return "valgrind does not know an instruction of this processor in %s" % (
                where[0].split(": ", 1)[-1].strip() if where else "a system library")
    return None


@pytest.mark.skipif(SANITIZED, reason="valgrind does not run sanitizer builds")
@pytest.mark.timeout(300)
def test_rcomp_run_and_rcomp_view_are_clean_under_valgrind_memcheck_end_to_end(desktop):
    """An app that animates (video), stops (lossless refresh) and is closed
    by the user: no memcheck error and no definite leak in either program."""
    why = valgrind_cannot_run()
    if why:
        pytest.skip(why)
    sock = os.path.join(desktop.remote_rt, "memcheck.sock")
    server = desktop.start("rcomp-run", VALGRIND + [
        RCOMP_RUN, "--socket", sock, "--", os.path.join(TEST_CLIENTS, "anim-client"), "2"],
        desktop.remote_env)
    wait_for("rcomp-run under valgrind", lambda: os.path.exists(sock), timeout=90)
    viewer = desktop.start("rcomp-view", VALGRIND + [RCOMP_VIEW, "--socket", sock],
                           desktop.local_env)
    wait_for("the window", lambda: desktop.window(app_id="rcomp-anim-test"), timeout=90)
    wait_for("the app to stop moving", lambda: "still after" in desktop.read_log("rcomp-run"),
             timeout=90)
    time.sleep(2)
    desktop.swaymsg('[app_id="rcomp-anim-test"] kill')
    codes = (server.wait(timeout=120), viewer.wait(timeout=120))
    for name in ("rcomp-run", "rcomp-view"):
        summary = [line for line in desktop.read_log(name).splitlines()
                   if "ERROR SUMMARY" in line]
        assert summary and " 0 errors" in summary[-1], "%s under memcheck: %s" % (name,
                                                                                 summary)
    assert codes == (0, 0), "exit statuses under memcheck: %s" % (codes,)


def test_a_keymap_of_the_largest_legal_size_is_accepted(desktop):
    """1 MiB of keymap text (not a keymap xkb can compile, which is the
    app's problem, not the connection's): the viewer is welcomed and kept."""
    server = desktop.start_server([INPUT_CLIENT])
    s = socket.socket(socket.AF_UNIX)
    s.connect(server.socket)
    s.sendall(hello() + records(message(0x0102, struct.pack("<I", 1) + b"k" * (1 << 20))))
    got = read_messages(s, 5)
    types = [t for t, _ in got]
    assert 0x0201 in types, "no welcome: %s" % types
    assert 0x0202 not in types, "a goodbye: %r" % [b for t, b in got if t == 0x0202]
    wait_for("the keymap to be tried", lambda: "keymap does not compile"
             in desktop.read_log("rcomp-run"))
    assert "bad data" not in desktop.read_log("rcomp-run")
    s.close()


def tcp_server(desktop):
    port = free_port()
    server = desktop.start("rcomp-run", [RCOMP_RUN, "--name", "lan", "--listen-tcp",
                                         "127.0.0.1:%d" % port, "--", INPUT_CLIENT],
                           desktop.remote_env)
    wait_for("the TCP listener", lambda: "listening on TCP" in desktop.read_log("rcomp-run"))
    return server, port, os.path.join(desktop.session_dir, "lan")


def idle_tcp(port, source="127.0.0.1"):
    s = socket.socket()
    s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    return s


def closed_by_server(sockets):
    closed = 0
    for s in sockets:
        s.settimeout(0.05)
        try:
            data = s.recv(4096)
            closed += data == b"" or data[:2] == b"\x02\x02"
        except socket.timeout:
            pass
        except OSError:
            closed += 1
    return closed


def test_idle_tcp_connections_never_lock_the_owner_out_of_the_unix_socket(desktop):
    server, port, base = tcp_server(desktop)
    flood = [idle_tcp(port) for _ in range(40)]
    time.sleep(0.5)
    welcomed = 0
    for _ in range(20):
        s = socket.socket(socket.AF_UNIX)
        s.connect(base + ".sock")
        try:
            s.sendall(hello())
            welcomed += any(t == 0x0201 for t, _ in read_messages(s, 5, until=0x0201))
        except OSError:
            pass  # refused and closed before the hello was read
        s.close()
    for s in flood:
        s.close()
    desktop.check_alive(server)
    assert welcomed == 20, "the owner got in %d times of 20" % welcomed


def test_one_address_holds_at_most_4_connections_in_the_handshake(desktop):
    server, port, _ = tcp_server(desktop)
    flood = [idle_tcp(port) for _ in range(30)]
    time.sleep(1)
    closed = closed_by_server(flood)
    for s in flood:
        s.close()
    assert closed >= 30 - 4, "only %d of 30 idle connections from one address were closed" % (
        closed)


def test_idle_connections_from_many_addresses_cannot_keep_a_viewer_with_the_token_out(
        desktop):
    server, port, base = tcp_server(desktop)
    flood = [idle_tcp(port, "127.0.0.%d" % (2 + i)) for i in range(30)]
    time.sleep(0.5)
    viewer = desktop.start("rcomp-view", [RCOMP_VIEW, "--tcp", "127.0.0.1:%d" % port,
                                          "--token-file", base + ".token"], desktop.local_env)
    wait_for("the window over TCP", lambda: desktop.window(app_id="rcomp-input-test"))
    desktop.check_alive(viewer)
    # In on its first connection: a full handshake share made room for it.
    assert "reconnecting" not in desktop.read_log("rcomp-view"), desktop.read_log("rcomp-view")
    for s in flood:
        s.close()


def viewer_of_a_fake_window(desktop, w, h):
    """rcomp-view attached to a hand-played server that shows one black
    window of w x h: (viewer, the server's end of the connection)."""
    listener, path = fake_server(desktop)
    viewer = desktop.start("rcomp-view", [RCOMP_VIEW, "--socket", path], desktop.local_env)
    conn, _ = listener.accept()
    read_messages(conn, 5, until=0x0101)
    good = frame(1, 1, w, h, [(0, 0, w, h)], bytes(w * h * 4), w * h * 4)
    conn.sendall(welcome() + records(window_new(1, w, h) + message(0x0208) + good))
    wait_for("the fake window", lambda: desktop.window(app_id="fake"))
    return viewer, conn


def test_a_frame_whose_rectangles_overlap_is_refused_with_a_clear_error(desktop):
    """A small frame of overlapping rectangles as large as the window, zstd
    expanding each to zeros, made the viewer allocate and keep raw bytes
    many times the window's pixels (the audit's 127 KB frame took 3.9 GiB);
    now it is refused as invalid before anything is allocated."""
    w = h = 1024
    viewer, conn = viewer_of_a_fake_window(desktop, w, h)
    raw = 16 * w * h * 4  # 64 MiB, the most any frame may carry, for 4 MiB of pixels
    payload = subprocess.run(["zstd", "-q", "-c", "--no-check"], input=bytes(raw),
                             stdout=subprocess.PIPE, check=True).stdout
    assert len(payload) < 64 * 1024
    conn.sendall(records(frame(1, 2, w, h, [(0, 0, w, h)] * 16, payload, raw, compression=2,
                               flags=0)))
    assert viewer.wait(timeout=20) != 0
    conn.close()
    text = desktop.read_log("rcomp-view")
    assert re.search(r"frame rectangles \d+ and \d+ overlap", text), text


@pytest.mark.parametrize("move", [(0, 900, 1024, 200, 0, -100), (0, 0, 1024, 100, 0, -10),
                                  (1000, 0, 24, 24, 1, 0)],
                         ids=["source past the bottom", "destination above the top",
                              "destination past the right"])
def test_a_copy_rect_outside_the_window_is_refused_with_a_clear_error(desktop, move):
    """A server's copy_rect must move a rectangle of the window's picture to
    a place inside it; else the viewer names the message, the window and the
    sizes, and ends that connection."""
    w = h = 1024
    viewer, conn = viewer_of_a_fake_window(desktop, w, h)
    conn.sendall(records(message(0x0210, struct.pack("<Iiiiiii", 1, *move))))
    assert viewer.wait(timeout=20) != 0
    conn.close()
    text = desktop.read_log("rcomp-view")
    assert re.search(r"copy_rect of window 1 moves \d+x\d+ at -?\d+,-?\d+ by -?\d+,-?\d+, "
                     r"outside its 1024x1024 picture", text), text
