"""rcomp over a real ssh connection: an OpenSSH server on loopback, made by
the test with its own host key, user key and configuration. Run one case:
python3 test_ssh.py CASE."""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rig import (Failure, RCOMP_RUN, RCOMP_VIEW, TEST_CLIENTS, free_port, log,  # noqa: E402
                 main, wait_for)

INPUT_CLIENT = os.path.join(TEST_CLIENTS, "input-client")


def start_sshd(rig):
    """Returns the ssh options that reach it."""
    if not shutil.which("sshd") and not os.path.exists("/usr/sbin/sshd"):
        raise Failure("sshd is not installed (apt-get install openssh-server)")
    d = os.path.join(rig.tmp, "ssh")
    os.makedirs(d, mode=0o700)
    os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege separation
    for name in ("host", "user"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f",
                        os.path.join(d, name)], check=True)
    shutil.copy(os.path.join(d, "user.pub"), os.path.join(d, "authorized_keys"))
    port = free_port()
    config = os.path.join(d, "sshd_config")
    with open(config, "w") as f:
        f.write("ListenAddress 127.0.0.1:%d\nHostKey %s\nAuthorizedKeysFile %s\n"
                "PermitRootLogin yes\nPasswordAuthentication no\nStrictModes no\n"
                "UsePAM no\nPidFile %s\nSubsystem sftp internal-sftp\n" % (
                    port, os.path.join(d, "host"), os.path.join(d, "authorized_keys"),
                    os.path.join(d, "sshd.pid")))
        # The remote side of a sanitizer build needs the same options.
        passed = ["%s=%s" % (k, os.environ[k]) for k in ("ASAN_OPTIONS", "LSAN_OPTIONS",
                                                         "UBSAN_OPTIONS") if k in os.environ]
        # This test's own session directory, like a real user's /tmp/rcomp-UID.
        passed.append("RCOMP_DIR=%s" % rig.session_dir)
        if passed:
            f.write("SetEnv %s\n" % " ".join(passed))
    rig.start("sshd", ["/usr/sbin/sshd", "-D", "-e", "-f", config], rig.local_env)

    def listening():
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            return False

    wait_for("sshd to listen", listening)
    return ["-p", str(port), "-i", os.path.join(d, "user"), "-o", "StrictHostKeyChecking=no",
            "-o", "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes", "-o", "LogLevel=ERROR"]


def case_ssh(rig):
    opts = start_sshd(rig)
    viewer = rig.start("rcomp-view", [RCOMP_VIEW, "--remote-bin", RCOMP_RUN, "ssh", *opts,
                                      "root@127.0.0.1", "--", INPUT_CLIENT, "it's \"quoted\""],
                       rig.local_env)
    title = "it's \"quoted\""
    w = wait_for("the remote window over ssh", lambda: rig.window(app_id=title), timeout=30)
    wait_for("the app's pixels over ssh",
             lambda: rig.pixel(150, 150, w) == (0x20, 0xc0, 0x20), interval=0.2)
    session_log = os.path.join(rig.session_dir, "0.log")
    if "XDG_RUNTIME_DIR is not set" not in rig.read_log(session_log):
        raise Failure("expected rcomp-run to make its own runtime dir under a bare ssh login")
    rig.swaymsg('[app_id="%s"] kill' % title.replace('"', '\\\\"'))
    if viewer.wait(timeout=30) != 0:
        raise Failure("rcomp-view ssh exited %s:\n%s" % (viewer.returncode,
                                                         rig.read_log("rcomp-view")))
    log("ssh: window with a quoted title over a real sshd, closed cleanly")


def case_ssh_reattach(rig):
    """The ssh connection dies: the viewer reattaches over a new one, to the
    same session, in the same local window. rcomp-run --list over ssh shows
    the session; a second viewer with ssh HOST --attach takes it over."""
    opts = start_sshd(rig)
    title = "ssh-reattach"
    viewer = rig.start("rcomp-view", [RCOMP_VIEW, "--remote-bin", RCOMP_RUN, "ssh", *opts,
                                      "root@127.0.0.1", "--", INPUT_CLIENT, title],
                       rig.local_env)
    w = wait_for("the remote window over ssh", lambda: rig.window(app_id=title), timeout=30)
    def shows(color):
        return rig.pixel(150, 150, w) == color

    wait_for("the app's pixels over ssh", lambda: shows((0x20, 0xc0, 0x20)), interval=0.2)
    ssh = subprocess.run(["pgrep", "-P", str(viewer.pid), "-x", "ssh"], capture_output=True,
                         text=True).stdout.split()
    if len(ssh) != 1:
        raise Failure("expected one ssh child of the viewer, found %s" % ssh)
    t0 = time.monotonic()
    os.kill(int(ssh[0]), signal.SIGKILL)
    wait_for("the viewer to notice", lambda: "connection to the server was lost"
             in rig.read_log("rcomp-view"))
    wait_for("the same window, whole again",
             lambda: "reattached to session" in rig.read_log("rcomp-view")
             and shows((0x20, 0xc0, 0x20))
             and not rig.window(app_id=title)["name"].startswith("[disconnected]"),
             interval=0.05, timeout=30)
    elapsed = time.monotonic() - t0
    if rig.window(app_id=title)["id"] != w["id"]:
        raise Failure("the local window was replaced")
    listing = subprocess.run(["ssh", *opts, "root@127.0.0.1", RCOMP_RUN, "--list"],
                             capture_output=True, text=True, timeout=30).stdout
    if not re.search(r"^0\s.*\sattached\s.*%s" % title, listing, re.M):
        raise Failure("rcomp-run --list over ssh:\n" + listing)
    second = rig.start("second-viewer", [RCOMP_VIEW, "--remote-bin", RCOMP_RUN, "ssh", *opts,
                                         "root@127.0.0.1", "--attach"], rig.local_env)
    if viewer.wait(timeout=30) != 0 or "took this session over" not in rig.read_log(
            "rcomp-view"):
        raise Failure("the first viewer: %s %s" % (viewer.returncode,
                                                   rig.read_log("rcomp-view")))
    wait_for("the window in the second viewer",
             lambda: [x for x in rig.windows() if x["app_id"] == title
                      and x["pid"] == second.pid], timeout=30)
    rig.swaymsg("[app_id=%s] kill" % title)
    if second.wait(timeout=30) != 0:
        raise Failure("the second viewer exited %s: %s" % (second.returncode,
                                                           rig.read_log("second-viewer")))
    log("ssh killed: same window whole again after %.2f s (ssh login included);\n"
        "rcomp-run --list over ssh:\n%s"
        "ssh HOST --attach took the session over; closing the window ended it cleanly"
        % (elapsed, listing))


if __name__ == "__main__":
    case = sys.argv[1] if len(sys.argv) > 1 else "ssh"
    main(globals()["case_" + case])
