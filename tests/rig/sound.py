"""Sound: a local PulseAudio server, tones played and recorded, and what
is heard in them."""
import math
import os
import socket
import struct
import subprocess
import sys
import time

from .base import Failure, TONE, wait_for

class LocalSound:
    """The laptop's sound server: a pulseaudio daemon of the rig's own with
    null sinks for speakers (one per name) and a source that plays a known
    tone as the microphone. The viewers it is given to play into it."""

    def __init__(self, rig, sinks=("speaker",), mic_frequency=0, rewinds=True):
        self.rig = rig
        self.dir = os.path.join(rig.tmp, "local-sound")
        os.makedirs(self.dir, exist_ok=True)
        self.socket = os.path.join(self.dir, "native")
        script = os.path.join(self.dir, "default.pa")
        with open(script, "w") as f:
            f.write("load-module module-native-protocol-unix auth-anonymous=1 socket=%s\n"
                    % self.socket)
            # rewinds=False: a sink's monitor records exactly what it
            # played. A null sink rewinds to mix in a stream that starts
            # or catches up, and its monitor, which has passed the rewound
            # part on already, then misses it: a splice a speaker never
            # played (and a desktop's sinks rewind).
            for sink in sinks:
                f.write("load-module module-null-sink sink_name=%s rate=48000%s\n"
                        % (sink, "" if rewinds else " norewinds=1"))
            f.write("load-module module-null-sink sink_name=mic rate=48000\n"
                    "load-module module-always-sink\n"
                    "set-default-sink %s\nset-default-source mic.monitor\n" % sinks[0])
        env = dict(os.environ, PULSE_RUNTIME_PATH=os.path.join(self.dir, "rt"),
                   PULSE_STATE_PATH=os.path.join(self.dir, "state"), HOME=self.dir)
        self.daemon = rig.start("local-pulseaudio", [
            "pulseaudio", "-n", "--daemonize=no", "--exit-idle-time=-1",
            "--use-pid-file=no", "--disable-shm=yes", "--log-target=stderr", "--log-level=error",
            "-F", script],
            env)
        wait_for("the local sound server", lambda: self._ready())
        self.server = "unix:" + self.socket
        rig.local_env["PULSE_SERVER"] = self.server
        if mic_frequency:
            self.play(mic_frequency, "mic", name="local-mic")

    def _ready(self):
        self.rig.check_alive(self.daemon)
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect(self.socket)
            return True
        except OSError:
            return False
        finally:
            s.close()

    def env(self, sink=None):
        env = dict(self.rig.local_env, PULSE_SERVER=self.server)
        if sink:
            env["PULSE_SINK"] = sink
        return env

    def play(self, frequency, sink, name="local-tone"):
        """A tone into one of the local sinks, until the rig closes."""
        return self.rig.start(name, ["sh", "-c", tone_command(frequency, sink)],
                              self.env())

    def record(self, sink, seconds):
        """What a local sink played for the next seconds: s16le stereo 48 kHz."""
        return record_monitor(self.server, sink, seconds)

    def clicks(self, sink, frequency, seconds, limit):
        """Gaps and splices (sound_defects) in seconds of what sink played,
        and what each recording found; a second recording when the first
        has more than limit, since a loaded machine stalls on its own now
        and then, where a playout that cuts fails both."""
        tries = []
        for _ in range(2):
            gaps, splices = sound_defects(self.record(sink, seconds), frequency)
            tries.append("%d gaps and %d splices" % (gaps, splices))
            if gaps + splices <= limit:
                break
        return gaps + splices, "; then ".join(tries)


def heard(sound, sink, frequency, seconds=1.0):
    """The share of what sink played in the next seconds that is the tone."""
    return tone_power(sound.record(sink, seconds), frequency)


def wait_heard(sound, sink, frequency, timeout=15):
    last = [0.0]

    def attempt():
        last[0] = heard(sound, sink, frequency, 0.5)
        return last[0] > 0.5
    try:
        wait_for("the %g Hz tone on %s" % (frequency, sink), attempt, timeout=timeout)
    except Failure:
        raise Failure("the %g Hz tone never reached %s (share %.3f)"
                      % (frequency, sink, last[0]))


def tone_command(frequency, sink=None, latency_ms=20, burst_ms=0, seconds=0):
    """A shell command that plays a sine through pacat (to PULSE_SERVER),
    forever or for seconds; with burst_ms, only the first burst_ms of each
    second."""
    device = " --device=%s" % sink if sink else ""
    return ("%s %s %g --burst-ms %d --seconds %g | pacat --raw --format=s16le --rate=48000 "
            "--channels=2 --latency-msec=%d%s" % (sys.executable, TONE, frequency, burst_ms,
                                                  seconds, latency_ms, device))


