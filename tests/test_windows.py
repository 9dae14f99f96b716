"""The window model: popups as local popups, several toplevels and apps,
dialogs with parents, states and size hints, decorations, X11 windows."""
import os
import re
import shutil
import time

import pytest

from rig import (BLUE, BTN_LEFT, BTN_MIDDLE, BTN_RIGHT, GREEN, INPUT_CLIENT, KEY_LEFTSHIFT,
                 MODEL_CLIENT, ORANGE, RCOMP_RUN, RCOMP_VIEW, YELLOW, VirtualKeyboard,
                 VirtualPointer, step, wait_for)
from webpage import TOKEN, open_input_client, open_model, web_session


def remote_log(desktop):
    return desktop.read_log("rcomp-run")


def open_popup(desktop):
    """A right click at (350,250) of input-client opens its 120x80 popup:
    70 px past the parent's right edge. Returns the pointer, the window's
    origin, and a screen point of the popup outside the parent."""
    desktop.start_viewer(desktop.start_server([INPUT_CLIENT]))
    w = wait_for("the window", lambda: desktop.window(app_id="rcomp-input-test"))
    desktop.swaymsg("[app_id=rcomp-input-test] focus")
    pointer = VirtualPointer(desktop)
    time.sleep(0.5)
    ox, oy = w["rect"]["x"], w["rect"]["y"]
    pointer.send("move %d %d" % (ox + 10, oy + 10))
    time.sleep(0.2)
    pointer.send("move %d %d" % (ox + 350, oy + 250))
    wait_for("the pointer at 350,250", lambda: "main 350.00 250.00" in remote_log(desktop))
    pointer.send("press %d" % BTN_RIGHT, "release %d" % BTN_RIGHT)
    wait_for("the app to open its popup", lambda: "popup-open 0" in remote_log(desktop))
    outside = (ox + 440, oy + 320)
    wait_for("the popup's pixels past the parent's edge",
             lambda: desktop.pixel(*outside) == BLUE and desktop.pixel(ox + 380, oy + 270)
             == BLUE, interval=0.2)
    return pointer, (ox, oy), outside


def test_a_popup_is_a_local_popup_drawn_past_its_parents_edge(desktop):
    open_popup(desktop)
    windows = [x for x in desktop.windows() if x["app_id"] == "rcomp-input-test"]
    assert len(windows) == 1, "the popup became a toplevel window"


def test_a_nested_popup_opens_from_a_popup_and_goes_when_the_app_closes_it(desktop):
    pointer, (ox, oy), outside = open_popup(desktop)
    pointer.send("move %d %d" % (ox + 410, oy + 290))
    wait_for("the pointer on the popup at 60,40",
             lambda: "popup0 60.00 40.00" in remote_log(desktop))
    pointer.send("press %d" % BTN_RIGHT, "release %d" % BTN_RIGHT)
    wait_for("the nested popup", lambda: "popup-open 1" in remote_log(desktop))
    nested = (ox + 500, oy + 340)  # (410,290) + 100x60, past both popups' edges
    wait_for("the nested popup's pixels", lambda: desktop.pixel(*nested) == ORANGE,
             interval=0.2)
    # The app closes the nested one on a middle click: the local popup goes.
    pointer.send("press %d" % BTN_MIDDLE, "release %d" % BTN_MIDDLE)
    wait_for("the app to close its nested popup",
             lambda: "popup-closed 1" in remote_log(desktop))
    wait_for("the nested popup to vanish", lambda: desktop.pixel(*nested) != ORANGE,
             interval=0.2)
    assert desktop.pixel(*outside) == BLUE, "the first popup went with the nested one"


def test_a_click_outside_dismisses_a_popup_here_and_tells_the_app(desktop):
    pointer, _, outside = open_popup(desktop)
    pointer.send("move 3 3")
    time.sleep(0.3)
    pointer.send("press %d" % BTN_LEFT, "release %d" % BTN_LEFT)
    wait_for("the app to hear popup_done", lambda: "popup-done 0" in remote_log(desktop))
    wait_for("the popup to vanish", lambda: desktop.pixel(*outside) != BLUE, interval=0.2)


