"""What sound costs and how late it is. Prints numbers; it passes or fails
nothing.

    python3 tools/bench_sound.py [--only latency,cost,sync,game,clicks,whole] [--rtts 0,50,100]

- latency: a remote app plays 100 ms bursts of a tone once a second; the
  session's sink (where the app's sound is played, remotely) and the
  laptop's sink are recorded at once, and each burst's onset is timed in
  both: the difference is what rcomp adds, at each round trip (through
  tests/relay.py). The app's own buffer (here pacat's 20 ms) comes before
  the session's sink and is the app's choice.
- cost: CPU of rcomp-run, the session's pulseaudio and rcomp-view while a
  tone plays, against the same session silent and playing with no viewer
  (what the app's playing costs the session's server without our
  capture), and the sound's bit rate.
- sync: an animating window and a tone in one session: the viewer's own
  measure of how far the sound is heard from its pictures (each stamped
  with the server's clock), and the jitter buffer's latency.
- game: weston-simple-egl at 100 ms round trip with and without a tone
  playing: the game's shown fps and rcomp-run's frame rate; and beside it
  the test input client, focused and clicked every 200 ms: the viewer's
  input-to-photon latency with and without the tone.
- clicks: a remote app plays a steady 440 Hz tone for 20 s; what the
  laptop's sink played is searched for gaps (5 ms nearly silent) and
  splices (a sample no sine makes: a cut or a jump), after the first
  200 ms, on a local link, at 50 ms round trip, and at 50 ms with 10 ms of
  jitter and 1% of the stream's chunks held up a retransmission; and on a
  host with PipeWire and no pulseaudio, locally and at 50 ms. The same is
  counted in the session's own sink, recorded in the session over the same
  seconds: a click there is the app's (a starved pacat), not rcomp's.
- whole: a remote app plays a 2 s tone (from a zero crossing to one) and
  exits, which ends the session: how long the laptop's sink played it, and
  the splices from its first sample to its last, on a local link, at 50 ms
  and on a PipeWire host, five times each.
RCOMP_BUILD picks the build to measure (default: build/).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
from rig import (BTN_LEFT, INPUT_CLIENT, RCOMP_RUN, RCOMP_VIEW, TEST_CLIENTS,  # noqa: E402
                 LocalSound, Rig, VirtualPointer, descendant, hide_programs, sound_defects,
                 tone_command, tone_span, wait_for)

ANIM = os.path.join(TEST_CLIENTS, "anim-client")
RATE = 48000


class TimedRecorder:
    """parec of a sink's monitor, each sample's arrival time known: a reader
    thread notes when each chunk arrived."""

    def __init__(self, server, sink):
        self.p = subprocess.Popen(["parec", "--raw", "--format=s16le", "--rate=48000",
                                   "--channels=2", "--latency-msec=5",
                                   "--device=%s.monitor" % sink],
                                  env=dict(os.environ, PULSE_SERVER=server),
                                  stdout=subprocess.PIPE)
        self.data = bytearray()
        self.chunks = []  # (end sample index, monotonic time it arrived)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        while True:
            chunk = self.p.stdout.read1(65536)
            if not chunk:
                return
            now = time.monotonic()
            self.data += chunk
            self.chunks.append((len(self.data) // 4, now))

    def stop(self):
        self.p.terminate()
        self.p.wait()
        self.thread.join(timeout=5)

    def onsets(self, threshold=3000, quiet_ms=300):
        """Monotonic times at which a sound starts after quiet_ms of quiet."""
        left = memoryview(bytes(self.data)).cast("h")[::2]
        found, quiet, i, n = [], 0, 0, len(left)
        block = RATE // 1000
        while i + block <= n:
            loud = any(abs(v) > threshold for v in left[i:i + block])
            if loud and quiet >= quiet_ms:
                j = i
                while abs(left[j]) <= threshold:
                    j += 1
                found.append(self.time_of(j))
            quiet = 0 if loud else quiet + 1
            i += block
        return found

    def time_of(self, sample):
        for end, at in self.chunks:
            if end > sample:
                return at - (end - sample) / RATE
        return None


def onset_delays(remote, local):
    """ms from each sound's onset in remote's recording to its onset in
    local's (TimedRecorders over the same seconds)."""
    delays = []
    theirs = local.onsets()
    for t in remote.onsets():
        later = [u - t for u in theirs if 0 <= u - t < 0.9]
        if later:
            delays.append(min(later) * 1000)
    return delays


def session(rig, tag, app, rtt_ms, viewer_args=(), **link):
    sock = os.path.join(rig.remote_rt, tag + ".sock")
    server = rig.start("rc-" + tag, [RCOMP_RUN, "--stats", "--socket", sock, "--", "sh", "-c",
                                     app], rig.remote_env)
    wait_for("rcomp-run", lambda: os.path.exists(sock))
    target = sock
    if rtt_ms or link:
        relay = rig.start_relay(sock, delay_ms=rtt_ms / 2, name="relay-" + tag, **link)
        target = relay.socket
    viewer = rig.start("rv-" + tag, [RCOMP_VIEW, "--stats", "--socket", target,
                                     *viewer_args], rig.local_env)
    return server, viewer


