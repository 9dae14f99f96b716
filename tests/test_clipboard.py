"""Clipboard and primary selection both ways, with wl-copy and wl-paste on
each side: every offered MIME type is kept, data moves only when pasted,
large pastes arrive intact and never stop the windows."""
import hashlib
import os
import re
import socket
import struct
import subprocess
import time

import pytest

from rig import (INPUT_CLIENT, KEY_A, KEY_LEFTSHIFT, VirtualKeyboard, focused, hello, message,
                 read_messages, wait_for)


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class Sides:
    """A session with the viewer focused (selections need an input serial),
    and wl-copy/wl-paste on either side."""

    def __init__(self, desktop):
        self.desktop = desktop
        self.server = desktop.start_server([INPUT_CLIENT])
        desktop.start_viewer(self.server)
        wait_for("the window to have focus", lambda: focused(desktop, "rcomp-input-test"))
        self.kb = VirtualKeyboard(desktop)
        self.kb.send("tap %d" % KEY_LEFTSHIFT)
        wait_for("keyboard focus in the remote app",
                 lambda: "key-enter main" in desktop.read_log("rcomp-run"))
        self.remote = dict(desktop.remote_env, WAYLAND_DISPLAY="wayland-0")
        self.local = desktop.local_env

    def run(self, env, *argv, **kw):
        if argv[0] == "wl-copy":
            # It forks to serve the selection: its output never closes.
            kw.setdefault("stdout", subprocess.DEVNULL)
            kw["stderr"] = subprocess.DEVNULL
        elif "stdout" not in kw:
            kw["capture_output"] = True
        return subprocess.run(list(argv), env=env, timeout=60, **kw)

    def types(self, env, primary=False):
        r = self.run(env, "wl-paste", "--list-types", *(["--primary"] if primary else []))
        return sorted(r.stdout.decode().split()) if r.returncode == 0 else []

    def moved(self):
        return re.findall(r"clipboard: moved (\d+) bytes to the viewer",
                          self.desktop.read_log("rcomp-run"))

    def big_file(self):
        path = os.path.join(self.desktop.tmp, "big")
        with open(path, "wb") as f:
            f.write(os.urandom(10 << 20))
        return path


@pytest.fixture
def sides(desktop):
    return Sides(desktop)


def test_a_remote_copy_pastes_locally_with_every_type_it_offered(sides):
    sides.run(sides.remote, "wl-copy", "remote text")
    offered = sides.types(sides.remote)
    wait_for("the remote text's types locally %s" % offered,
             lambda: offered and sides.types(sides.local) == offered)
    assert sides.run(sides.local, "wl-paste", "--no-newline").stdout == b"remote text"


def test_no_data_moves_until_someone_pastes(sides):
    big = sides.big_file()
    with open(big, "rb") as f:
        sides.run(sides.remote, "wl-copy", "--type", "application/x-rcomp-test", stdin=f)
    wait_for("the big selection's type locally",
             lambda: sides.types(sides.local) == ["application/x-rcomp-test"])
    time.sleep(0.5)
    assert sides.moved() == [], "clipboard data moved before anyone pasted"


def test_10_mb_paste_locally_intact_while_typing_goes_on(sides):
    big = sides.big_file()
    with open(big, "rb") as f:
        sides.run(sides.remote, "wl-copy", "--type", "application/x-rcomp-test", stdin=f)
    wait_for("the big selection's type locally",
             lambda: sides.types(sides.local) == ["application/x-rcomp-test"])
    out = os.path.join(sides.desktop.tmp, "pasted-local")
    with open(out, "wb") as f:
        pasting = subprocess.Popen(["wl-paste", "--no-newline", "--type",
                                    "application/x-rcomp-test"], env=sides.local, stdout=f)
        # The window keeps working meanwhile.
        sides.kb.send("tap %d" % KEY_A)
        pasting.wait(timeout=60)
    wait_for("a key typed during the paste",
             lambda: "key %d pressed" % KEY_A in sides.desktop.read_log("rcomp-run"))
    assert sha(out) == sha(big), "10 MB pasted locally differ (%d bytes)" % os.path.getsize(out)
    assert sides.moved()[-1:] == [str(10 << 20)]


def test_10_mb_local_copy_pastes_remotely_intact(sides):
    big = sides.big_file()
    with open(big, "rb") as f:
        sides.run(sides.local, "wl-copy", "--type", "text/x-local", stdin=f)
    # wl-copy adds the plain text types to a text/ type.
    wait_for("the local selection's types remotely",
             lambda: "text/x-local" in sides.types(sides.remote)
             and sides.types(sides.remote) == sides.types(sides.local))
    out = os.path.join(sides.desktop.tmp, "pasted-remote")
    with open(out, "wb") as f:
        sides.run(sides.remote, "wl-paste", "--no-newline", "--type", "text/x-local", stdout=f)
    assert sha(out) == sha(big), "10 MB pasted remotely differ (%d bytes)" % os.path.getsize(
        out)


def test_the_primary_selection_works_both_ways(sides):
    sides.run(sides.remote, "wl-copy", "--primary", "remote primary")
    wait_for("the remote primary selection locally",
             lambda: sides.run(sides.local, "wl-paste", "--primary", "--no-newline").stdout
             == b"remote primary")
    sides.run(sides.local, "wl-copy", "--primary", "local primary")
    wait_for("the local primary selection remotely",
             lambda: sides.run(sides.remote, "wl-paste", "--primary", "--no-newline").stdout
             == b"local primary")