def model_windows(desktop):
    server = desktop.start_server(["sh", "-c", "%s & exec %s windows" % (INPUT_CLIENT,
                                                                        MODEL_CLIENT)])
    desktop.start_viewer(server)
    wait_for("the main window", lambda: desktop.window(title="model main"))
    wait_for("the other app's window", lambda: desktop.window(app_id="rcomp-input-test"))
    return server


# Tiled, so that sway's floating of a dialog shows that it has a parent.
@pytest.mark.desktop(floating=False)
def test_a_dialog_keeps_its_parent_and_other_toplevels_are_windows_of_their_own(desktop):
    server = model_windows(desktop)
    step(desktop, server, 1)
    dialog = wait_for("the dialog", lambda: desktop.window(title="model dialog"))
    step(desktop, server, 2)
    other = wait_for("the second toplevel", lambda: desktop.window(title="model other"))
    main_w = desktop.window(title="model main")
    kinds = {t: desktop.window(title=t)["type"] for t in ("model main", "model dialog",
                                                          "model other")}
    # Headless sway floats a toplevel that has a parent, and tiles the others.
    assert kinds == {"model main": "con", "model dialog": "floating_con",
                     "model other": "con"}
    wait_for("the dialog's pixels", lambda: desktop.pixel(80, 50, dialog) == GREEN,
             interval=0.2)
    wait_for("the main window's pixels", lambda: desktop.pixel(20, 20, main_w) == BLUE,
             interval=0.2)
    wait_for("the second toplevel's pixels", lambda: desktop.pixel(20, 20, other) == ORANGE,
             interval=0.2)


@pytest.mark.desktop(floating=False)
def test_windows_go_when_the_app_destroys_them_and_only_those(desktop):
    server = model_windows(desktop)
    for n in (1, 2):
        step(desktop, server, n)
    wait_for("the second toplevel", lambda: desktop.window(title="model other"))
    step(desktop, server, 3)
    wait_for("the dialog to go", lambda: desktop.window(title="model dialog") is None)
    step(desktop, server, 4)
    wait_for("the second toplevel to go", lambda: desktop.window(title="model other") is None)
    assert desktop.window(title="model main") and desktop.window(app_id="rcomp-input-test")


@pytest.mark.desktop(floating=False)
def test_title_and_app_id_changes_show_live(desktop):
    server = model_windows(desktop)
    for n in range(1, 6):
        step(desktop, server, n)
    wait_for("the new title and app_id", lambda: desktop.window(title="model renamed") and
             desktop.window(title="model renamed")["app_id"] == "rcomp-model-renamed")


def test_two_real_apps_under_one_rcomp_run_are_two_local_windows(desktop):
    apps = desktop.start_server(["sh", "-c", "foot & exec weston-terminal"])
    desktop.start_viewer(apps)
    wait_for("foot's and weston-terminal's windows",
             lambda: desktop.window(app_id="foot") and
             desktop.window(app_id="org.freedesktop.weston.wayland-terminal"), timeout=30)
    desktop.check_alive(apps)


def configures(desktop):
    return re.findall(r"^configure (\d+) (\d+)(.*)$", remote_log(desktop), re.M)


def states_app(desktop):
    server = desktop.start_server([MODEL_CLIENT, "states"])
    desktop.start_viewer(server)
    w = wait_for("the window", lambda: desktop.window(title="model states"))
    return server, w


@pytest.mark.desktop(floating=False)
def test_size_hints_reach_the_local_compositor_before_the_window_maps(desktop):
    """sway floats a window whose minimum and maximum size agree."""
    _, w = states_app(desktop)
    assert w["type"] == "floating_con"
    assert (w["rect"]["width"], w["rect"]["height"]) == (300, 200)