def session_sound(rig, name="0"):
    return "unix:" + os.path.join(rig.session_dir, name + ".sound", "native")


def latency(rig, rtt_ms, seconds=8):
    sound = LocalSound(rig)
    server, viewer = session(rig, "lat", tone_command(1000, burst_ms=100), rtt_ms)
    wait_for("the session's sound server",
             lambda: os.path.exists(os.path.join(rig.session_dir, "0.sound", "native")))
    time.sleep(2)
    remote = TimedRecorder(session_sound(rig), "rcomp")
    local = TimedRecorder(sound.server, "speaker")
    time.sleep(seconds)
    remote.stop()
    local.stop()
    server.terminate()
    return onset_delays(remote, local)


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_share(pids, seconds):
    before = {k: cpu_seconds(p) for k, p in pids.items()}
    time.sleep(seconds)
    return {k: (cpu_seconds(p) - before[k]) / seconds * 100 for k, p in pids.items()}


def cost(rig, seconds=10):
    LocalSound(rig)
    flag = os.path.join(rig.tmp, "play")
    # The app plays only while the flag file exists: the same session is
    # measured silent and playing.
    app = ("while :; do if [ -e %s ]; then %s; else sleep 0.2; fi; done"
           % (flag, tone_command(440).replace(" | ", " | timeout 3 ")))
    server, viewer = session(rig, "cost", app, 0)
    wait_for("the session's sound server", lambda: descendant(server.pid, "pulseaudio"))
    pids = {"rcomp-run": server.pid, "session pulseaudio": descendant(server.pid, "pulseaudio"),
            "rcomp-view": viewer.pid}
    time.sleep(2)
    silent = cpu_share(pids, seconds)
    open(flag, "w").close()
    time.sleep(2)
    playing = cpu_share(pids, seconds)
    rates = [float(m) for m in re.findall(r"stats sound \d+ packets, ([\d.]+) kbit/s",
                                          rig.read_log("rc-cost"))]
    # The app plays on with nobody attached: what the app's playing costs
    # the session without rcomp's capture.
    viewer.terminate()
    viewer.wait()
    del pids["rcomp-view"]
    time.sleep(2)
    detached = cpu_share(pids, seconds)
    detached["rcomp-view"] = float("nan")
    server.terminate()
    return silent, playing, detached, rates


def sync(rig, seconds=10):
    sound = LocalSound(rig)
    server, viewer = session(rig, "sync", "%s %d & %s" % (ANIM, seconds + 20, tone_command(440)),
                             0)
    time.sleep(2)
    # Listened to, as a sound card plays its sink: a null sink nobody
    # records runs on a long timer and pulls in bursts, which no device
    # does (the viewer then saw 50 underflows a second and 90 ms).
    mark = len(rig.read_log("rv-sync"))
    sound.record("speaker", seconds)
    text = rig.read_log("rv-sync")[mark:]
    offsets = [float(m) for m in re.findall(r"a/v ([-+\d]+) ms", text)]
    lat = [float(m) for m in re.findall(r"stats sound .*latency (\d+) ms", text)]
    server.terminate()
    return offsets[2:], lat[2:]


def game(rig, with_sound, seconds=10):
    LocalSound(rig)
    app = "%s & weston-simple-egl" % INPUT_CLIENT
    if with_sound:
        app = "%s & %s" % (tone_command(440), app)
    server, viewer = session(rig, "game", app, 100)
    egl = "org.freedesktop.weston.simple-egl"
    wait_for("the game", lambda: rig.window(app_id=egl), timeout=60)
    target = wait_for("the input client", lambda: rig.window(app_id="rcomp-input-test"),
                      timeout=60)
    rig.swaymsg("[app_id=rcomp-input-test] focus")
    pointer = VirtualPointer(rig)
    r = target["rect"]
    pointer.send("move %d %d" % (r["x"] + 20, r["y"] + 30))
    time.sleep(3)
    mark_v = len(rig.read_log("rv-game"))
    mark_s = len(rig.read_log("rc-game"))
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pointer.send("press %d" % BTN_LEFT, "release %d" % BTN_LEFT)
        time.sleep(0.2)
    time.sleep(1.5)
    text = rig.read_log("rv-game")[mark_v:]
    # The game's window is the one that animates; the input client shows
    # five clicks a second.
    shown = [int(fps) for fps in re.findall(r"presented (\d+) fps", text) if int(fps) > 20]
    photon = [float(m) for m in re.findall(r"input to photon ([\d.]+) ms", text)]
    app_fps = [int(m) for m in re.findall(r"\(%s\): app (\d+) fps" % re.escape(egl),
                                          rig.read_log("rc-game")[mark_s:])]
    del pointer
    server.terminate()
    return shown, app_fps, photon


