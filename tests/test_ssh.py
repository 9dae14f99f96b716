"""rcomp over a real ssh connection: an OpenSSH server on loopback, made by
the test with its own host key, user key and configuration. Run one case:
python3 test_ssh.py CASE."""
import os
import shutil
import socket
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rig import (Failure, RCOMP_RUN, RCOMP_VIEW, TEST_CLIENTS, log, main,  # noqa: E402
                 read_ppm, wait_for)

INPUT_CLIENT = os.path.join(TEST_CLIENTS, "input-client")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


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
    path = os.path.join(rig.tmp, "shot.ppm")

    def green():
        rig.screenshot(w["rect"], path)
        width, height, p = read_ppm(path)
        i = (150 * width + 150) * 3
        return tuple(p[i:i + 3]) == (0x20, 0xc0, 0x20)

    wait_for("the app's pixels over ssh", green, interval=0.2)
    if "XDG_RUNTIME_DIR is not set" not in rig.read_log("rcomp-view"):
        raise Failure("expected rcomp-run to make its own runtime dir under a bare ssh login")
    rig.swaymsg('[app_id="%s"] kill' % title.replace('"', '\\\\"'))
    if viewer.wait(timeout=30) != 0:
        raise Failure("rcomp-view ssh exited %s:\n%s" % (viewer.returncode,
                                                         rig.read_log("rcomp-view")))
    log("ssh: window with a quoted title over a real sshd, closed cleanly")


if __name__ == "__main__":
    main(case_ssh)
