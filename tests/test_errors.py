"""Errors a user can meet, provoked for real: each prints one line that
names the cause and the fix, and exits with its own status (status.h,
rcomp-run(1), rcomp-view(1))."""
import os
import pty
import re
import select
import socket
import subprocess
import time

from rig import (INPUT_CLIENT, RCOMP_RUN, RCOMP_VIEW, WEB, fake_server, free_port, goodbye,
                 hello, read_messages, start_sshd, wait_for, welcome)

USAGE = 2
NO_DISPLAY, IN_USE, NO_SESSION, SEVERAL, TOKEN, SSH, NO_REMOTE, VERSION = range(3, 11)


def run(program, args, env, timeout=30):
    r = subprocess.run([program, *args], env=env, capture_output=True, text=True,
                       timeout=timeout)
    return r.returncode, r.stderr


def error_line(stderr, program):
    """The program's one error line (other lines, such as ssh's, aside)."""
    lines = [line for line in stderr.splitlines() if line.startswith(program + ": error: ")]
    assert len(lines) == 1, "expected one error line from %s: %r" % (program, stderr)
    return lines[0]


def test_a_viewer_without_a_local_display_says_so(desktop):
    env = dict(desktop.local_env, WAYLAND_DISPLAY="wayland-nothing-here")
    status, err = run(RCOMP_VIEW, ["--attach", "x"], env)
    assert status == NO_DISPLAY
    line = error_line(err, "rcomp-view")
    assert "no local Wayland display" in line and "wayland-nothing-here" in line
    assert "set WAYLAND_DISPLAY" in line
    env = {k: v for k, v in desktop.local_env.items() if k != "XDG_RUNTIME_DIR"}
    status, err = run(RCOMP_VIEW, ["--attach", "x"], env)
    assert status == NO_DISPLAY
    assert "XDG_RUNTIME_DIR is not set" in error_line(err, "rcomp-view")


def test_a_socket_or_session_name_in_use_is_refused(desktop):
    server = desktop.start_server([INPUT_CLIENT], ["--name", "taken"])
    status, err = run(RCOMP_RUN, ["--socket", server.socket, "--", "true"], desktop.remote_env)
    assert status == IN_USE
    line = error_line(err, "rcomp-run")
    assert "in use by another rcomp-run" in line and "choose another --socket" in line
    status, err = run(RCOMP_RUN, ["--name", "taken", "--", "true"], desktop.remote_env)
    assert status == IN_USE
    line = error_line(err, "rcomp-run")
    assert "a session named taken is running already" in line
    assert "rcomp-view --attach taken" in line
    desktop.check_alive(server)


def test_a_session_that_does_not_exist_is_named(desktop):
    for program, env in ((RCOMP_VIEW, desktop.local_env), (RCOMP_RUN, desktop.remote_env)):
        status, err = run(program, ["--attach", "nosuch"], env)
        assert status == NO_SESSION, err
        line = error_line(err, os.path.basename(program))
        assert "no session named nosuch" in line and "--list shows those" in line
    status, err = run(RCOMP_VIEW, [], desktop.local_env)
    assert status == NO_SESSION
    assert "no session is running: start one" in error_line(err, "rcomp-view")


def test_several_sessions_and_none_named_lists_them(desktop):
    desktop.start_server([INPUT_CLIENT], ["--name", "alpha"], name="run-a")
    desktop.start_server([INPUT_CLIENT], ["--name", "beta"], name="run-b")
    for program, args, env in ((RCOMP_VIEW, [], desktop.local_env),
                               (RCOMP_RUN, ["--attach"], desktop.remote_env)):
        status, err = run(program, args, env)
        assert status == SEVERAL, err
        line = error_line(err, os.path.basename(program))
        assert "2 sessions are running (alpha, beta)" in line or \
            "2 sessions are running (beta, alpha)" in line
        assert "--attach NAME" in line


def test_a_wrong_token_is_refused_with_where_the_right_one_is(desktop):
    port = free_port()
    desktop.start_server([INPUT_CLIENT], ["--listen-tcp", "127.0.0.1:%d" % port])
    env = dict(desktop.local_env, RCOMP_TOKEN="not-the-token")
    status, err = run(RCOMP_VIEW, ["--tcp", "127.0.0.1:%d" % port], env)
    assert status == TOKEN
    line = error_line(err, "rcomp-view")
    assert "refused the token" in line and "--token-file" in line


