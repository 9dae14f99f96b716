"""rcomp-gate, the door for every user of a host: real accounts (useradd,
chpasswd), the real PAM stack, sessions started as their users, Debian's
chromium on the gate's page."""
import http.client
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.parse

import pytest

import rig
from rig import ALICE, BOB, STUBBORN_APP, USERS, all_gone_by, stubborn_pids, wait_for

# A user's request under a flood is answered "at once": within 2 s, or 5 s
# in the sanitizers' build, where the gate, PAM's children and the flood
# itself run several times slower (what is tested is that none is kept out).
AT_ONCE_S = 5 if rig.SANITIZED else 2

pytestmark = [pytest.mark.skipif(rig.gate_possible() is not None,
                                 reason=str(rig.gate_possible())),
              pytest.mark.usefixtures("sessions_end")]


def test_a_wrong_password_is_refused_with_a_clear_message_and_an_unknown_user_gets_the_same(gate):
    c = gate.client()
    wrong = c.login(ALICE, "not-the-password")
    unknown = c.login("rcomp-nobody-by-this-name", "not-the-password")
    assert wrong[0] == unknown[0] == 401
    assert wrong[1] == unknown[1] == {"error": "Wrong user name or password."}
    # Every failure is answered a second after it came, whatever PAM took.
    assert wrong[2] >= 0.95 and unknown[2] >= 0.95, (wrong[2], unknown[2])
    assert c.cookie is None
    log = desktop_log(gate)
    assert "login failed: %s from 127.0.0.1" % ALICE in log
    assert "login failed: rcomp-nobody-by-this-name from 127.0.0.1" in log


def desktop_log(gate):
    return gate.rig.read_log(gate.name)


def test_failed_logins_are_slowed_per_address_with_a_message_that_says_how_long(gate):
    """Five tries at once (a guesser does not wait for each answer), all
    wrong; then even the right password must wait."""
    import concurrent.futures
    c = gate.client()
    with concurrent.futures.ThreadPoolExecutor(5) as pool:
        tries = list(pool.map(lambda _: gate.client().login(ALICE, "wrong")[0], range(5)))
    assert tries == [401] * 5, tries
    status, body, took = c.login(ALICE)
    assert status == 429, (status, body)
    assert "try again in" in body["error"], body
    assert took < 0.9, "a slowed login is told at once, not after a failure's second"
    assert "login slowed: %s from 127.0.0.1" % ALICE in desktop_log(gate)


def test_a_login_from_another_page_is_refused(gate):
    c = gate.client()
    status, body, _ = c.request("POST", "/api/login", {"user": ALICE, "password": USERS[ALICE]},
                                origin=False)
    assert status == 403 and "gate's own page" in body["error"], (status, body)
    assert c.cookie is None


def test_the_login_cookie_is_random_http_only_same_site_strict_and_bound_to_its_user(gate):
    a, b = gate.client(), gate.client()
    assert a.login(ALICE)[0] == 200 and b.login(ALICE)[0] == 200
    assert a.cookie != b.cookie and len(a.cookie) == 64
    flags = [f.strip() for f in a.set_cookie.split(";")]
    assert "HttpOnly" in flags and "SameSite=Strict" in flags and "Path=/" in flags, flags
    assert a.get("me")[1]["user"] == ALICE


def test_an_action_without_the_pages_csrf_token_is_refused(gate):
    c = gate.client()
    c.login(ALICE)
    status, body, _ = c.request("POST", "/api/start", {"app": "foot"})
    assert status == 401 and "did not come from the gate's page" in body["error"], body
    assert c.sessions() == []


def test_logout_revokes_the_cookie_and_a_stolen_copy_stops_working(gate):
    c = gate.client()
    c.login(ALICE)
    stolen = c.cookie
    assert c.get("me", cookie=stolen)[0] == 200
    assert c.post("logout", {})[0] == 200
    assert c.cookie is None, "the logout clears the browser's cookie"
    assert c.get("me", cookie=stolen)[0] == 401
    assert c.get("sessions", cookie=stolen)[0] == 401
    assert "logout: %s from 127.0.0.1" % ALICE in desktop_log(gate)


@pytest.mark.parametrize("settings,use_every,wait", [
    ({"idle": 2, "lifetime": 600}, None, 3.0),
    ({"idle": 600, "lifetime": 3}, 0.5, 3.5),
], ids=["idle", "lifetime"])
def test_a_stolen_cookie_stops_working_once_the_login_expires(desktop, accounts, settings,
                                                               use_every, wait):
    gate = rig.Gate(desktop, **settings)
    c = gate.client()
    c.login(ALICE)
    stolen = c.cookie
    end = time.monotonic() + wait
    while time.monotonic() < end:
        if use_every:
            c.get("me", cookie=stolen)
        time.sleep(use_every or wait)
    assert c.get("me", cookie=stolen)[0] == 401
    assert "login of %s from 127.0.0.1 expired" % ALICE in desktop_log(gate)


def proc_ids(pid):
    uid = gid = groups = None
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("Uid:"):
                uid = {int(x) for x in line.split()[1:]}
            elif line.startswith("Gid:"):
                gid = {int(x) for x in line.split()[1:]}
            elif line.startswith("Groups:"):
                groups = {int(x) for x in line.split()[1:]}
    with open("/proc/%d/environ" % pid, "rb") as f:
        env = dict(e.decode().split("=", 1) for e in f.read().split(b"\0") if b"=" in e)
    return uid, gid, groups, env


def children(pid, name):
    out = subprocess.run(["pgrep", "-P", str(pid), "-x", name], capture_output=True,
                         text=True).stdout
    return [int(p) for p in out.split()]


def test_each_session_runs_as_its_user_with_a_logins_groups_and_environment(gate):
    c = gate.client()
    c.login(ALICE)
    name = c.start("foot")
    session = wait_for("the session in the list",
                       lambda: [s for s in c.sessions() if s["name"] == name])[0]
    uid, groups, home = rig.user_ids(ALICE)
    # The app (the session's own sound server has a HOME of its own). On
    # 2 loaded cores a session's start can take long.
    try:
        # Below the session's reaper, which runs the app.
        app = wait_for("foot in the session", lambda: [
            p for p in [rig.descendant(session["pid"], "foot")] if p], timeout=45)
    except rig.Failure as e:
        raise rig.Failure("%s; the session's log:\n%s" % (e, rig.session_log(ALICE, name)))
    for pid in [session["pid"]] + app:
        puid, pgid, pgroups, env = proc_ids(pid)
        assert puid == {uid}, (pid, puid)
        assert pgroups == groups, (pid, pgroups, groups)
        assert env["HOME"] == home and env["USER"] == ALICE and env["LOGNAME"] == ALICE
        assert env["SHELL"] == "/bin/bash" and "/usr/bin" in env["PATH"].split(":")
    assert "start: %s from 127.0.0.1: session %s" % (ALICE, name) in desktop_log(gate)


