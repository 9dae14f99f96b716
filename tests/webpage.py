"""The browser viewer's test helpers: a session serving browsers
(rcomp-run --listen-web) with the suite's token, a relay in front of it,
and what the browser behaviours beside the native ones share (each test
stands with the same behaviour in rcomp-view's file: test_display,
test_input, test_windows, test_clipboard, test_sound, test_sessions,
test_hud, test_web_door). Tests that serve browsers are skipped in a build
without libwebsockets."""
import os
import threading
import time

import pytest

import rig
import webdoor
from rig import INPUT_CLIENT, MODEL_CLIENT, WEB, free_port, read_ppm, wait_for

# The page's sound (decoding, playout) is the browser's and JavaScript, the
# same in both builds; the sanitizers' run of rcomp-run's sound path is
# test_sound.py's. In the sanitized build these tests would measure only
# how much slower rcomp-run is, and cost the suite a minute.
page_sound = pytest.mark.skipif(rig.SANITIZED, reason="the page's sound: the normal build's")


TOKEN = "browser-test-token-0123456789"


def remote_log(desktop):
    return desktop.read_log("rcomp-run")


def differences(rgba, rgb, w, h):
    """Pixels of the page's canvas (RGBA) that differ from a picture (RGB)."""
    return sum(1 for i in range(w * h) if rgba[i * 4:i * 4 + 3] != rgb[i * 3:i * 3 + 3])


def web_session(desktop, app=(MODEL_CLIENT, "windows"), options=(), name="rcomp-run", env=None):
    """rcomp-run serving browsers on a loopback port (env: more of its
    environment); returns the server and the page's address (the token not
    yet in it)."""
    if not WEB:
        pytest.skip("built without libwebsockets")
    port = free_port()
    token_file = os.path.join(desktop.tmp, "web.token")
    with open(token_file, "w") as f:
        f.write(TOKEN + "\n")
    os.chmod(token_file, 0o600)
    server = desktop.start_server(list(app), ["--listen-web", "127.0.0.1:%d" % port,
                                              "--token-file", token_file, *options], name=name,
                                  env=env)
    wait_for("rcomp-run to serve browsers",
             lambda: "listening for browsers" in desktop.read_log(name))
    return server, "http://127.0.0.1:%d/" % port


def through_relay(desktop, url, **link):
    """A relay.py link in front of a session's page (web_session's url):
    the relay, and the page's address through it."""
    port = int(url.rsplit(":", 1)[1].strip("/"))
    near = free_port()
    relay = desktop.start_relay("tcp:127.0.0.1:%d" % port, listen="tcp:127.0.0.1:%d" % near,
                                **link)
    return relay, "http://127.0.0.1:%d/" % near


def upgrade(port, origin):
    """The status line a WebSocket upgrade from a page at origin gets (the
    page's subprotocol, with the token's proof)."""
    status, sock, _ = webdoor.upgrade(port, origin=origin, protocols=webdoor.offer(TOKEN))
    sock.close()
    return status


def open_input_client(desktop, page, fragment=""):
    """input-client in the page; returns its canvas's box in the page."""
    _, url = web_session(desktop, (INPUT_CLIENT,))
    page.open(url + "#token=" + TOKEN + fragment)
    page.window("rcomp input test")
    return page.canvas_box("rcomp input test")


def open_model(desktop, page, mode="windows", title="model main", options=()):
    server, url = web_session(desktop, (MODEL_CLIENT, mode), options)
    page.open(url + "#token=" + TOKEN)
    page.window(title)
    return server


def exact_once_still(page, dump, size):
    """anim-client's window back to lossless in the page, and exact against
    the app's last picture (rcomp-run's --dump-dir)."""
    page.wait("window.rcomp.stats().find((w) => w.title === 'rcomp anim test' && "
              "w.codec === 'lossless')")
    page.still("rcomp anim test")
    w, h, rgba = page.canvas("rcomp anim test")
    dw, dh, rgb = read_ppm(os.path.join(dump, "window-1.ppm"))
    assert (w, h) == (dw, dh) == size
    differ = differences(rgba, rgb, w, h)
    assert differ == 0, "%d of %d pixels differ from the app's" % (differ, w * h)


def remote_env(desktop):
    return dict(desktop.remote_env, WAYLAND_DISPLAY="wayland-0")


def record_while(sound, seconds, at, action):
    """seconds of the speaker, with action done at seconds into them."""
    pcm = []
    t = threading.Thread(target=lambda: pcm.append(sound.record("speaker", seconds)))
    t.start()
    time.sleep(at)
    action()
    t.join()
    return pcm[0]


def audit(page, where):
    """axe-core's audit: printed, and its violations returned."""
    r = page.command("axe")
    total = r["passes"] + len(r["violations"])
    print("accessibility of %s: %d of %d rules pass (score %.0f%%); violations: %s" % (
        where, r["passes"], total, 100.0 * r["passes"] / max(1, total),
        "; ".join("%s (%s): %s" % (v["id"], v["impact"], ", ".join(v["nodes"]))
                  for v in r["violations"]) or "none"))
    return r["violations"]