@pytest.mark.desktop(floating=False)
def test_fullscreen_works_when_the_app_asks_and_when_the_user_does(desktop):
    server, _ = states_app(desktop)

    def fullscreen():
        return desktop.window(title="model states")["fullscreen_mode"] == 1

    # The app asks: the local window goes fullscreen and the app hears so.
    step(desktop, server, 1)
    wait_for("the local window to go fullscreen", fullscreen)
    wait_for("the app to be told it is fullscreen",
             lambda: configures(desktop)[-1][:2] == ("1280", "800") and "fullscreen"
             in configures(desktop)[-1][2])
    step(desktop, server, 2)
    wait_for("the local window to leave fullscreen", lambda: not fullscreen())
    wait_for("the app to be told", lambda: "fullscreen" not in configures(desktop)[-1][2])
    # The user asks, locally.
    desktop.swaymsg('[title="model states"] fullscreen enable')
    wait_for("the app to be told it is fullscreen",
             lambda: "fullscreen" in configures(desktop)[-1][2])
    desktop.swaymsg('[title="model states"] fullscreen disable')
    wait_for("the app to be told it is not",
             lambda: "fullscreen" not in configures(desktop)[-1][2])
    # sway 1.7 implements neither maximize nor minimize; the requests must
    # still pass without harm.
    for n in (3, 4, 5):
        step(desktop, server, n)
    desktop.check_alive(server)


@pytest.mark.desktop(floating=False)
def test_the_activated_state_follows_local_focus(desktop):
    states_app(desktop)
    wait_for("the app to be activated", lambda: "activated" in configures(desktop)[-1][2])
    desktop.start("local-client", [INPUT_CLIENT, "local-window"], desktop.local_env)
    wait_for("the app to be deactivated", lambda: "activated" not in configures(desktop)[-1][2])
    desktop.swaymsg('[title="model states"] focus')
    wait_for("the app to be activated again", lambda: "activated" in configures(desktop)[-1][2])


def test_maximize_requests_reach_a_local_weston_and_its_answers_the_app(desktop):
    """sway 1.7 has no maximize, so the viewer shows the remote window on a
    headless weston (desktop shell): the app asks to be maximized and
    weston's answer reaches it; so does the way back; minimize passes."""
    weston_rt = os.path.join(desktop.tmp, "weston-rt")
    os.mkdir(weston_rt, 0o700)
    weston_env = dict(desktop.local_env, XDG_RUNTIME_DIR=weston_rt, WAYLAND_DISPLAY="wl-weston")
    weston_env.pop("SWAYSOCK", None)
    desktop.start("weston", ["weston", "--backend=headless-backend.so", "--use-pixman",
                             "--socket=wl-weston", "--width=1024", "--height=768",
                             "--idle-time=0"], weston_env)
    wait_for("weston's socket", lambda: os.path.exists(os.path.join(weston_rt, "wl-weston")))
    server = desktop.start_server([MODEL_CLIENT, "maximize"])
    desktop.start("rcomp-view", [RCOMP_VIEW, "--socket", server.socket], weston_env)
    wait_for("the window on weston", lambda: "frame clock" in remote_log(desktop))
    step(desktop, server, 1)
    wait_for("the app to be told it is maximized",
             lambda: configures(desktop) and "maximized" in configures(desktop)[-1][2])
    width, height = (int(v) for v in configures(desktop)[-1][:2])
    assert 900 <= width <= 1024 and 600 <= height <= 768, "maximized to %dx%d" % (width,
                                                                               height)
    step(desktop, server, 2)
    wait_for("the app to be told it is not",
             lambda: "maximized" not in configures(desktop)[-1][2])
    step(desktop, server, 3)
    desktop.check_alive(server)


def title_bar_drawn_by_app(desktop, app_id):
    """True if the app drew something else at the top of its window (its own
    title bar) than deep in it (its content)."""
    w = desktop.window(app_id=app_id)
    x = w["rect"]["x"] + w["window_rect"]["x"] + 40
    y = w["rect"]["y"] + w["window_rect"]["y"]
    return desktop.pixel(x, y + 6) != desktop.pixel(x, y + 80)


# sway draws title bars on floating windows unless the app draws its own.
DECORATED = 'default_border normal\ndefault_floating_border normal\n'


@pytest.mark.desktop(extra=DECORATED)
def test_an_app_using_xdg_decoration_gets_the_local_title_bar_and_draws_none(desktop):
    desktop.start_viewer(desktop.start_server(["foot"]))
    wait_for("sway to decorate foot",
             lambda: (desktop.window(app_id="foot") or {}).get("border") == "normal",
             interval=0.2)
    time.sleep(1)
    assert not title_bar_drawn_by_app(desktop, "foot"), "foot drew a title bar under sway's"