def test_a_session_started_over_a_shell_with_persist_is_in_the_users_list(gate):
    c = gate.client()
    c.login(ALICE)
    uid, _, home = rig.user_ids(ALICE)
    # As ssh runs it: the bridge ends with its input, the session stays.
    subprocess.run(["runuser", "-u", ALICE, "--", "env", "-i", "HOME=" + home,
                    "PATH=/usr/bin:/bin", rig.RCOMP_RUN, "--stdio", "--persist",
                    "--name", "from-a-shell", "--", "sleep", "600"],
                   stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    wait_for("the shell's session in the list",
             lambda: [s for s in c.sessions() if s["name"] == "from-a-shell"])


def test_another_user_sees_none_of_the_sessions_and_cannot_reach_one_by_any_name(gate):
    alice, bob = gate.client(), gate.client()
    alice.login(ALICE)
    bob.login(BOB)
    name = alice.start("foot")
    wait_for("alice's session", lambda: alice.sessions())
    assert bob.sessions() == []
    uid = rig.user_ids(ALICE)[0]
    for tried in [name, "../rcomp-%d/%s" % (uid, name), "/tmp/rcomp-%d/%s.sock" % (uid, name)]:
        status, body, _ = bob.post("stop", {"name": tried})
        assert status == 404, (tried, status, body)
    # A WebSocket for it, as bob: the gate says there is no such session.
    said = websocket(bob, name)
    assert b"no such session of yours" in said, said
    assert [s["name"] for s in alice.sessions()] == [name], "bob's tries stopped nothing"


def websocket(client, session, seconds=10, hello=False):
    """Opens the viewer's WebSocket to session with the client's cookies, as
    the page does (with hello, says hello as the page does), and returns
    what comes within seconds (or until the gate closes it)."""
    s = client.websocket(session, timeout=seconds)
    if hello:
        import webdoor
        s.sendall(webdoor.frame(rig.hello(flags=rig.HELLO_SHARE, caps=1)))
    got = b""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            break
        if not chunk:
            break
        got += chunk
    s.close()
    assert got.startswith(b"HTTP/1.1 101"), got[:200]
    return got


def test_the_network_facing_process_runs_as_the_gates_user_in_the_pages_directory(gate):
    pid = gate.net_pid()
    uid = rig.user_ids(rig.GATE_USER)[0]
    puid, _, groups, _ = proc_ids(pid)
    assert puid == {uid} and groups == set(), (puid, groups)
    assert os.readlink("/proc/%d/root" % pid) == rig.WEB_DIR


def test_a_viewer_through_the_gate_holds_no_session_socket_by_path_in_the_network_process(gate):
    c = gate.client()
    c.login(ALICE)
    name = c.start("foot")
    wait_for("the session", lambda: c.sessions())
    page = rig.Browser(gate.rig)
    try:
        page.open(gate.url)
        page.wait("!document.getElementById('door').hidden")
        page.eval("document.getElementById('user').value = %r; "
                  "document.getElementById('password').value = %r; "
                  "document.getElementById('enter').click()" % (ALICE, USERS[ALICE]))
        page.wait("document.querySelector('li[data-session=\"%s\"] button')" % name)
        page.eval("document.querySelector('li[data-session=\"%s\"] button').click()" % name)
        page.window("foot")
        pid = gate.net_pid()
        with open("/proc/net/unix") as f:
            named = {line.split()[6]: line.split()[7] for line in f.readlines()[1:]
                     if len(line.split()) >= 8}
        sessions = "/tmp/rcomp-%d/" % rig.user_ids(ALICE)[0]
        held = []
        for fd in os.listdir("/proc/%d/fd" % pid):
            target = os.readlink("/proc/%d/fd/%s" % (pid, fd))
            assert sessions not in target, target
            if target.startswith("socket:["):
                inode = target[8:-1]
                if inode in named:
                    held.append(named[inode])
        assert not [p for p in held if p.startswith(sessions)], held
    finally:
        page.close()


def test_a_user_starts_foot_from_the_menu_sees_its_window_and_gets_it_back_after_a_new_login(gate):
    page = rig.Browser(gate.rig)

    def log_in():
        page.open(gate.url)
        page.wait("!document.getElementById('door').hidden")
        page.eval("document.getElementById('user').value = %r; "
                  "document.getElementById('password').value = %r; "
                  "document.getElementById('enter').click()" % (ALICE, USERS[ALICE]))
        page.wait("!document.getElementById('home').hidden")

    try:
        log_in()
        page.wait("document.querySelector('li[data-app=\"foot\"] button')")
        page.eval("document.querySelector('li[data-app=\"foot\"] button').click()")
        first = page.window("foot")
        name = page.wait("new URLSearchParams(location.hash.slice(1)).get('gate')")
    finally:
        page.close()
    # The tab closed: a new browser, with no cookie, logs in again.
    page = rig.Browser(gate.rig)
    try:
        log_in()
        page.wait("document.querySelector('li[data-session=\"%s\"] button')" % name)
        page.eval("document.querySelector('li[data-session=\"%s\"] button').click()" % name)
        again = page.window("foot")
        assert again["window"] == first["window"], (first, again)
    finally:
        page.close()
    log = desktop_log(gate)
    assert log.count("attach: %s from 127.0.0.1: session %s" % (ALICE, name)) == 2, log


def test_check_config_passes_on_a_good_configuration_and_says_what_is_wrong_with_a_bad_one(
        desktop, accounts):
    good = rig.Gate(desktop)
    ok = subprocess.run([rig.RCOMP_GATE, "--config", good.config, "--check-config"],
                        capture_output=True, text=True)
    assert ok.returncode == 0 and "is good" in ok.stdout, ok.stdout + ok.stderr
    bad = os.path.join(desktop.tmp, "bad.ini")
    with open(bad, "w") as f:
        f.write("[gate]\nlisten = 0.0.0.0:9443\ncert = /nonexistent/cert.pem\n"
                "key = /nonexistent/key.pem\nuser = no-such-system-user\n"
                "pam-service = no-such-service\n")
    out = subprocess.run([rig.RCOMP_GATE, "--config", bad, "--check-config"],
                         capture_output=True, text=True)
    assert out.returncode == 1
    for said in ["cannot read /nonexistent/cert.pem", "no system user no-such-system-user",
                 "no PAM service no-such-service"]:
        assert said in out.stdout, out.stdout


def test_check_config_says_every_mistake_of_a_file_with_its_line_in_one_run(desktop, accounts):
    """Five mistakes: five lines, each FILE:LINE, and the count; then what
    the file names: a key that is no key, a port another program holds, an
    allow-list naming nothing installed (a warning, not a problem)."""
    good = rig.Gate(desktop)
    with open(good.config) as f:
        base = f.read()
    bad = os.path.join(desktop.tmp, "five.ini")
    with open(bad, "w") as f:
        f.write(base + "idle = forever\nfrobnicate = 3\nthis is no line\n"
                "sessions-per-user = 0\n[cluster]\nhosts = nonsense\n")
    first = len(base.splitlines()) + 1
    out = subprocess.run([rig.RCOMP_GATE, "--config", bad, "--check-config"],
                         capture_output=True, text=True)
    lines = [line for line in out.stdout.splitlines() if line.startswith("rcomp-gate: " + bad)]
    assert out.returncode == 1
    assert [int(re.match(r"rcomp-gate: [^:]+:(\d+):", line).group(1)) for line in lines[:5]] == \
        [first, first + 1, first + 2, first + 3, first + 5], out.stdout
    assert lines[-1].endswith(": 5 problems"), out.stdout
    held = socket.socket()
    held.bind(("127.0.0.1", 0))
    held.listen(1)
    key = os.path.join(desktop.tmp, "not-a-key.pem")
    with open(key, "w") as f:
        f.write("hello\n")
    cert = os.path.join(desktop.tmp, "cert.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    os.path.join(desktop.tmp, "real-key.pem"), "-out", cert, "-days", "2",
                    "-subj", "/CN=localhost"], check=True, capture_output=True)
    other = os.path.join(desktop.tmp, "other.ini")
    with open(other, "w") as f:
        f.write(base.replace("listen = %s" % good.host,
                             "listen = 127.0.0.1:%d" % held.getsockname()[1]) +
                "cert = %s\nkey = %s\n[apps]\nallow = no-such-app-here\n" % (cert, key))
    out = subprocess.run([rig.RCOMP_GATE, "--config", other, "--check-config"],
                         capture_output=True, text=True)
    held.close()
    assert out.returncode == 1, out.stdout
    assert "key = %s is not a private key" % key in out.stdout, out.stdout
    assert re.search(r"listen = 127\.0\.0\.1:\d+ is in use by python3 \(pid %d\)" % os.getpid(),
                     out.stdout), out.stdout
    assert "warning: [apps] allow names no-such-app-here" in out.stdout, out.stdout
    assert out.stdout.splitlines()[-1].endswith(": 2 problems"), out.stdout


