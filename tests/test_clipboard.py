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

from rig import (INPUT_CLIENT, KEY_A, KEY_LEFTSHIFT, RCOMP_VIEW, VirtualKeyboard, fake_server,
                 focused, frame, hello, message, read_messages, records, wait_for, welcome,
                 window_new)
from webpage import open_input_client, remote_env, remote_log


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


def remote_types(remote):
    """The remote selection's types, or None when there is none."""
    r = subprocess.run(["wl-paste", "--list-types"], env=remote, capture_output=True,
                       timeout=60)
    return r.stdout.decode().split() if r.returncode == 0 else None


def selection(types, kind=0):
    """A selection message offering types (count 0: cleared)."""
    return message(0x0301, struct.pack("<II", kind, len(types)) + b"".join(
        struct.pack("<H", len(t)) + t for t in types))


def fake_viewer(desktop, server, types=()):
    """A viewer by hand, attached, which offers a selection of types; returns
    its socket and the apps' environment."""
    remote = dict(desktop.remote_env, WAYLAND_DISPLAY="wayland-0")
    viewer = socket.socket(socket.AF_UNIX)
    viewer.connect(server.socket)
    viewer.sendall(hello())
    read_messages(viewer, 5, until=0x0208)  # to the end of the snapshot
    if types:
        viewer.sendall(records(selection(types)))
        wait_for("the viewer's selection remotely",
                 lambda: remote_types(remote) == [t.decode() for t in types])
    return viewer, remote


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
    viewer, _ = fake_viewer(desktop, server)
    viewer.sendall(records(selection([], 0) + selection([], 1)))
    time.sleep(0.5)
    assert paste(remote) == b"the app's", "the viewer's empty selection cleared the app's"
    # The viewer's own selection is cleared by its empty one.
    viewer.sendall(records(selection([b"text/plain"])))
    wait_for("the viewer's selection remotely", lambda: remote_types(remote) == ["text/plain"])
    viewer.sendall(records(selection([])))
    wait_for("no selection remotely", lambda: remote_types(remote) is None)
    viewer.close()


def test_a_selection_a_viewer_made_goes_with_that_viewer(desktop):
    """Nobody could paste it once the viewer is gone: apps see no selection
    rather than one that gives nothing."""
    server = desktop.start_server([INPUT_CLIENT])
    viewer, remote = fake_viewer(desktop, server, [b"text/plain"])
    viewer.close()
    wait_for("no selection remotely", lambda: remote_types(remote) is None)


def test_a_paste_from_a_viewer_that_never_answers_ends_after_5_idle_seconds(desktop):
    """The viewer offers a type and ignores the request for it: the paste
    ends empty, the viewer is told to stop, and the slot is free again."""
    server = desktop.start_server([INPUT_CLIENT])
    viewer, remote = fake_viewer(desktop, server, [b"text/plain"])
    pastes = [subprocess.Popen(["wl-paste", "--no-newline"], env=remote,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
              for _ in range(20)]
    got = read_messages(viewer, 3)
    requests = [struct.unpack_from("<I", body)[0] for t, body in got if t == 0x0302]
    assert len(requests) == 16, "expected 16 requests (one per slot), got %d" % len(requests)
    # Each paste ends: the first 16 when they stall, the rest at once.
    for p in pastes:
        out, _ = p.communicate(timeout=60)
        assert out == b""
    cancelled = [struct.unpack_from("<III", body) for t, body in read_messages(viewer, 2)
                 if t == 0x0304]
    assert sorted(i for i, _, flags in cancelled if flags & 1) == sorted(requests), cancelled
    assert desktop.read_log("rcomp-run").count("gave up after 0 bytes from the viewer") == 16
    # The slots are free: a paste asks the viewer again.
    late = subprocess.Popen(["wl-paste"], env=remote, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    wait_for("a new request", lambda: any(t == 0x0302 for t, _ in read_messages(viewer, 1)))
    late.kill()
    viewer.close()


def test_a_local_paste_from_a_server_that_never_answers_ends_after_5_idle_seconds(desktop):
    VirtualKeyboard(desktop)
    listener, path = fake_server(desktop)
    desktop.start("rcomp-view", [RCOMP_VIEW, "--socket", path], desktop.local_env)
    conn, _ = listener.accept()
    read_messages(conn, 5, until=0x0101)
    conn.sendall(welcome() + records(
        window_new(1, 64, 64) + message(0x0208) +
        frame(1, 1, 64, 64, [(0, 0, 64, 64)], bytes(64 * 64 * 4), 64 * 64 * 4) +
        selection([b"text/plain"])))
    wait_for("the remote selection locally",
             lambda: remote_types(desktop.local_env) == ["text/plain"])
    paste = subprocess.Popen(["wl-paste", "--no-newline"], env=desktop.local_env,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    got = read_messages(conn, 3, until=0x0302)
    requests = [struct.unpack_from("<I", body)[0] for t, body in got if t == 0x0302]
    assert len(requests) == 1, got
    out, _ = paste.communicate(timeout=60)
    assert out == b""
    acks = [struct.unpack_from("<III", body) for t, body in read_messages(conn, 2)
            if t == 0x0304]
    assert acks == [(requests[0], 0, 1)], "expected a cancel of the request: %s" % acks
    conn.close()


# The same behaviours in the browser viewer.


def test_text_copied_remotely_is_in_the_browsers_clipboard(desktop, page):
    x, y, _, _ = open_input_client(desktop, page)
    page.click(x + 20, y + 30)
    wait_for("keyboard focus on the app", lambda: "key-enter main" in remote_log(desktop))
    subprocess.run(["wl-copy", "remote text \u00e9"], env=remote_env(desktop), timeout=30,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    page.wait("window.rcomp.session().clipboard === 'remote text \u00e9'")
    assert page.eval("navigator.clipboard.readText()") == "remote text \u00e9"


def test_text_copied_in_the_browser_pastes_remotely(desktop, page):
    x, y, _, _ = open_input_client(desktop, page)
    page.command("clipboard", text="local text \u00fc")
    page.click(x + 20, y + 30)
    wait_for("keyboard focus on the app", lambda: "key-enter main" in remote_log(desktop))

    def pasted():
        r = subprocess.run(["wl-paste", "--no-newline"], env=remote_env(desktop), timeout=30,
                           capture_output=True)
        return r.returncode == 0 and r.stdout.decode() == "local text \u00fc"
    wait_for("the browser's text pasted remotely", pasted)
