"""Nothing outlives its session: whatever the app started ends with the
session however the session ends (--stop, SIGTERM, rcomp-run killed with
SIGKILL), a setsid helper that ignores SIGTERM too; and a session's log
file stays within its cap however much its programs write."""
import os
import re
import signal
import subprocess
import time

import pytest

from rig import RCOMP_RUN, STUBBORN_APP, all_gone_by, log, stubborn_pids, wait_for

def stubborn(tmp, name="stubborn"):
    """The app's command line, and a function that waits for its two pids."""
    script = os.path.join(tmp, name + ".sh")
    with open(script, "w") as f:
        f.write(STUBBORN_APP)
    os.chmod(script, 0o755)
    where = os.path.join(tmp, name)
    return [script, where], lambda: wait_for("the app and its helper to run",
                                             lambda: stubborn_pids(where), timeout=30)


@pytest.mark.parametrize("how", ["stop", "SIGTERM", "SIGKILL"])
def test_an_app_that_ignores_sigterm_and_its_setsid_helper_end_within_the_grace_of_the_sessions_end(
        desktop, how):
    """--grace 1 (the default, 3, for SIGKILL: the reaper's own): the app
    gets SIGTERM and ignores it, its helper left the app's process group
    and session; both are gone within the grace and a second, and --stop
    says it had to kill them."""
    grace = 3 if how == "SIGKILL" else 1
    app, pids = stubborn(desktop.tmp)
    args = ["--name", "ending", "--audio", "off"] + ([] if how == "SIGKILL" else [
        "--grace", str(grace)])
    server = desktop.start_server(app, args)
    found = pids()
    # The reaper, between rcomp-run and the app, is found too.
    reaper = [int(p) for p in subprocess.run(["pgrep", "-P", str(server.pid)],
                                             capture_output=True, text=True).stdout.split()]
    t0 = time.monotonic()
    if how == "stop":
        stop = subprocess.run([RCOMP_RUN, "--stop", "ending"], env=desktop.remote_env,
                              capture_output=True, text=True, timeout=30)
        assert stop.returncode == 0, stop.stderr
        # The app and its helper, and perhaps a sleep of theirs begun
        # too late for SIGTERM to reach it first.
        said = re.match(r"session ending has ended; (\d+) of its processes did not end within "
                        r"1\.0 s of SIGTERM and were killed\n$", stop.stdout)
        assert said and int(said.group(1)) >= 2, stop.stdout
    else:
        os.kill(server.pid, getattr(signal, how))
    done = all_gone_by(found + reaper, t0 + grace + 1)
    log("%s: the app and its helper ended %.2f s after it (grace %d s)" % (
        how, done - t0, grace))
    assert done - t0 >= grace - 0.2, "ended before the grace: SIGTERM was not ignored?"
    server.wait(timeout=10)
    if how != "SIGKILL":
        said = re.search(r"(\d+) of the session's processes did not end within 1\.0 s of "
                         r"SIGTERM: killed", desktop.read_log("rcomp-run"))
        assert said and int(said.group(1)) >= 2


def test_an_app_that_ends_at_sigterm_does_not_wait_out_the_grace(desktop):
    """sleep ends at SIGTERM: the session ends at once, nothing is killed."""
    server = desktop.start_server(["sh", "-c", "sleep 600 & exec sleep 600"],
                                  ["--name", "polite", "--audio", "off", "--grace", "10"])
    wait_for("the two sleeps", lambda: len(subprocess.run(
        ["pgrep", "-f", "sleep 600"], capture_output=True, text=True).stdout.split()) >= 2)
    t0 = time.monotonic()
    stop = subprocess.run([RCOMP_RUN, "--stop", "polite"], env=desktop.remote_env,
                          capture_output=True, text=True, timeout=30)
    took = time.monotonic() - t0
    assert stop.stdout == "session polite has ended\n", stop.stdout
    assert took < 5, "--stop took %.1f s" % took
    assert server.wait(timeout=10) is not None
    assert "killed" not in desktop.read_log("rcomp-run")


def test_rcomp_run_list_and_stats_count_the_sessions_processes(desktop):
    """The reaper, the session's bus and printer (dbus-daemon, cupsd), the
    shell and its two sleeps (no sound server, no X): six processes, in
    --list and in --stats."""
    server = desktop.start_server(["sh", "-c", "sleep 600 & sleep 600 & wait"],
                                  ["--name", "counted", "--audio", "off", "--stats"])

    def listed():
        out = subprocess.run([RCOMP_RUN, "--list"], env=desktop.remote_env,
                             capture_output=True, text=True, timeout=10).stdout
        m = re.search(r"^counted\s+%d\s+\S+ \S+\s+detached\s+(\d+)\s" % server.pid, out, re.M)
        return m and int(m.group(1)) == 6 and out
    out = wait_for("--list to count 6 processes", listed)
    assert out.splitlines()[0].split() == ["SESSION", "PID", "STARTED", "VIEWERS", "PROCESSES",
                                           "APP"], out
    wait_for("--stats to count them", lambda: "stats session: 6 processes" in
             desktop.read_log("rcomp-run"))
    server.terminate()
    server.wait(timeout=10)


def test_a_program_that_writes_100_mb_to_stderr_leaves_a_log_within_its_cap_that_says_what_it_dropped(
        desktop):
    """rcomp-run's standard error is a file here (the rig's log of it), as
    the gate's and --persist's are: with --log-max 2, 100 MB of lines
    leave at most 2 MiB, holding how the session started (its first lines,
    the app's first), the newest (the app's last line) and one line that
    says how many bytes were dropped between them; nothing else is lost."""
    cap = 2 << 20
    flood = ("echo first line of the app >&2; "
             "yes 'a line the app writes again and again, as a game without a sound card "
             "does' | head -c 100000000 >&2; echo last line of the app >&2")
    server = desktop.start_server(["sh", "-c", flood],
                                  ["--name", "noisy", "--audio", "off", "--log-max", "2"])
    assert server.wait(timeout=120) == 0
    path = os.path.join(desktop.tmp, "rcomp-run.log")
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        text = f.read()
    log("the log: %d bytes after 100 MB" % size)
    assert size <= cap, size
    assert b"session noisy: listening on" in text[:4096]
    assert b"first line of the app" in text[:cap // 4]
    assert text.rstrip().endswith(b"app exited with status 0"), text[-300:]
    assert b"last line of the app" in text[-4096:]
    dropped = re.findall(rb"\[rcomp-run: (\d+) bytes of the session's output were dropped here "
                         rb"in all: its log keeps its first \d+ KiB and newest \d+ KiB "
                         rb"\(log-max\)\]", text)
    assert len(dropped) == 1, "one line says what was dropped"
    # What is there and what was dropped are what was written.
    lines = text.count(b"a line the app writes")
    line = len(b"a line the app writes again and again, as a game without a sound card does\n")
    written = 100000000
    kept = lines * line
    assert abs(written - kept - int(dropped[0])) < 2 * line, (written, kept, dropped)
