"""Runs foot through rcomp on a headless sway and saves a screenshot; then
shows the same session in Debian's chromium, headless, as a second viewer
beside it, and saves the page's. Used by tools/demo.sh; run that instead."""
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
from rig import WEB, Failure, Rig, free_port, wait_for  # noqa: E402

OUT = os.path.abspath(os.path.join(HERE, "..", "out"))


def browser(rig, port, token, shot):
    """The session in chromium, headless, beside rcomp-view: the page's
    screenshot once it has drawn (its own clock runs 4 s)."""
    url = "http://127.0.0.1:%d/#token=%s&share=1" % (port, token)
    print("the same session in a browser: chromium %s" % url.replace(token, "TOKEN"))
    r = subprocess.run(["chromium", "--headless=new", "--no-sandbox", "--disable-gpu",
                        "--window-size=1280,800", "--virtual-time-budget=4000",
                        "--screenshot=" + shot, url],
                       capture_output=True, text=True, timeout=60, env=rig.local_env)
    if r.returncode != 0 or not os.path.exists(shot):
        raise Failure("chromium took no screenshot: " + r.stderr[-2000:])
    print("screenshot of the page saved to %s" % shot)


def main():
    os.makedirs(OUT, exist_ok=True)
    shot = os.path.join(OUT, "rcomp-demo-foot.png")
    page_shot = os.path.join(OUT, "rcomp-demo-browser.png")
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
        app = ["foot", "--title", "foot via rcomp", "bash", "--norc", "--noprofile", "-i"]
        print("running: rcomp-run %s-- %s" % ("--listen-web 127.0.0.1:%d " % port if WEB else "",
                                              " ".join(app)))
        rig.remote_env["PS1"] = "remote$ "
        server = rig.start_server(app, web)
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
        time.sleep(1.5)
        window = rig.window(app_id="foot")
        r = window["rect"]
        geometry = "%d,%d %dx%d" % (r["x"], r["y"], r["width"], r["height"])
        subprocess.run(["grim", "-g", geometry, shot], env=rig.local_env, check=True)
        print("local window: %dx%d, title %r" % (r["width"], r["height"], window.get("name")))
        print("screenshot of the local window saved to %s" % shot)
        if viewer.poll() is not None:
            raise Failure("rcomp-view exited early: " + rig.read_log("rcomp-view"))
        if WEB:
            browser(rig, port, token, page_shot)
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