def test_behind_haproxy_a_user_always_lands_on_their_host_and_moves_on_when_it_is_down(
        desktop, accounts):
    """Two gates on two loopback addresses behind Debian's HAProxy. Each
    user's host is the first of the user's rendezvous order that is up; a
    login that reaches the other gate is sent on with the balancer's cookie
    for the right one, and what follows (the API, the WebSocket) goes there
    too. With that host stopped, the user's new session starts on the
    other."""
    if not shutil.which("haproxy"):
        pytest.skip("no haproxy (tools/deps.sh installs Debian's)")
    ports = {"gate-a": rig.free_port(), "gate-b": rig.free_port()}
    addrs = {"gate-a": "127.0.0.2", "gate-b": "127.0.0.3"}
    hosts = " ".join("%s=%s:%d" % (n, addrs[n], ports[n]) for n in ports)
    gates = {n: rig.Gate(desktop, name=n, address=addrs[n], port=ports[n],
                         cluster={"me": n, "hosts": hosts}, proxies=rig.PROXY_SOURCE)
             for n in ports}
    lb = rig.Balancer(desktop, gates)

    def sees(name, peer):
        """What name last said of peer: "up", "down" or None."""
        said = [line for line in desktop.read_log(name).splitlines()
                if "host %s (" % peer in line]
        return said and ("up" if said[-1].endswith(" is up") else "down")

    for n in gates:
        for peer in gates:
            if peer != n:
                wait_for("%s to see %s up" % (n, peer), lambda: sees(n, peer) == "up")

    def logins(name):
        return desktop.read_log(name).count("login: %s from" % ALICE)

    clients = []
    for _ in range(4):
        c = lb.client()
        assert c.login(ALICE)[0] == 200
        clients.append(c)
    home = [n for n in gates if logins(n) == 4]
    assert len(home) == 1, {n: logins(n) for n in gates}
    home = home[0]
    other = [n for n in gates if n != home][0]
    assert sum(c.redirects for c in clients) >= 1, "round robin never reached the other gate"
    assert "sent on to %s" % home in desktop.read_log(other)
    c = clients[-1]
    name = c.start("foot")
    assert "start: %s from" % ALICE in desktop.read_log(home)
    said = websocket(c, name, seconds=3)
    assert said.startswith(b"HTTP/1.1 101"), said[:200]
    assert "attach: %s from" % ALICE in desktop.read_log(home)
    assert "attach:" not in desktop.read_log(other)

    gates[home].stop()
    wait_for("%s to see %s down" % (other, home), lambda: sees(other, home) == "down")
    c = lb.client()
    status, body, _ = c.login(ALICE)
    assert status == 200, (status, body)
    assert logins(other) == 1
    c.start("foot")
    assert "start: %s from" % ALICE in desktop.read_log(other)


def test_the_list_names_each_sessions_windows_and_rcomp_run_list_shows_the_gates_sessions(gate):
    c = gate.client()
    c.login(ALICE)
    name = c.start("foot")
    session = wait_for("the session's window title in the list",
                       lambda: [s for s in c.sessions() if s["titles"]])[0]
    assert session["name"] == name and session["titles"] == ["foot"], session
    # Over ssh the user runs rcomp-run --list: the same session is there.
    home = rig.user_ids(ALICE)[2]
    out = subprocess.run(["runuser", "-u", ALICE, "--", "env", "-i", "HOME=" + home,
                          "PATH=/usr/bin:/bin", rig.RCOMP_RUN, "--list"],
                         capture_output=True, text=True, timeout=30).stdout
    assert name in out, out


def test_a_user_may_start_sessions_up_to_the_limit_and_is_told_so_past_it(desktop, accounts):
    gate = rig.Gate(desktop, sessions_per_user=1)
    c = gate.client()
    c.login(ALICE)
    c.start("foot")
    wait_for("the first session", lambda: c.sessions())
    status, body, _ = c.post("start", {"app": "foot"})
    assert status == 403 and "as many as one may have here" in body["error"], (status, body)
    assert len(c.sessions()) == 1


def test_a_user_may_open_viewers_up_to_the_limit_and_is_told_so_past_it(desktop, accounts):
    gate = rig.Gate(desktop, viewers_per_user=1)
    c = gate.client()
    c.login(ALICE)
    name = c.start("foot")
    wait_for("the session", lambda: c.sessions())
    import threading
    first = {}
    t = threading.Thread(target=lambda: first.update(said=websocket(c, name, seconds=6)))
    t.start()
    wait_for("the first viewer attached",
             lambda: "attach: %s" % ALICE in desktop.read_log(gate.name))
    said = websocket(c, name, seconds=3)
    t.join()
    assert b"as many as one may have" in said, said[-300:]
    assert first["said"].startswith(b"HTTP/1.1 101")
    assert b"as many as one may have" not in first["said"]