@pytest.mark.skipif(not shutil.which("zathura"), reason="zathura is not installed")
@pytest.mark.desktop(extra=DECORATED)
def test_a_gtk3_app_without_a_header_bar_gets_the_local_title_bar_and_draws_none(desktop):
    """zathura (GTK 3, no header bar) asks who decorates through KDE's
    server decoration, GTK 3's only way: it gets sway's title bar and draws
    none of its own, as it would straight on sway."""
    desktop.start_viewer(desktop.start_server(["zathura"]))
    wait_for("sway to decorate zathura", lambda: (desktop.window(
        app_id="org.pwmt.zathura") or {}).get("border") == "normal", timeout=30, interval=0.2)
    time.sleep(1)
    assert not title_bar_drawn_by_app(desktop, "org.pwmt.zathura"), \
        "zathura drew a title bar under sway's"


@pytest.mark.desktop(extra=DECORATED)
def test_an_app_without_xdg_decoration_draws_its_own_title_bar_and_sway_none(desktop):
    desktop.start_viewer(desktop.start_server([INPUT_CLIENT]))
    wait_for("sway to leave the window's decorations to it",
             lambda: (desktop.window(app_id="rcomp-input-test") or {}).get("border") == "csd",
             interval=0.2)
    time.sleep(1)
    assert desktop.window(app_id="rcomp-input-test")["border"] == "csd"


@pytest.mark.desktop(extra=DECORATED)
def test_with_app_decorations_every_app_draws_its_own_title_bar(desktop):
    desktop.start_viewer(desktop.start_server(["foot"]), ["--app-decorations"])
    wait_for("foot's window", lambda: desktop.window(app_id="foot"))
    wait_for("foot to draw its own title bar", lambda: title_bar_drawn_by_app(desktop, "foot"),
             interval=0.3)
    assert desktop.window(app_id="foot")["border"] == "csd"


def x11_apps(desktop):
    server = desktop.start_server(["sh", "-c", "xlogo -bg '#2040e0' -fg '#e0e020' & "
                                   "exec xterm -bg '#2040e0' -fg white -geometry 40x10 "
                                   "-e sh -c 'read line; echo \"$line\" > %s/typed; "
                                   "sleep 60'" % desktop.tmp], ["-v"])
    desktop.start_viewer(server)
    return server


# Both X11 windows would float centred, one over the other.
X11_APART = 'for_window [app_id="XLogo"] move position 0 0\n'


@pytest.mark.desktop(extra=X11_APART)
def test_an_x11_app_runs_through_xwayland_started_on_demand(desktop):
    x11_apps(desktop)
    logo = wait_for("xlogo's window", lambda: desktop.window(app_id="XLogo"), timeout=30)
    wait_for("xlogo's pixels (logo and background)",
             lambda: desktop.pixel(3, 3, logo) == YELLOW and desktop.pixel(50, 3, logo) == BLUE,
             interval=0.2)


def xterm_with_keyboard(desktop):
    server = x11_apps(desktop)
    wait_for("xterm's window", lambda: desktop.window(app_id="XTerm"), timeout=30)
    desktop.swaymsg("[app_id=XTerm] focus")
    wait_for("xterm to have focus", lambda: desktop.window(app_id="XTerm")["focused"])
    kb = VirtualKeyboard(desktop)
    kb.send("tap %d" % KEY_LEFTSHIFT)
    time.sleep(0.5)
    return server, kb


@pytest.mark.desktop(extra=X11_APART)
def test_keys_typed_into_an_x11_app_arrive(desktop):
    _, kb = xterm_with_keyboard(desktop)
    kb.send("tap 35", "tap 23", "tap 28")  # h i Enter
    typed = os.path.join(desktop.tmp, "typed")
    wait_for("what was typed into xterm", lambda: os.path.exists(typed) and
             open(typed).read() == "hi\n")