def test_ssh_that_cannot_reach_the_host_is_told_apart(desktop):
    port = free_port()  # nothing listens there
    status, err = run(RCOMP_VIEW, ["ssh", "-p", str(port), "-o", "BatchMode=yes",
                                   "127.0.0.1", "--", "true"], desktop.local_env)
    assert status == SSH
    line = error_line(err, "rcomp-view")
    assert "ssh could not reach or log in to 127.0.0.1" in line
    assert "Connection refused" in err, "ssh's own words are shown too"


def test_rcomp_run_missing_on_the_remote_host_is_told_apart(desktop):
    opts = start_sshd(desktop)
    status, err = run(RCOMP_VIEW, ["--remote-bin", "/nonexistent/rcomp-run", "ssh", *opts,
                                   "root@127.0.0.1", "--", INPUT_CLIENT], desktop.local_env)
    assert status == NO_REMOTE, err
    line = error_line(err, "rcomp-view")
    assert "/nonexistent/rcomp-run cannot be run on root@127.0.0.1" in line
    assert "--remote-bin PATH" in line


def test_rcomp_run_missing_for_a_local_session_is_told_apart(desktop):
    env = dict(desktop.local_env, RCOMP_RUN="/nonexistent/rcomp-run")
    status, err = run(RCOMP_VIEW, ["--local", "--", INPUT_CLIENT], env)
    assert status == NO_REMOTE, err
    line = error_line(err, "rcomp-view")
    assert "/nonexistent/rcomp-run cannot be run: " in line and "RCOMP_RUN" in line
    assert "--remote-bin" not in line, "--remote-bin is for ssh only"


def test_a_server_of_another_protocol_version_is_told_apart(desktop):
    """What a newer rcomp-run would answer: a welcome of wire protocol 4."""
    listener, path = fake_server(desktop)
    viewer = desktop.start("rcomp-view", [RCOMP_VIEW, "--socket", path], desktop.local_env)
    conn, _ = listener.accept()
    read_messages(conn, 5, until=0x0101)
    conn.sendall(welcome(major=4))
    assert viewer.wait(timeout=20) == VERSION
    conn.close()
    line = error_line(desktop.read_log("rcomp-view"), "rcomp-view")
    assert "speaks wire protocol 4" in line and "install the same rcomp version" in line


def test_a_viewer_of_another_protocol_version_is_refused_with_the_fix(desktop):
    """What an older rcomp-run would answer a newer viewer, from the real
    rcomp-run to a viewer of protocol 2; the viewer hearing it exits 10."""
    server = desktop.start_server([INPUT_CLIENT])
    s = socket.socket(socket.AF_UNIX)
    s.connect(server.socket)
    s.sendall(hello(major=2))
    got = read_messages(s, 10, until=0x0202)
    s.close()
    text = [body[8:] for t, body in got if t == 0x0202][0].decode()
    assert "the viewer speaks wire protocol 2" in text
    assert "install the same rcomp version on both sides" in text
    # The same words reaching a viewer, as rcomp-run sends them: the first
    # message, before any welcome.
    listener, path = fake_server(desktop, "old")
    viewer = desktop.start("rcomp-view", [RCOMP_VIEW, "--socket", path], desktop.local_env)
    conn, _ = listener.accept()
    read_messages(conn, 5, until=0x0101)
    conn.sendall(goodbye(4, text.encode()))
    assert viewer.wait(timeout=20) == VERSION
    conn.close()
    assert "another protocol version" in error_line(desktop.read_log("rcomp-view"),
                                                    "rcomp-view")
    desktop.check_alive(server)


def test_a_viewer_on_stdio_of_another_protocol_version_is_refused_the_same_way(desktop):
    """rcomp-run --stdio, as ssh runs it, hearing a hello of protocol 2: the
    one door every viewer comes in by refuses it with the same words, as
    its first message, and the session, which can have no other viewer,
    ends."""
    ours, theirs = socket.socketpair()
    p = subprocess.Popen([RCOMP_RUN, "--stdio", "--", INPUT_CLIENT], env=desktop.remote_env,
                         stdin=theirs, stdout=theirs, stderr=subprocess.PIPE)
    theirs.close()
    try:
        ours.sendall(hello(major=2))
        got = read_messages(ours, 20, until=0x0202)
        assert got and got[0][0] == 0x0202, "the goodbye comes first: %r" % got[:3]
        text = got[0][1][8:].decode()
        assert "the viewer speaks wire protocol 2" in text
        assert "install the same rcomp version on both sides" in text
        _, err = p.communicate(timeout=20)
    finally:
        if p.poll() is None:
            p.kill()
        ours.close()
    err = err.decode()
    assert "refused a viewer: the viewer speaks wire protocol 2" in err, err
    assert "the viewer on stdio is gone; ending the session" in err, err


