"""The browser viewer as people use it: the menu's controls (fullscreen,
fit and 1:1, zoom, keys the browser keeps, the clipboard panel, the
picture, share links) and a phone's (the keyboard button, the bar of
keys, the touchpad), each doing what it says to a real app."""
import os
import re
import subprocess
import time

from rig import ANIM_CLIENT, INPUT_CLIENT, wait_for
from webpage import TOKEN, open_input_client, remote_env, remote_log, web_session

MENU = "Boolean(document.getElementById('rcomp-menu'))"


def menu(page, control=None):
    """Opens the menu (its button), and clicks control (its data-menu)."""
    if not page.eval(MENU):
        page.eval("document.getElementById('rcomp-menu-toggle').click()")
        page.wait(MENU)
    if control:
        page.eval("document.querySelector('#rcomp-menu [data-menu=\"%s\"]').click()" % control)


def focused_input_client(desktop, page, fragment=""):
    x, y, w, h = open_input_client(desktop, page, fragment)
    page.click(x + 20, y + 30)
    wait_for("keyboard focus on the app", lambda: "key-enter main" in remote_log(desktop))
    return x, y, w, h


def test_the_menu_opens_from_its_button_and_from_ctrl_alt_shift_and_escape_closes_it(desktop,
                                                                                      page):
    focused_input_client(desktop, page)
    menu(page)
    page.eval("document.querySelector('#rcomp-menu [data-menu=\"chord\"]').focus()")
    page.key("Escape")
    page.wait("!" + MENU)
    for key in ("Control", "Alt", "Shift"):
        page.key(key, "down")
    for key in ("Shift", "Alt", "Control"):
        page.key(key, "up")
    page.wait(MENU)
    # With another key among them it is that chord, for the app: no menu.
    menu(page, "close")
    for key in ("Control", "Alt", "Shift", "KeyK"):
        page.key(key, "down")
    for key in ("KeyK", "Shift", "Alt", "Control"):
        page.key(key, "up")
    wait_for("the chord in the app", lambda: "key 37 pressed" in remote_log(desktop))
    time.sleep(0.3)
    assert not page.eval(MENU)


def test_keys_the_browser_keeps_reach_the_app_from_the_menu_with_their_modifiers(desktop, page):
    """Ctrl+Alt+Del, Super and F11 from the menu's buttons, and a chord
    typed in its field, reach the app as those keys, the modifiers on while
    they are down; keys typed in the field itself do not."""
    focused_input_client(desktop, page)
    menu(page)
    for control, keys in (("key-ctrl-alt-del", [29, 56, 111]), ("key-super", [125]),
                          ("key-f11", [87])):
        before = len(remote_log(desktop))
        page.eval("(() => { const b = document.querySelector('#rcomp-menu [data-menu=\"%s\"]'); "
                  "b.dispatchEvent(new PointerEvent('pointerdown', {bubbles: true})); "
                  "b.dispatchEvent(new PointerEvent('pointerup', {bubbles: true})); })()" % control)
        wait_for(control + " in the app", lambda: "key %d released" % keys[0]
                 in remote_log(desktop)[before:])
        said = remote_log(desktop)[before:]
        presses = [int(k) for k in re.findall(r"key (\d+) pressed", said)]
        assert presses == keys, said
        if control == "key-ctrl-alt-del":
            # Ctrl and Alt are on when Delete goes down.
            assert re.search(r"modifiers 12 0 0 0\nkey 111 pressed", said), said
    page.eval("document.querySelector('#rcomp-menu [data-menu=\"chord\"]').focus()")
    before = len(remote_log(desktop))
    page.type("ctrl+alt+t")
    page.key("Enter")
    wait_for("the chord in the app", lambda: "key 20 released" in remote_log(desktop)[before:])
    presses = re.findall(r"key (\d+) pressed", remote_log(desktop)[before:])
    assert presses == ["29", "56", "20"], presses


def test_fullscreen_from_the_menu_fills_the_screen_and_leaves_it(desktop, page):
    focused_input_client(desktop, page)
    menu(page, "fullscreen")
    page.wait("window.rcomp.session().fullscreen && window.rcomp.session().keyboardLocked")
    page.wait("document.querySelector('#rcomp-menu [data-menu=\"fullscreen\"]')"
              ".getAttribute('aria-pressed') === 'true'")
    menu(page, "fullscreen")
    page.wait("!window.rcomp.session().fullscreen")