@pytest.mark.desktop(extra=X11_APART)
def test_an_x11_menu_is_a_local_popup_outside_its_window(desktop):
    """Control and a left click open xterm's main menu: an override-redirect
    window, shown as a local popup of the xterm."""
    _, kb = xterm_with_keyboard(desktop)
    r = desktop.window(app_id="XTerm")["rect"]
    pointer = VirtualPointer(desktop)
    time.sleep(0.5)
    x, y = r["x"] + r["width"] - 20, r["y"] + r["height"] - 20
    pointer.send("move %d %d" % (r["x"] + 10, r["y"] + 10), "move %d %d" % (x, y))
    outside = (x + 30, y + 40)  # past xterm's bottom right corner
    before = desktop.pixel(*outside)
    kb.send("press 29")  # left control
    pointer.send("press %d" % BTN_LEFT)
    wait_for("xterm's menu as a new X11 popup",
             lambda: "(override-redirect)" in remote_log(desktop))
    wait_for("the menu drawn outside xterm's window", lambda: desktop.pixel(*outside) != before,
             interval=0.2)
    pointer.send("release %d" % BTN_LEFT)
    kb.send("release 29")


@pytest.mark.desktop(extra=X11_APART)
def test_with_no_xwayland_an_x11_app_reaches_no_x_server(desktop):
    """Even with DISPLAY naming a live X server (the first session's
    Xwayland), an app under --no-xwayland must not reach it."""
    x11_apps(desktop)
    wait_for("xlogo's window", lambda: desktop.window(app_id="XLogo"), timeout=30)
    display = re.search(r"DISPLAY=(:\d+)", remote_log(desktop)).group(1)
    blocked = desktop.start("no-xwayland", [RCOMP_RUN, "--socket",
                                            os.path.join(desktop.remote_rt, "blocked.sock"),
                                            "--no-xwayland", "--", "xlogo"],
                            dict(desktop.remote_env, DISPLAY=display))
    assert blocked.wait(timeout=20) != 0, "xlogo ran with --no-xwayland"
    assert "xwayland" not in desktop.read_log("no-xwayland").lower()


# The same behaviours in the browser viewer.


def test_a_window_moved_by_its_title_bar_takes_input_at_its_new_place(desktop, page):
    x, y, _, _ = open_input_client(desktop, page)
    page.mouse("move", x + 100, y - 12)
    page.mouse("down")
    page.mouse("move", x + 300, y + 88, steps=5)
    page.mouse("up")
    nx, ny, _, _ = page.canvas_box("rcomp input test")
    assert (nx, ny) == (x + 200, y + 100)
    page.click(nx + 150, ny + 120)
    wait_for("the click on the subsurface where it is now",
             lambda: "button sub 272 pressed" in remote_log(desktop))
    assert "sub 50.00 20.00" in remote_log(desktop)


def test_a_window_resized_from_its_edge_gives_the_app_the_new_size(desktop, page):
    open_model(desktop, page)
    x, y, w, h = page.canvas_box("model main")
    assert (w, h) == (300, 200)
    page.mouse("move", x + w + 1, y + h + 1)
    page.mouse("down")
    page.mouse("move", x + w + 101, y + h + 51, steps=5)
    page.mouse("up")
    page.wait("window.rcomp.stats().find((w) => w.title === 'model main' && w.width === 400 "
              "&& w.height === 250)")
    _, _, nw, nh = page.canvas_box("model main")
    assert (nw, nh) == (400, 250)


def test_a_double_click_on_the_title_bar_maximizes_the_window_to_the_page(desktop, page):
    open_model(desktop, page, "maximize", "model states")
    page.eval("(() => { const b = [...document.querySelectorAll('.rcomp-window')].find((e) => "
              "e.dataset.title === 'model states').querySelector('.rcomp-title'); "
              "b.dispatchEvent(new MouseEvent('dblclick', {bubbles: true})); })()")
    desk = page.eval("(() => { const r = document.getElementById('rcomp-desk')"
                     ".getBoundingClientRect(); return [r.width, r.height]; })()")
    size = "configure %d %d maximized" % (desk[0], desk[1] - 24)
    wait_for("the app's maximized configure", lambda: size in remote_log(desktop))
    page.wait("window.rcomp.stats().find((w) => w.title === 'model states' && w.width === %d)"
              % desk[0])
    assert page.canvas_box("model states")[:2] == [0, 24]


