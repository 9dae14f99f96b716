"""The desktop around the windows: what an app asks of the person's
desktop besides drawing and input reaches it through rcomp: a film
playing keeps the local screen awake, a terminal's urgent bell marks the
local window urgent; in the page, a wake lock and a flashing button."""
import json
import os
import re
import shutil
import socket
import subprocess
import time

import pytest

from rig import INPUT_CLIENT, wait_for
from webpage import TOKEN, web_session

MPV = shutil.which("mpv")


def local_window(desktop, app_id):
    return wait_for(app_id + "'s local window", lambda: desktop.window(app_id=app_id), timeout=30)


def mpv_command(path, *command):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    s.connect(path)
    try:
        s.sendall(json.dumps({"command": list(command)}).encode() + b"\n")
        return s.recv(4096)
    finally:
        s.close()


@pytest.mark.skipif(not MPV, reason="mpv is not installed")
def test_a_film_playing_in_mpv_keeps_the_local_screen_awake_and_its_pause_lets_it_sleep(desktop):
    """mpv holds an idle inhibitor on its surface while it plays (as every
    SDL game does): sway shows the local window's application inhibitor
    enabled, and none once mpv pauses."""
    ipc = os.path.join(desktop.tmp, "mpv.sock")
    server = desktop.start_server([MPV, "--vo=wlshm", "--no-audio", "--loop=inf",
                                   "--input-ipc-server=" + ipc,
                                   "av://lavfi:testsrc=size=320x240:rate=25"])
    desktop.start_viewer(server)
    local_window(desktop, "mpv")
    wait_for("the local window to keep the screen awake", lambda: desktop.window(
        app_id="mpv")["idle_inhibitors"]["application"] == "enabled", timeout=20)
    mpv_command(ipc, "set_property", "pause", True)
    wait_for("the screen let sleep once paused", lambda: desktop.window(
        app_id="mpv")["idle_inhibitors"]["application"] == "none", timeout=20)


def test_a_terminals_urgent_bell_marks_its_local_window_urgent(desktop):
    """foot with [bell] urgent=yes rings while another local window has the
    focus: foot asks for activation (xdg-activation, a token of rcomp-run's),
    and the local sway marks foot's window urgent, as it would foot's own."""
    conf = os.path.join(desktop.tmp, "foot.ini")
    with open(conf, "w") as f:
        f.write("[bell]\nurgent=yes\nnotify=no\n")
    ring = os.path.join(desktop.tmp, "ring")
    script = "while [ ! -e %s ]; do sleep 0.1; done; printf '\\a'; exec sleep 60" % ring
    server = desktop.start_server(["foot", "-c", conf, "--app-id", "remote-foot",
                                   "sh", "-c", script])
    desktop.start_viewer(server)
    local_window(desktop, "remote-foot")
    # Another local window takes the focus (foot rings urgent only unfocused).
    desktop.start("local-foot", ["foot", "--app-id", "local-foot"], desktop.local_env)
    local_window(desktop, "local-foot")
    desktop.swaymsg("[app_id=local-foot] focus")
    time.sleep(1)
    assert not desktop.window(app_id="remote-foot")["urgent"]
    open(ring, "w").close()
    wait_for("the local window urgent", lambda: desktop.window(app_id="remote-foot")["urgent"],
             timeout=15)


def xdg_outputs(env):
    """The outputs weston-info reads from xdg-output: name: (description,
    x, y, width, height)."""
    out = subprocess.run(["weston-info"], env=env, capture_output=True, text=True,
                         timeout=10).stdout
    found = {}
    for m in re.finditer(r"xdg_output_v1\s+output: \d+\s+name: '([^']*)'\s+"
                         r"description: '([^']*)'\s+logical_x: (-?\d+), logical_y: (-?\d+)\s+"
                         r"logical_width: (\d+), logical_height: (\d+)", out):
        found[m.group(1)] = (m.group(2),) + tuple(int(v) for v in m.group(3, 4, 5, 6))
    return found