def paste(env, primary=False):
    r = subprocess.run(["wl-paste", "--no-newline", *(["--primary"] if primary else [])],
                       env=env, capture_output=True, timeout=60)
    return r.stdout if r.returncode == 0 else None


def copy(env, text, primary=False):
    subprocess.run(["wl-copy", *(["--primary"] if primary else []), text], env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)


def test_a_copy_made_before_a_viewer_attaches_survives_the_attach(desktop):
    VirtualKeyboard(desktop)  # a seat without a keyboard gives no focus serial
    server = desktop.start_server([INPUT_CLIENT])
    remote = dict(desktop.remote_env, WAYLAND_DISPLAY="wayland-0")
    copy(remote, "before attach")
    copy(remote, "primary before attach", primary=True)
    wait_for("the remote selection", lambda: paste(remote) == b"before attach")
    desktop.start_viewer(server)
    wait_for("the window to have focus", lambda: focused(desktop, "rcomp-input-test"))
    wait_for("the remote selection locally",
             lambda: paste(desktop.local_env) == b"before attach")
    assert paste(remote) == b"before attach"
    assert paste(remote, primary=True) == b"primary before attach"


@pytest.mark.desktop(extra='no_focus [app_id="rcomp-input-test"]\n')
def test_a_remote_copy_waiting_for_focus_keeps_the_apps_selection_when_focus_comes(desktop):
    """Without a keyboard serial the viewer cannot take the local selection,
    so the remote one waits; the local compositor's empty selection, sent as
    focus arrives, must not clear the app's."""
    VirtualKeyboard(desktop)
    desktop.start("local-app", [INPUT_CLIENT, "local-app"], desktop.local_env)
    wait_for("a local window with focus", lambda: focused(desktop, "local-app"))
    server = desktop.start_server([INPUT_CLIENT])
    desktop.start_viewer(server)
    wait_for("the remote window", lambda: desktop.window(app_id="rcomp-input-test"))
    remote = dict(desktop.remote_env, WAYLAND_DISPLAY="wayland-0")
    copy(remote, "waiting for focus")
    time.sleep(1)
    assert focused(desktop, "local-app"), "the remote window took focus"
    desktop.swaymsg('[app_id="rcomp-input-test"] focus')
    wait_for("the window to have focus", lambda: focused(desktop, "rcomp-input-test"))
    wait_for("the remote selection locally",
             lambda: paste(desktop.local_env) == b"waiting for focus")
    time.sleep(0.5)
    assert paste(remote) == b"waiting for focus", "the app's selection was cleared"
    assert paste(desktop.local_env) == b"waiting for focus"


def test_an_empty_selection_from_a_viewer_clears_only_a_selection_that_viewer_made(desktop):
    server = desktop.start_server([INPUT_CLIENT])
    remote = dict(desktop.remote_env, WAYLAND_DISPLAY="wayland-0")
    copy(remote, "the app's")
    wait_for("the remote selection", lambda: paste(remote) == b"the app's")
    viewer = socket.socket(socket.AF_UNIX)
    viewer.connect(server.socket)
    viewer.sendall(hello())
    read_messages(viewer, 5, until=0x0208)  # to the end of the snapshot
    for kind in (0, 1):
        viewer.sendall(message(0x0301, struct.pack("<II", kind, 0)))
    time.sleep(0.5)
    assert paste(remote) == b"the app's", "the viewer's empty selection cleared the app's"
    # The viewer's own selection is cleared by its empty one.
    types = b"text/plain"
    viewer.sendall(message(0x0301, struct.pack("<II", 0, 1) + struct.pack("<H", len(types)) +
                           types))
    wait_for("the viewer's selection remotely",
             lambda: subprocess.run(["wl-paste", "--list-types"], env=remote,
                                    capture_output=True).stdout == b"text/plain\n")
    viewer.sendall(message(0x0301, struct.pack("<II", 0, 0)))
    wait_for("no selection remotely",
             lambda: subprocess.run(["wl-paste", "--list-types"], env=remote,
                                    capture_output=True).returncode != 0)
    viewer.close()


def test_a_selection_a_viewer_made_goes_with_that_viewer(desktop):
    """Nobody could paste it once the viewer is gone: apps see no selection
    rather than one that gives nothing."""
    server = desktop.start_server([INPUT_CLIENT])
    remote = dict(desktop.remote_env, WAYLAND_DISPLAY="wayland-0")
    viewer = socket.socket(socket.AF_UNIX)
    viewer.connect(server.socket)
    viewer.sendall(hello())
    read_messages(viewer, 5, until=0x0208)
    types = b"text/plain"
    viewer.sendall(message(0x0301, struct.pack("<IIH", 0, 1, len(types)) + types))
    wait_for("the viewer's selection remotely",
             lambda: subprocess.run(["wl-paste", "--list-types"], env=remote,
                                    capture_output=True).stdout == b"text/plain\n")
    viewer.close()
    wait_for("no selection remotely",
             lambda: subprocess.run(["wl-paste", "--list-types"], env=remote,
                                    capture_output=True).returncode != 0)