def test_an_app_that_asks_to_be_maximized_is_maximized_in_the_page(desktop, page):
    server = open_model(desktop, page, "maximize", "model states")
    step(desktop, server, 1)
    desk = page.eval("(() => { const r = document.getElementById('rcomp-desk')"
                     ".getBoundingClientRect(); return [r.width, r.height]; })()")
    wait_for("the maximized size", lambda: "configure %d %d" % (desk[0], desk[1] - 24)
             in remote_log(desktop))
    page.wait("window.rcomp.stats().find((w) => w.title === 'model states' && "
              "w.width === %d)" % desk[0])
    step(desktop, server, 2)
    page.wait("window.rcomp.stats().find((w) => w.title === 'model states' && "
              "w.width !== %d)" % desk[0])


def test_the_close_button_closes_the_app_and_its_window_goes(desktop, page):
    open_model(desktop, page)
    page.eval("[...document.querySelectorAll('.rcomp-window')].find((e) => e.dataset.title === "
              "'model main').querySelector('.rcomp-close').click()")
    wait_for("the app to hear the close", lambda: "close main" in remote_log(desktop))
    page.wait("window.rcomp.stats().length === 0")


def test_the_window_list_names_every_toplevel_and_raises_the_one_clicked(desktop, page):
    server = open_model(desktop, page)
    step(desktop, server, 1)
    step(desktop, server, 2)
    page.window("model dialog")
    page.window("model other")
    names = page.wait("(() => { const n = [...document.querySelectorAll('.rcomp-list-item')]"
                      ".map((b) => b.textContent).sort(); return n.length === 3 && n; })()")
    assert names == ["model dialog", "model main", "model other"]
    page.eval("[...document.querySelectorAll('.rcomp-list-item')].find((b) => "
              "b.textContent === 'model main').click()")
    page.wait("window.rcomp.stats().find((w) => w.title === 'model main').focused")
    tops = page.eval("(() => { const els = [...document.querySelectorAll('.rcomp-window')]; "
                     "els.sort((a, b) => b.style.zIndex - a.style.zIndex); "
                     "return els[0].dataset.title; })()")
    assert tops == "model main"
    step(desktop, server, 3)
    page.wait("document.querySelectorAll('.rcomp-list-item').length === 2")


def test_a_popup_menu_opens_at_its_place_above_its_parent_and_a_click_outside_ends_it(
        desktop, page):
    x, y, _, _ = open_input_client(desktop, page)
    page.click(x + 20, y + 30, button="right")
    wait_for("the app's popup", lambda: "popup-open 0" in remote_log(desktop))
    popup = page.wait("window.rcomp.stats().find((w) => w.popup && w.presented > 0)")
    assert (popup["width"], popup["height"]) == (120, 80)
    box = page.eval("(() => { const r = document.querySelector('.rcomp-popup canvas')"
                    ".getBoundingClientRect(); return [r.left, r.top]; })()")
    assert box == [x + 20, y + 30]
    z = page.eval("(() => { const e = [...document.querySelectorAll('.rcomp-window')]; "
                  "return e.map((el) => [el.classList.contains('rcomp-popup'), "
                  "Number(el.style.zIndex)]); })()")
    assert max(zi for p, zi in z if p) > max(zi for p, zi in z if not p)
    page.click(x + 300, y + 250)
    wait_for("the popup dismissed", lambda: "popup-done 0" in remote_log(desktop))
    page.wait("!window.rcomp.stats().some((w) => w.popup)")


