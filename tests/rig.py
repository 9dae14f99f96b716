"""The integration test rig: a headless sway as the local desktop, rcomp-run
and rcomp-view between it and real apps, screenshots with grim, and the
helpers the tests share. conftest.py makes it the tests' fixtures; the
benchmarks in tools/ use it directly.

sway refuses to run as root, so it runs as nobody (65534) with its own
XDG_RUNTIME_DIR; root clients (the viewer, grim, wtype, swaymsg) connect to it.
"""
import glob
import select
import json
import math
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import weakref
import time

BUILD = os.environ.get("RCOMP_BUILD", os.path.join(os.path.dirname(__file__), "..", "build"))
RCOMP_RUN = os.path.abspath(os.path.join(BUILD, "compositor", "rcomp-run"))
RCOMP_VIEW = os.path.abspath(os.path.join(BUILD, "viewer", "rcomp-view"))
TEST_CLIENTS = os.path.abspath(os.path.join(BUILD, "tests"))
RELAY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "relay.py")
NETSIM = os.path.join(TEST_CLIENTS, "netsim")
INPUT_CLIENT = os.path.join(TEST_CLIENTS, "input-client")
ANIM_CLIENT = os.path.join(TEST_CLIENTS, "anim-client")
CLIP_CLIENT = os.path.join(TEST_CLIENTS, "clip-client")
ABUSE_CLIENT = os.path.join(TEST_CLIENTS, "abuse-client")
MODEL_CLIENT = os.path.join(TEST_CLIENTS, "model-client")
SCROLL_CLIENT = os.path.join(TEST_CLIENTS, "scroll-client")
VPOINTER = os.path.join(TEST_CLIENTS, "vpointer")
VKEYBOARD = os.path.join(TEST_CLIENTS, "vkeyboard")
IM_CLIENT = os.path.join(TEST_CLIENTS, "im-client")
DND_CLIENT = os.path.join(TEST_CLIENTS, "dnd-client")
TONE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tone.py")


