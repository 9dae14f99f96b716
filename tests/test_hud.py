"""The HUD: a corner of each window with the link's numbers, shown and
hidden by its key chord, on a subsurface of its own: the remote picture
around it is never touched."""
import os
import re
import time

import pytest

from rig import ANIM_CLIENT, GREEN, INPUT_CLIENT, VIDEO, VirtualKeyboard, wait_for
from webpage import TOKEN, open_input_client, remote_log, web_session

KEY_LEFTCTRL, KEY_LEFTSHIFT, KEY_LEFTALT, KEY_H, KEY_J = 29, 42, 56, 35, 36
CORNER = {"x": 0, "y": 0, "width": 200, "height": 90}  # window coordinates


def window_shot(desktop, w, rect=None):
    r = w["rect"]
    rect = rect or {"x": 0, "y": 0, "width": r["width"], "height": r["height"]}
    width, height, rgb = desktop.screenshot({"x": r["x"] + rect["x"], "y": r["y"] + rect["y"],
                                             "width": rect["width"],
                                             "height": rect["height"]})
    return width, height, rgb


def in_corner(x, y, width, height, corner):
    cx = x if corner.endswith("left") else width - 1 - x
    cy = y if corner.startswith("top") else height - 1 - y
    return cx < CORNER["width"] and cy < CORNER["height"]


def changed(desktop, w, reference, corner="top-left"):
    """Pixels of the window that differ from reference (a window_shot):
    (count outside the HUD's corner, count inside it)."""
    width, height, rgb = window_shot(desktop, w)
    ref_width, ref_height, ref = reference
    assert (width, height) == (ref_width, ref_height)
    outside = inside = 0
    for y in range(height):
        for x in range(width):
            i = (y * width + x) * 3
            if rgb[i:i + 3] != ref[i:i + 3]:
                if in_corner(x, y, width, height, corner):
                    inside += 1
                else:
                    outside += 1
    return outside, inside


def hud_rows(desktop, w, reference, corner=CORNER):
    """How many rows of the corner differ from reference: the HUD's height."""
    width, height, rgb = window_shot(desktop, w, corner)
    ref = reference[2]
    full = reference[0]
    return sum(1 for y in range(height)
               if any(rgb[(y * width + x) * 3:(y * width + x) * 3 + 3] !=
                      ref[(y * full + x) * 3:(y * full + x) * 3 + 3] for x in range(width)))


def keysyms(desktop):
    return re.findall(r"^keysym (\S+)$", desktop.read_log("rcomp-run"), re.M)


def picture_then_viewer(desktop, args, settings=None):
    """The app's window as a viewer without a HUD shows it, then the same
    window through a viewer started with args (and settings): (window,
    the first picture)."""
    server = desktop.start_server([INPUT_CLIENT])
    plain = desktop.start_viewer(server)
    w = wait_for("the window", lambda: desktop.window(app_id="rcomp-input-test"))
    wait_for("the app's green", lambda: desktop.pixel(150, 150, w) == GREEN, interval=0.2)
    reference = window_shot(desktop, w)
    plain.terminate()
    plain.wait(timeout=10)
    if settings:
        desktop.settings_file("local", settings)
    second = desktop.start_viewer(server, args, name="second-view")
    # The new viewer's window, not the first's while sway still shows it,
    # once it shows the app's picture.
    w = wait_for("the window again", lambda: desktop.window(app_id="rcomp-input-test",
                                                              pid=second.pid))
    wait_for("the app's green again", lambda: desktop.pixel(150, 150, w) == GREEN, interval=0.2)
    return w, reference


def local_keyboard(desktop):
    kb = VirtualKeyboard(desktop)
    kb.take_seat("us", lambda: keysyms(desktop))
    return kb


def chord(kb, key=KEY_H):
    kb.send("press %d" % KEY_LEFTCTRL, "press %d" % KEY_LEFTALT, "press %d" % KEY_LEFTSHIFT,
            "tap %d" % key, "release %d" % KEY_LEFTSHIFT, "release %d" % KEY_LEFTALT,
            "release %d" % KEY_LEFTCTRL)


def green_window(desktop, args=()):
    server = desktop.start_server([INPUT_CLIENT])
    viewer = desktop.start_viewer(server, list(args))
    w = wait_for("the window", lambda: desktop.window(app_id="rcomp-input-test"))
    wait_for("the app's green", lambda: desktop.pixel(150, 150, w) == GREEN, interval=0.2)
    wait_for("the window to have focus", lambda: desktop.window(
        app_id="rcomp-input-test")["focused"])
    return viewer, w, window_shot(desktop, w)