def record_monitor(server, sink, seconds):
    """seconds of a sink's monitor on the given server, as s16le stereo bytes."""
    p = subprocess.Popen(["parec", "--raw", "--format=s16le", "--rate=48000",
                          "--channels=2", "--latency-msec=10", "--device=%s.monitor" % sink],
                         env=dict(os.environ, PULSE_SERVER=server), stdout=subprocess.PIPE)
    want = int(seconds * 48000) * 4
    data = b""
    deadline = time.monotonic() + seconds + 10
    try:
        while len(data) < want and time.monotonic() < deadline:
            chunk = p.stdout.read1(want - len(data))
            if not chunk:
                break
            data += chunk
    finally:
        p.terminate()
        p.wait()
    return data


def tone_power(pcm, frequency):
    """The share of the left channel's power at frequency, 0 to 1: about 1
    for a pure tone of that frequency, about 0 for silence or any other tone.
    Goertzel over 10 ms blocks, their powers summed: a phase jump (a dropped
    packet) costs one block, not the coherence of the whole recording, and
    a tone the viewer plays up to 2% fast or slow (its pace, keeping up with
    the link) is still that tone: 2% of 1000 Hz drifts a fifth of a cycle
    over a block."""
    samples = struct.unpack("<%dh" % (len(pcm) // 2), pcm)[::2]
    block = 480 if len(samples) >= 480 else len(samples)
    power = total = 0.0
    for start in range(0, len(samples) - block + 1, block) if block else ():
        p, t = _goertzel(samples[start:start + block], frequency)
        power += p
        total += t
    return power / total if total else 0.0


def sound_defects(pcm, frequency, skip_ms=200):
    """What a listener of a steady tone would hear as clicks, after its
    first skip_ms: (gaps, splices). A gap is a 5 ms window whose peak is
    under a tenth of the tone's; a splice is a sample no sine of that
    frequency can reach from the two before it (the second difference of
    a sine is -w^2 times the sine, so anything else is a cut or a jump).
    Each counts once per 5 ms window."""
    samples = struct.unpack("<%dh" % (len(pcm) // 2), pcm)[::2]
    window = 240
    start = 48 * skip_ms
    peaks = [max(abs(v) for v in samples[i:i + window])
             for i in range(start, len(samples) - window + 1, window)]
    if not peaks:
        return 0, 0
    amplitude = sorted(peaks)[len(peaks) // 2]
    if amplitude == 0:
        return len(peaks), 0
    gaps = sum(1 for p in peaks if p < amplitude / 10)
    c = 2 * math.cos(2 * math.pi * frequency / 48000)
    limit = amplitude / 4
    splices = 0
    last = -window
    for i in range(start + 1, len(samples) - 1):
        if abs(samples[i + 1] - c * samples[i] + samples[i - 1]) > limit and i - last >= window:
            splices += 1
            last = i
    return gaps, splices


def tone_ends(pcm, frequency):
    """A tone's length in a recording (ms) and its splices, as tone_span
    finds them, split into those at its ends (a cut start or end is a jump
    at its first or last sample) and those between."""
    length, splices = tone_span(pcm, frequency)
    ends = [t for t in splices if t < 1 or t > length - 1]
    return length, ends, [t for t in splices if t not in ends]


def tone_span(pcm, frequency):
    """Where a tone lies in a recording of it, and its clicks: (its length
    in ms, from its first to its last sample above a tenth of its peak;
    the ms into it of each splice, as sound_defects finds them, from its
    start to past its end)."""
    samples = struct.unpack("<%dh" % (len(pcm) // 2), pcm)[::2]
    peak = max((abs(v) for v in samples), default=0)
    loud = [i for i, v in enumerate(samples) if abs(v) > peak / 10]
    if not loud:
        return 0.0, []
    first, last = loud[0], loud[-1]
    c = 2 * math.cos(2 * math.pi * frequency / 48000)
    splices = []
    for i in range(max(first - 240, 1), min(last + 240, len(samples) - 1)):
        if abs(samples[i + 1] - c * samples[i] + samples[i - 1]) > peak / 4 and \
                (not splices or i - splices[-1] >= 240):
            splices.append(i)
    return (last - first) / 48.0, [round((i - first) / 48.0, 1) for i in splices]


def _goertzel(samples, frequency):
    """The power at frequency of samples and what a pure tone of all their
    power would give there (the frequency exact, not rounded to a bin)."""
    n = len(samples)
    total = sum(v * v for v in samples)
    w = 2 * math.pi * frequency / 48000
    coeff = 2 * math.cos(w)
    s1 = s2 = 0.0
    for v in samples:
        s1, s2 = v + coeff * s1 - s2, s1
    # A pure sine of amplitude A over n samples: total = n A^2/2, and the
    # Goertzel power is (n A / 2)^2, so their ratio is 1.
    return s1 * s1 + s2 * s2 - coeff * s1 * s2, total * n / 2