def test_dragging_the_title_bar_an_app_draws_moves_its_window_in_the_page(desktop, page):
    """gtk3-demo draws its own title bar (a GtkHeaderBar): a drag there is
    the app's, and GTK asks for an interactive move, which the page does
    with the press it holds; the window follows the rest of the drag."""
    server, url = web_session(desktop, ("env", "NO_AT_BRIDGE=1", "gtk3-demo"))
    page.open(url + "#token=" + TOKEN)
    title = page.wait("(() => { const w = window.rcomp.stats().find((w) => w.presented > 2); "
                      "return w && w.title; })()", timeout=30)
    time.sleep(1.5)  # GTK's first frames
    x, y, width, _ = page.canvas_box(title)
    before = page.eval("(() => { const e = document.querySelector('.rcomp-window'); "
                       "return [e.offsetLeft, e.offsetTop]; })()")
    page.mouse("move", x + width // 2 - 100, y + 20)
    page.mouse("down")
    page.mouse("move", x + width // 2, y + 80, steps=10)
    page.mouse("up")
    after = page.wait("(() => { const e = document.querySelector('.rcomp-window'); "
                      "const p = [e.offsetLeft, e.offsetTop]; "
                      "return p[0] !== %d && p; })()" % before[0])
    moved = (after[0] - before[0], after[1] - before[1])
    # GTK starts the move once the pointer passed its drag threshold.
    assert 75 <= moved[0] <= 100 and 40 <= moved[1] <= 60, moved


def test_a_resize_the_app_asks_for_follows_the_drag_and_gives_the_app_the_new_size(
        desktop, page):
    """An app's own resize grip (input-client's back button) asks for an
    interactive resize from a corner with the press the page holds; the
    page resizes the window from that corner as the drag goes on, and the
    app is configured to the size the drag made."""
    x, y, _, _ = open_input_client(desktop, page)
    page.mouse("move", x + 390, y + 290)
    page.mouse("down", button="back")
    wait_for("the app to ask", lambda: "resize-asked" in remote_log(desktop))
    page.wait("window.rcomp.stats()[0].resizing")
    page.mouse("move", x + 390 + 120, y + 290 + 80, steps=8)
    page.mouse("up", button="back")
    wait_for("the new size", lambda: "configure 520 380" in remote_log(desktop))
    assert not page.stats()[0]["resizing"]


def hold_an_x_display():
    """Binds the abstract socket of the first X display whose lock file is
    missing, as a session in another root on the host would hold it (its
    lock file out of sight): the display a new session tries first."""
    import socket
    for d in range(32):
        if os.path.exists("/tmp/.X%d-lock" % d):
            continue
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.bind("\0/tmp/.X11-unix/X%d" % d)
        except OSError:
            s.close()
            continue
        s.listen(1)
        return s
    pytest.fail("no X display is free to hold")


@pytest.mark.desktop(extra=X11_APART)
def test_two_sessions_beside_a_display_held_out_of_sight_both_show_x11_and_log_no_error(desktop):
    """The first free-looking X display's socket is taken where its lock
    cannot be seen; two sessions start at once, each with an X11 app. Both
    windows show, the display that failed to bind is only a debug line, and
    neither session's log (nor its viewer's) says error, Xwayland's end
    included."""
    held = hold_an_x_display()
    try:
        colours = {"one": ("#2040e0", BLUE), "two": ("#20c020", GREEN)}
        servers, viewers = {}, {}
        for name, (bg, _) in colours.items():
            servers[name] = desktop.start_server(["xlogo", "-bg", bg, "-fg", "#e0e020"], ["-v"],
                                                 name="run-" + name)
        for name in colours:
            viewers[name] = desktop.start_viewer(servers[name], name="view-" + name)
        for name in colours:
            wait_for("xlogo's window of session %s" % name,
                     lambda: desktop.window(app_id="XLogo", pid=viewers[name].pid), timeout=30)
        for x, name in zip((0, 300), colours):
            desktop.swaymsg("[pid=%d] move position %d 0" % (viewers[name].pid, x))
        for x, (name, (_, rgb)) in zip((0, 300), colours.items()):
            logo = wait_for("session %s's xlogo moved apart" % name,
                            lambda: [w for w in [desktop.window(app_id="XLogo",
                                                                pid=viewers[name].pid)]
                                     if w["rect"]["x"] == x])[0]
            wait_for("session %s's xlogo drawn" % name,
                     lambda: desktop.pixel(50, 3, logo) == rgb, interval=0.2)
        for p in servers.values():
            p.terminate()
        for p in servers.values():
            p.wait(timeout=20)
    finally:
        held.close()
    logs = {name: desktop.read_log(name) for name in
            ["run-one", "run-two", "view-one", "view-two"]}
    assert any(re.search(r"debug .*Failed to bind socket .*Address already in use", logs[n])
               for n in ("run-one", "run-two")), \
        "neither session tried the held display:\n" + logs["run-one"]
    for name, text in logs.items():
        said = [line for line in text.splitlines() if re.search(r"(?i)\berror\b|\(EE\)", line)]
        assert not said, "%s's log says error:\n%s" % (name, "\n".join(said))