def _linked(library):
    """Whether rcomp-run links a library (the build's features, without asking
    meson)."""
    try:
        out = subprocess.run(["ldd", RCOMP_RUN], capture_output=True, text=True,
                             timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return library in out


# A build with video (libavcodec), and one with sanitizers, where memory
# figures mean nothing (ASan holds freed memory in quarantine).
VIDEO = _linked("libavcodec")
UDP = _linked("libngtcp2")  # built with the UDP transport
WEB = _linked("libwebsockets")  # built with the browser viewer
# The browser viewer's page as the build gathers it (web/meson.build).
WEB_DIR = os.path.abspath(os.path.join(BUILD, "web"))
SANITIZED = _linked("libasan") or os.environ.get("RCOMP_SANITIZED") == "1"

BTN_LEFT, BTN_RIGHT, BTN_MIDDLE = 272, 273, 274
KEY_2, KEY_MINUS, KEY_Y, KEY_A, KEY_Z, KEY_LEFTSHIFT = 3, 12, 21, 30, 44, 42
# Colours the test clients draw.
GREEN, BLUE, ORANGE = (0x20, 0xc0, 0x20), (0x20, 0x40, 0xe0), (0xe0, 0x80, 0x20)
GREY, RED, MAGENTA = (0x80, 0x80, 0x80), (0xe0, 0x20, 0x20), (0xe0, 0x20, 0xe0)
YELLOW, CYAN = (0xe0, 0xe0, 0x20), (0x20, 0xe0, 0xe0)

SWAY_CONFIG = """
output HEADLESS-1 resolution {width}x{height}{refresh} position 0 0 scale {scale}
default_border none
default_floating_border none
focus_follows_mouse no
xwayland disable
{extra}
"""


# Reports of a sanitizer build in any process the test started fail the test.
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")


class Failure(AssertionError):
    """A test's expectation not met; pytest reports it as a failure."""


def log(*args):
    print(*args, flush=True)


def pinned(cores, argv):
    """argv on the first cores cores this process may use (taskset)."""
    mine = sorted(os.sched_getaffinity(0))
    if len(mine) < cores:
        raise RuntimeError("%d cores asked for, %d here" % (cores, len(mine)))
    return ["taskset", "-c", ",".join(map(str, mine[:cores])), *argv]


def wait_for(what, predicate, timeout=15.0, interval=0.05):
    """Polls predicate until it returns a true value; raises Failure on timeout."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    raise Failure("timed out after %.0f s waiting for %s (last: %r)" % (timeout, what, last))


class Rig:
    """One headless sway, and the processes a test starts against it."""

    def __init__(self, width=1280, height=800, scale=1, floating=True, extra="", refresh=None):
        self.tmp = tempfile.mkdtemp(prefix="rcomp-test-")
        os.chmod(self.tmp, 0o755)
        self.procs = []
        self.cleanups = []  # called at close, after the processes end
        self.sway_rt = os.path.join(self.tmp, "sway-rt")
        os.mkdir(self.sway_rt, 0o700)
        os.chown(self.sway_rt, 65534, 65534)
        self.remote_rt = os.path.join(self.tmp, "remote-rt")
        os.mkdir(self.remote_rt, 0o700)
        # Sessions of this test only (rcomp-run --list, --attach).
        self.session_dir = os.path.join(self.tmp, "sessions")
        conf = os.path.join(self.tmp, "sway.conf")
        if floating:
            extra = 'for_window [title=".*"] floating enable\n' + extra
        with open(conf, "w") as f:
            f.write(SWAY_CONFIG.format(width=width, height=height, scale=scale, extra=extra,
                                       refresh="@%gHz" % refresh if refresh else ""))
        os.chmod(conf, 0o644)
        env = dict(os.environ)
        for key in ("WAYLAND_DISPLAY", "DISPLAY", "SWAYSOCK", "WAYLAND_SOCKET"):
            env.pop(key, None)
        env.update(XDG_RUNTIME_DIR=self.sway_rt, WLR_BACKENDS="headless",
                   WLR_RENDERER="pixman", WLR_LIBINPUT_NO_DEVICES="1", HOME=self.tmp)
        self.sway_log = open(os.path.join(self.tmp, "sway.log"), "w")
        self.sway = subprocess.Popen(
            ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
             "sway", "-c", conf], env=env, stdout=self.sway_log, stderr=subprocess.STDOUT,
            start_new_session=True)
        sockets = wait_for("sway's sockets", lambda: self._sockets(), timeout=20)
        self.wayland_display, self.swaysock = sockets
        self.local_env = dict(os.environ)
        for key in ("DISPLAY", "WAYLAND_SOCKET"):
            self.local_env.pop(key, None)
        self.local_env.update(XDG_RUNTIME_DIR=self.sway_rt, WAYLAND_DISPLAY=self.wayland_display,
                              SWAYSOCK=self.swaysock)
        self.remote_env = dict(os.environ)
        for key in ("DISPLAY", "WAYLAND_DISPLAY", "WAYLAND_SOCKET", "SWAYSOCK"):
            self.remote_env.pop(key, None)
        self.remote_env.update(XDG_RUNTIME_DIR=self.remote_rt, HOME=self.tmp,
                               RCOMP_DIR=self.session_dir)
        self.local_env["RCOMP_DIR"] = self.session_dir
        # Each side's settings are the test's own (settings_file writes
        # them): not the user's files or RCOMP_ variables. The system's
        # directories stay last, as the apps' own settings are there (foot's).
        for side, env in (("local", self.local_env), ("remote", self.remote_env)):
            for key in [k for k in env if k.startswith("RCOMP_") and k != "RCOMP_DIR"]:
                del env[key]
            env.update(XDG_CONFIG_HOME=os.path.join(self.tmp, side + "-config"),
                       XDG_CONFIG_DIRS=os.path.join(self.tmp, side + "-xdg") + ":" +
                       (os.environ.get("XDG_CONFIG_DIRS") or "/etc/xdg"))
        self.remote_env["RCOMP_WEB_DIR"] = WEB_DIR
        wait_for("sway's outputs", lambda: self.swaymsg("-t", "get_outputs", check=False))

    def settings_file(self, side, text, system=False):
        """Writes side's ("local" or "remote") rcomp.ini: the user's, or with
        system the one in $XDG_CONFIG_DIRS; returns its path."""
        env = self.local_env if side == "local" else self.remote_env
        base = env["XDG_CONFIG_DIRS"].split(":")[0] if system else env["XDG_CONFIG_HOME"]
        os.makedirs(os.path.join(base, "rcomp"), exist_ok=True)
        path = os.path.join(base, "rcomp", "rcomp.ini")
        with open(path, "w") as f:
            f.write(text)
        return path

    def _sockets(self):
        if self.sway.poll() is not None:
            raise Failure("sway exited with %s; log:\n%s" % (self.sway.returncode,
                                                              self.read_log("sway.log", 6000)))
        way = [p for p in glob.glob(os.path.join(self.sway_rt, "wayland-*"))
               if not p.endswith(".lock")]
        ipc = glob.glob(os.path.join(self.sway_rt, "sway-ipc.*.sock"))
        if way and ipc:
            return os.path.basename(way[0]), ipc[0]
        return None

    def read_log(self, name, tail=None):
        """The output of a process started as name (or a file in the rig's dir)."""
        if "." not in name:
            name += ".log"
        try:
            with open(os.path.join(self.tmp, name), errors="replace") as f:
                text = f.read()
        except OSError:
            return ""
        return text[-tail:] if tail else text

    def swaymsg(self, *args, check=True):
        r = subprocess.run(["swaymsg", *args], env=self.local_env, capture_output=True,
                           text=True, timeout=10)
        if check and r.returncode != 0:
            raise Failure("swaymsg %s failed: %s%s" % (" ".join(args), r.stdout, r.stderr))
        return r.stdout if r.returncode == 0 else None

    def tree(self):
        return json.loads(self.swaymsg("-t", "get_tree"))

    def windows(self):
        found = []

        def walk(node):
            if node.get("type") in ("con", "floating_con") and (node.get("app_id") is not None
                                                               or node.get("name")) \
                    and not node.get("nodes") and node.get("pid"):
                found.append(node)
            for child in node.get("nodes", []) + node.get("floating_nodes", []):
                walk(child)

        walk(self.tree())
        return found

    def window(self, app_id=None, title=None, pid=None):
        """The first local window of app_id, title and process pid (each if
        given): one viewer's, where several show the same app."""
        for w in self.windows():
            if app_id is not None and w.get("app_id") != app_id:
                continue
            if title is not None and w.get("name") != title:
                continue
            if pid is not None and w.get("pid") != pid:
                continue
            return w
        return None

    def start(self, name, argv, env, **kwargs):
        logf = open(os.path.join(self.tmp, name + ".log"), "w")
        p = subprocess.Popen(argv, env=env, stdout=kwargs.pop("stdout", logf),
                             stderr=logf, start_new_session=True, **kwargs)
        p.rcomp_name = name
        self.procs.append(p)
        return p

    def start_server(self, app, args=(), name="rcomp-run", host=None, cores=None):
        """rcomp-run with app; host: on a host of that name (its own UTS
        namespace), as if it ran elsewhere; cores: pinned to the first
        that many cores (taskset), app and all."""
        sock = os.path.join(self.remote_rt, name + ".sock")
        argv = [RCOMP_RUN, "--socket", sock, *args, "--", *app]
        if cores:
            argv = pinned(cores, argv)
        if host:
            argv = ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', host, *argv]
        p = self.start(name, argv, self.remote_env)
        wait_for("rcomp-run's socket", lambda: os.path.exists(sock) or self._dead(p))
        self.check_alive(p)
        p.socket = sock
        return p

    def start_viewer(self, server, args=(), name="rcomp-view", cores=None):
        argv = [RCOMP_VIEW, "--socket", server.socket, *args]
        return self.start(name, pinned(cores, argv) if cores else argv, self.local_env)

    def start_relay(self, connect, delay_ms=0, rate_mbit=0, buffer_kb=256, name="relay",
                    rate_at=(), jitter_ms=0, loss=0, seed=None, listen=None):
        """A simulated link (tests/relay.py) in front of a server socket;
        returns the relay process, with .socket to connect to. rate_at:
        (seconds after start, Mbit/s) changes of the rate; jitter_ms and
        loss (percent of chunks held up a retransmission) as relay.py says
        (SIGWINCH stalls the whole link for 100 ms);
        listen: where it listens (a unix socket of the rig's, or tcp:HOST:PORT
        with connect one too)."""
        listen = listen or os.path.join(self.tmp, name + ".sock")
        stats = os.path.join(self.tmp, name + ".json")
        argv = [sys.executable, RELAY, "--listen", listen, "--connect", connect,
                "--delay-ms", str(delay_ms), "--rate-mbit", str(rate_mbit),
                "--buffer-kb", str(buffer_kb), "--stats", stats]
        for at, mbit in rate_at:
            argv += ["--rate-at", "%g:%g" % (at, mbit)]
        if jitter_ms:
            argv += ["--jitter-ms", str(jitter_ms)]
        if loss:
            argv += ["--loss", str(loss)]
        if seed is not None:
            argv += ["--seed", str(seed)]
        p = self.start(name, argv, self.local_env)
        if listen.startswith("tcp:"):
            host, port = listen[4:].rsplit(":", 1)

            def listening():
                try:
                    socket.create_connection((host, int(port)), timeout=1).close()
                    return True
                except OSError:
                    return self._dead(p)
            wait_for("the relay's port", listening)
        else:
            wait_for("the relay's socket", lambda: os.path.exists(listen) or self._dead(p))
        self.check_alive(p)
        p.socket = listen
        p.stats = stats
        return p

    def _dead(self, p):
        return p.poll() is not None

    def check_alive(self, p):
        if p.poll() is not None:
            raise Failure("%s exited with %s; log:\n%s" % (p.rcomp_name, p.returncode,
                                                           self.read_log(p.rcomp_name, 6000)))

    def screenshot(self, rect, path=None):
        """Returns (width, height, rgb bytes) of a layout rectangle."""
        path = path or os.path.join(self.tmp, "shot.ppm")
        geometry = "%d,%d %dx%d" % (rect["x"], rect["y"], rect["width"], rect["height"])
        subprocess.run(["grim", "-t", "ppm", "-g", geometry, path], env=self.local_env,
                       check=True, capture_output=True, timeout=20)
        return read_ppm(path)

    def pixel(self, x, y, window=None):
        """The colour of one screen pixel: layout coordinates, or relative to
        a window's rectangle if one is given."""
        if window:
            x, y = x + window["rect"]["x"], y + window["rect"]["y"]
        _, _, p = self.screenshot({"x": x, "y": y, "width": 1, "height": 1},
                                  os.path.join(self.tmp, "pixel.ppm"))
        return tuple(p[0:3])

    def _ours(self, pid):
        """Whether pid is still a process of this test (its environment
        names the test's directory): a recorded pid may since have gone and
        been given to another test's process, which must not be killed."""
        try:
            with open("/proc/%d/environ" % pid, "rb") as f:
                return self.tmp.encode() in f.read()
        except OSError:
            return False

    def _end_persistent_sessions(self):
        """--persist sessions are daemons, out of reach of killpg: end each
        one the test's session directories record."""
        pids = []
        for info in glob.glob(os.path.join(self.tmp, "**", "*.info"), recursive=True):
            try:
                with open(info) as f:
                    pids += [int(line[4:]) for line in f if line.startswith("pid=")]
            except (OSError, ValueError):
                pass
        pids = [pid for pid in pids if self._ours(pid)]
        for pid in pids:
            try:
                os.kill(pid, signal.SIGTERM)
            except OSError:
                pass
        end = time.monotonic() + 5
        for pid in pids:
            while self._ours(pid) and time.monotonic() < end:
                time.sleep(0.05)
            if self._ours(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass

    def close(self):
        self._end_persistent_sessions()
        for p in reversed(self.procs):
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except OSError:
                    pass
        for p in reversed(self.procs):
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        for cleanup in reversed(self.cleanups):
            cleanup()
        try:
            os.killpg(self.sway.pid, signal.SIGTERM)
            self.sway.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            os.killpg(self.sway.pid, signal.SIGKILL)
            self.sway.wait()
        self.sway_log.close()
        self.sanitizer_reports = []
        for p in self.procs:
            text = self.read_log(p.rcomp_name)
            for marker in SANITIZER_MARKERS:
                at = text.find(marker)
                if at >= 0:
                    self.sanitizer_reports.append("%s:\n%s" % (p.rcomp_name,
                                                               text[at:at + 4000]))
                    break
        if os.environ.get("RCOMP_KEEP_TMP"):
            log("kept", self.tmp)
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)


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


def hide_programs(desktop, *names):
    """The remote side's PATH as it is, less the named programs: a host
    without them. A directory of links to every other program on PATH."""
    bin_dir = os.path.join(desktop.tmp, "host-bin")
    os.makedirs(bin_dir, exist_ok=True)
    for d in desktop.remote_env.get("PATH", os.defpath).split(":"):
        if not os.path.isdir(d):
            continue
        for entry in os.listdir(d):
            link = os.path.join(bin_dir, entry)
            if entry not in names and not os.path.lexists(link):
                os.symlink(os.path.join(d, entry), link)
    desktop.remote_env["PATH"] = bin_dir


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
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            return False

    wait_for("sshd to listen", listening)
    return ["-p", str(port), "-i", os.path.join(d, "user"), "-o", "StrictHostKeyChecking=no",
            "-o", "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes", "-o", "LogLevel=ERROR"]


def free_port():
    """A TCP port on loopback that nothing listens on now."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def message(msg_type, body=b""):
    """One wire message, as bytes."""
    return struct.pack("<HHI", msg_type, 0, len(body)) + body


RECORD_MAX = 16384
FRAME_TYPES = (0x0207, 0x0210)  # frame, copy_rect: the frames class
BULK_TYPES = (0x0303,)  # transfer_data: the bulk class


def records(data, cls=None):
    """Messages (as bytes, after each side's first message) in records of
    their class, or all of cls when given."""
    out = b""
    pos = 0
    while pos < len(data):
        if cls is None:
            msg_type, _, length = struct.unpack_from("<HHI", data, pos)
            c = 3 if msg_type in FRAME_TYPES else 4 if msg_type in BULK_TYPES else 0
            end = pos + 8 + length
        else:
            c, end = cls, len(data)
        while pos < end:
            n = min(RECORD_MAX, end - pos)
            out += struct.pack("<BBH", c, 0, n) + data[pos:pos + n]
            pos += n
    return out


_streams = weakref.WeakKeyDictionary()  # each socket's Stream, for read_messages


class Stream:
    """One side's bytes as the other reads them: the first message as it
    is, then records of each class, each class a stream of messages."""

    def __init__(self):
        self.raw = b""
        self.first = True
        self.classes = {}
        self.received = self.acked = 0  # record bytes, as link_ack counts them

    def feed(self, data):
        """(type, body) of the messages data completes."""
        self.raw += data
        found = []
        if self.first:
            if len(self.raw) < 8:
                return found
            msg_type, _, length = struct.unpack_from("<HHI", self.raw)
            if len(self.raw) < 8 + length:
                return found
            found.append((msg_type, self.raw[8:8 + length]))
            self.raw = self.raw[8 + length:]
            self.first = False
        while len(self.raw) >= 4:
            cls, _, n = struct.unpack_from("<BBH", self.raw)
            if len(self.raw) < 4 + n:
                break
            buf = self.classes.get(cls, b"") + self.raw[4:4 + n]
            self.raw = self.raw[4 + n:]
            self.received += 4 + n
            while len(buf) >= 8:
                msg_type, _, length = struct.unpack_from("<HHI", buf)
                if len(buf) < 8 + length:
                    break
                found.append((msg_type, buf[8:8 + length]))
                buf = buf[8 + length:]
            self.classes[cls] = buf
        return found


WIRE_MAJOR = 3


HELLO_SHARE, HELLO_VIEW_ONLY = 1 << 1, 1 << 2


def hello(token=b"", major=WIRE_MAJOR, minor=0, flags=0, caps=7):
    """A viewer's hello message, as bytes (caps 7: lz4, zstd and H.264)."""
    return message(0x0101, struct.pack("<IHHIII", 0x504D4352, major, minor, caps, flags,
                                       len(token)) + token)


def welcome(name=b"0", session_id=1, major=WIRE_MAJOR):
    """A server's welcome, as bytes."""
    return message(0x0201, struct.pack("<IHHIIQI", 0x504D4352, major, 0, 7, 1, session_id,
                                       len(name)) + name)


def goodbye(reason, text, status=0):
    return message(0x0202, struct.pack("<iI", status, reason) + text)


def fake_server(desktop, name="fake"):
    """A unix socket that plays rcomp-run by hand: (listener, path)."""
    path = os.path.join(desktop.tmp, name + ".sock")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen(1)
    return listener, path


def window_new(window, width, height, app_id=b"fake"):
    return message(0x0203, struct.pack("<IIiiHH", window, 0, width, height, 0, len(app_id)) +
                   app_id)


def frame(window, seq, width, height, rects, payload, raw_size, compression=0, flags=1,
          time_us=0):
    """A lossless frame; rects are (x, y, width, height); flags 1 is reset."""
    body = struct.pack("<IIiiBBHQII", window, seq, width, height, 0, compression, flags,
                       time_us, len(rects), raw_size)
    body += b"".join(struct.pack("<iiii", *r) for r in rects)
    return message(0x0207, body + payload)


def read_messages(sock, seconds, until=None, stream=None):
    """(type, body) of the messages sock receives within seconds, or until
    one of type until arrives, or until sock closes. Give the same stream to
    calls that read on from where the last stopped; link acks are left out."""
    stream = stream or _streams.setdefault(sock, Stream())
    found = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        sock.settimeout(max(0.01, end - time.monotonic()))
        try:
            chunk = sock.recv(1 << 20)
        except socket.timeout:
            break
        except OSError:
            break
        if not chunk:
            break
        found_now = stream.feed(chunk)
        if stream.received - stream.acked >= 1024:
            # Acknowledge, as a real peer does, or the other side's pacing
            # holds back all but its first few kilobytes.
            stream.acked = stream.received
            try:
                sock.sendall(records(message(0x0401, struct.pack("<Q", stream.received)), 5))
            except OSError:
                pass
        for msg_type, body in found_now:
            if msg_type == 0x0401:
                continue
            found.append((msg_type, body))
            if until is not None and msg_type == until:
                return found
    return found


def rss_kib(pid):
    """Resident memory of a process, in KiB."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise Failure("no VmRSS for %d" % pid)


def descendant(pid, comm):
    """The pid of the first process below pid whose name is comm, or None."""
    todo = [pid]
    while todo:
        p = todo.pop(0)
        try:
            with open("/proc/%d/comm" % p) as f:
                if p != pid and f.read().strip() == comm[:15]:
                    return p
            for task in os.listdir("/proc/%d/task" % p):
                with open("/proc/%d/task/%s/children" % (p, task)) as f:
                    todo += [int(c) for c in f.read().split()]
        except OSError:
            continue
    return None


def read_ppm(path):
    with open(path, "rb") as f:
        data = f.read()
    # P6\n<w> <h>\n<max>\n<data>; grim and rcomp-run both write it plainly.
    fields = []
    pos = 0
    while len(fields) < 4:
        while data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b"#":
            pos = data.index(b"\n", pos) + 1
            continue
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    pos += 1
    if fields[0] != b"P6" or fields[3] != b"255":
        raise Failure("%s is not an 8-bit binary PPM" % path)
    w, h = int(fields[1]), int(fields[2])
    pixels = data[pos:pos + w * h * 3]
    if len(pixels) != w * h * 3:
        raise Failure("%s is truncated" % path)
    return w, h, pixels


def count_differences(a, b):
    (wa, ha, pa), (wb, hb, pb) = a, b
    if (wa, ha) != (wb, hb):
        return None
    diff = 0
    for i in range(0, len(pa), 3):
        if pa[i:i + 3] != pb[i:i + 3]:
            diff += 1
    return diff


def wait_screen_matches(rig, app_id, path, timeout=20, shows=None, pid=None):
    """Waits until a screenshot of the local window (of viewer process pid,
    if given) equals the capture that rcomp-run dumped to path (and
    shows(screenshot) says it shows what the test waits for, if given);
    returns (screenshot, capture, window)."""
    state = {}

    def attempt():
        w = rig.window(app_id=app_id, pid=pid)
        if not w or not os.path.exists(path):
            return None
        shot = rig.screenshot(w["rect"])
        dump = read_ppm(path)
        diff = count_differences(shot, dump)
        state["last"] = "screen %dx%d, capture %dx%d, %s pixels differ" % (
            shot[0], shot[1], dump[0], dump[1], diff)
        if shows and diff == 0 and not shows(shot):
            state["last"] += ", but not yet what the test waits for"
            return None
        return (shot, dump, w) if diff == 0 else None

    try:
        return wait_for("the local window to match the capture", attempt, timeout, 0.3)
    except Failure as e:
        raise Failure("%s: %s" % (e, state.get("last")))


class VirtualPointer:
    """tests/clients/vpointer: a local pointer driven line by line. It must
    stay alive for the whole test, or the seat loses its pointer."""

    def __init__(self, rig, width=1280, height=800):
        self.proc = rig.start("vpointer", [VPOINTER, str(width), str(height)], rig.local_env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def send(self, *lines):
        for line in lines:
            self.proc.stdin.write(line + "\n")
        self.proc.stdin.write("sync\n")
        self.proc.stdin.flush()
        if self.proc.stdout.readline().strip() != "ok":
            raise Failure("the virtual pointer did not answer")


class VirtualKeyboard(VirtualPointer):
    """tests/clients/vkeyboard: a local keyboard with the layout we choose."""

    def __init__(self, rig):
        self.proc = rig.start("vkeyboard", [VKEYBOARD], rig.local_env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def take_seat(self, layout, heard):
        """Makes this keyboard, with layout, the seat's: its keymap, then a
        Shift tap, until heard() says the app heard a key. sway may take a
        new virtual keyboard's first keymap before the device is its own and
        drop what follows, now and then, when its machine is busy."""
        for _ in range(6):
            self.send("layout %s" % layout, "tap %d" % KEY_LEFTSHIFT)
            try:
                return wait_for("the first key of the virtual keyboard", heard, timeout=3)
            except Failure:
                continue
        raise Failure("the virtual keyboard's keys never reached the app")


class InputMethod(VirtualPointer):
    """tests/clients/im-client: the desktop's input method, driven line by
    line; what the desktop tells it is in the log "im"."""

    def __init__(self, rig):
        self.proc = rig.start("im", [IM_CLIENT], rig.local_env, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)


def step(rig, server, n):
    """Moves model-client on to step n of its script and waits until it has
    done it."""
    pid = wait_for("model-client's process", lambda: descendant(server.pid, "model-client"))
    os.kill(pid, signal.SIGUSR1)
    wait_for("model-client's step %d" % n,
             lambda: "step %d" % n in rig.read_log("rcomp-run").split("\n"))


def focused(rig, app_id):
    return (rig.window(app_id=app_id) or {}).get("focused")


def type_text(rig, text):
    """wtype's first key may be lost while its keymap settles: Shift first."""
    subprocess.run(["wtype", "-k", "Shift_L", "-s", "300", text], env=rig.local_env,
                   check=True, timeout=20)


WEB_DRIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "web", "drive.mjs")


class Browser:
    """Debian's chromium, headless, with one page, driven through
    puppeteer-core by tests/web/drive.mjs: each method is one of its
    commands (see its header). Its log is the rig's "chromium"."""

    def __init__(self, rig, env=None):
        modules = os.path.join(os.path.dirname(WEB_DRIVER), "node_modules", "puppeteer-core")
        if not os.path.isdir(modules):
            raise Failure("puppeteer-core is not installed: npm ci in tests/web")
        self.proc = rig.start("chromium", ["node", WEB_DRIVER], env or os.environ.copy(),
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def _ask(self, args, seconds, what):
        """One command and its answer, within seconds."""
        self.proc.stdin.write((json.dumps(args) + "\n").encode())
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], seconds)
        if not ready:
            raise Failure("%s: the browser did not answer in %d s" % (what, seconds))
        line = self.proc.stdout.readline()
        if not line:
            raise Failure("%s: the browser ended (see the chromium log)" % what)
        reply = json.loads(line)
        if "failure" in reply:
            raise Failure("%s: %s" % (what, reply["failure"]))
        return reply

    def command(self, op, **args):
        return self._ask(dict(args, op=op), 60, "browser " + op)

    def open(self, url, timeout=30):
        return self.command("open", url=url, timeout=timeout)["loadMs"]

    def wait(self, js, timeout=30):
        """The value of js in the page once it is truthy."""
        return self._ask({"op": "wait", "js": js, "timeout": timeout}, timeout + 20,
                         "waiting in the page for " + js)["value"]

    def eval(self, js):
        return self.command("eval", js=js)["value"]

    def stats(self):
        return self.eval("window.rcomp.stats()")

    def window(self, title, timeout=30):
        """The window's stats once it has presented a frame."""
        return self.wait("window.rcomp && window.rcomp.stats().find((w) => w.title === %s && "
                         "w.presented > 0)" % json.dumps(title), timeout)

    def canvas(self, title):
        import base64
        r = self.command("canvas", title=title)
        return r["width"], r["height"], base64.b64decode(r["rgba"])

    def still(self, title, quiet=0.5, timeout=30):
        """Waits until the window has presented nothing new for quiet s."""
        end = time.time() + timeout
        last = -1
        while time.time() < end:
            n = [w for w in self.stats() if w["title"] == title][0]["presented"]
            if n == last:
                return
            last = n
            time.sleep(quiet)
        raise Failure("the window %s never stood still" % title)

    def canvas_box(self, title):
        """The window's canvas in page coordinates: x, y, width, height."""
        return self.eval("(() => { const el = [...document.querySelectorAll('.rcomp-window')]"
                         ".find((e) => e.dataset.title === %s); const r = el.querySelector("
                         "'canvas').getBoundingClientRect(); return [r.left, r.top, r.width, "
                         "r.height]; })()" % json.dumps(title))

    def mouse(self, do, x=0, y=0, **kw):
        self.command("mouse", **{"do": do, "x": x, "y": y, **kw})

    def click(self, x, y, button="left"):
        self.mouse("move", x, y)
        self.mouse("down", button=button)
        self.mouse("up", button=button)

    def key(self, key, do="press"):
        self.command("key", **{"do": do, "key": key})

    def type(self, text):
        self.command("type", text=text)

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write(b'{"op": "quit"}\n')
                self.proc.stdin.flush()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
