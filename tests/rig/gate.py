"""rcomp-gate in the tests: real accounts (useradd, chpasswd), the real PAM
stack (the service file the package ships, in /etc/pam.d/rcomp), the gate
itself, and a small HTTP client that keeps the login's cookie as a browser
does."""
import grp
import http.client
import json
import os
import pwd
import select
import shutil
import socket
import subprocess
import time
import urllib.parse

from .base import BUILD, TESTS, Failure, WEB_DIR, wait_for
from .net import accepts, free_port

RCOMP_GATE = os.path.abspath(os.path.join(BUILD, "gate", "rcomp-gate"))
PAM_FILE = os.path.join(TESTS, "..", "gate", "pam.d", "rcomp")
GATE_USER = "rcomp-gate"
# The test accounts and their passwords: made once, kept for the run; each
# of pytest-xdist's workers has its own, so that one test's end (which ends
# its users' processes) leaves another's sessions be.
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
ALICE = "rcomp-alice" + ("-" + _WORKER if _WORKER else "")
BOB = "rcomp-bob" + ("-" + _WORKER if _WORKER else "")
USERS = {ALICE: "alice-Wonder-7", BOB: "bob-Builder-9"}


def gate_possible():
    """Why the gate's tests cannot run here, or None."""
    if os.geteuid() != 0:
        return "the gate's tests make accounts and run the gate as root"
    if not os.path.exists(RCOMP_GATE):
        return "built without rcomp-gate (libpam0g-dev or libwebsockets missing)"
    return None


def make_user(user, password, shell="/bin/bash"):
    """An account (made if missing, with a home and shell) and its password."""
    try:
        pwd.getpwnam(user)
    except KeyError:
        subprocess.run(["useradd", "--create-home", "--shell", shell, user], check=True)
    subprocess.run(["chpasswd"], input="%s:%s\n" % (user, password), text=True, check=True)


def make_accounts():
    """The gate's system user, the test users with their passwords, and the
    PAM service file."""
    try:
        pwd.getpwnam(GATE_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent",
                        "--shell", "/usr/sbin/nologin", GATE_USER], check=True)
    for user, password in USERS.items():
        make_user(user, password)
    with open(PAM_FILE) as f:
        want = f.read()
    path = "/etc/pam.d/rcomp"
    if not os.path.exists(path) or open(path).read() != want:
        with open(path, "w") as f:
            f.write(want)


def user_ids(user):
    p = pwd.getpwnam(user)
    groups = {g.gr_gid for g in grp.getgrall() if user in g.gr_mem} | {p.pw_gid}
    return p.pw_uid, groups, p.pw_dir


def session_log(user, name):
    """The end of a session's log (DIR/NAME.log, in whichever of the
    user's session directories it is), or a line saying there is none."""
    p = pwd.getpwnam(user)
    for d in ("/run/user/%d/rcomp" % p.pw_uid, "/tmp/rcomp-%d" % p.pw_uid,
              os.path.join(p.pw_dir, ".cache", "rcomp")):
        try:
            with open(os.path.join(d, name + ".log"), errors="replace") as f:
                return f.read()[-4000:]
        except OSError:
            pass
    return "(no log of session %s)" % name


def end_sessions(user):
    """Every process of user ends (the sessions a test left)."""
    subprocess.run(["pkill", "-KILL", "-u", user], capture_output=True)
    uid = pwd.getpwnam(user).pw_uid
    shutil.rmtree("/tmp/rcomp-%d" % uid, ignore_errors=True)


def flood_made_up_viewers(client, source, stop, opened=None):
    """The audit's flood: client's login, from source, keeps 50 WebSockets
    open to made-up session names, each opened again as it closes, until
    stop (a threading.Event) is set. opened: a one-item list counting them."""
    mine = client.like(source)
    socks = []
    while not stop.is_set():
        while len(socks) < 50 and not stop.is_set():
            try:
                socks.append(mine.websocket("nosuch-" + os.urandom(4).hex()))
                if opened is not None:
                    opened[0] += 1
            except OSError:
                time.sleep(0.05)
        ready, _, _ = select.select(socks, [], [], 0.05)
        for s in ready:
            s.close()
            socks.remove(s)
    for s in socks:
        s.close()