def test_the_hud_key_chord_shows_and_hides_the_corner_and_nothing_else_changes(desktop):
    viewer, w, reference = green_window(desktop)
    kb = local_keyboard(desktop)
    before = len(keysyms(desktop))
    chord(kb)
    wait_for("the HUD in the corner", lambda: changed(desktop, w, reference)[1] > 200)
    # Its numbers come within a second; the picture around it stays the app's.
    wait_for("the HUD's four lines of numbers", lambda: hud_rows(desktop, w, reference) > 50)
    outside, inside = changed(desktop, w, reference)
    assert outside == 0, "%d pixels outside the HUD's corner changed" % outside
    chord(kb)
    wait_for("the HUD gone", lambda: changed(desktop, w, reference) == (0, 0))
    # The app heard the modifiers, never the chord's key.
    typed = keysyms(desktop)[before:]
    assert typed and "h" not in typed and "H" not in typed, typed
    desktop.check_alive(viewer)


def test_the_hud_shows_the_servers_numbers_once_a_second(desktop):
    """--hud from the start: its one line ("waiting for the numbers")
    becomes four once window_stats come."""
    w, reference = picture_then_viewer(desktop, ["--hud"])
    wait_for("the HUD's four lines of numbers", lambda: hud_rows(desktop, w, reference) > 50)
    outside, inside = changed(desktop, w, reference)
    assert inside > 200 and outside == 0


def test_another_chord_from_the_settings_file_toggles_it(desktop):
    desktop.settings_file("local", "[view]\nhud-key = ctrl+alt+shift+j\n")
    viewer, w, reference = green_window(desktop)
    kb = local_keyboard(desktop)
    chord(kb, KEY_H)
    wait_for("ctrl+alt+shift+h reaching the app", lambda: "H" in keysyms(desktop)
             or "h" in keysyms(desktop))
    assert changed(desktop, w, reference) == (0, 0)
    chord(kb, KEY_J)
    wait_for("the HUD in the corner", lambda: changed(desktop, w, reference)[1] > 200)


def test_the_hud_sits_in_the_corner_the_settings_name(desktop):
    w, reference = picture_then_viewer(desktop, [], settings="[view]\nhud = true\n"
                                       "hud-corner = bottom-right\n")
    wait_for("the HUD's lines in the bottom right corner",
             lambda: changed(desktop, w, reference, "bottom-right")[1] > 1000)
    outside, inside = changed(desktop, w, reference, "bottom-right")
    assert outside == 0


# The same behaviours in the browser viewer.


def test_the_hud_shows_each_windows_figures_and_input_to_photon(desktop, page):
    x, y, _, _ = open_input_client(desktop, page)
    page.eval("document.getElementById('rcomp-hud-toggle').click()")
    hud = page.wait("window.rcomp.stats()[0].hud && window.rcomp.stats()[0].hud.includes('fps')"
                    " && window.rcomp.stats()[0].hud")
    assert "lossless" in hud and "rtt" in hud, hud
    page.click(x + 20, y + 30)
    ms = page.wait("window.rcomp.stats()[0].inputToPhotonMs", 10)
    assert 0 < ms < 5000
    page.wait("window.rcomp.stats()[0].hud.includes('input\u2192photon')")
    page.eval("document.getElementById('rcomp-hud-toggle').click()")
    page.wait("window.rcomp.stats()[0].hud === null")


