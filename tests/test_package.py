"""The Debian packages, as an administrator meets them: built with
dpkg-buildpackage from a clean checkout, installed with apt into a clean
root (this machine's own, seen through an overlay that takes every change,
so the machine itself is left as it was), then rcomp-gate --check-config
on the installed files and systemd-analyze verify on the unit; and the
installed gate, started with its unit's own command lines (no systemd runs
here), logs a user in through the packaged PAM file and starts a session
with the installed rcomp-run."""
import glob
import os
import shutil
import subprocess
import types

import pytest

from rig import SANITIZED, TESTS, Client, accepts, free_port, wait_for

SOURCE = os.path.abspath(os.path.join(TESTS, ".."))

pytestmark = [
    # Once a run is enough: it builds its own, optimized.
    pytest.mark.skipif(SANITIZED, reason="the packages are built once, in the normal suite"),
    pytest.mark.skipif(os.geteuid() != 0, reason="installing into a root takes root"),
    pytest.mark.skipif(not shutil.which("dpkg-buildpackage") or not shutil.which("dh"),
                       reason="no dpkg-dev and debhelper (tools/deps.sh installs them)"),
    pytest.mark.skipif(not os.path.isdir(os.path.join(SOURCE, ".git")),
                       reason="the packages are built from a git checkout"),
    # A whole build on the cores the others would share.
    pytest.mark.quiet,
]


@pytest.fixture(scope="module")
def debs(tmp_path_factory):
    """rcomp and rcomp-gate's .deb files, built from a clone of this
    checkout's HEAD."""
    top = str(tmp_path_factory.mktemp("package"))
    tree = os.path.join(top, "rcomp")
    subprocess.run(["git", "clone", "--quiet", SOURCE, tree], check=True)
    r = subprocess.run(["dpkg-buildpackage", "-us", "-uc", "-b"], cwd=tree,
                       capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, (r.stdout + r.stderr)[-6000:]
    found = {os.path.basename(p).split("_")[0]: p for p in glob.glob(os.path.join(top, "*.deb"))}
    assert {"rcomp", "rcomp-gate"} <= set(found), found
    return found


@pytest.fixture
def clean_root(tmp_path):
    """A root to install into: this machine's files under an overlay whose
    changes land in a directory of the test's, in a mount namespace of its
    own. Yields a function that runs a shell command in it."""
    for d in ("upper", "work", "root"):
        os.makedirs(os.path.join(tmp_path, d))

    def run(command, timeout=600, background=False):
        """The command's result; or, in the background, its process,
        whose end ends every process it started (a PID namespace of its
        own, /proc its own)."""
        script = """set -e
mount -t overlay overlay -o lowerdir=/,upperdir={t}/upper,workdir={t}/work {t}/root
mount -t proc proc {t}/root/proc
for d in dev sys; do mount --rbind /$d {t}/root/$d; done
mount -t tmpfs tmpfs {t}/root/tmp
mount -t tmpfs tmpfs {t}/root/run
exec chroot {t}/root /bin/sh -c "$1"
""".format(t=tmp_path)
        argv = ["unshare", "--mount", "--propagation", "private", "--pid", "--fork",
                "--kill-child", "sh", "-c", script, "sh", command]
        if background:
            return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    text=True)
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    return run


def stage(debs, tmp_path):
    """The two packages in the root's /srv: their paths there."""
    where = os.path.join(tmp_path, "upper", "srv")
    os.makedirs(where)
    for name in ("rcomp", "rcomp-gate"):
        shutil.copy(debs[name], where)
    return " ".join("/srv/" + os.path.basename(debs[n]) for n in ("rcomp", "rcomp-gate"))


def test_the_packages_build_install_into_a_clean_root_and_the_gates_configuration_checks(
        debs, clean_root, tmp_path):
    names = stage(debs, tmp_path)
    # Whatever an earlier run or the suite left (the test accounts' system
    # user, the PAM file) is taken away first, in the root only.
    r = clean_root("userdel rcomp-gate 2>/dev/null || true; rm -f /etc/pam.d/rcomp; "
                   "apt-get install -y -q %s && "
                   "rcomp-gate --check-config && getent passwd rcomp-gate && "
                   "cat /etc/pam.d/rcomp && "
                   "systemd-analyze verify /lib/systemd/system/rcomp-gate.service "
                   "/lib/systemd/system/rcomp-gate.socket && "
                   "rcomp-run --version && man -w rcomp-gate && "
                   "ls /usr/share/rcomp/web/gate.html" % names)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-6000:]
    assert "/etc/rcomp/gate.ini is good" in out, out[-3000:]
    assert "@include common-auth" in out
    assert os.path.exists(os.path.join(tmp_path, "upper", "usr/lib/sysusers.d/rcomp-gate.conf"))
    # The machine itself was left as it was.
    assert not os.path.exists("/usr/sbin/rcomp-gate")


def test_the_installed_gate_started_as_its_unit_says_logs_a_user_in_and_starts_a_session(
        debs, clean_root, tmp_path):
    names = stage(debs, tmp_path)
    port = free_port()
    user, password = "rcomp-pkg-user", "Pkg-Gate-42"
    # apt, a user of the host, then what systemd would run: ExecStartPre
    # and ExecStart, read from the installed unit. The shipped gate.ini
    # listens on 0.0.0.0:8443; the test's gate on a free loopback port.
    unit = "/lib/systemd/system/rcomp-gate.service"
    gate = clean_root(
        "userdel rcomp-gate 2>/dev/null || true; rm -f /etc/pam.d/rcomp; "
        "apt-get install -y -q %s >/dev/null && "
        "useradd -m %s && echo '%s:%s' | chpasswd && "
        "sed -i 's/^listen = .*/listen = 127.0.0.1:%d/' /etc/rcomp/gate.ini && "
        "$(sed -n 's/^ExecStartPre=//p' %s) && exec $(sed -n 's/^ExecStart=//p' %s)"
        % (names, user, user, password, port, unit, unit), background=True)
    try:
        def serving():
            if gate.poll() is not None:
                raise AssertionError("the installed gate ended:\n" + gate.stdout.read()[-4000:])
            return accepts(port)
        wait_for("the installed gate to serve", serving, timeout=300)
        c = Client(types.SimpleNamespace(host="127.0.0.1:%d" % port, tls=True))
        status, body, _ = c.login(user, password)
        assert status == 200, (status, body)
        status, me, _ = c.get("me")
        assert status == 200 and me["user"] == user, (status, me)
        name = c.start("foot")
        session = wait_for("the session's window in the list",
                           lambda: [s for s in c.sessions() if s["titles"]], timeout=60)[0]
        assert session["name"] == name and session["titles"] == ["foot"], session
    finally:
        gate.kill()
        out = gate.communicate(timeout=60)[0]
    assert "/etc/rcomp/gate.ini is good" in out, out[-3000:]
    assert "login: %s from" % user in out, out[-3000:]
    assert "start: %s from" % user in out, out[-3000:]
