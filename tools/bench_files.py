"""Files over a slow, distant link, beside scp: a file of N MB (100 by
default) through one relay (tests/relay.py) of 10 Mbit/s and 50 ms round
trip, three ways:

- scp from the local side to an sshd behind the relay;
- rcomp-view's upload: a local drag of the file (text/uri-list, as a file
  manager's) dropped on a remote window;
- rcomp-run --send inside the session, to rcomp-view's download folder;

each timed from its start to the file whole at the other end, with a
key's latency (a local key press until the remote app prints it) idle and
during the two rcomp transfers. Prints numbers; passes or fails nothing.
Targets (issue 51): within 10% of scp's time; keys p95 during a transfer
at most idle p95 + 60 ms.

    python3 tools/bench_files.py [--mb 100] [--rate-mbit 10] [--rtt-ms 50]
"""
import argparse
import hashlib
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
from bench_priority import focus_input, key_latency  # noqa: E402
from rig import (BTN_LEFT, DND_CLIENT, INPUT_CLIENT, RCOMP_RUN, RCOMP_VIEW, Rig,  # noqa: E402
                 VirtualPointer, free_port, start_sshd, wait_for)


def sha(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def p95(values):
    v = sorted(values)
    return v[min(len(v) - 1, int(len(v) * 0.95))] if v else float("nan")


def keys_while(rig, tag, kb, running):
    during = []
    while running():
        during.append(key_latency(rig, tag, kb, timeout=30))
        time.sleep(0.3)
    return during


def scp_time(rig, big, rate_mbit, rtt_ms):
    ssh = start_sshd(rig)
    port = int(ssh[ssh.index("-p") + 1])
    near = free_port()
    rig.start_relay("tcp:127.0.0.1:%d" % port, delay_ms=rtt_ms / 2, rate_mbit=rate_mbit,
                    name="relay-scp", listen="tcp:127.0.0.1:%d" % near)
    opts = [o if o != str(port) else str(near) for o in ssh]
    dest = os.path.join(rig.tmp, "scp-copy")
    t0 = time.monotonic()
    subprocess.run(["scp", "-q", "-P", str(near), *opts[2:], big, "root@127.0.0.1:" + dest],
                   check=True, timeout=3600, env=rig.local_env)
    seconds = time.monotonic() - t0
    assert sha(dest) == sha(big), "scp's copy differs"
    return seconds


def rcomp_times(rig, big, rate_mbit, rtt_ms):
    tag = "files"
    sock = os.path.join(rig.remote_rt, tag + ".sock")
    rig.start("rc-" + tag, [RCOMP_RUN, "--socket", sock, "--", "sh", "-c",
                            "%s files dnd-remote & exec %s" % (DND_CLIENT, INPUT_CLIENT)],
              rig.remote_env)
    wait_for("rcomp-run", lambda: os.path.exists(sock))
    relay = rig.start_relay(sock, delay_ms=rtt_ms / 2, rate_mbit=rate_mbit, buffer_kb=256,
                            name="relay-" + tag)
    env = dict(rig.local_env, DND_URIS="file://%s\r\n" % big)
    rig.start("dnd-local", [DND_CLIENT, "source", "dnd-local"], env)
    rig.start("rv-" + tag, [RCOMP_VIEW, "--stats", "--socket", relay.socket], rig.local_env)
    kb = focus_input(rig, tag)
    time.sleep(1)
    idle = [key_latency(rig, tag, kb) for _ in range(12)]

    # Up: a local drag of the file onto the remote window.
    pointer = VirtualPointer(rig)
    src = wait_for("the source window", lambda: rig.window(app_id="dnd-local"), timeout=30)
    dst = wait_for("the target window", lambda: rig.window(app_id="dnd-remote"), timeout=30)
    sx, sy = src["rect"]["x"] + 100, src["rect"]["y"] + 80
    tx, ty = dst["rect"]["x"] + 100, dst["rect"]["y"] + 80
    pointer.send("move %d %d" % (sx - 5, sy))
    time.sleep(0.3)
    pointer.send("move %d %d" % (sx, sy))
    wait_for("the pointer over the source", lambda: "pointer-enter" in rig.read_log("dnd-local"))
    pointer.send("press %d" % BTN_LEFT)
    wait_for("the drag", lambda: "source-drag-started" in rig.read_log("dnd-local"))
    for i in range(1, 21):
        pointer.send("move %d %d" % (sx + (tx - sx) * i // 20, sy + (ty - sy) * i // 20))
        time.sleep(0.02)
    wait_for("the drag over the remote app", lambda: "target-enter" in rig.read_log("rc-" + tag))
    t0 = time.monotonic()
    pointer.send("release %d" % BTN_LEFT)
    copy = os.path.join(rig.tmp, "Downloads", os.path.basename(big))
    rig.swaymsg("[app_id=rcomp-input-test] focus")
    time.sleep(0.5)
    dropped = lambda: "target-file " + copy in rig.read_log("rc-" + tag)  # noqa: E731
    up_keys = keys_while(rig, tag, kb, lambda: not dropped())
    wait_for("the drop", dropped, timeout=3600)
    up = time.monotonic() - t0
    assert sha(copy) == sha(big), "the upload differs"

    # Down: rcomp-run --send inside the session.
    names = [line.split()[0] for line in subprocess.run(
        [RCOMP_RUN, "--list"], env=rig.remote_env, capture_output=True, text=True).stdout
        .splitlines()[1:]]
    os.rename(copy, copy + ".up")
    t0 = time.monotonic()
    sender = subprocess.Popen([RCOMP_RUN, "--send", big], env=dict(
        rig.remote_env, RCOMP_SESSION=names[0]), stdout=subprocess.PIPE, text=True)
    down_keys = keys_while(rig, tag, kb, lambda: sender.poll() is None)
    sender.wait()
    down = time.monotonic() - t0
    got = os.path.join(rig.local_env["XDG_DOWNLOAD_DIR"], os.path.basename(big))
    assert sha(got) == sha(big), "the download differs"
    return idle, up, up_keys, down, down_keys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--rate-mbit", type=float, default=10)
    ap.add_argument("--rtt-ms", type=float, default=50)
    a = ap.parse_args()
    r = Rig(extra='for_window [app_id="dnd-local"] move position 0 0\n'
              'for_window [app_id="dnd-remote"] move position 600 0\n'
              'for_window [app_id="rcomp-input-test"] move position 0 420\n')
    try:
        big = os.path.join(r.tmp, "big.bin")
        with open(big, "wb") as f:
            for _ in range(a.mb):
                f.write(os.urandom(1 << 20))
        print("%d MB at %g Mbit/s, %g ms round trip (the link alone: %.1f s)" % (
            a.mb, a.rate_mbit, a.rtt_ms, a.mb * 8.388608 / a.rate_mbit), flush=True)
        scp = scp_time(r, big, a.rate_mbit, a.rtt_ms)
        print("  scp:                 %6.1f s" % scp, flush=True)
        idle, up, up_keys, down, down_keys = rcomp_times(r, big, a.rate_mbit, a.rtt_ms)
        print("  rcomp-view's upload: %6.1f s (%+.0f%% of scp's)" % (up, (up / scp - 1) * 100))
        print("  rcomp-run --send:    %6.1f s (%+.0f%% of scp's)" % (down, (down / scp - 1) * 100))
        for name, v in (("idle", idle), ("during the upload", up_keys),
                        ("during the download", down_keys)):
            print("  keys %-20s median %6.1f ms  p95 %6.1f ms  (%d)" % (
                name, statistics.median(v), p95(v), len(v)))
        print("  keys p95 during, over idle: upload %+.0f ms, download %+.0f ms (target: "
              "at most +60)" % (p95(up_keys) - p95(idle), p95(down_keys) - p95(idle)))
    finally:
        r.close()


if __name__ == "__main__":
    main()
