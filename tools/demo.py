"""Runs foot through rcomp on a headless sway and saves a screenshot.
Used by tools/demo.sh; run that instead."""
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
from rig import Failure, RCOMP_VIEW, Rig, wait_for  # noqa: E402

OUT = os.path.abspath(os.path.join(HERE, "..", "out"))


def main():
    os.makedirs(OUT, exist_ok=True)
    shot = os.path.join(OUT, "rcomp-demo-foot.png")
    rig = Rig(width=1280, height=800)
    try:
        print("local desktop: headless sway (%s)" % rig.wayland_display)
        env = dict(rig.local_env, PS1="remote$ ")
        argv = [RCOMP_VIEW, "--local", "--", "foot", "--title", "foot via rcomp",
                "bash", "--norc", "--noprofile", "-i"]
        print("running:", " ".join(argv[1:]))
        viewer = rig.start("rcomp-view", argv, env)
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