def test_over_tls_the_cookie_is_secure_and_only_the_certificates_names_are_the_gates(
        desktop, accounts):
    key, cert = rig.self_signed(desktop.tmp, "gate", "rcomp gate test", ["gate.test"])
    gate = rig.Gate(desktop, cert=cert, key=key)
    c = gate.client()
    status, body, _ = c.login(ALICE)
    assert status == 200, (status, body)
    flags = [f.strip() for f in c.set_cookie.split(";")]
    assert "Secure" in flags and "HttpOnly" in flags and "SameSite=Strict" in flags, flags
    named = "gate.test:%d" % gate.port
    assert c.get("me", host=named)[0] == 200
    assert c.get("me", host="evil.example:%d" % gate.port)[0] == 400
    assert c.request("POST", "/api/login", {"user": ALICE, "password": USERS[ALICE]},
                     host="gate.test.evil.example")[0] == 400


def test_a_flood_of_idle_connections_from_one_address_does_not_keep_the_owner_out(gate):
    """As the browsers' door holds: 600 connections (more than the gate
    holds, 512) that never send a
    request, from the owner's own address; the gate keeps each address's
    share and closes the oldest that proved nothing, so the owner's login,
    list and attach all go through."""
    import webdoor
    flood = []
    try:
        for _ in range(600):
            try:
                flood.append(socket.create_connection(("127.0.0.1", gate.port), timeout=5))
            except OSError:
                break
        c = gate.client()
        assert c.login(ALICE)[0] == 200
        name = c.start("foot")
        wait_for("the session", lambda: c.sessions())
        host, port = gate.host.rsplit(":", 1)
        said = websocket(c, name, seconds=3, hello=True)
        assert b"HTTP/1.1 101" in said[:20], said[:200]
        assert webdoor.WELCOME.to_bytes(2, "little") in said, "no welcome"
    finally:
        for s in flood:
            s.close()


def test_a_locked_or_expired_account_is_refused_as_a_wrong_password_is(gate):
    """PAM's account stack runs: the right password of a locked account,
    or of one whose account has expired, opens nothing."""
    c = gate.client()
    try:
        subprocess.run(["usermod", "--lock", BOB], check=True)
        status, body, _ = c.login(BOB)
        assert status == 401 and body == {"error": "Wrong user name or password."}, body
        subprocess.run(["usermod", "--unlock", BOB], check=True)
        subprocess.run(["chage", "--expiredate", "1", BOB], check=True)
        status, body, _ = c.login(BOB)
        assert status == 401 and body == {"error": "Wrong user name or password."}, body
        assert "account" in gate.rig.read_log(gate.name).split("login failed: %s" % BOB)[-1]
    finally:
        subprocess.run(["usermod", "--unlock", BOB])
        subprocess.run(["chage", "--expiredate", "-1", BOB])
    assert c.login(BOB)[0] == 200


def test_the_menu_honours_no_display_hidden_try_exec_and_the_administrators_allow_list(
        desktop, accounts):
    """The user's own entries beside the system's: one NoDisplay, one
    Hidden (which also hides the system's entry of its id), one whose
    TryExec is not installed, one good; then an allow-list of two."""
    uid, _, home = rig.user_ids(ALICE)
    apps = os.path.join(home, ".local", "share", "applications")
    os.makedirs(apps, exist_ok=True)
    entries = {
        "rcomp-test-shown": "Name=Shown\nExec=foot\n",
        "rcomp-test-nodisplay": "Name=Not shown\nExec=foot\nNoDisplay=true\n",
        "rcomp-test-tryexec": "Name=Not installed\nExec=foot\nTryExec=/nonexistent/app\n",
        "footclient": "Name=Foot Client\nExec=footclient\nHidden=true\n",
    }
    try:
        for name, body in entries.items():
            with open(os.path.join(apps, name + ".desktop"), "w") as f:
                f.write("[Desktop Entry]\nType=Application\n" + body)
        gate = rig.Gate(desktop)
        c = gate.client()
        c.login(ALICE)
        ids = [a["id"] for a in c.get("apps")[1]["apps"]]
        assert "rcomp-test-shown" in ids and "foot" in ids, ids
        for hidden in ("rcomp-test-nodisplay", "rcomp-test-tryexec", "footclient"):
            assert hidden not in ids, (hidden, ids)
        assert c.post("start", {"app": "rcomp-test-nodisplay"})[0] == 404
        # An allow-list says what runs: the user's own entries count only
        # with own = yes.
        narrow = rig.Gate(desktop, name="narrow-gate",
                          apps={"allow": "foot, rcomp-test-shown.desktop"})
        n = narrow.client()
        n.login(ALICE)
        assert sorted(a["id"] for a in n.get("apps")[1]["apps"]) == ["foot"]
        assert n.post("start", {"app": "chromium"})[0] == 404
        assert n.post("start", {"app": "rcomp-test-shown"})[0] == 404
        trusting = rig.Gate(desktop, name="trusting-gate",
                            apps={"allow": "foot, rcomp-test-shown.desktop", "own": "yes"})
        t = trusting.client()
        t.login(ALICE)
        assert sorted(a["id"] for a in t.get("apps")[1]["apps"]) == ["foot", "rcomp-test-shown"]
    finally:
        for name in entries:
            os.remove(os.path.join(apps, name + ".desktop"))


def test_the_owner_stops_a_session_from_the_list(gate):
    c = gate.client()
    c.login(ALICE)
    name = c.start("foot")
    session = wait_for("the session", lambda: c.sessions())[0]
    status, body, _ = c.post("stop", {"name": name})
    assert status == 200, (status, body)
    assert c.sessions() == []

    def gone():
        try:
            with open("/proc/%d/stat" % session["pid"]) as f:
                return f.read().rsplit(")", 1)[1].split()[0] == "Z"
        except OSError:
            return True
    wait_for("the session's process to end", gone, timeout=30)
    assert "stop: %s from 127.0.0.1: session %s" % (ALICE, name) in \
        gate.rig.read_log(gate.name)


def stubborn_session(gate, app_id):
    """A session of alice's, from the gate, whose app ignores SIGTERM and
    whose helper in a session of its own ignores it too; their pids."""
    where, entry = rig.user_app(ALICE, app_id, STUBBORN_APP)
    c = gate.client()
    c.login(ALICE)
    name = c.start(app_id)
    return c, name, wait_for("the app and its helper", lambda: stubborn_pids(where),
                             timeout=45), entry


def test_the_gates_stop_ends_an_app_that_ignores_sigterm_and_its_setsid_helper_within_the_grace(
        gate):
    c, name, pids, entry = stubborn_session(gate, "rcomp-test-stubborn")
    try:
        t0 = time.monotonic()
        status, body, _ = c.post("stop", {"name": name})
        assert status == 200, (status, body)
        # rcomp-run's default grace, 3 s, and a second.
        done = all_gone_by(pids, t0 + 4)
        rig.log("the gate's stop: app and helper gone %.2f s after it" % (done - t0))
    finally:
        os.remove(entry)


