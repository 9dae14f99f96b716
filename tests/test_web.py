"""The browser viewer: rcomp-run --listen-web serves the page and one
WebSocket per viewer; Debian's chromium, headless, driven by puppeteer-core
(tests/web/view.mjs, installed by tools/test.sh), shows the windows."""
import base64
import json
import os
import socket
import subprocess

import pytest

from rig import BLUE, MODEL_CLIENT, RCOMP_RUN, WEB, free_port, wait_for

pytestmark = pytest.mark.skipif(not WEB, reason="built without libwebsockets")

VIEW = os.path.join(os.path.dirname(os.path.abspath(__file__)), "web", "view.mjs")
TOKEN = "browser-test-token-0123456789"


def browser(url, mode, arg=None):
    """What view.mjs reports of the page at url (see its header)."""
    modules = os.path.join(os.path.dirname(VIEW), "node_modules", "puppeteer-core")
    assert os.path.isdir(modules), "puppeteer-core is not installed: npm ci in tests/web"
    argv = ["node", VIEW, url, mode] + ([arg] if arg else [])
    out = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert "failure" not in result, result
    return result


def web_session(desktop, app=(MODEL_CLIENT, "windows")):
    """rcomp-run serving browsers on a loopback port; returns the server
    and the page's address (the token not yet in it)."""
    port = free_port()
    token_file = os.path.join(desktop.tmp, "web.token")
    with open(token_file, "w") as f:
        f.write(TOKEN + "\n")
    os.chmod(token_file, 0o600)
    server = desktop.start_server(list(app), ["--listen-web", "127.0.0.1:%d" % port,
                                              "--token-file", token_file])
    wait_for("rcomp-run to serve browsers",
             lambda: "listening for browsers" in desktop.read_log("rcomp-run"))
    return server, "http://127.0.0.1:%d/" % port


def test_a_window_in_the_browser_is_pixel_exact_against_what_rcomp_view_shows(desktop):
    server, url = web_session(desktop)
    desktop.start_viewer(server)
    local = wait_for("rcomp-view's window", lambda: desktop.window(title="model main"))
    page = browser(url + "#token=%s&share=1" % TOKEN, "window", "model main")
    assert (page["width"], page["height"]) == (300, 200)
    assert page["appId"] == "rcomp-model"
    rgba = base64.b64decode(page["rgba"])
    w, h, rgb = desktop.screenshot(local["rect"])
    assert (w, h) == (300, 200)
    differ = sum(1 for i in range(w * h) if rgba[i * 4:i * 4 + 3] != rgb[i * 3:i * 3 + 3])
    assert differ == 0, "%d of %d pixels differ" % (differ, w * h)
    assert tuple(rgba[0:3]) == BLUE and rgba[3] == 255
    assert page["loadMs"] < 60000 and page["firstWindowMs"] >= page["loadMs"]


def test_a_wrong_token_shows_an_error_and_opens_no_window(desktop):
    _, url = web_session(desktop)
    page = browser(url + "#token=not-the-token", "error")
    assert "token" in page["error"], page
    assert page["windows"] == 0
    wait_for("the refusal in rcomp-run's log",
             lambda: "wrong token" in desktop.read_log("rcomp-run"))


def upgrade(port, origin):
    """The status line a WebSocket upgrade from a page at origin gets."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(("GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
                   "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                   "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: rcomp\r\n"
                   "Origin: %s\r\n\r\n" % (port, origin)).encode())
        reply = b""
        while b"\r\n" not in reply:
            chunk = s.recv(4096)
            if not chunk:
                break
            reply += chunk
        return reply.split(b"\r\n")[0].decode()


def test_a_websocket_from_a_page_of_another_origin_is_refused(desktop):
    _, url = web_session(desktop)
    port = int(url.rsplit(":", 1)[1].strip("/"))
    assert " 101 " in upgrade(port, "http://127.0.0.1:%d" % port) + " "
    assert " 101 " not in upgrade(port, "http://evil.example") + " "
    wait_for("the refusal in rcomp-run's log", lambda: "its page is not this server's"
             in desktop.read_log("rcomp-run"))


def test_plain_http_off_loopback_is_refused_with_what_to_do(desktop):
    port = free_port()
    out = subprocess.run([RCOMP_RUN, "--listen-web", "0.0.0.0:%d" % port, "--", "true"],
                         env=desktop.remote_env, capture_output=True, text=True, timeout=60)
    assert out.returncode != 0
    assert "--web-cert" in out.stderr and "ssh -L" in out.stderr, out.stderr
