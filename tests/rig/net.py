"""Networks: a link through tests/netsim (rate, delay, loss), sshd, free
ports."""
import json
import os
import shutil
import signal
import socket
import subprocess

from .base import Failure, NETSIM, wait_for

class NetLink:
    """Two network namespaces, the remote machine's and the laptop's, joined
    by tests/netsim: a link with a rate, a queue, delay, jitter and random
    loss each way, for TCP and UDP alike. The remote end is REMOTE_ADDR, the
    local one LOCAL_ADDR; wrap(side, argv) runs a program on that side.
    set(...) changes the link while it runs; counts() is what netsim has
    forwarded, lost and dropped each way. corrupt, truncate and duplicate:
    percentages of UDP datagrams a hostile path alters or replays."""
    REMOTE_ADDR = "10.99.0.1"
    LOCAL_ADDR = "10.99.0.2"
    _serial = 0

    def __init__(self, rig, delay_ms=0, jitter_ms=0, loss=0, rate_mbit=0, buffer_kb=256,
                 seed=1, corrupt=0, truncate=0, duplicate=0):
        self.helpers = []
        self.proc = None
        self.addr = {"remote": self.REMOTE_ADDR, "local": self.LOCAL_ADDR}
        NetLink._serial += 1
        tag = "rc%d-%d" % (os.getpid(), NetLink._serial)
        self.ns = {"remote": tag + "r", "local": tag + "l"}
        for ns in self.ns.values():
            subprocess.run(["ip", "netns", "add", ns], check=True, capture_output=True)
        self.proc = subprocess.Popen(
            [NETSIM, "--ns-a", self.ns["remote"], "--ns-b", self.ns["local"],
             "--delay-ms", str(delay_ms), "--jitter-ms", str(jitter_ms), "--loss", str(loss),
             "--rate-mbit", str(rate_mbit), "--buffer-kb", str(buffer_kb), "--seed", str(seed),
             "--corrupt", str(corrupt), "--truncate", str(truncate),
             "--duplicate", str(duplicate)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if line.strip() != "ready":
            err = self.proc.stderr.read() if self.proc.poll() is not None else ""
            self.close()
            raise Failure("netsim did not start: %s%s" % (line, err))
        for side, addr in (("remote", self.REMOTE_ADDR), ("local", self.LOCAL_ADDR)):
            ns = self.ns[side]
            for cmd in (["addr", "add", addr + "/24", "dev", "rcsim"],
                        ["link", "set", "rcsim", "up"], ["link", "set", "lo", "up"]):
                subprocess.run(["ip", "-n", ns, *cmd], check=True, capture_output=True)
        rig.cleanups.append(self.close)

    def wrap(self, side, argv):
        return ["ip", "netns", "exec", self.ns[side], *argv]

    def run(self, side, argv, stdout=False):
        """A helper program on side, ended by the caller (or at close)."""
        p = subprocess.Popen(self.wrap(side, argv), text=True,
                             stdout=subprocess.PIPE if stdout else subprocess.DEVNULL)
        self.helpers.append(p)
        return p

    def check_output(self, side, argv, timeout=60):
        return subprocess.check_output(self.wrap(side, argv), text=True, timeout=timeout)

    def readdress(self, side, addr):
        """side's end moves to addr (a new network): the old address goes,
        then the new one comes (deleting a primary address takes the
        secondaries of its subnet with it)."""
        old = self.addr[side]
        ns = self.ns[side]
        subprocess.run(["ip", "-n", ns, "addr", "del", old + "/24", "dev", "rcsim"],
                       check=True, capture_output=True)
        subprocess.run(["ip", "-n", ns, "addr", "add", addr + "/24", "dev", "rcsim"],
                       check=True, capture_output=True)
        self.addr[side] = addr

    def set(self, **settings):
        """delay_ms=, jitter_ms=, loss=, rate_mbit=, buffer_kb=: from now on."""
        for key, value in settings.items():
            self.proc.stdin.write("set %s %g\n" % (key.replace("_", "-"), value))
        self.proc.stdin.flush()

    def counts(self):
        self.proc.send_signal(signal.SIGUSR1)
        return json.loads(self.proc.stdout.readline())

    def close(self):
        for p in self.helpers:
            if p.poll() is None:
                p.kill()
                p.wait()
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for ns in self.ns.values():
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def start_sshd(desktop, link=None, env=None):
    """An OpenSSH server with its own keys and configuration, on loopback or,
    with a NetLink, on the link's remote side; returns the ssh options that
    reach it (from the local side). env: more variables for its logins."""
    assert shutil.which("sshd") or os.path.exists("/usr/sbin/sshd"), \
        "sshd is not installed (apt-get install openssh-server)"
    address = link.REMOTE_ADDR if link else "127.0.0.1"
    wrap = (lambda argv: link.wrap("remote", argv)) if link else (lambda argv: argv)
    d = os.path.join(desktop.tmp, "ssh")
    os.makedirs(d, mode=0o700)
    os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege separation
    for name in ("host", "user"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f",
                        os.path.join(d, name)], check=True)
    shutil.copy(os.path.join(d, "user.pub"), os.path.join(d, "authorized_keys"))
    port = free_port()
    config = os.path.join(d, "sshd_config")
    with open(config, "w") as f:
        f.write("ListenAddress %s:%d\nHostKey %s\nAuthorizedKeysFile %s\n"
                "PermitRootLogin yes\nPasswordAuthentication no\nStrictModes no\n"
                "UsePAM no\nPidFile %s\nSubsystem sftp internal-sftp\n" % (
                    address, port, os.path.join(d, "host"), os.path.join(d, "authorized_keys"),
                    os.path.join(d, "sshd.pid")))
        # The remote side of a sanitizer build needs the same options, and
        # this test's own session directory, like a real user's.
        passed = ["%s=%s" % (k, os.environ[k]) for k in ("ASAN_OPTIONS", "LSAN_OPTIONS",
                                                         "UBSAN_OPTIONS") if k in os.environ]
        passed.append("RCOMP_DIR=%s" % desktop.session_dir)
        passed += ["%s=%s" % item for item in (env or {}).items()]
        f.write("SetEnv %s\n" % " ".join(passed))
    # The login runs root's own shell start-up files, and a machine's may
    # hang there (this kind of machine's ~/.bashrc runs `pyenv rehash`, which
    # waits a minute on a lock it left behind). The test host is a clean
    # account: sshd runs in its own mount namespace with those files empty.
    home = os.path.expanduser("~root")
    startup = [p for p in (os.path.join(home, f) for f in (
        ".bashrc", ".bash_profile", ".bash_login", ".profile")) if os.path.isfile(p)]
    desktop.start("sshd", wrap(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                                'for f; do mount --bind /dev/null "$f" || exit 1; done; '
                                'exec /usr/sbin/sshd -D -e -f "%s"' % config, "sh", *startup]),
                  desktop.local_env)

    def listening():
        if link:
            return link.check_output("remote", ["ss", "-Htln", "sport = :%d" % port]).strip()
        return accepts(port)

    wait_for("sshd to listen", listening)
    return ["-p", str(port), "-i", os.path.join(d, "user"), "-o", "StrictHostKeyChecking=no",
            "-o", "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes", "-o", "LogLevel=ERROR"]


def accepts(port, host="127.0.0.1"):
    """Whether something takes TCP connections on host:port now."""
    try:
        socket.create_connection((host, int(port)), timeout=1).close()
        return True
    except OSError:
        return False


def free_port():
    """A TCP port on loopback that nothing listens on now."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def self_signed(directory, name, cn, dns):
    """A P-256 key and a self-signed certificate for two days, with dns (a
    list of names) as its subject alternative names: (key path, cert path)."""
    key, cert = (os.path.join(directory, name + ext) for ext in (".key", ".crt"))
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "2", "-subj", "/CN=" + cn,
                    "-addext", "subjectAltName=" + ",".join("DNS:" + d for d in dns)],
                   check=True, capture_output=True, timeout=60)
    return key, cert