def canvas_css(page, title):
    return page.eval("(() => { const el = [...document.querySelectorAll('.rcomp-window')].find("
                     "(e) => e.dataset.title === %r); const r = el.querySelector('canvas')"
                     ".getBoundingClientRect(); return [r.width, r.height]; })()" % title)


def test_fit_shows_a_window_bigger_than_the_page_whole_and_1_to_1_at_its_size(desktop, page):
    """anim-client at 1800x1000 in a 1280x800 page: 1:1 shows it at its own
    size (past the page's edges), fit shows all of it; the choice holds
    after a reload."""
    _, url = web_session(desktop, (ANIM_CLIENT, "0", "1800", "1000"))
    page.open(url + "#token=" + TOKEN)
    page.window("rcomp anim test")
    assert canvas_css(page, "rcomp anim test") == [1800, 1000]
    menu(page, "fit")
    page.wait("document.querySelector('.rcomp-window canvas').getBoundingClientRect().width "
              "< 1800")
    w, h = canvas_css(page, "rcomp anim test")
    desk = page.eval("(() => { const r = document.getElementById('rcomp-desk')"
                     ".getBoundingClientRect(); return [r.width, r.height]; })()")
    assert w <= desk[0] and h <= desk[1] and abs(w / h - 1.8) < 0.01, (w, h, desk)
    page.open(url + "#token=" + TOKEN + "&again=1")
    page.window("rcomp anim test")
    assert canvas_css(page, "rcomp anim test")[0] <= 1280, "fit was not kept"
    menu(page, "one-to-one")
    page.wait("document.querySelector('.rcomp-window canvas').getBoundingClientRect().width "
              "=== 1800")


def test_zoom_shows_the_app_larger_and_clicks_land_where_they_point(desktop, page):
    x, y, w, h = focused_input_client(desktop, page)
    for _ in range(3):
        menu(page, "zoom-in")  # 1.25^3
    page.wait("document.querySelector('#rcomp-menu [data-menu=\"zoom-level\"]').textContent "
              "=== '195%'")
    # (The app is told its output's scale is 2 now: its window stays its
    # size, drawn anew.)
    page.wait("Math.abs(document.querySelector('.rcomp-window canvas').getBoundingClientRect()"
              ".width - %d * 1.953125) < 1" % w)
    cw, ch = canvas_css(page, "rcomp input test")
    assert abs(cw / w - 1.953) < 0.01 and abs(ch / h - 1.953) < 0.01, (cw, ch, w, h)
    menu(page, "close")
    x, y, _, _ = page.canvas_box("rcomp input test")
    page.click(x + 150 * 1.953125, y + 120 * 1.953125)
    wait_for("the click on the subsurface at its place",
             lambda: "button sub 272 released" in remote_log(desktop))
    assert "sub 50.00 20.00" in remote_log(desktop)


def test_zoomed_in_an_app_draws_at_a_higher_scale_not_blown_up(desktop, page):
    """foot, zoomed to 2: rcomp-run tells it its output's scale is 2, and
    it draws twice the pixels, which the page shows one to one."""
    _, url = web_session(desktop, ("foot",))
    page.open(url + "#token=" + TOKEN)
    page.wait("window.rcomp.stats().find((w) => w.presented > 0)")
    w1 = page.stats()[0]["width"]
    for _ in range(3):
        menu(page, "zoom-in")
    page.wait("window.rcomp.stats()[0].width >= %d" % (2 * w1 - 2), timeout=10)
    cw, _ = page.eval("(() => { const r = document.querySelector('.rcomp-window canvas')"
                      ".getBoundingClientRect(); return [r.width, r.height]; })()")
    stats = page.stats()[0]
    # Its window stays its size in the app's coordinates, shown 1.95 times.
    assert abs(cw - stats["width"] / 2 * 1.953) < 2, (cw, stats)