APP_MISSING = 127


def test_an_app_that_cannot_run_says_so_once_and_exits_127_locally_and_over_ssh(desktop):
    """The app is not on the host: one line says so (over ssh, naming the
    host), and the status is 127, as a shell's. Over ssh the session ended
    at times before the viewer heard why; now it waits for it."""
    status, err = run(RCOMP_VIEW, ["--local", "--", "no-such-app"], desktop.local_env)
    assert status == APP_MISSING, err
    line = error_line(err, "rcomp-view")
    assert "no-such-app cannot be run: No such file or directory" in line
    assert err.count("cannot be run") == 1, err
    opts = start_sshd(desktop)
    for _ in range(4):
        status, err = run(RCOMP_VIEW, ["--remote-bin", RCOMP_RUN, "ssh", *opts,
                                       "root@127.0.0.1", "--", "no-such-app"],
                          desktop.local_env)
        assert status == APP_MISSING, err
        line = error_line(err, "rcomp-view")
        assert "on root@127.0.0.1: no-such-app cannot be run: No such file or directory" in \
            line, line
        assert "lost" not in err and ".log" not in err, err


def test_an_app_that_exits_at_once_gives_its_status_every_time_over_ssh(desktop):
    opts = start_sshd(desktop)
    for _ in range(4):
        status, err = run(RCOMP_VIEW, ["--remote-bin", RCOMP_RUN, "ssh", *opts,
                                       "root@127.0.0.1", "--", "sh", "-c", "exit 3"],
                          desktop.local_env)
        assert status == 3, err
        assert "error" not in err, err
    status, _ = run(RCOMP_VIEW, ["--local", "--", "sh", "-c", "exit 3"], desktop.local_env)
    assert status == 3


def test_a_bad_run_setting_through_local_or_ssh_exits_2_with_rcomp_runs_line_alone(desktop):
    desktop.settings_file("remote", "[run]\ncodec = bogus\n")
    env = dict(desktop.local_env, XDG_CONFIG_HOME=desktop.remote_env["XDG_CONFIG_HOME"])
    status, err = run(RCOMP_VIEW, ["--local", "--", INPUT_CLIENT], env)
    assert status == USAGE, err
    assert re.fullmatch(r"rcomp-run: \S+rcomp.ini:2: codec = bogus: codec takes auto, "
                        r"lossless or video\n", err), err
    opts = start_sshd(desktop, env={"RCOMP_CODEC": "bogus"})
    status, err = run(RCOMP_VIEW, ["--remote-bin", RCOMP_RUN, "ssh", *opts, "root@127.0.0.1",
                                   "--", INPUT_CLIENT], desktop.local_env)
    assert status == USAGE, err
    assert "RCOMP_CODEC" in err and "rcomp-view" not in err, err


def test_a_wrong_token_over_udp_exits_7_at_once_and_the_server_logs_it(desktop):
    port = free_port()
    server = desktop.start_server([INPUT_CLIENT], ["--listen-udp", "127.0.0.1:%d" % port])
    wait_for("UDP", lambda: "listening on UDP" in desktop.read_log("rcomp-run"))
    env = dict(desktop.local_env, RCOMP_TOKEN="not-the-token-but-long-enough")
    t0 = time.monotonic()
    status, err = run(RCOMP_VIEW, ["--udp", "127.0.0.1:%d" % port], env)
    assert status == TOKEN, err
    assert time.monotonic() - t0 < 5
    line = error_line(err, "rcomp-view")
    assert "refused the token" in line and "--token-file" in line
    assert "reconnecting" not in err
    wait_for("the refusal in rcomp-run's log", lambda: re.search(
        r"refused a viewer from 127\.0\.0\.1 port \d+ \(UDP\): its key does not match",
        desktop.read_log("rcomp-run")))
    desktop.check_alive(server)