class Gate:
    """rcomp-gate on a loopback port of its own, its log the rig's
    "rcomp-gate"; settings: more [gate] lines."""

    def __init__(self, rig, name="rcomp-gate", address="127.0.0.1", port=None, cluster=None,
                 apps=None, activated=False, env=None, pass_fds=(), program=None, state=True,
                 **settings):
        self.rig = rig
        self.name = name
        self.port = port or free_port()
        self.host = "%s:%d" % (address, self.port)
        self.config = os.path.join(rig.tmp, name + ".ini")
        # program: another build's gate (a bench's before and after), with
        # state = False where that one knows no state directory.
        lines = ["[gate]", "listen = " + self.host, "page = " + WEB_DIR,
                 "rcomp-run = " + os.path.abspath(os.path.join(BUILD, "compositor", "rcomp-run"))]
        if state:
            lines.append("state = " + os.path.join(rig.tmp, name + ".state"))
        lines += ["%s = %s" % (k.replace("_", "-"), v) for k, v in settings.items()]
        self.tls = "cert" in settings
        for section, keys in (("cluster", cluster), ("apps", apps)):
            if keys:
                lines += ["[%s]" % section] + ["%s = %s" % kv for kv in keys.items()]
        with open(self.config, "w") as f:
            f.write("\n".join(lines) + "\n")
        argv = [program or RCOMP_GATE, "--config", self.config]
        if activated:
            # As rcomp-gate.socket does it: systemd's helper holds the
            # port and passes it (LISTEN_FDS).
            argv = ["systemd-socket-activate", "-l", self.host] + argv
        self.proc = rig.start(name, argv, env or os.environ.copy(), pass_fds=pass_fds)
        if activated:
            # It starts the gate at the first connection, as systemd does.
            wait_for("the port", lambda: accepts(self.port) or self.proc.poll() is not None)
        wait_for("the gate to serve", lambda: "serving" in rig.read_log(name) or
                 self.proc.poll() is not None)
        if self.proc.poll() is not None:
            raise Failure("rcomp-gate ended: " + rig.read_log(name))

    @property
    def url(self):
        return "%s://%s/" % ("https" if self.tls else "http", self.host)

    def net_pid(self):
        """The network process: the gate's child that runs as its user."""
        out = subprocess.run(["pgrep", "-P", str(self.proc.pid), "-u", GATE_USER],
                             capture_output=True, text=True).stdout.split()
        if len(out) != 1:
            raise Failure("the network process is not one child of the gate's user: %r" % out)
        return int(out[0])

    def client(self, source=None):
        return Client(self, source)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


# The address HAProxy connects to the gates from: their [gate] proxies.
PROXY_SOURCE = "127.0.0.9"


class Balancer:
    """Debian's HAProxy in front of gates (name: Gate), as doc/gate.md
    gives its configuration: round robin for a browser without the cookie,
    then the cookie's host, each connection with a PROXY v2 header that
    names the browser (the gates need proxies = PROXY_SOURCE); its log the
    rig's "haproxy"."""

    def __init__(self, rig, gates, cookie="RCOMPHOST", proxy=True):
        self.rig = rig
        self.port = free_port()
        self.host = "127.0.0.1:%d" % self.port
        cfg = os.path.join(rig.tmp, "haproxy.cfg")
        # proxy=False: as the guide had it before the gates read the
        # PROXY header (a bench's before).
        servers = "".join("    server %s %s cookie %s %ssource %s check inter 300 "
                          "fall 1 rise 1\n" % (name, g.host, name,
                                                "send-proxy-v2 " if proxy else "", PROXY_SOURCE)
                          for name, g in gates.items())
        with open(cfg, "w") as f:
            f.write(HAPROXY_CONFIG % {"bind": self.host, "cookie": cookie, "servers": servers})
        self.proc = rig.start("haproxy", ["haproxy", "-db", "-f", cfg], os.environ.copy())

        wait_for("haproxy to listen", lambda: accepts(self.port) or self.proc.poll() is not None)
        if self.proc.poll() is not None:
            raise Failure("haproxy ended: " + rig.read_log("haproxy"))

    def client(self, source=None):
        return Client(self, source)


# What doc/gate.md gives an administrator, with the test's addresses.
HAPROXY_CONFIG = """global
    maxconn 4096
defaults
    mode http
    timeout connect 2s
    timeout client 1h
    timeout server 1h
    timeout tunnel 1h
    option redispatch
    retries 1
frontend door
    bind %(bind)s
    default_backend gates
backend gates
    balance roundrobin
    http-reuse never
    cookie %(cookie)s insert indirect nocache preserve httponly
%(servers)s"""


