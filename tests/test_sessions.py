"""Sessions: how they start and end, takeover by another viewer, named
sessions with --list and --attach, TCP with a token, reconnection after a
broken link, and ssh, with a real sshd."""
import os
import re
import signal
import socket
import stat
import struct
import subprocess
import time

from rig import (GREEN, INPUT_CLIENT, RCOMP_RUN, RCOMP_VIEW, VirtualKeyboard, fake_server, frame,
                 free_port, goodbye, hello, log, message, read_messages, records, rss_kib,
                 start_sshd, type_text, wait_for, welcome, window_new)
from webpage import TOKEN, remote_log, through_relay, web_session


def test_a_second_viewer_takes_the_session_over_and_the_first_is_told_why(desktop):
    server = desktop.start_server([INPUT_CLIENT])
    first = desktop.start_viewer(server)
    wait_for("the first viewer's window", lambda: desktop.window(app_id="rcomp-input-test"))
    second = desktop.start_viewer(server, name="second-viewer")
    assert first.wait(timeout=20) == 0
    assert "another viewer took this session over" in desktop.read_log("rcomp-view")
    wait_for("the second viewer's window",
             lambda: [w for w in desktop.windows() if w["app_id"] == "rcomp-input-test"
                      and w["pid"] == second.pid])
    desktop.check_alive(second)
    assert len([w for w in desktop.windows() if w["app_id"] == "rcomp-input-test"]) == 1
    assert "takes the session over" in desktop.read_log("rcomp-run")


def test_rcomp_run_exits_with_the_apps_exit_status(desktop):
    r = subprocess.run([RCOMP_RUN, "--socket", os.path.join(desktop.remote_rt, "exit7.sock"),
                        "--", "sh", "-c", "exit 7"], env=desktop.remote_env,
                       capture_output=True, text=True, timeout=20)
    assert r.returncode == 7, r.stderr


def test_closing_the_local_window_ends_app_server_and_viewer_cleanly(desktop):
    server = desktop.start_server([INPUT_CLIENT])
    viewer = desktop.start_viewer(server)
    wait_for("the window", lambda: desktop.window(app_id="rcomp-input-test"))
    desktop.swaymsg('[app_id="rcomp-input-test"] kill')
    assert server.wait(timeout=20) == 0
    assert viewer.wait(timeout=20) == 0
    assert "session ended" in desktop.read_log("rcomp-view")


def test_rcomp_view_local_runs_an_app_over_a_socketpair(desktop):
    viewer = desktop.start("local", [RCOMP_VIEW, "--local", "--", INPUT_CLIENT],
                           desktop.local_env)
    w = wait_for("the window", lambda: desktop.window(app_id="rcomp-input-test"))
    wait_for("the app's pixels", lambda: desktop.pixel(150, 150, w) == GREEN and
             desktop.pixel(10, 10, w) == (0x40, 0x40, 0x40), interval=0.2)
    viewer.terminate()
    assert viewer.wait(timeout=20) == 0
    wait_for("the window to go", lambda: not desktop.window(app_id="rcomp-input-test"))


def test_sigterm_ends_both_sides_cleanly(desktop):
    server = desktop.start_server([INPUT_CLIENT])
    viewer = desktop.start_viewer(server)
    wait_for("the window", lambda: desktop.window(app_id="rcomp-input-test"))
    server.terminate()
    assert server.wait(timeout=20) == 0
    assert viewer.wait(timeout=20) == 0
    assert "shutting down" in desktop.read_log("rcomp-view")
    wait_for("the window to go", lambda: not desktop.window(app_id="rcomp-input-test"))


def test_a_killed_server_is_reported_by_the_viewer(desktop):
    server = desktop.start_server([INPUT_CLIENT])
    viewer = desktop.start_viewer(server)
    wait_for("the window", lambda: desktop.window(app_id="rcomp-input-test"))
    os.killpg(server.pid, signal.SIGKILL)
    assert viewer.wait(timeout=20) != 0
    assert "connection to the server was lost" in desktop.read_log("rcomp-view")


def key_events(desktop):
    return len(re.findall(r"^key \d+ pressed$", desktop.read_log("rcomp-run"), re.M))