@pytest.mark.skipif(not shutil.which("weston-info"), reason="weston-info is not installed")
@pytest.mark.desktop(scale=2)
def test_an_app_reads_the_local_outputs_name_and_logical_place_through_xdg_output(desktop):
    """An app in the session asking xdg-output (as Xwayland, SDL and the
    toolkits do) finds the output its window shows on named as the
    person's (sway's HEADLESS-1, its description), at its logical place and
    size (1280x800 at scale 2: 640x400), and follows it when it moves."""
    server = desktop.start_server([INPUT_CLIENT])
    desktop.start_viewer(server)
    local_window(desktop, "rcomp-input-test")
    local = xdg_outputs(desktop.local_env)["HEADLESS-1"]
    assert local[3:] == (640, 400)
    remote = dict(desktop.remote_env, WAYLAND_DISPLAY="wayland-0")
    wait_for("HEADLESS-1 in the session", lambda: xdg_outputs(remote).get("HEADLESS-1") == local,
             timeout=15)
    desktop.swaymsg("output HEADLESS-1 position 100 50")
    wait_for("the output moved in the session too",
             lambda: xdg_outputs(remote).get("HEADLESS-1", ())[1:3] == (100, 50), timeout=15)


@pytest.mark.skipif(not MPV, reason="mpv is not installed")
def test_a_film_playing_in_mpv_holds_a_wake_lock_in_the_page_until_it_pauses(desktop, page):
    """The page holds the browser's screen wake lock while a window whose
    app keeps the screen awake shows, and lets it go at mpv's pause."""
    ipc = os.path.join(desktop.tmp, "mpv.sock")
    _, url = web_session(desktop, (MPV, "--vo=wlshm", "--no-audio", "--loop=inf", "--title=film",
                                   "--input-ipc-server=" + ipc,
                                   "av://lavfi:testsrc=size=320x240:rate=25"))
    page.open(url + "#token=" + TOKEN)
    page.window("film")
    # A browser lets a visible page keep the screen awake; headless
    # chromium refuses it until granted: the page asks again at the next
    # touch.
    page.wait("window.rcomp.desktop().asked && !window.rcomp.desktop().awake")
    page.command("permission", name="screen-wake-lock", setting="granted")
    x, y, w, h = page.canvas_box("film")
    page.click(x + w // 2, y + h // 2)
    page.wait("window.rcomp.desktop().awake", timeout=30)
    mpv_command(ipc, "set_property", "pause", True)
    page.wait("!window.rcomp.desktop().awake", timeout=20)


def test_a_terminals_urgent_bell_marks_its_button_and_the_tab_title_in_the_page(desktop, page):
    """foot rings while another window of the session has the page's focus:
    its button in the window list flashes and the tab's title says so,
    until the person goes to it."""
    conf = os.path.join(desktop.tmp, "foot.ini")
    with open(conf, "w") as f:
        f.write("[bell]\nurgent=yes\nnotify=no\n")
    ring = os.path.join(desktop.tmp, "ring")
    script = "while [ ! -e %s ]; do sleep 0.1; done; printf '\\a'; exec sleep 60" % ring
    _, url = web_session(desktop, ("sh", "-c", "foot -c %s --title ringer sh -c \"%s\" & exec %s"
                                   % (conf, script, INPUT_CLIENT)))
    page.open(url + "#token=" + TOKEN)
    page.window("ringer")
    page.window("rcomp input test")
    page.eval("[...document.querySelectorAll('.rcomp-list-item')].find((b) => "
              "b.textContent === 'rcomp input test').click()")
    time.sleep(1)
    assert page.eval("window.rcomp.desktop().urgent.length") == 0
    open(ring, "w").close()
    page.wait("window.rcomp.desktop().urgent.includes('ringer') && "
              "document.title.startsWith('(!) ringer')", timeout=15)
    page.eval("[...document.querySelectorAll('.rcomp-list-item')].find((b) => "
              "b.textContent === 'ringer').click()")
    page.wait("window.rcomp.desktop().urgent.length === 0 && "
              "!document.title.startsWith('(!)')", timeout=10)


def test_an_x11_terminals_urgent_bell_marks_its_local_window_urgent(desktop):
    """xterm with bellIsUrgent sets ICCCM's urgency hint as it rings
    unfocused (through Xwayland): the local window is marked urgent too."""
    ring = os.path.join(desktop.tmp, "ring")
    script = "while [ ! -e %s ]; do sleep 0.1; done; printf '\\a'; exec sleep 60" % ring
    server = desktop.start_server(["xterm", "-xrm", "XTerm*bellIsUrgent: true", "-e", "sh", "-c",
                                   script])
    desktop.start_viewer(server)
    local_window(desktop, "XTerm")
    desktop.start("local-foot", ["foot", "--app-id", "local-foot"], desktop.local_env)
    local_window(desktop, "local-foot")
    desktop.swaymsg("[app_id=local-foot] focus")
    time.sleep(1)
    assert not desktop.window(app_id="XTerm")["urgent"]
    open(ring, "w").close()
    wait_for("the local window urgent", lambda: desktop.window(app_id="XTerm")["urgent"],
             timeout=15)
