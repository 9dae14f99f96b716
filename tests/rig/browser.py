"""A headless chromium driven with puppeteer-core (tests/web/drive.mjs)."""
import json
import os
import select
import subprocess
import time

from .base import Failure, WEB_DRIVER

class Browser:
    """Debian's chromium, headless, with one page, driven through
    puppeteer-core by tests/web/drive.mjs: each method is one of its
    commands (see its header). Its log is the rig's "chromium"."""

    def __init__(self, rig, env=None):
        modules = os.path.join(os.path.dirname(WEB_DRIVER), "node_modules", "puppeteer-core")
        if not os.path.isdir(modules):
            raise Failure("puppeteer-core is not installed: npm ci in tests/web")
        self.proc = rig.start("chromium", ["node", WEB_DRIVER], env or os.environ.copy(),
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def _ask(self, args, seconds, what):
        """One command and its answer, within seconds."""
        self.proc.stdin.write((json.dumps(args) + "\n").encode())
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], seconds)
        if not ready:
            raise Failure("%s: the browser did not answer in %d s" % (what, seconds))
        line = self.proc.stdout.readline()
        if not line:
            raise Failure("%s: the browser ended (see the chromium log)" % what)
        reply = json.loads(line)
        if "failure" in reply:
            raise Failure("%s: %s" % (what, reply["failure"]))
        return reply

    def command(self, op, **args):
        return self._ask(dict(args, op=op), 60, "browser " + op)

    def open(self, url, timeout=30, clipboard=True):
        """Loads url; clipboard=False refuses the page the clipboard, as a
        browser that never allows it does."""
        return self.command("open", url=url, timeout=timeout, clipboard=clipboard)["loadMs"]

    def wait(self, js, timeout=30):
        """The value of js in the page once it is truthy."""
        return self._ask({"op": "wait", "js": js, "timeout": timeout}, timeout + 20,
                         "waiting in the page for " + js)["value"]

    def eval(self, js):
        return self.command("eval", js=js)["value"]

    def stats(self):
        return self.eval("window.rcomp.stats()")

    def window(self, title, timeout=30):
        """The window's stats once it has presented a frame."""
        return self.wait("window.rcomp && window.rcomp.stats().find((w) => w.title === %s && "
                         "w.presented > 0)" % json.dumps(title), timeout)

    def canvas(self, title):
        import base64
        r = self.command("canvas", title=title)
        return r["width"], r["height"], base64.b64decode(r["rgba"])

    def screenshot(self, path):
        """The page as shown, saved as a PNG."""
        self.command("screenshot", path=path)

    def still(self, title, quiet=0.5, timeout=30):
        """Waits until the window has presented nothing new for quiet s."""
        end = time.time() + timeout
        last = -1
        while time.time() < end:
            n = [w for w in self.stats() if w["title"] == title][0]["presented"]
            if n == last:
                return
            last = n
            time.sleep(quiet)
        raise Failure("the window %s never stood still" % title)

    def canvas_box(self, title):
        """The window's canvas in page coordinates: x, y, width, height."""
        return self.eval("(() => { const el = [...document.querySelectorAll('.rcomp-window')]"
                         ".find((e) => e.dataset.title === %s); const r = el.querySelector("
                         "'canvas').getBoundingClientRect(); return [r.left, r.top, r.width, "
                         "r.height]; })()" % json.dumps(title))

    def mouse(self, do, x=0, y=0, **kw):
        self.command("mouse", **{"do": do, "x": x, "y": y, **kw})

    def click(self, x, y, button="left"):
        self.mouse("move", x, y)
        self.mouse("down", button=button)
        self.mouse("up", button=button)

    def key(self, key, do="press"):
        self.command("key", **{"do": do, "key": key})

    def type(self, text):
        self.command("type", text=text)

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write(b'{"op": "quit"}\n')
                self.proc.stdin.flush()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