def break_the_link(desktop):
    """A session through a relay whose link goes down (the viewer sees its
    connection end, the server sees nothing). Returns the relay, the
    window, and the key count before the break."""
    server = desktop.start_server([INPUT_CLIENT])
    relay = desktop.start_relay(server.socket, delay_ms=10)
    desktop.start("rcomp-view", [RCOMP_VIEW, "--socket", relay.socket], desktop.local_env)
    w = wait_for("the window", lambda: desktop.window(app_id="rcomp-input-test"))
    wait_for("the app's pixels", lambda: desktop.pixel(150, 150, w) == GREEN, interval=0.2)
    desktop.swaymsg("[app_id=rcomp-input-test] focus")
    type_text(desktop, "a")
    wait_for("the keys to reach the app", lambda: key_events(desktop) >= 1)
    time.sleep(0.8)
    keys = key_events(desktop)
    os.kill(relay.pid, signal.SIGUSR1)
    wait_for("the window to be marked disconnected",
             lambda: desktop.window(app_id="rcomp-input-test")["name"].startswith(
                 "[disconnected]"))
    return server, relay, w, keys


def test_a_broken_link_keeps_the_window_dimmed_and_a_reconnect_restores_it(desktop):
    server, relay, w, _ = break_the_link(desktop)
    assert desktop.window(app_id="rcomp-input-test")["id"] == w["id"], "window replaced"
    dim = wait_for("the window to be dimmed",
                   lambda: (lambda p: p if p[1] < 0x80 else None)(desktop.pixel(150, 150, w)),
                   interval=0.2)
    time.sleep(1)
    desktop.check_alive(server)
    os.kill(relay.pid, signal.SIGUSR2)  # the link returns
    t0 = time.monotonic()
    wait_for("the window to be whole again",
             lambda: desktop.pixel(150, 150, w) == GREEN and not desktop.window(
                 app_id="rcomp-input-test")["name"].startswith("[disconnected]"),
             interval=0.05, timeout=30)
    assert desktop.window(app_id="rcomp-input-test")["id"] == w["id"], "window replaced"
    text = desktop.read_log("rcomp-view")
    for said in ("connection to the server was lost", "reconnecting in",
                 "reattached to session"):
        assert said in text
    assert "takes the session over" in desktop.read_log("rcomp-run"), \
        "the server did not replace its stale connection"
    log("dimmed to %s; exact again %.2f s after the link returned" % (
        dim, time.monotonic() - t0))


def test_keys_typed_while_the_link_is_down_never_reach_the_app(desktop):
    server, relay, w, keys = break_the_link(desktop)
    type_text(desktop, "stale")
    time.sleep(1.5)
    os.kill(relay.pid, signal.SIGUSR2)
    wait_for("the window to be whole again",
             lambda: desktop.pixel(150, 150, w) == GREEN and not desktop.window(
                 app_id="rcomp-input-test")["name"].startswith("[disconnected]"),
             interval=0.05, timeout=30)
    assert key_events(desktop) == keys, "keys typed while disconnected reached the app"
    desktop.swaymsg("[app_id=rcomp-input-test] focus")
    type_text(desktop, "b")
    wait_for("a key typed after reconnection to reach the app",
             lambda: key_events(desktop) > keys)


def named_session(desktop, name="work"):
    desktop.start("rcomp-run", [RCOMP_RUN, "--name", name, "--", INPUT_CLIENT],
                  desktop.remote_env)
    sock = os.path.join(desktop.session_dir, name + ".sock")
    wait_for("the session's socket", lambda: os.path.exists(sock))


def listing(desktop):
    return subprocess.run([RCOMP_RUN, "--list"], env=desktop.remote_env, capture_output=True,
                          text=True, timeout=10).stdout


def test_rcomp_run_list_shows_named_sessions_detached_and_attached(desktop):
    named_session(desktop)
    assert stat.S_IMODE(os.stat(desktop.session_dir).st_mode) == 0o700
    assert re.search(r"^work\s+\d+\s+\S+ \S+\s+detached\s+.*input-client", listing(desktop),
                     re.M), listing(desktop)
    desktop.start("rcomp-view", [RCOMP_VIEW, "--attach", "work"], desktop.local_env)
    wait_for("--list to show the viewer",
             lambda: re.search(r"^work\s.*\sattached\s", listing(desktop), re.M))