def test_a_gate_session_whose_rcomp_run_and_reaper_are_killed_is_ended_by_its_keeper(gate):
    """rcomp-run and its reaper both killed with SIGKILL (as a crash of
    both would leave it): what the app started comes back to the session's
    keeper in the gate, which ends it within its grace (3 s) and a second,
    and says so in the gate's log."""
    c, name, pids, entry = stubborn_session(gate, "rcomp-test-orphans")
    try:
        session = wait_for("the session", lambda: c.sessions())[0]
        reaper = children(session["pid"], "rcomp-reaper")
        assert reaper, "no reaper below rcomp-run"
        t0 = time.monotonic()
        for pid in [session["pid"]] + reaper:
            os.kill(pid, signal.SIGKILL)
        done = all_gone_by(pids, t0 + 4)
        rig.log("keeper: app and helper gone %.2f s after the kill" % (done - t0))
        wait_for("the keeper's line", lambda: re.search(
            r"session of %s ended with \d+ processes left running: \d+ ended at SIGTERM, "
            r"[1-9]\d* killed" % ALICE, desktop_log(gate)), timeout=10)
    finally:
        os.remove(entry)


def test_a_gate_sessions_log_stays_within_its_cap_however_much_its_app_writes(gate):
    """An app of alice's writes 100 MB to its standard error and waits: its
    session's log (DIR/NAME.log, on the user's tmpfs) stays within
    rcomp-run's default cap of 8 MiB and says what it dropped."""
    where, entry = rig.user_app(ALICE, "rcomp-test-noisy", "#!/bin/sh\n"
                            "yes 'a line the app writes again and again' | "
                            "head -c 100000000 >&2\ntouch \"$1.done\"\nexec sleep 600\n")
    try:
        c = gate.client()
        c.login(ALICE)
        name = c.start("rcomp-test-noisy")
        wait_for("the app to have written it", lambda: os.path.exists(where + ".done"),
                 timeout=120)
        uid = pwd.getpwnam(ALICE).pw_uid
        logs = [os.path.join(d, name + ".log") for d in
                ("/run/user/%d/rcomp" % uid, "/tmp/rcomp-%d" % uid,
                 os.path.join(rig.user_ids(ALICE)[2], ".cache", "rcomp"))]
        path = wait_for("the session's log", lambda: next(
            (p for p in logs if os.path.exists(p)), None))

        def written():
            with open(path, "rb") as f:
                text = f.read()
            return text if b"were dropped here in all" in text and len(text) > 1 << 20 \
                else None
        text = wait_for("the log to say what it dropped", written)
        rig.log("the session's log: %d bytes after 100 MB" % len(text))
        assert len(text) <= 8 << 20
    finally:
        os.remove(entry)


def test_a_user_name_with_newlines_writes_no_line_of_its_own_in_the_gates_log(gate):
    """The audit's forged line: a name that would end the gate's line and
    write a login of its own. Every field a peer sent is escaped."""
    c = gate.client()
    forged = "\nrcomp-gate: login: audit_a\n"
    status, _, _ = c.login(forged, "not-the-password")
    assert status == 401
    log = wait_for("the failure's line", lambda: "login failed: \\x0arcomp-gate: login: "
                   "audit_a\\x0a from 127.0.0.1" in desktop_log(gate) and desktop_log(gate))
    assert not [line for line in log.split("\n") if line.startswith("rcomp-gate: login: audit_a")]


def raw_login(gate, user, password, cut=False, keep=None):
    """A login POST on a socket of its own: its answer's status line, or
    (cut) only part of the body sent before the socket closes; keep: a
    function called while the connection stays open after its answer."""
    body = urllib.parse.urlencode({"user": user, "password": password}).encode()
    head = ("POST /api/login HTTP/1.1\r\nHost: %s\r\nOrigin: http://%s\r\n"
            "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n\r\n"
            % (gate.host, gate.host, len(body) + (100 if cut else 0))).encode()
    s = socket.create_connection(("127.0.0.1", gate.port), timeout=10)
    try:
        s.sendall(head + body)
        if cut:
            time.sleep(0.5)
            return None
        answer = s.recv(4096).decode(errors="replace")
        if keep:
            keep()
        return answer.split("\r\n", 1)[0]
    finally:
        s.close()


@pytest.mark.parametrize("path", ["wrong password", "unknown user", "slowed",
                                  "too long a user name", "cut body", "keep-alive"])
def test_a_password_does_not_stay_in_the_network_process_however_its_request_ends(gate, path):
    """The network process's writable memory, read as root after the
    request: the password is nowhere in it (the form wiped, and lws's read
    buffer where the body came)."""
    secret = "pw-%s-%s" % (path.replace(" ", "-"), os.urandom(6).hex())
    net = gate.net_pid()
    if path == "slowed":
        # As a guesser tries: several at once.
        import concurrent.futures
        with concurrent.futures.ThreadPoolExecutor(6) as pool:
            list(pool.map(lambda _: gate.client().login("rcomp-slowed-name", "wrong"),
                          range(6)))
    user = {"wrong password": ALICE, "unknown user": "rcomp-nobody-here",
            "slowed": "rcomp-slowed-name", "too long a user name": "a" * 40 + "@example.com",
            "cut body": ALICE, "keep-alive": ALICE}[path]
    seen = {}
    status = raw_login(gate, user, secret, cut=path == "cut body",
                       keep=(lambda: seen.update(held=rig.memory_holds(net, secret.encode())))
                       if path == "keep-alive" else None)
    want = {"wrong password": "401", "unknown user": "401", "slowed": "429",
            "too long a user name": "400", "keep-alive": "401"}.get(path)
    if want:
        assert status and want in status, status
    time.sleep(0.3)
    assert not seen.get("held"), "the password is in the network process's memory"
    assert not rig.memory_holds(net, secret.encode()), \
        "the password is in the network process's memory"


def tls_handshake(port, ciphers=None, version=None):
    """Whether a TLS client offering only ciphers (OpenSSL's names, TLS 1.2)
    or only version gets through the handshake."""
    import ssl
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    if ciphers:
        context.maximum_version = ssl.TLSVersion.TLSv1_2
        context.set_ciphers(ciphers)
    if version:
        context.minimum_version = context.maximum_version = version
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            with context.wrap_socket(s) as t:
                return t.version()
    except (ssl.SSLError, OSError):
        return None