def test_a_tcp_or_udp_port_where_nobody_listens_fails_within_seconds_with_the_reason(desktop):
    for transport, within in (("tcp", 5), ("udp", 10)):
        env = dict(desktop.local_env, RCOMP_TOKEN="a-token-of-sixteen-or-more")
        t0 = time.monotonic()
        status, err = run(RCOMP_VIEW, ["--" + transport, "127.0.0.1:%d" % free_port()], env)
        took = time.monotonic() - t0
        assert status == NO_SESSION, (transport, err)
        assert took < within, "%s gave up after %.1f s" % (transport, took)
        line = error_line(err, "rcomp-view")
        assert "listen-" + transport in line, line
        assert "reconnecting" not in err, err


def test_a_udp_port_in_use_is_refused_with_the_fix_and_nothing_else_said(desktop):
    taken = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    taken.bind(("127.0.0.1", 0))
    port = taken.getsockname()[1]
    status, err = run(RCOMP_RUN, ["--listen-udp", "127.0.0.1:%d" % port, "--", INPUT_CLIENT],
                      desktop.remote_env)
    taken.close()
    assert status == IN_USE, err
    line = error_line(err, "rcomp-run")
    assert "the port is in use" in line and "--listen-udp ADDR:PORT" in line
    assert "listening" not in err and "token" not in err, err


def test_rcomp_run_attach_in_a_terminal_writes_no_protocol_bytes(desktop):
    """Typed in a terminal: a name that is no session gets the line that says
    so (5), one that is gets the command to use instead (2), and the
    terminal sees no byte of the wire protocol."""
    desktop.start_server([INPUT_CLIENT], ["--name", "here"])
    for name, want in (("nosuch", NO_SESSION), ("here", USAGE)):
        primary, secondary = pty.openpty()
        p = subprocess.run([RCOMP_RUN, "--attach", name], env=desktop.remote_env,
                           stdin=secondary, stdout=secondary, stderr=subprocess.PIPE,
                           timeout=10)
        os.close(secondary)
        shown = b""
        while select.select([primary], [], [], 0.2)[0]:
            try:
                chunk = os.read(primary, 4096)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
        os.close(primary)
        assert p.returncode == want, p.stderr
        assert shown == b"", "bytes on the terminal: %r" % shown
        line = error_line(p.stderr.decode(), "rcomp-run")
        if name == "nosuch":
            assert "no session named nosuch" in line
        else:
            assert "rcomp-view --attach here" in line


def test_a_wrong_attach_name_over_ssh_is_said_once(desktop):
    opts = start_sshd(desktop)
    status, err = run(RCOMP_VIEW, ["--remote-bin", RCOMP_RUN, "ssh", *opts, "root@127.0.0.1",
                                   "--attach", "nosuch"], desktop.local_env)
    assert status == NO_SESSION, err
    assert err.count("no session named nosuch") == 1, err


def test_a_session_that_goes_well_says_only_what_a_user_needs(desktop):
    """Without -v, an app that runs and exits: rcomp-run's own lines (the
    displays, the session, the app's end), none of wlroots' chatter, and no
    warning or error."""
    status, err = run(RCOMP_RUN, ["--audio", "off", "--", "true"], desktop.remote_env)
    assert status == 0, err
    lines = err.splitlines()
    assert lines and all(line.startswith("rcomp-run: ") for line in lines), err
    assert not [line for line in lines if "wlroots" in line or "warning" in line
                or "error" in line], err
    assert lines[-1] == "rcomp-run: app exited with status 0", err


def test_a_page_folder_without_the_page_is_named_at_the_start(desktop):
    """RCOMP_WEB_DIR naming a folder without the built page (its generated
    messages.js): rcomp-run says which file is missing and where the page
    is, instead of serving a blank page."""
    if not WEB:
        pytest.skip("built without libwebsockets")
    empty = os.path.join(desktop.tmp, "no-page")
    os.makedirs(empty)
    with open(os.path.join(empty, "index.html"), "w") as f:
        f.write("<!doctype html>\n")
    env = dict(desktop.remote_env, RCOMP_WEB_DIR=empty)
    status, err = run(RCOMP_RUN, ["--listen-web", "127.0.0.1:%d" % free_port(), "--", "true"],
                      env)
    assert status != 0
    line = error_line(err, "rcomp-run")
    assert "cannot serve the page: %s/messages.js" % empty in line, line
    assert "build/web" in line, line