def test_rcomp_view_list_shows_this_hosts_sessions_as_rcomp_run_list_does(desktop):
    named_session(desktop)
    viewed = subprocess.run([RCOMP_VIEW, "--list"], env=desktop.remote_env,
                            capture_output=True, text=True, timeout=10)
    assert viewed.returncode == 0, viewed.stderr
    assert re.search(r"^work\s+\d+\s+\S+ \S+\s+detached\s+.*input-client", viewed.stdout,
                     re.M), viewed.stdout
    assert viewed.stdout.splitlines()[0] == listing(desktop).splitlines()[0]


def test_an_unknown_option_is_one_line_that_points_to_help(desktop):
    for program in (RCOMP_VIEW, RCOMP_RUN):
        name = os.path.basename(program)
        wrong = subprocess.run([program, "--frobnicate"], env=desktop.remote_env,
                               capture_output=True, text=True, timeout=10)
        assert wrong.returncode == 2
        assert wrong.stderr == "%s: unknown option --frobnicate: see %s --help\n" % (name, name)
    short = subprocess.run([RCOMP_VIEW, "--tcp"], env=desktop.remote_env,
                           capture_output=True, text=True, timeout=10)
    assert short.stderr == "rcomp-view: --tcp needs a value: see rcomp-view --help\n"
    ssh = subprocess.run([RCOMP_VIEW, "ssh", "box"], env=desktop.remote_env,
                         capture_output=True, text=True, timeout=10)
    assert ssh.returncode == 2 and len(ssh.stderr.splitlines()) == 1, ssh.stderr
    assert "--list" in ssh.stderr and "see rcomp-view --help" in ssh.stderr


def test_rcomp_view_attach_finds_a_session_by_name_and_fails_for_a_missing_one(desktop):
    named_session(desktop)
    desktop.start("rcomp-view", [RCOMP_VIEW, "--attach", "work"], desktop.local_env)
    wait_for("the window", lambda: desktop.window(app_id="rcomp-input-test"))
    gone = subprocess.run([RCOMP_VIEW, "--attach", "nosuch"], env=desktop.local_env,
                          capture_output=True, text=True, timeout=10)
    assert gone.returncode != 0
    assert "no session named nosuch" in gone.stderr


def test_a_second_session_of_the_same_name_is_refused(desktop):
    named_session(desktop)
    dup = subprocess.run([RCOMP_RUN, "--name", "work", "--", "true"], env=desktop.remote_env,
                         capture_output=True, text=True, timeout=10)
    assert dup.returncode != 0
    assert "running already" in dup.stderr


def tcp_session(desktop):
    port = free_port()
    server = desktop.start("rcomp-run", [RCOMP_RUN, "--name", "lan", "--listen-tcp",
                                         "127.0.0.1:%d" % port, "--", INPUT_CLIENT],
                           desktop.remote_env)
    token_file = os.path.join(desktop.session_dir, "lan.token")
    wait_for("the token file", lambda: os.path.exists(token_file) and
             os.path.getsize(token_file) > 0)
    wait_for("the TCP listener", lambda: "listening on TCP" in desktop.read_log("rcomp-run"))
    return server, port, token_file


def test_tcp_takes_a_long_token_from_a_file_only_its_owner_can_read(desktop):
    _, _, token_file = tcp_session(desktop)
    assert stat.S_IMODE(os.stat(token_file).st_mode) == 0o600
    assert len(open(token_file).read().strip()) >= 32
    assert "not encrypted" in desktop.read_log("rcomp-run")


def read_all(sock):
    data = b""
    while True:
        chunk = sock.recv(4096)
        if not chunk:
            return data
        data += chunk