def test_the_clipboard_panel_carries_text_both_ways_where_the_browser_refuses_its_clipboard(
        desktop, page):
    _, url = web_session(desktop, (INPUT_CLIENT,))
    page.open(url + "#token=" + TOKEN, clipboard=False)
    page.window("rcomp input test")
    x, y, _, _ = page.canvas_box("rcomp input test")
    page.click(x + 20, y + 30)
    wait_for("keyboard focus on the app", lambda: "key-enter main" in remote_log(desktop))
    menu(page)
    page.wait("document.querySelector('#rcomp-menu [data-menu=\"clipboard-state\"]')"
              ".textContent.includes('does not let')")
    subprocess.run(["wl-copy", "from the app \u00e9"], env=remote_env(desktop), timeout=30,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    page.wait("document.querySelector('#rcomp-menu [data-menu=\"clipboard-remote\"]').value "
              "=== 'from the app \u00e9'")
    page.eval("document.querySelector('#rcomp-menu [data-menu=\"clipboard-local\"]').value = "
              "'to the app \u00fc'")
    menu(page, "clipboard-send")

    def pasted():
        r = subprocess.run(["wl-paste", "--no-newline"], env=remote_env(desktop), timeout=30,
                           capture_output=True)
        return r.returncode == 0 and r.stdout.decode() == "to the app \u00fc"
    wait_for("the panel's text pasted in the session", pasted)


def test_sharp_sends_every_picture_lossless_and_auto_sends_motion_as_video(desktop, page):
    _, url = web_session(desktop, (ANIM_CLIENT, "60"))
    page.open(url + "#token=" + TOKEN)
    page.window("rcomp anim test")
    page.wait("window.rcomp.stats().find((w) => w.codec.startsWith('H.264'))", timeout=20)
    menu(page, "sharp")
    page.wait("window.rcomp.session().welcomed")
    presented = page.wait("window.rcomp.stats()[0].presented > 30 && "
                          "window.rcomp.stats()[0].presented")
    time.sleep(2)
    stats = page.stats()[0]
    assert stats["codec"] == "lossless" and stats["presented"] > presented, stats
    menu(page, "auto")
    page.wait("window.rcomp.stats().find((w) => w.codec.startsWith('H.264'))", timeout=20)


def test_the_figures_show_in_the_menu(desktop, page):
    focused_input_client(desktop, page)
    menu(page)
    page.wait("document.querySelector('#rcomp-menu [data-menu=\"figures\"]').textContent"
              ".includes('rtt')")


def test_a_watch_link_from_the_menu_opens_a_viewer_that_watches(desktop, page):
    from rig import Browser
    server, url = web_session(desktop, (INPUT_CLIENT,), options=("--watch-token",))
    page.open(url + "#token=" + TOKEN)
    page.window("rcomp input test")
    menu(page)
    link = page.wait("document.querySelector('#rcomp-menu [data-menu=\"link-watch\"]')?.value")
    assert "view-only=1" in link and TOKEN not in link, link
    share = page.eval("document.querySelector('#rcomp-menu [data-menu=\"link-share\"]').value")
    assert "share=1" in share and TOKEN in share
    other = Browser(desktop)
    try:
        other.open(link)
        other.window("rcomp input test")
        other.wait("window.rcomp.session().watching")
    finally:
        other.close()


# A phone: 390x844, touch, as the browser emulates one.

def phone(page):
    page.command("viewport", width=390, height=844, mobile=True, touch=True)


def tap_button(page, selector):
    """A finger's tap on the page's element (its centre), scrolled to first
    as a person scrolls the menu to a button below the screen's edge."""
    x, y = page.eval("(() => { const e = document.querySelector(%r); "
                     "e.scrollIntoView({block: 'nearest'}); const r = e.getBoundingClientRect(); "
                     "return [r.left + r.width / 2, r.top + r.height / 2]; })()" % selector)
    page.command("touch", **{"do": "tap", "x": x, "y": y})


def foot_on_phone(desktop, page, script):
    phone(page)
    _, url = web_session(desktop, ("foot", "sh", "-c", script))
    page.open(url + "#token=" + TOKEN)
    page.wait("window.rcomp.stats().find((w) => w.presented > 0) && window.rcomp.session()"
              ".welcomed")
    return url


def test_on_a_phone_a_window_fills_the_screens_width_drawn_larger_to_be_read(desktop, page):
    foot_on_phone(desktop, page, "sleep 60")
    page.wait("document.querySelector('.rcomp-window canvas').getBoundingClientRect().width "
              "=== 390", timeout=10)
    # foot laid out for 390 / 1.5 = 260 of its own pixels, each shown 1.5 times.
    page.wait("window.rcomp.stats()[0].width / (window.devicePixelRatio * 2) === 260 || "
              "window.rcomp.stats()[0].width === 260", timeout=10)
    assert page.eval("document.getElementById('rcomp-keybar') !== null"), "no bar of keys"


def test_on_a_phone_the_keyboard_button_types_into_foot(desktop, page):
    out = os.path.join(desktop.tmp, "typed.txt")
    foot_on_phone(desktop, page, 'read l; printf "%%s\\n" "$l" > %s' % out)
    tap_button(page, "#rcomp-keyboard")
    page.wait("document.activeElement === document.getElementById('rcomp-ime')")
    # What an on-screen keyboard does: text with no keys, a composition.
    page.type("h\u00e9llo ")
    page.command("compose", text="ni")
    page.type("\u4f60")
    page.key("Enter")
    got = wait_for("the typed line", lambda: os.path.exists(out) and open(out).read())
    assert got == "h\u00e9llo \u4f60\n", repr(got)


def test_on_a_phone_the_bars_ctrl_and_the_keyboards_c_interrupt_the_program(desktop, page):
    out = os.path.join(desktop.tmp, "interrupted")
    foot_on_phone(desktop, page, 'trap "echo interrupted > %s; exit" INT; '
                  'while :; do sleep 0.1; done' % out)
    tap_button(page, "#rcomp-keyboard")
    tap_button(page, "#rcomp-keybar [data-key=\"ctrl\"]")
    page.wait("document.querySelector('#rcomp-keybar [data-key=\"ctrl\"]')"
              ".getAttribute('aria-pressed') === 'true'")
    page.type("c")
    wait_for("SIGINT in foot's shell", lambda: os.path.exists(out))
    # Held for one key: it let go.
    page.wait("document.querySelector('#rcomp-keybar [data-key=\"ctrl\"]')"
              ".getAttribute('aria-pressed') === 'false'")


def test_on_a_phone_the_touchpad_moves_the_pointer_and_a_tap_clicks(desktop, page):
    phone(page)
    _, url = web_session(desktop, (INPUT_CLIENT,))
    page.open(url + "#token=" + TOKEN)
    page.window("rcomp input test")
    tap_button(page, "#rcomp-menu-toggle")
    page.wait(MENU)
    tap_button(page, "#rcomp-menu [data-menu=\"touchpad\"]")
    tap_button(page, "#rcomp-menu [data-menu=\"close\"]")
    page.wait("!" + MENU)
    start = page.eval("(() => { const r = document.getElementById('rcomp-touch-cursor')"
                      ".getBoundingClientRect(); return [r.left + r.width / 2, "
                      "r.top + r.height / 2]; })()")
    page.command("touches", events=[
        {"type": "touchStart", "points": [[200, 400]]},
        {"type": "touchMove", "points": [[220, 410]], "pauseMs": 20},
        {"type": "touchMove", "points": [[240, 420]], "pauseMs": 20},
        {"type": "touchEnd", "points": []}])
    moved = page.eval("(() => { const r = document.getElementById('rcomp-touch-cursor')"
                      ".getBoundingClientRect(); return [r.left + r.width / 2, "
                      "r.top + r.height / 2]; })()")
    assert abs(moved[0] - start[0] - 60) < 1 and abs(moved[1] - start[1] - 30) < 1, (start, moved)
    wait_for("the pointer's motion in the app", lambda: "motion main" in remote_log(desktop))
    assert "touch-down" not in remote_log(desktop)
    page.command("touches", events=[{"type": "touchStart", "points": [[100, 300]]},
                                    {"type": "touchEnd", "points": []}])
    wait_for("the tap's click", lambda: "button main 272 released" in remote_log(desktop))
    # Two fingers moving scroll.
    page.command("touches", events=[
        {"type": "touchStart", "points": [[100, 300], [150, 300]]},
        {"type": "touchMove", "points": [[100, 260], [150, 260]], "pauseMs": 20},
        {"type": "touchEnd", "points": []}])
    wait_for("the two fingers' scroll", lambda: "axis 0 " in remote_log(desktop))