class Client:
    """One browser's worth of HTTP: its cookie and the login's CSRF token."""

    def __init__(self, gate, source=None):
        self.gate = gate
        self.source = source  # the address it connects from (one of 127/8)
        self.cookies = {}  # what the gate (or the balancer) set
        self.csrf = ""
        self.redirects = 0

    def like(self, source):
        """The same browser (its login) from another address."""
        other = Client(self.gate, source)
        other.cookies, other.csrf = dict(self.cookies), self.csrf
        return other

    @property
    def cookie(self):
        return self.cookies.get("rcomp-gate")

    def request(self, method, path, form=None, origin=True, cookie=None, host=None,
                headers=None):
        """(status, JSON or bytes, seconds taken), after a 307 as a browser
        follows it (the same request again, with the cookies it set). host:
        the Host the browser names (the gate's address by default)."""
        for _ in range(5):
            status, data, took, location = self._once(method, path, form, origin, cookie, host,
                                                      headers)
            if status != 307:
                return status, data, took
            self.redirects += 1
            path = location
        raise Failure("redirected round and round: last to %s" % path)

    def _once(self, method, path, form, origin, cookie, host, extra=None):
        if getattr(self.gate, "tls", False):
            import ssl
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            conn = http.client.HTTPSConnection(self.gate.host, timeout=30, context=context,
                                               source_address=self.source and (self.source, 0))
            scheme = "https://"
        else:
            conn = http.client.HTTPConnection(self.gate.host, timeout=30,
                                              source_address=self.source and (self.source, 0))
            scheme = "http://"
        headers = {"Host": host or self.gate.host, **(extra or {})}
        body = None
        if form is not None:
            body = urllib.parse.urlencode(form)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        if origin:
            headers["Origin"] = scheme + (host or self.gate.host)
        jar = dict(self.cookies)
        if cookie is not None:
            jar["rcomp-gate"] = cookie
        if jar:
            headers["Cookie"] = "; ".join("%s=%s" % kv for kv in jar.items() if kv[1])
        start = time.monotonic()
        conn.request(method, path, body=body, headers=headers)
        r = conn.getresponse()
        data = r.read()
        took = time.monotonic() - start
        for name, value in r.getheaders():
            if name.lower() == "set-cookie":
                k, v = value.split(";")[0].split("=", 1)
                self.cookies[k] = v or None
                if k == "rcomp-gate":
                    self.set_cookie = value
        conn.close()
        if r.getheader("content-type") == "application/json" and data:
            data = json.loads(data)
        return r.status, data, took, r.getheader("location")

    def websocket(self, session, timeout=10):
        """A socket with the viewer's WebSocket request to session sent, as
        the page makes it (the login's cookies, the gate's Origin)."""
        host, port = self.gate.host.rsplit(":", 1)
        import webdoor
        s = socket.create_connection((host, int(port)), timeout=timeout,
                                     source_address=self.source and (self.source, 0))
        jar = "; ".join("%s=%s" % kv for kv in self.cookies.items() if kv[1])
        s.sendall(webdoor.upgrade_request(int(port), host=self.gate.host, protocols="rcomp",
                                          path="/ws?session=" + session, cookie=jar))
        return s

    def login(self, user, password=None):
        status, body, took = self.request("POST", "/api/login",
                                          {"user": user, "password": password or USERS[user]})
        if status == 200:
            self.csrf = body["csrf"]
        return status, body, took

    def get(self, what, **kw):
        return self.request("GET", "/api/" + what, **kw)

    def post(self, what, form, **kw):
        return self.request("POST", "/api/" + what, dict(form, csrf=self.csrf), **kw)

    def start(self, app):
        status, body, _ = self.post("start", {"app": app})
        if status != 200:
            raise Failure("starting %s: %s %r" % (app, status, body))
        return body["name"]

    def sessions(self):
        status, body, _ = self.get("sessions")
        if status != 200:
            raise Failure("listing sessions: %s %r" % (status, body))
        return body


def log_in_page(page, user=ALICE):
    """Logs user in on the gate's page open in page (a rig.Browser)."""
    page.wait("!document.getElementById('door').hidden")
    page.eval("document.getElementById('user').value = %r; "
              "document.getElementById('password').value = %r; "
              "document.getElementById('enter').click()" % (user, USERS[user]))


def user_app(user, app_id, script):
    """A menu entry of user's own that runs script (a file in their home):
    the path its app writes its pids and files beside."""
    uid, groups, home = user_ids(user)
    gid = pwd.getpwnam(user).pw_gid
    path = os.path.join(home, app_id + ".sh")
    with open(path, "w") as f:
        f.write(script)
    os.chmod(path, 0o755)
    os.chown(path, uid, gid)
    apps = os.path.join(home, ".local", "share", "applications")
    os.makedirs(apps, exist_ok=True)
    for d in (os.path.join(home, ".local"), os.path.join(home, ".local", "share"), apps):
        os.chown(d, uid, gid)
    entry = os.path.join(apps, app_id + ".desktop")
    with open(entry, "w") as f:
        f.write("[Desktop Entry]\nType=Application\nName=%s\nExec=%s %s\n" % (
            app_id, path, os.path.join(home, app_id)))
    return os.path.join(home, app_id), entry