def clicks(rig, rtt_ms, link, seconds=20, pipewire=False):
    if pipewire:
        hide_programs(rig, "pulseaudio")
    sound = LocalSound(rig)
    # Beside the app, the session's own sink recorded in the session: what
    # the app made of its tone, before rcomp took it (a loaded machine can
    # starve the app's pacat, a click that is the app's own).
    own = os.path.join(rig.tmp, "session-sink.raw")
    app = ("%s & sleep 2; exec parec --raw --format=s16le --rate=48000 --channels=2 "
           "--latency-msec=20 --device=rcomp.monitor > %s" % (tone_command(440), own))
    server, viewer = session(rig, "clicks", app, rtt_ms, **link)
    wait_for("the tone", lambda: "stats sound" in rig.read_log("rv-clicks"), timeout=30)
    wait_for("the session's recording", lambda: os.path.exists(own), timeout=30)
    time.sleep(1)
    mark = os.path.getsize(own)
    pcm = sound.record("speaker", seconds)
    gaps, splices = sound_defects(pcm, 440)
    with open(own, "rb") as f:
        f.seek(mark - mark % 4)
        own_gaps, own_splices = sound_defects(f.read(len(pcm)), 440)
    lines = re.findall(r"stats sound .*", rig.read_log("rv-clicks"))
    server.terminate()
    return gaps, splices, own_gaps, own_splices, lines[-1] if lines else ""


def whole(rig, rtt_ms, pipewire=False):
    """A 2 s tone, then the app (and the session) ends: (ms heard, splices)."""
    if pipewire:
        hide_programs(rig, "pulseaudio")
    sound = LocalSound(rig, rewinds=False)
    server, viewer = session(rig, "whole", "sleep 2; " + tone_command(440, seconds=2), rtt_ms)
    pcm = sound.record("speaker", 6.0)
    viewer.wait(timeout=20)
    return tone_span(pcm, 440)


def in_rig(scenario, *args):
    rig = Rig()
    try:
        return scenario(rig, *args)
    finally:
        rig.close()


def describe(values, unit):
    if not values:
        return "no samples"
    return "median %.1f %s (min %.1f, max %.1f, n %d)" % (
        statistics.median(values), unit, min(values), max(values), len(values))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="latency,cost,sync,game")
    ap.add_argument("--rtts", default="0,50,100")
    args = ap.parse_args()
    only = args.only.split(",")
    if "latency" in only:
        for rtt in [int(r) for r in args.rtts.split(",")]:
            delays = in_rig(latency, rtt)
            print("latency at %3d ms rtt: session sink to local sink %s (target %d ms)"
                  % (rtt, describe(delays, "ms"), 60 + rtt / 2), flush=True)
    if "cost" in only:
        silent, playing, detached, rates = in_rig(cost)
        for name in playing:
            print("cost: %-18s %.2f%% of a core playing, %.2f%% playing detached, "
                  "%.2f%% silent" % (name, playing[name], detached[name], silent[name]),
                  flush=True)
        print("cost: sound on the link %s" % describe(rates, "kbit/s"), flush=True)
    if "sync" in only:
        offsets, lat = in_rig(sync)
        print("sync: sound heard after its picture by %s" % describe(offsets, "ms"), flush=True)
        print("sync: viewer's playback latency %s" % describe(lat, "ms"), flush=True)
    if "clicks" in only:
        for rtt, link, name in ((0, {}, "local link"), (50, {}, "50 ms rtt"),
                                (50, {"jitter_ms": 10, "loss": 1, "seed": 1},
                                 "50 ms rtt, 10 ms jitter, 1% held up")):
            gaps, splices, own_gaps, own_splices, line = in_rig(clicks, rtt, link)
            print("clicks, %s: %d gaps, %d splices in 20 s (target 0, 0); in the app's own "
                  "sound (the session's sink): %d, %d; last: %s"
                  % (name, gaps, splices, own_gaps, own_splices, line), flush=True)
        for rtt in (0, 50):
            gaps, splices, own_gaps, own_splices, line = in_rig(clicks, rtt, {}, 20, True)
            print("clicks, PipeWire-only host, %d ms rtt: %d gaps, %d splices in 20 s (target "
                  "0, 0); in the app's own sound: %d, %d; last: %s"
                  % (rtt, gaps, splices, own_gaps, own_splices, line), flush=True)
    if "whole" in only:
        for name, rtt, pipewire in (("local link", 0, False), ("50 ms rtt", 50, False),
                                    ("PipeWire host", 0, True)):
            runs = [in_rig(whole, rtt, pipewire) for _ in range(5)]
            print("whole tone, %s: heard %s of 2000 ms; splices %s (target none)"
                  % (name, " ".join("%.1f" % length for length, _ in runs),
                     " ".join(str(splices) for _, splices in runs)), flush=True)
    if "game" in only:
        for with_sound in (False, True):
            shown, app_fps, photon = in_rig(game, with_sound)
            print("game at 100 ms rtt, sound %s: shown %s; app %s; clicks, input to photon %s"
                  % ("on " if with_sound else "off", describe(shown, "fps"),
                     describe(app_fps, "fps"), describe(photon, "ms")), flush=True)


if __name__ == "__main__":
    main()