def test_wrong_or_missing_tcp_tokens_are_refused_with_one_log_line_each(desktop):
    server, port, token_file = tcp_session(desktop)
    token = open(token_file).read().strip()
    # Always wrong: the real token with its last character changed to
    # something it is not.
    wrong = token[:-1] + ("0" if token[-1] != "0" else "1")
    before = rss_kib(server.pid)
    for attempt in (b"", b"x" * 64, wrong.encode()):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(hello(attempt))
        data = read_all(s)
        s.close()
        # A goodbye (0x0202) with reason 6, and nothing else.
        assert data[:2] == b"\x02\x02" and data[12:16] == b"\x06\x00\x00\x00", data[:40]
    bad = os.path.join(desktop.tmp, "bad.token")
    with open(bad, "w") as f:
        f.write(wrong + "\n")
    os.chmod(bad, 0o600)
    refused = subprocess.run([RCOMP_VIEW, "--tcp", "127.0.0.1:%d" % port, "--token-file", bad],
                             env=desktop.local_env, capture_output=True, text=True, timeout=20)
    assert refused.returncode != 0 and "wrong token" in refused.stderr
    assert not desktop.windows(), "a window appeared for a refused viewer"
    lines = [line for line in desktop.read_log("rcomp-run").splitlines()
             if "refused a viewer" in line]
    assert len(lines) == 4, lines
    log("4 bad tokens refused, RSS %d -> %d KiB" % (before, rss_kib(server.pid)))


def test_the_right_tcp_token_shows_the_window(desktop):
    _, port, token_file = tcp_session(desktop)
    viewer = desktop.start("rcomp-view", [RCOMP_VIEW, "--tcp", "127.0.0.1:%d" % port,
                                          "--token-file", token_file], desktop.local_env)
    w = wait_for("the window over TCP", lambda: desktop.window(app_id="rcomp-input-test"))
    wait_for("the app's pixels over TCP", lambda: desktop.pixel(150, 150, w) == GREEN,
             interval=0.2)
    desktop.check_alive(viewer)
    assert "not encrypted" in desktop.read_log("rcomp-view")


def ssh_viewer(desktop, opts, app_id, *extra):
    # The session stays on the ssh link these tests are about (test_net
    # moves one to UDP).
    viewer = desktop.start("rcomp-view", [RCOMP_VIEW, "--remote-bin", RCOMP_RUN, "--ssh-udp",
                                          "off", "ssh", *opts,
                                          "root@127.0.0.1", "--", INPUT_CLIENT, app_id,
                                          *extra], desktop.local_env)
    w = wait_for("the remote window over ssh", lambda: desktop.window(app_id=app_id),
                 timeout=30)
    wait_for("the app's pixels over ssh", lambda: desktop.pixel(150, 150, w) == GREEN,
             interval=0.2)
    return viewer, w


def test_rcomp_view_ssh_runs_an_app_on_a_host_through_a_real_sshd(desktop):
    opts = start_sshd(desktop)
    title = "it's \"quoted\""
    viewer, _ = ssh_viewer(desktop, opts, title)
    # A bare ssh login has no runtime directory: rcomp-run makes its own.
    assert "XDG_RUNTIME_DIR is not set" in desktop.read_log(
        os.path.join(desktop.session_dir, "0.log"))
    desktop.swaymsg('[app_id="%s"] kill' % title.replace('"', '\\\\"'))
    assert viewer.wait(timeout=30) == 0


def test_a_killed_ssh_link_reattaches_to_the_same_session_in_the_same_window(desktop):
    opts = start_sshd(desktop)
    title = "ssh-reattach"
    viewer, w = ssh_viewer(desktop, opts, title)
    ssh = subprocess.run(["pgrep", "-P", str(viewer.pid), "-x", "ssh"], capture_output=True,
                         text=True).stdout.split()
    assert len(ssh) == 1, "expected one ssh child of the viewer, found %s" % ssh
    t0 = time.monotonic()
    os.kill(int(ssh[0]), signal.SIGKILL)
    wait_for("the viewer to notice",
             lambda: "connection to the server was lost" in desktop.read_log("rcomp-view"))
    wait_for("the same window, whole again",
             lambda: "reattached to session" in desktop.read_log("rcomp-view")
             and desktop.pixel(150, 150, w) == GREEN
             and not desktop.window(app_id=title)["name"].startswith("[disconnected]"),
             interval=0.05, timeout=30)
    assert desktop.window(app_id=title)["id"] == w["id"], "the local window was replaced"
    log("same window whole again %.2f s after ssh died (ssh login included)" % (
        time.monotonic() - t0))


