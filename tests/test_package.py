"""The Debian packages, as an administrator meets them: built with
dpkg-buildpackage from a clean checkout, installed with apt into a clean
root (this machine's own, seen through an overlay that takes every change,
so the machine itself is left as it was), then rcomp-gate --check-config
on the installed files and systemd-analyze verify on the unit."""
import glob
import os
import shutil
import subprocess

import pytest

from rig import SANITIZED, TESTS

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

    def run(command, timeout=600):
        script = """set -e
mount -t overlay overlay -o lowerdir=/,upperdir={t}/upper,workdir={t}/work {t}/root
for d in proc dev sys; do mount --rbind /$d {t}/root/$d; done
mount -t tmpfs tmpfs {t}/root/tmp
mount -t tmpfs tmpfs {t}/root/run
exec chroot {t}/root /bin/sh -c "$1"
""".format(t=tmp_path)
        return subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                               script, "sh", command], capture_output=True, text=True,
                              timeout=timeout)
    return run


def test_the_packages_build_install_into_a_clean_root_and_the_gates_configuration_checks(
        debs, clean_root, tmp_path):
    stage = os.path.join(tmp_path, "upper", "srv")
    os.makedirs(stage)
    for name in ("rcomp", "rcomp-gate"):
        shutil.copy(debs[name], stage)
    names = " ".join("/srv/" + os.path.basename(debs[n]) for n in ("rcomp", "rcomp-gate"))
    # Whatever an earlier run or the suite left (the test accounts' system
    # user, the PAM file) is taken away first, in the root only.
    r = clean_root("userdel rcomp-gate 2>/dev/null || true; rm -f /etc/pam.d/rcomp; "
                   "apt-get install -y -q %s && "
                   "rcomp-gate --check-config && getent passwd rcomp-gate && "
                   "cat /etc/pam.d/rcomp && "
                   "systemd-analyze verify /lib/systemd/system/rcomp-gate.service && "
                   "rcomp-run --version && man -w rcomp-gate && "
                   "ls /usr/share/rcomp/web/gate.html" % names)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-6000:]
    assert "/etc/rcomp/gate.ini is good" in out, out[-3000:]
    assert "@include common-auth" in out
    assert os.path.exists(os.path.join(tmp_path, "upper", "usr/lib/sysusers.d/rcomp-gate.conf"))
    # The machine itself was left as it was.
    assert not os.path.exists("/usr/sbin/rcomp-gate")