def test_over_tls_only_forward_secret_aead_suites_are_offered_and_every_answer_has_a_banks_headers(
        desktop, accounts):
    """An RSA certificate, as Debian's snakeoil one is: no static RSA and no
    CBC in TLS 1.2, nothing before it; the page and the API answer with a
    Content-Security-Policy that forbids framing, HSTS, nosniff and no
    Referer."""
    import ssl
    key, cert = (os.path.join(desktop.tmp, "rsa" + ext) for ext in (".key", ".crt"))
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                    "-out", cert, "-days", "2", "-subj", "/CN=gate.test",
                    "-addext", "subjectAltName=DNS:gate.test"], check=True, capture_output=True,
                   timeout=60)
    gate = rig.Gate(desktop, cert=cert, key=key)
    assert tls_handshake(gate.port, "ECDHE-RSA-AES128-GCM-SHA256") == "TLSv1.2"
    assert tls_handshake(gate.port, "ECDHE-RSA-CHACHA20-POLY1305") == "TLSv1.2"
    for refused in ("AES128-GCM-SHA256", "AES256-SHA", "ECDHE-RSA-AES128-SHA",
                    "ECDHE-RSA-AES256-SHA384"):
        assert tls_handshake(gate.port, refused) is None, refused
    assert tls_handshake(gate.port, version=ssl.TLSVersion.TLSv1_3) == "TLSv1.3"
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    for path in ("/", "/gate.html", "/index.html", "/api/me"):
        conn = http.client.HTTPSConnection(gate.host, timeout=10, context=context)
        conn.request("GET", path, headers={"Host": gate.host})
        r = conn.getresponse()
        r.read()
        headers = {k.lower(): v for k, v in r.getheaders()}
        conn.close()
        csp = headers.get("content-security-policy", "")
        assert "frame-ancestors 'none'" in csp and "script-src 'self'" in csp, (path, headers)
        assert "unsafe-inline" not in csp
        assert headers.get("strict-transport-security", "").startswith("max-age="), path
        assert headers.get("x-content-type-options") == "nosniff", path
        assert headers.get("referrer-policy") == "no-referrer", path
        assert headers.get("x-frame-options") == "DENY", path


def test_an_account_without_a_login_shell_is_refused_as_a_wrong_password_is(desktop, accounts):
    """An SFTP-only account (/usr/sbin/nologin) gets no command through the
    gate, as su and sshd give it none: the same answer as a wrong password,
    and the log says why; shells = any lets it in."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    user = "rcomp-nologin" + ("-" + worker if worker else "")
    rig.make_user(user, "nologin-Pass-3", shell="/usr/sbin/nologin")
    try:
        gate = rig.Gate(desktop)
        c = gate.client()
        status, body, took = c.login(user, "nologin-Pass-3")
        assert (status, body) == (401, {"error": "Wrong user name or password."})
        assert took >= 0.95
        assert "login failed: %s from 127.0.0.1: the account's shell (/usr/sbin/nologin) is " \
               "no login shell" % user in desktop_log(gate)
        lax = rig.Gate(desktop, name="lax-gate", shells="any")
        assert lax.client().login(user, "nologin-Pass-3")[0] == 200
    finally:
        rig.end_sessions(user)
        subprocess.run(["userdel", "--remove", user], capture_output=True)


def test_a_users_own_entry_does_not_stand_in_for_an_allowed_system_app(desktop, accounts):
    """alice's own foot.desktop runs something else; with [apps] allow =
    foot, starting foot runs the system's foot."""
    uid, _, home = rig.user_ids(ALICE)
    where, entry = rig.user_app(ALICE, "foot", "#!/bin/sh\ntouch \"$1.ran\"\nexec sleep 600\n")
    try:
        gate = rig.Gate(desktop, apps={"allow": "foot"})
        c = gate.client()
        c.login(ALICE)
        name = c.start("foot")
        session = wait_for("the session", lambda: [s for s in c.sessions()
                                                     if s["name"] == name])[0]
        wait_for("foot in the session", lambda: rig.descendant(session["pid"], "foot"),
                 timeout=45)
        assert not os.path.exists(where + ".ran"), "the user's own entry ran"
    finally:
        os.remove(entry)


def login_times(gate, user, n=10, source=None):
    """n logins of user, one after another: (status, seconds) of each."""
    out = []
    for _ in range(n):
        status, _, took = gate.client(source).login(user)
        out.append((status, round(took, 2)))
    return out


@pytest.mark.quiet  # times a user's requests under a flood: alone
def test_one_users_flood_of_viewers_to_made_up_sessions_keeps_no_other_user_out(gate):
    """150 WebSockets of alice's to made-up session names, each reopened as
    it closes (the audit's): each used to hold one of the monitor's 64
    slots for 5 s. Now a name that did not just start is tried once, and
    one login's requests in flight are bounded: bob logs in 10 of 10 times
    within 2 s meanwhile."""
    import threading
    alice = gate.client()
    assert alice.login(ALICE)[0] == 200
    stop = threading.Event()
    opened = [0]
    threads = [threading.Thread(target=rig.flood_made_up_viewers,
                                args=(alice, "127.0.1.%d" % i, stop, opened)) for i in (1, 2, 3)]
    for t in threads:
        t.start()
    try:
        time.sleep(1)
        got = login_times(gate, BOB)
    finally:
        stop.set()
        for t in threads:
            t.join()
    rig.log("%d WebSockets opened; bob's logins: %s" % (opened[0], got))
    assert opened[0] >= 150
    assert all(s == 200 and took < AT_ONCE_S for s, took in got), got