def test_ssh_host_attach_lists_and_takes_over_a_session_over_ssh(desktop):
    opts = start_sshd(desktop)
    title = "ssh-attach"
    viewer, _ = ssh_viewer(desktop, opts, title)
    listed = subprocess.run(["ssh", *opts, "root@127.0.0.1", RCOMP_RUN, "--list"],
                            capture_output=True, text=True, timeout=30).stdout
    assert re.search(r"^0\s.*\sattached\s.*%s" % title, listed, re.M), listed
    second = desktop.start("second-viewer", [RCOMP_VIEW, "--remote-bin", RCOMP_RUN, "ssh",
                                             *opts, "root@127.0.0.1", "--attach"],
                           desktop.local_env)
    assert viewer.wait(timeout=30) == 0
    assert "took this session over" in desktop.read_log("rcomp-view")
    wait_for("the window in the second viewer",
             lambda: [x for x in desktop.windows() if x["app_id"] == title
                      and x["pid"] == second.pid], timeout=30)
    desktop.swaymsg("[app_id=%s] kill" % title)
    assert second.wait(timeout=30) == 0


def test_a_hello_of_another_protocol_version_is_refused_without_disturbing_the_viewer(desktop):
    server = desktop.start_server([INPUT_CLIENT])
    viewer = desktop.start_viewer(server)
    wait_for("the window", lambda: desktop.window(app_id="rcomp-input-test"))
    s = socket.socket(socket.AF_UNIX)
    s.connect(server.socket)
    s.sendall(hello(major=1))
    got = read_messages(s, 10, until=0x0202)
    s.close()
    byes = [struct.unpack_from("<iI", body)[1] for t, body in got if t == 0x0202]
    assert byes == [4], "expected a goodbye with reason 4 (version), got %s" % got
    time.sleep(1)
    desktop.check_alive(viewer)
    assert desktop.window(app_id="rcomp-input-test"), "the attached viewer's window went"
    assert "takes the session over" not in desktop.read_log("rcomp-run")


def test_goodbye_text_from_the_server_is_printed_with_control_characters_escaped(desktop):
    listener, path = fake_server(desktop)
    viewer = desktop.start("rcomp-view", [RCOMP_VIEW, "--socket", path], desktop.local_env)
    conn, _ = listener.accept()
    read_messages(conn, 2, until=0x0101)
    conn.sendall(welcome() + records(goodbye(3, b"evil\x1b]0;owned\x07\x1b[2J\r\n\xc2\x9b2J end")))
    assert viewer.wait(timeout=20) != 0
    conn.close()
    text = desktop.read_log("rcomp-view")
    assert "evil" in text and "end" in text
    for raw in ("\x1b", "\x07", "\r", "\x9b"):
        assert raw not in text, "the goodbye printed %r raw: %r" % (raw, text)
    assert "\\x1b]0;owned\\x07\\x1b[2J\\x0d\\x0a\\xc2\\x9b2J end" in text