def test_the_pages_hud_says_how_far_a_file_from_the_session_has_come_and_forgets_it_once_whole(
        desktop, page):
    """rcomp-run --send of 150 MB to the page with its HUD on: while it
    comes, the HUD names it with its megabytes; once it is whole, not."""
    import subprocess
    from rig import RCOMP_RUN
    open_input_client(desktop, page)
    saved = os.path.join(desktop.tmp, "browser-downloads")
    os.makedirs(saved)
    page.command("downloads", path=saved)
    page.eval("document.getElementById('rcomp-hud-toggle').click()")
    page.wait("window.rcomp.stats()[0].hud && window.rcomp.stats()[0].hud.includes('fps')")
    big = os.path.join(desktop.tmp, "big.bin")
    with open(big, "wb") as f:
        f.write(os.urandom(150 << 20))
    name = subprocess.run([RCOMP_RUN, "--list"], env=desktop.remote_env, capture_output=True,
                          text=True, timeout=10).stdout.splitlines()[1].split()[0]
    sender = subprocess.Popen([RCOMP_RUN, "--send", big],
                              env=dict(desktop.remote_env, RCOMP_SESSION=name),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    hud = page.wait("window.rcomp.stats()[0].hud.includes('\u2193 big.bin') && "
                    "window.rcomp.stats()[0].hud", 60)
    assert re.search(r"big\.bin [\d.]+/157\.3 MB", hud), hud
    out, _ = sender.communicate(timeout=120)
    assert sender.returncode == 0, out
    page.wait("!window.rcomp.stats()[0].hud.includes('big.bin')", 10)


@pytest.mark.skipif(not VIDEO, reason="built without video")
def test_the_hud_says_a_video_windows_preset_quantizer_bit_rate_and_picture(desktop, page):
    """Quality said live: for a window in video the HUD shows what the
    encoder does (video_stats), and rcomp-run's --stats says the same."""
    _, url = web_session(desktop, (ANIM_CLIENT, "30"), ["--stats", "--codec", "video"])
    page.open(url + "#token=" + TOKEN)
    page.wait("window.rcomp.stats().find((w) => w.title === 'rcomp anim test' && "
              "w.codec.startsWith('H.264'))")
    page.eval("document.getElementById('rcomp-hud-toggle').click()")
    hud = page.wait("window.rcomp.stats()[0].hud && window.rcomp.stats()[0].hud.includes('QP')"
                    " && window.rcomp.stats()[0].hud", 20)
    m = re.search(r"(\w+) QP (\d+) ([\d.]+) Mbit/s (\d+)x(\d+)", hud)
    assert m, hud
    # The preset and the size are the fit's for this machine's cores: a
    # slow one (a sanitizer build) sends the window at half size.
    assert m.group(1) in ("ultrafast", "superfast", "veryfast") and 0 < int(m.group(2)) <= 69, hud
    assert float(m.group(3)) > 0 and (int(m.group(4)), int(m.group(5))) in ((480, 360),
                                                                            (240, 180)), hud
    line = wait_for("a stats line with the quantizer", lambda: re.search(
        r"stats window \d+ \(rcomp-anim-test\): .*video libx264 .*, "
        r"(?:ultrafast|superfast|veryfast) at QP (\d+)",
        remote_log(desktop)))
    assert 0 < int(line.group(1)) <= 69, line.group(0)


def test_the_hud_says_how_far_a_file_from_the_session_has_come_and_forgets_it_once_whole(
        desktop):
    """rcomp-run --send of 12 MB through a 20 Mbit/s link: while it goes,
    the HUD has a line more (the file, its megabytes, rate and time left);
    once it is whole, that line goes."""
    import subprocess
    from rig import RCOMP_RUN, RCOMP_VIEW, free_port
    big = os.path.join(desktop.tmp, "big.bin")
    with open(big, "wb") as f:
        f.write(os.urandom(12 << 20))
    server = desktop.start_server([INPUT_CLIENT])
    plain = desktop.start_viewer(server)
    w = wait_for("the window", lambda: desktop.window(app_id="rcomp-input-test"))
    wait_for("the app's green", lambda: desktop.pixel(150, 150, w) == GREEN, interval=0.2)
    reference = window_shot(desktop, w)
    plain.terminate()
    plain.wait(timeout=10)
    port = free_port()
    desktop.start_relay(server.socket, rate_mbit=20, listen="tcp:127.0.0.1:%d" % port)
    desktop.start("rcomp-view", [RCOMP_VIEW, "--tcp", "127.0.0.1:%d" % port, "--hud"],
                  dict(desktop.local_env, RCOMP_TOKEN="not-asked-on-the-session-socket"))
    w = wait_for("the window again", lambda: desktop.window(app_id="rcomp-input-test"))
    tall = dict(CORNER, width=300, height=160)
    wait_for("the HUD's four lines of numbers",
             lambda: hud_rows(desktop, w, reference, tall) > 50)
    time.sleep(1.5)
    numbers = hud_rows(desktop, w, reference, tall)
    name = subprocess.run([RCOMP_RUN, "--list"], env=desktop.remote_env, capture_output=True,
                          text=True, timeout=10).stdout.splitlines()[1].split()[0]
    sender = subprocess.Popen([RCOMP_RUN, "--send", big],
                              env=dict(desktop.remote_env, RCOMP_SESSION=name),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    # A line is at least 10 rows of a 9-point font.
    wait_for("the file's line in the HUD",
             lambda: hud_rows(desktop, w, reference, tall) >= numbers + 10, timeout=30)
    assert sender.poll() is None, "it was whole before the HUD said so"
    out, _ = sender.communicate(timeout=60)
    assert sender.returncode == 0, out
    wait_for("the file's line gone", lambda: hud_rows(desktop, w, reference, tall) <= numbers,
             timeout=10)