@pytest.mark.quiet  # times a user's requests under a flood: alone
def test_a_login_flood_from_many_addresses_keeps_out_neither_a_logged_in_user_nor_a_known_address(
        gate):
    """200 addresses, each trying a name of its own again and again: a
    logged-in user's requests and a login from an address that has logged
    in before get through, 10 of 10 within 2 s, as failed logins no
    longer hold the monitor's slots while their answers wait, and a
    quarter of the PAM conversations are kept for known addresses."""
    import threading
    home = "127.0.0.5"
    alice = gate.client(home)
    assert alice.login(ALICE)[0] == 200
    stop = threading.Event()
    tries = [0]

    def flood(i):
        c = gate.client("127.2.%d.%d" % (i // 200, 1 + i % 200))
        while not stop.is_set():
            try:
                c.login("rcomp-flood-%d-%s" % (i, os.urandom(3).hex()), "wrong")
                tries[0] += 1
            except OSError:
                time.sleep(0.05)
    threads = [threading.Thread(target=flood, args=(i,)) for i in range(200)]
    for t in threads:
        t.start()
    try:
        time.sleep(2)
        asked = []
        for _ in range(10):
            status, body, took = alice.get("sessions")
            asked.append((status, round(took, 2)) if status == 200 else (status, body))
        logins = login_times(gate, ALICE, source=home)
    finally:
        stop.set()
        for t in threads:
            t.join()
    rig.log("%d tries of the flood; alice's requests: %s; her logins: %s" % (
        tries[0], asked, logins))
    assert tries[0] >= 200
    assert all(s == 200 and took < AT_ONCE_S for s, took in asked), asked
    assert all(s == 200 and took < AT_ONCE_S for s, took in logins), logins


def test_twelve_starts_at_once_give_no_more_sessions_than_the_limit(gate):
    """sessions-per-user (4) is counted in the monitor as each start comes,
    not by the children that list the sessions."""
    import concurrent.futures
    c = gate.client()
    c.login(ALICE)
    with concurrent.futures.ThreadPoolExecutor(12) as pool:
        answers = list(pool.map(lambda _: c.post("start", {"app": "foot"})[0], range(12)))
    # The rest: over the limit (403), or more than one login may ask at
    # once (503).
    assert answers.count(200) == 4, answers
    assert set(answers) <= {200, 403, 503}, answers
    # However long a loaded machine takes to list them: four, no more.
    wait_for("the four sessions listed", lambda: len(c.sessions()) >= 4, timeout=30)
    time.sleep(1)
    assert len(c.sessions()) == 4


def test_logout_ends_the_open_viewers_of_that_login_within_a_second(gate):
    """A viewer tab open before "log out" in another tab: its WebSocket is
    told why and closed within a second, and keys from it reach nothing."""
    import threading
    c = gate.client()
    c.login(ALICE)
    name = c.start("foot")
    wait_for("the session", lambda: c.sessions())
    seen = {}

    def view():
        t0 = time.monotonic()
        seen["said"] = websocket(c, name, seconds=30, hello=True)
        seen["closed"] = time.monotonic()
        seen["opened"] = t0
    t = threading.Thread(target=view)
    t.start()
    wait_for("the viewer attached", lambda: "attach: %s" % ALICE in desktop_log(gate))
    time.sleep(1)
    assert c.post("logout", {})[0] == 200
    out = time.monotonic()
    t.join(timeout=10)
    assert "closed" in seen, "the viewer stayed open after the logout"
    assert seen["closed"] - out < 1.0, seen["closed"] - out
    assert b"you logged out of the gate" in seen["said"], seen["said"][-300:]


def test_viewers_per_user_holds_for_viewers_opened_at_once(desktop, accounts):
    """viewers-per-user 2, ten viewers at once: two get the session."""
    import concurrent.futures
    gate = rig.Gate(desktop, viewers_per_user=2)
    c = gate.client()
    c.login(ALICE)
    name = c.start("foot")
    wait_for("the session", lambda: c.sessions())
    time.sleep(2)
    with concurrent.futures.ThreadPoolExecutor(10) as pool:
        said = list(pool.map(lambda _: websocket(c, name, seconds=4, hello=True), range(10)))
    refused = [s for s in said if b"as many as one may have" in s]
    busy = [s for s in said if b"busy" in s]
    assert len(said) - len(refused) - len(busy) == 2, [s[-120:] for s in said]


def test_a_login_outlives_a_restart_of_the_gate_and_a_logout_does_not(gate):
    """Logins are kept in the state directory (root's alone, cookies as
    their SHA-256 only): after a restart the same cookie is the same login
    with the same page token; one that logged out before is not."""
    c = gate.client()
    assert c.login(ALICE)[0] == 200
    gone = gate.client()
    assert gone.login(BOB)[0] == 200
    old = gone.cookie
    assert gone.post("logout", {})[0] == 200
    state = os.path.join(gate.rig.tmp, gate.name + ".state")
    mode = os.stat(state).st_mode & 0o777
    with open(os.path.join(state, "logins")) as f:
        kept = f.read()
    assert mode == 0o700 and c.cookie not in kept and ALICE in kept, (oct(mode), kept)
    gate.stop()
    assert "logins are kept" in desktop_log(gate)
    # A stop is logged as a stop, not as the monitor's death.
    assert "the monitor is gone" not in desktop_log(gate) and \
        " error: " not in desktop_log(gate), desktop_log(gate)
    again = rig.Gate(gate.rig, name=gate.name, port=gate.port)
    status, body, _ = c.get("me")
    assert status == 200 and body["user"] == ALICE and body["csrf"] == c.csrf, (status, body)
    assert again.client().request("GET", "/api/me", cookie=old)[0] == 401
    assert "1 logins kept from before the gate started" in again.rig.read_log(again.name)


def test_behind_haproxy_the_gate_slows_the_guessers_address_not_everyones(desktop, accounts):
    """HAProxy with send-proxy-v2, the gate believing its PROXY header from
    [gate] proxies only: wrong passwords from one browser's address slow
    that address, not the users behind the same balancer, and the log names
    the browsers' addresses. An X-Forwarded-For header is not believed."""
    if not shutil.which("haproxy"):
        pytest.skip("no haproxy (tools/deps.sh installs Debian's)")
    gate = rig.Gate(desktop, proxies=rig.PROXY_SOURCE)
    lb = rig.Balancer(desktop, {"gate": gate})
    import concurrent.futures

    def guess(_):
        c = lb.client("127.0.4.1")
        return c.request("POST", "/api/login", {"user": ALICE, "password": "wrong"},
                         headers={"X-Forwarded-For": "127.0.4.2"})[0]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(guess, range(8)))
    assert lb.client("127.0.4.1").login(ALICE)[0] == 429
    got = [lb.client("127.0.4.2").login(BOB)[0] for _ in range(10)]
    assert got == [200] * 10, got
    log = desktop_log(gate)
    assert "login failed: %s from 127.0.4.1" % ALICE in log
    assert "login: %s from 127.0.4.2" % BOB in log
    assert "from %s" % rig.PROXY_SOURCE not in log


def test_a_connection_from_a_proxy_without_a_proxy_header_is_closed(desktop, accounts):
    """From an address in proxies, a connection must begin with HAProxy's
    header: one that sends HTTP at once is closed, and said so."""
    gate = rig.Gate(desktop, proxies="127.0.0.1")
    try:
        status, _, _ = gate.client().login(ALICE)
    except (OSError, http.client.HTTPException):
        status = None
    assert status is None, status
    wait_for("the line", lambda: "without a PROXY protocol v2 header" in desktop_log(gate))
    assert gate.client("127.0.0.8").login(ALICE)[0] == 200


def test_the_port_stays_the_gates_while_its_network_process_is_started_anew(desktop, accounts):
    """Socket-activated as the unit is: the network process killed (as a
    crash, or the monitor ending one that misbehaved) is started anew on
    the same port, which nobody else can take meanwhile; logins and the
    sessions' list are as they were."""
    if not shutil.which("systemd-socket-activate"):
        pytest.skip("no systemd-socket-activate")
    gate = rig.Gate(desktop, activated=True)
    assert "listening on the socket systemd passed" in desktop_log(gate)
    c = gate.client()
    assert c.login(ALICE)[0] == 200
    net = gate.net_pid()
    os.kill(net, signal.SIGKILL)
    taken = []
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", gate.port))
            taken.append("bound")
        except OSError:
            pass
        finally:
            s.close()
        time.sleep(0.05)
    assert not taken, "another could bind the gate's port while it restarted"
    wait_for("a new network process", lambda: "the network process is gone: starting a new "
             "one" in desktop_log(gate) and gate.net_pid() != net)
    status, body, _ = c.get("me")
    assert status == 200 and body["user"] == ALICE, (status, body)


def test_the_network_process_is_boxed_and_the_gate_keeps_nothing_of_its_launcher(desktop,
                                                                                    accounts):
    """A seccomp filter on the network process; the gate started with a
    descriptor and a variable of its launcher's keeps neither, and a
    session started through it sees none of the launcher's environment."""
    secret = os.open("/dev/null", os.O_RDONLY)
    os.set_inheritable(secret, True)
    env = dict(os.environ, RCOMP_LAUNCHERS_SECRET="leaked")
    try:
        gate = rig.Gate(desktop, env=env, pass_fds=(secret,))
    finally:
        os.close(secret)
    net = gate.net_pid()
    with open("/proc/%d/status" % net) as f:
        status = dict(line.split(":", 1) for line in f if ":" in line)
    assert status["Seccomp"].strip() == "2" and status["NoNewPrivs"].strip() == "1", status
    for pid in (gate.proc.pid, net):
        assert str(secret) not in os.listdir("/proc/%d/fd" % pid) or \
            os.readlink("/proc/%d/fd/%d" % (pid, secret)) != "/dev/null"
        with open("/proc/%d/environ" % pid, "rb") as f:
            assert b"RCOMP_LAUNCHERS_SECRET" not in f.read()
    c = gate.client()
    c.login(ALICE)
    name = c.start("foot")
    session = wait_for("the session", lambda: [s for s in c.sessions() if s["name"] == name])[0]
    with open("/proc/%d/environ" % session["pid"], "rb") as f:
        assert b"RCOMP_LAUNCHERS_SECRET" not in f.read()


def test_guessers_of_a_name_do_not_keep_its_user_out_of_her_own_machine(gate):
    """Three addresses retry alice's name every 0.3 s (the audit's): the
    name's penalty shuts out strangers' tries at it, but alice, from an
    address that logged in as her before, gets in 10 of 10 within 2 s."""
    import threading
    home = "127.0.0.6"
    assert gate.client(home).login(ALICE)[0] == 200
    stop = threading.Event()

    def guess(source):
        c = gate.client(source)
        while not stop.is_set():
            c.login(ALICE, "wrong")
            time.sleep(0.3)
    threads = [threading.Thread(target=guess, args=("127.0.7.%d" % i,)) for i in (1, 2, 3)]
    for t in threads:
        t.start()
    try:
        time.sleep(4)
        got = login_times(gate, ALICE, source=home)
        stranger = gate.client("127.0.7.9").login(ALICE)[0]
    finally:
        stop.set()
        for t in threads:
            t.join()
    rig.log("alice from her machine: %s; from a stranger's address: %s" % (got, stranger))
    assert all(s == 200 and took < 2 for s, took in got), got
    assert stranger == 429, "the name's penalty did not hold for a stranger's address"


def v6_login(gate, source, user, password):
    """A login from source, an address of a prefix routed to this machine
    for the test (bound with IPV6_FREEBIND): its status code."""
    body = urllib.parse.urlencode({"user": user, "password": password}).encode()
    host = "[::1]:%d" % gate.port
    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    s.settimeout(10)
    try:
        s.setsockopt(socket.IPPROTO_IPV6, 78, 1)  # IPV6_FREEBIND
        s.bind((source, 0))
        s.connect(("::1", gate.port))
        s.sendall(("POST /api/login HTTP/1.1\r\nHost: %s\r\nOrigin: http://%s\r\n"
                   "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n"
                   "Connection: close\r\n\r\n" % (host, host, len(body))).encode() + body)
        return int(s.recv(4096).split(b" ", 2)[1])
    finally:
        s.close()


def test_the_addresses_of_one_ipv6_slash_64_are_one_source_to_the_throttle(desktop, accounts):
    """Six tries at once from six addresses of one /64, then a seventh
    address of it: slowed, as one address would be; an address of another
    /64 is not. (The seventh goes as soon as the slowed sixth is answered,
    within the 3 s shut-out: the five failures' answers wait out PAM's
    delay, which on a loaded machine passed the shut-out.)"""
    import concurrent.futures
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    net = "fd00:72:%x" % (0x60 + int("".join(c for c in worker if c.isdigit()) or "0"))
    route = ["ip", "-6", "route", "add", "local", net + "::/48", "dev", "lo", "table", "local"]
    if subprocess.run(route, capture_output=True).returncode != 0:
        pytest.skip("cannot route %s::/48 to this machine" % net)
    try:
        gate = rig.Gate(desktop, address="[::1]")
        with concurrent.futures.ThreadPoolExecutor(6) as pool:
            tries = [pool.submit(v6_login, gate, "%s:0:%x::1" % (net, i + 1), ALICE, "wrong")
                     for i in range(6)]
            slowed = next(concurrent.futures.as_completed(tries)).result()
            seventh = v6_login(gate, net + ":0:ffff:1:2:3", ALICE, USERS[ALICE])
            first = [t.result() for t in tries]
        assert slowed == 429 and first.count(401) == 5, first
        assert seventh == 429
        assert v6_login(gate, net + ":1::9", BOB, USERS[BOB]) == 200
        assert "login slowed: %s from %s:0:ffff:1:2:3" % (ALICE, net) in desktop_log(gate)
    finally:
        route[3] = "del"
        subprocess.run(route, capture_output=True)


def test_a_logout_in_another_tab_covers_the_viewer_and_logging_in_again_comes_back_to_it(gate):
    """The viewer's login ends elsewhere (the same browser's cookie logs
    out): its windows are covered with why and "log in again", which,
    after the login, opens the same session again."""
    page = rig.Browser(gate.rig)
    try:
        page.open(gate.url)
        rig.log_in_page(page)
        page.wait("document.querySelector('li[data-app=\"foot\"] button')")
        page.eval("document.querySelector('li[data-app=\"foot\"] button').click()")
        page.window("foot")
        name = page.wait("new URLSearchParams(location.hash.slice(1)).get('gate')")
        # As another tab of the same browser would: the same cookie.
        page.eval("fetch('/api/me', {credentials: 'same-origin'}).then((r) => r.json())"
                  ".then((me) => fetch('/api/logout', {method: 'POST', credentials: "
                  "'same-origin', body: new URLSearchParams({csrf: me.csrf})}))")
        page.wait("document.querySelector('#rcomp-veil [data-way=\"login\"]')", timeout=10)
        said = page.eval("document.getElementById('rcomp-veil').textContent")
        assert "log in" in said and "runs on" in said, said
        # Where the link goes, opened as a click would (a click's
        # navigation would pull the page out from under the next wait).
        href = page.eval("document.querySelector('#rcomp-veil [data-way=\"login\"]')"
                         ".getAttribute('href')")
        assert href.startswith("/#back="), href
        page.open(gate.url.rstrip("/") + href)
        rig.log_in_page(page)
        page.window("foot")
        assert page.wait("new URLSearchParams(location.hash.slice(1)).get('gate')") == name
        assert page.eval("document.getElementById('rcomp-veil')") is None
    finally:
        page.close()