def test_the_viewer_sends_only_its_hello_until_it_is_welcomed(desktop):
    """Keymap and clipboard types go only to a server that answered: on TCP
    the other end may be anyone until it does. The viewer knows them best
    when it reconnects, so the fake server ends the first connection."""
    VirtualKeyboard(desktop)
    listener, path = fake_server(desktop)
    subprocess.run(["wl-copy", "local text"], env=desktop.local_env, timeout=10,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    desktop.start("rcomp-view", [RCOMP_VIEW, "--socket", path], desktop.local_env)
    first, _ = listener.accept()
    got = read_messages(first, 2)
    assert [t for t, _ in got] == [0x0101], "before a welcome the viewer sent %s" % [
        hex(t) for t, _ in got]
    first.sendall(welcome() + records(
        window_new(1, 64, 64) + message(0x0208) +
        frame(1, 1, 64, 64, [(0, 0, 64, 64)], bytes(64 * 64 * 4), 64 * 64 * 4)))
    got = read_messages(first, 10, until=0x0301)
    assert 0x010e in [t for t, _ in got], "no keymap after the welcome"
    assert got[-1][0] == 0x0301, "the local selection never came: %s" % [
        hex(t) for t, _ in got]
    first.close()
    second, _ = listener.accept()
    got = read_messages(second, 2)
    assert [t for t, _ in got] == [0x0101], "before the new welcome the viewer sent %s" % [
        hex(t) for t, _ in got]
    second.sendall(welcome() + records(window_new(1, 64, 64) + message(0x0208)))
    got = [t for t, _ in read_messages(second, 3)]
    assert 0x010e in got and 0x0301 in got, "after the welcome: %s" % [hex(t) for t in got]
    second.close()


def test_a_token_file_others_can_read_or_that_is_not_ours_is_refused(desktop):
    port = free_port()
    for mode, owner in ((0o644, 0), (0o640, 0), (0o600, 65534)):
        token = os.path.join(desktop.tmp, "token-%o-%d" % (mode, owner))
        with open(token, "w") as f:
            f.write("0123456789abcdef0123456789abcdef\n")
        os.chmod(token, mode)
        os.chown(token, owner, owner)
        server = subprocess.run([RCOMP_RUN, "--listen-tcp", "127.0.0.1:%d" % port,
                                 "--token-file", token, "--", "true"], env=desktop.remote_env,
                                capture_output=True, text=True, timeout=20)
        assert server.returncode != 0, "rcomp-run used %s (mode %o, uid %d)" % (token, mode,
                                                                               owner)
        assert "chmod 600" in server.stderr, server.stderr
        viewer = subprocess.run([RCOMP_VIEW, "--tcp", "127.0.0.1:%d" % port, "--token-file",
                                 token], env=desktop.local_env, capture_output=True, text=True,
                                timeout=20)
        assert viewer.returncode != 0 and "chmod 600" in viewer.stderr, viewer.stderr


def own_dirs(desktop, **dirs):
    """An environment without RCOMP_DIR, with each of dirs (TMPDIR=...) a
    new directory under the test's, short enough for socket addresses."""
    env = dict(desktop.remote_env)
    env.pop("RCOMP_DIR")
    for key, leaf in dirs.items():
        path = os.path.join(desktop.tmp, leaf)
        os.makedirs(path, mode=0o700, exist_ok=True)
        env[key] = path
    return env


def persistent_session(desktop, env, name):
    """rcomp-run --stdio --persist, as ssh runs it, left detached."""
    p = subprocess.Popen([RCOMP_RUN, "--stdio", "--persist", "--name", name, "--",
                          INPUT_CLIENT], env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, err = p.communicate(input=b"", timeout=20)
    return err.decode()


def wait_listed(env, name):
    return wait_for("--list to show %s" % name, lambda: re.search(
        r"^%s\s" % name, subprocess.run([RCOMP_RUN, "--list"], env=env, capture_output=True,
                                        text=True, timeout=10).stdout, re.M))


def test_a_session_lives_in_xdg_runtime_dir_when_there_is_one(desktop):
    env = own_dirs(desktop, XDG_RUNTIME_DIR="r", TMPDIR="t", XDG_CACHE_HOME="c")
    desktop.start("rcomp-run", [RCOMP_RUN, "--name", "here", "--", INPUT_CLIENT], env)
    sock = os.path.join(env["XDG_RUNTIME_DIR"], "rcomp", "here.sock")
    wait_for("the session's socket in the runtime dir", lambda: os.path.exists(sock))
    assert stat.S_IMODE(os.stat(os.path.dirname(sock)).st_mode) == 0o700
    wait_listed(env, "here")
    local = desktop.local_env
    viewer_env = dict(local, XDG_RUNTIME_DIR=env["XDG_RUNTIME_DIR"],
                      WAYLAND_DISPLAY=os.path.join(local["XDG_RUNTIME_DIR"],
                                                   local["WAYLAND_DISPLAY"]))
    viewer_env.pop("RCOMP_DIR")
    desktop.start("rcomp-view", [RCOMP_VIEW, "--attach", "here"], viewer_env)
    wait_for("the window", lambda: desktop.window(app_id="rcomp-input-test"))


def test_a_persistent_session_outlives_the_login_in_tmpdir(desktop):
    env = own_dirs(desktop, XDG_RUNTIME_DIR="r", TMPDIR="t", XDG_CACHE_HOME="c")
    persistent_session(desktop, env, "kept")
    sock = os.path.join(env["TMPDIR"], "rcomp-%d" % os.getuid(), "kept.sock")
    wait_for("the session's socket under $TMPDIR", lambda: os.path.exists(sock))
    wait_listed(env, "kept")
    # Found from another login, whose runtime directory is another one.
    wait_listed(dict(env, XDG_RUNTIME_DIR=desktop.remote_rt), "kept")
    subprocess.run([RCOMP_RUN, "--attach", "kept"], env=env, stdin=subprocess.DEVNULL,
                   capture_output=True, timeout=10)


def test_another_users_tmp_directory_sends_sessions_to_a_private_one(desktop):
    """Anyone can make /tmp/rcomp-UID before us: rcomp-run does not stop but
    uses ~/.cache/rcomp, and --list and --attach look there too."""
    env = own_dirs(desktop, XDG_RUNTIME_DIR="r", TMPDIR="t", XDG_CACHE_HOME="c")
    taken = os.path.join(env["TMPDIR"], "rcomp-%d" % os.getuid())
    os.mkdir(taken, 0o777)
    os.chmod(taken, 0o777)
    os.chown(taken, 65534, 65534)
    err = persistent_session(desktop, env, "safe")
    assert "passing over the session directory %s (it belongs to user 65534)" % taken in err, err
    sock = os.path.join(env["XDG_CACHE_HOME"], "rcomp", "safe.sock")
    wait_for("the session's socket in the cache dir", lambda: os.path.exists(sock))
    assert stat.S_IMODE(os.stat(os.path.dirname(sock)).st_mode) == 0o700
    assert os.listdir(taken) == []
    wait_listed(env, "safe")
    viewer_env = dict(desktop.local_env, TMPDIR=env["TMPDIR"],
                      XDG_CACHE_HOME=env["XDG_CACHE_HOME"])
    viewer_env.pop("RCOMP_DIR")
    desktop.start("rcomp-view", [RCOMP_VIEW, "--attach", "safe"], viewer_env)
    wait_for("the window", lambda: desktop.window(app_id="rcomp-input-test"))


def session_files(desktop, name):
    return sorted(f for f in os.listdir(desktop.session_dir) if f.split(".")[0] == name)


def test_rcomp_run_stop_asks_the_app_to_close_then_ends_the_session_and_its_files(desktop):
    """rcomp-run --stop NAME: the app's window gets a close (the app ends on
    its own), the viewer is told the session was stopped and exits 0, the
    session's files are gone, and --stop says so and exits 0."""
    server = desktop.start("rcomp-run", [RCOMP_RUN, "--name", "work", "--listen-tcp",
                                         "127.0.0.1:%d" % free_port(), "--", INPUT_CLIENT],
                           desktop.remote_env)
    wait_for("the token file", lambda: os.path.exists(
        os.path.join(desktop.session_dir, "work.token")))
    viewer = desktop.start("rcomp-view", [RCOMP_VIEW, "--attach", "work"], desktop.local_env)
    wait_for("the window", lambda: desktop.window(app_id="rcomp-input-test"))
    assert session_files(desktop, "work"), "no files to remove"
    stop = subprocess.run([RCOMP_RUN, "--stop", "work"], env=desktop.remote_env,
                          capture_output=True, text=True, timeout=30)
    assert stop.returncode == 0, stop.stderr
    assert stop.stdout == "session work has ended\n"
    assert server.wait(timeout=10) == 0
    text = desktop.read_log("rcomp-run")
    assert "\nclose\n" in text and "(ignored)" not in text, "the app was not asked to close"
    assert "did not end within" not in text
    assert viewer.wait(timeout=10) == 0
    assert "the session was stopped (rcomp-run --stop)" in desktop.read_log("rcomp-view")
    assert session_files(desktop, "work") == []
    gone = subprocess.run([RCOMP_RUN, "--stop", "work"], env=desktop.remote_env,
                          capture_output=True, text=True, timeout=10)
    assert gone.returncode == 5 and "no session named work" in gone.stderr


def test_an_app_that_will_not_close_is_ended_5_s_after_stop(desktop):
    env = dict(desktop.remote_env, INPUT_CLIENT_IGNORE_CLOSE="1")
    server = desktop.start("rcomp-run", [RCOMP_RUN, "-v", "--name", "stubborn", "--",
                                         INPUT_CLIENT], env)
    wait_for("the session", lambda: os.path.exists(
        os.path.join(desktop.session_dir, "stubborn.sock")))
    # A window to close: a session with none left ends at once.
    wait_for("the app's window", lambda: "window 1 mapped" in desktop.read_log("rcomp-run"))
    t0 = time.monotonic()
    stop = subprocess.run([RCOMP_RUN, "--stop"], env=desktop.remote_env, capture_output=True,
                          text=True, timeout=30)
    took = time.monotonic() - t0
    assert stop.returncode == 0, stop.stderr
    assert server.wait(timeout=10) is not None
    text = desktop.read_log("rcomp-run")
    assert "close (ignored)" in text
    assert "did not close their windows within 5 s of being asked to: ending them" in text
    assert took >= 5, "--stop returned after %.1f s, before the app was ended" % took
    assert session_files(desktop, "stubborn") == []


def test_rcomp_view_ssh_host_stop_ends_a_session_there(desktop):
    opts = start_sshd(desktop)
    viewer = desktop.start("rcomp-view", [RCOMP_VIEW, "--remote-bin", RCOMP_RUN, "ssh", *opts,
                                          "root@127.0.0.1", "--", INPUT_CLIENT],
                           desktop.local_env)
    wait_for("the window", lambda: desktop.window(app_id="rcomp-input-test"), timeout=30)
    name = wait_for("the session's name", lambda: re.search(
        r"attached to session (\S+)", desktop.read_log("rcomp-view"))).group(1)
    listed = subprocess.run([RCOMP_VIEW, "--remote-bin", RCOMP_RUN, "ssh", *opts,
                             "root@127.0.0.1", "--list"], env=desktop.local_env,
                            capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert re.search(r"^%s\s+\d+\s.*\sattached\s" % name, listed.stdout, re.M), listed.stdout
    stop = subprocess.run([RCOMP_VIEW, "--remote-bin", RCOMP_RUN, "ssh", *opts,
                           "root@127.0.0.1", "--stop", name], env=desktop.local_env,
                          capture_output=True, text=True, timeout=60)
    assert stop.returncode == 0, stop.stderr
    assert "session %s has ended" % name in stop.stdout
    assert viewer.wait(timeout=15) == 0
    assert session_files(desktop, name) == []
    several = subprocess.run([RCOMP_VIEW, "--remote-bin", RCOMP_RUN, "ssh", *opts,
                              "root@127.0.0.1", "--stop", "gone"], env=desktop.local_env,
                             capture_output=True, text=True, timeout=60)
    assert several.returncode == 5 and several.stderr.count("no session named gone") == 1
    again = subprocess.run([RCOMP_VIEW, "--remote-bin", RCOMP_RUN, "ssh", *opts,
                            "root@127.0.0.1", "--stop"], env=desktop.local_env,
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 5 and "there is none to stop" in again.stderr, again.stderr
    assert "rcomp-view ssh HOST" not in again.stderr


# The same behaviours in the browser viewer.


def test_the_page_reconnects_after_the_link_breaks_and_keeps_its_windows(desktop, page):
    _, url = web_session(desktop, (INPUT_CLIENT,))
    relay, near = through_relay(desktop, url)
    page.open(near + "#token=" + TOKEN)
    page.window("rcomp input test")
    # The window is moved, and marked, to see it is the same one after.
    page.eval("(() => { const el = document.querySelector('.rcomp-window'); "
              "el.style.left = '200px'; el.marked = true; })()")
    relay.send_signal(signal.SIGUSR1)
    page.wait("!window.rcomp.session().connected")
    time.sleep(1)
    relay.send_signal(signal.SIGUSR2)
    page.wait("window.rcomp.session().connected && window.rcomp.session().welcomed", 30)
    page.wait("window.rcomp.stats().length === 1 && document.querySelector('.rcomp-window')"
              ".marked === true && document.querySelector('.rcomp-window').style.left === "
              "'200px'")
    presented = page.stats()[0]["presented"]
    x, y, _, _ = page.canvas_box("rcomp input test")
    page.click(x + 20, y + 30)
    wait_for("a click after the reconnect", lambda: "button main 272 pressed"
             in remote_log(desktop))
    page.wait("window.rcomp.stats()[0].presented > %d" % presented)
