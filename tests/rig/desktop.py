"""The local desktop: a headless sway as the user nobody, and rcomp-run,
rcomp-view and apps started on it (Rig), with their logs and screenshots."""
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from .base import (Failure, RCOMP_RUN, RCOMP_VIEW, RELAY, SANITIZER_MARKERS, WEB_DIR, log, pinned,
                   wait_for)
from .net import accepts
from .procs import descendant
from .screen import read_ppm

SWAY_CONFIG = """
output HEADLESS-1 resolution {width}x{height}{refresh} position 0 0 scale {scale}
default_border none
default_floating_border none
focus_follows_mouse no
xwayland disable
{extra}
"""


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
        # DBUS_SESSION_BUS_ADDRESS: the person's desktop's bus is not the
        # rig's (LocalNotifications starts one).
        for key in ("DISPLAY", "WAYLAND_SOCKET", "DBUS_SESSION_BUS_ADDRESS"):
            self.local_env.pop(key, None)
        self.local_env.update(XDG_RUNTIME_DIR=self.sway_rt, WAYLAND_DISPLAY=self.wayland_display,
                              SWAYSOCK=self.swaysock)
        self.remote_env = dict(os.environ)
        for key in ("DISPLAY", "WAYLAND_DISPLAY", "WAYLAND_SOCKET", "SWAYSOCK",
                    "DBUS_SESSION_BUS_ADDRESS"):
            self.remote_env.pop(key, None)
        self.remote_env.update(XDG_RUNTIME_DIR=self.remote_rt, HOME=self.tmp,
                               RCOMP_DIR=self.session_dir)
        self.local_env["RCOMP_DIR"] = self.session_dir
        # What the session sends to the person lands here, not in the
        # user's own download folder.
        self.local_env["XDG_DOWNLOAD_DIR"] = os.path.join(self.tmp, "local-downloads")
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

    def start_server(self, app, args=(), name="rcomp-run", host=None, cores=None, env=None):
        """rcomp-run with app; host: on a host of that name (its own UTS
        namespace), as if it ran elsewhere; cores: pinned to the first
        that many cores (taskset), app and all; env: more of its
        environment."""
        sock = os.path.join(self.remote_rt, name + ".sock")
        argv = [RCOMP_RUN, "--socket", sock, *args, "--", *app]
        if cores:
            argv = pinned(cores, argv)
        if host:
            argv = ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', host, *argv]
        p = self.start(name, argv, dict(self.remote_env, **(env or {})))
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

            wait_for("the relay's port", lambda: accepts(port, host) or self._dead(p))
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
        audit = os.environ.get("RCOMP_ERROR_LINES")
        if audit:
            # An audit of what says "error" (tools/test.sh does not set
            # it): each line of rcomp's logs that does, with its test and
            # program, appended to that file.
            test = os.environ.get("PYTEST_CURRENT_TEST", "?").split(" ")[0]
            with open(audit, "a") as out:
                for p in self.procs:
                    for line in self.read_log(p.rcomp_name).splitlines():
                        if re.search(r"(?i)\berror\b|\(EE\)", line):
                            out.write("%s\t%s\t%s\n" % (test, p.rcomp_name, line[:300]))
        if os.environ.get("RCOMP_KEEP_TMP"):
            log("kept", self.tmp)
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)


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
