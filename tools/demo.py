"""Runs foot through rcomp on a headless sway and saves a screenshot; then
shows the same session in Debian's chromium, headless, as a second viewer
beside it, and saves the page's. Each screenshot is taken once the window
shows, pixel for pixel, what rcomp-run sent of foot with text in it, and
the demo fails, saying which and why, where one does not. Used by
tools/demo.sh; run that instead."""
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
from rig import (WEB, Browser, Failure, Rig, count_differences, free_port,  # noqa: E402
                 read_ppm, wait_for, wait_screen_matches)

OUT = os.path.abspath(os.path.join(HERE, "..", "out"))
TITLE = "foot via rcomp"


def shows_text(image):
    """Whether a picture of foot holds the demo's answer: rows of ink (not
    foot's background, its top left pixel) enough for the five lines the
    command prints, where a blank window has none and the prompt one."""
    w, h, p = image
    background = p[0:3]
    ink = sum(1 for y in range(h)
              if any(p[i:i + 3] != background for i in range(y * w * 3, (y + 1) * w * 3, 3)))
    return ink >= 45


def browser(rig, port, token, dump, shot):
    """The session in chromium, headless, beside rcomp-view, driven by
    puppeteer-core as the tests drive it: the page's screenshot once its
    window shows, pixel for pixel, what rcomp-run sent."""
    url = "http://127.0.0.1:%d/#token=%s&share=1" % (port, token)
    print("the same session in a browser: chromium %s" % url.replace(token, "TOKEN"))
    page = Browser(rig, rig.local_env)
    page.open(url)
    page.window(TITLE)
    state = {}

    def matches():
        w, h, rgba = page.canvas(TITLE)
        want = read_ppm(dump)
        if (w, h) != want[:2]:
            state["last"] = "the page's window is %dx%d, rcomp-run's %dx%d" % (w, h, *want[:2])
            return False
        diff = sum(1 for i in range(w * h) if rgba[i * 4:i * 4 + 3] != want[2][i * 3:i * 3 + 3])
        state["last"] = "%d of its %d pixels differ from what rcomp-run sent" % (diff, w * h)
        return diff == 0

    try:
        wait_for("the page's window to show foot", matches, timeout=30, interval=0.3)
    except Failure as e:
        raise Failure("%s: %s" % (e, state.get("last")))
    page.screenshot(shot)
    if not matches():
        raise Failure("the page's window changed while it was photographed: " + state["last"])
    w, h, _ = read_ppm(dump)
    print("the page's window: %dx%d, the same pixels as rcomp-view's" % (w, h))
    print("screenshot of the page saved to %s" % shot)


def main():
    os.makedirs(OUT, exist_ok=True)
    shot = os.path.join(OUT, "rcomp-demo-foot.png")
    page_shot = os.path.join(OUT, "rcomp-demo-browser.png")
    for old in (shot, page_shot):  # a failed demo leaves no picture of an earlier one
        if os.path.exists(old):
            os.unlink(old)
    rig = Rig(width=1280, height=800)
    try:
        print("local desktop: headless sway (%s)" % rig.wayland_display)
        # rcomp-run, as on the remote machine, serving rcomp-view on a
        # socket and browsers on a loopback port, with one token for both.
        token = "demo-" + os.urandom(12).hex()
        token_file = os.path.join(rig.tmp, "demo.token")
        with open(token_file, "w") as f:
            f.write(token + "\n")
        os.chmod(token_file, 0o600)
        port = free_port()
        web = ["--listen-web", "127.0.0.1:%d" % port, "--token-file", token_file] if WEB else []
        dumps = os.path.join(rig.tmp, "dump")
        os.makedirs(dumps)
        dump = os.path.join(dumps, "window-1.ppm")  # what rcomp-run last sent of foot
        app = ["foot", "--title", TITLE, "bash", "--norc", "--noprofile", "-i"]
        print("running: rcomp-run %s-- %s" % ("--listen-web 127.0.0.1:%d " % port if WEB else "",
                                              " ".join(app)))
        rig.remote_env["PS1"] = "remote$ "
        server = rig.start_server(app, ["--dump-dir", dumps, *web])
        print("running: rcomp-view --socket %s" % server.socket)
        viewer = rig.start_viewer(server)
        window = wait_for("foot's window on the local desktop",
                          lambda: rig.window(app_id="foot"), timeout=30)
        wait_for("keyboard focus", lambda: (rig.window(app_id="foot") or {}).get("focused"))
        time.sleep(0.5)
        command = ('clear; echo "This foot runs in rcomp-run, a headless wlroots compositor,"; '
                   'echo "and rcomp-view shows it as a window of the local desktop."; '
                   'echo; uname -sr; echo "typed locally, answered remotely: $((6 * 7))"')
        subprocess.run(["wtype", "-k", "Shift_L", "-s", "400", command, "-k", "Return"],
                       env=rig.local_env, check=True, timeout=30)
        # The answer is on the screen once the local window is what
        # rcomp-run sent, pixel for pixel, with text in it.
        _, _, window = wait_screen_matches(rig, "foot", dump, timeout=30, shows=shows_text)
        r = window["rect"]
        geometry = "%d,%d %dx%d" % (r["x"], r["y"], r["width"], r["height"])
        subprocess.run(["grim", "-g", geometry, shot], env=rig.local_env, check=True)
        if count_differences(rig.screenshot(r), read_ppm(dump)) != 0:
            raise Failure("the local window changed while it was photographed")
        print("local window: %dx%d, title %r, the same pixels as rcomp-run sent" % (
            r["width"], r["height"], window.get("name")))
        print("screenshot of the local window saved to %s" % shot)
        if viewer.poll() is not None:
            raise Failure("rcomp-view exited early: " + rig.read_log("rcomp-view"))
        if WEB:
            browser(rig, port, token, dump, page_shot)
        else:
            print("built without libwebsockets: no browser viewer to show")
        return 0
    except Failure as e:
        print("demo failed:", e)
        for p in rig.procs:
            print("---- %s ----\n%s" % (p.rcomp_name, rig.read_log(p.rcomp_name, 4000)))
        return 1
    finally:
        rig.close()


if __name__ == "__main__":
    sys.exit(main())
