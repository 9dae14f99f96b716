"""Frame rate, bytes, latency and cost over slow and distant links: rcomp and
waypipe 0.8.4 side by side through the relay in tests/relay.py. Prints
markdown tables. It measures; it passes or fails nothing.

    python3 tools/bench_link.py [--quick] [--soak]

Workloads: weston-simple-egl and glmark2-es2-wayland -s 800x600 (build scene)
at round trips 0, 20, 50, 100 ms and links unlimited, 50 and 10 Mbit/s.
- app fps: commits the app makes (WAYLAND_DEBUG count for weston-simple-egl,
  glmark2's own report), the same way for both systems;
- shown fps: frames the rcomp viewer presented (waypipe forwards every
  commit, so its shown rate is its app rate);
- bytes/s: through the relay, both directions;
- input to photon: a click on anim-client until a screenshot shows the red
  block it draws (grim polling one pixel, about 10 ms resolution);
- rcomp-run CPU and peak RSS from its --stats.
--soak runs weston-simple-egl over 1 Mbit/s for 5 minutes and samples
rcomp-run's RSS every 30 s.
Needs root (the rig runs sway as nobody), waypipe and glmark2-es2-wayland.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
from rig import (RCOMP_RUN, RCOMP_VIEW, TEST_CLIENTS, Failure, Rig, read_ppm,  # noqa: E402
                 wait_for)

ANIM = os.path.join(TEST_CLIENTS, "anim-client")
VPOINTER = os.path.join(TEST_CLIENTS, "vpointer")
DURATION = 10


def egl_app():
    return ["weston-simple-egl"]


def glmark_app():
    return ["glmark2-es2-wayland", "-s", "800x600", "-b", "build:duration=%d" % (DURATION + 5)]


def app_fps(log_text, app, seconds):
    if app[0] == "glmark2-es2-wayland":
        m = re.findall(r"FPS: (\d+)", log_text)
        return float(m[-1]) if m else float("nan")
    commits = len(re.findall(r"wl_surface@\d+\.commit\(", log_text))
    return commits / seconds


def run_rcomp(rig, tag, app, delay, rate):
    sock = os.path.join(rig.remote_rt, tag + ".sock")
    env = dict(rig.remote_env)
    if app[0] != "glmark2-es2-wayland":
        env["WAYLAND_DEBUG"] = "client"
    server = rig.start("rc-" + tag, [RCOMP_RUN, "--stats", "--socket", sock, "--", "timeout",
                                     str(DURATION), *app], env)
    wait_for("rcomp-run", lambda: os.path.exists(sock))
    relay = rig.start_relay(sock, delay_ms=delay / 2, rate_mbit=rate, buffer_kb=256,
                            name="relay-rc-" + tag)
    viewer = rig.start("rv-" + tag, [RCOMP_VIEW, "--stats", "--socket", relay.socket],
                       rig.local_env)
    server.wait(timeout=DURATION + 60)
    viewer.wait(timeout=30)
    relay.terminate()
    relay.wait(timeout=10)
    text = rig.read_log("rc-" + tag)
    shown = [int(x) for x in re.findall(r"presented (\d+) fps", rig.read_log("rv-" + tag))]
    usage = re.search(r"used ([\d.]+) s user, ([\d.]+) s system, max RSS (\d+) KiB", text)
    stats = read_json(relay.stats)
    return {
        "app": app_fps(text, app, DURATION),
        "shown": statistics.mean(shown[1:-1]) if len(shown) > 2 else float("nan"),
        "bytes": (stats["up"] + stats["down"]) / DURATION,
        "cpu": (float(usage.group(1)) + float(usage.group(2))) / DURATION * 100 if usage else
        float("nan"),
        "rss": int(usage.group(3)) / 1024 if usage else float("nan"),
    }


def run_waypipe(rig, tag, app, delay, rate):
    csock = os.path.join(rig.tmp, tag + "-wpc.sock")
    client = rig.start("wpc-" + tag, ["waypipe", "--oneshot", "-s", csock, "client"],
                       rig.local_env)
    wait_for("waypipe client", lambda: os.path.exists(csock))
    relay = rig.start_relay(csock, delay_ms=delay / 2, rate_mbit=rate, buffer_kb=256,
                            name="relay-wp-" + tag)
    env = dict(rig.remote_env)
    if app[0] != "glmark2-es2-wayland":
        env["WAYLAND_DEBUG"] = "client"
    server = rig.start("wps-" + tag, ["waypipe", "-s", relay.socket, "server", "--", "timeout",
                                      str(DURATION), *app], env)
    server.wait(timeout=DURATION + 60)
    # waypipe's client may linger behind the relay: stop both.
    relay.terminate()
    relay.wait(timeout=10)
    client.terminate()
    client.wait(timeout=10)
    stats = read_json(relay.stats)
    fps = app_fps(rig.read_log("wps-" + tag), app, DURATION)
    return {"app": fps, "shown": fps, "bytes": (stats["up"] + stats["down"]) / DURATION,
            "cpu": float("nan"), "rss": float("nan")}


def run_direct(rig, tag, app):
    """The app straight on the local desktop: the rate to keep."""
    env = dict(rig.local_env)
    if app[0] != "glmark2-es2-wayland":
        env["WAYLAND_DEBUG"] = "client"
    p = rig.start("direct-" + tag, ["timeout", str(DURATION), *app], env)
    p.wait(timeout=DURATION + 60)
    return app_fps(rig.read_log("direct-" + tag), app, DURATION)


def read_json(path):
    import json
    wait_for("relay stats", lambda: os.path.exists(path), timeout=10)
    with open(path) as f:
        return json.load(f)


def latency(rig, system, delay, clicks=6):
    """Median ms from a click until the screen shows its effect."""
    tag = "lat-%s-%d" % (system, delay)
    if system == "rcomp":
        sock = os.path.join(rig.remote_rt, tag + ".sock")
        server = rig.start("srv-" + tag, [RCOMP_RUN, "--socket", sock, "--", ANIM, "0"],
                           rig.remote_env)
        wait_for("rcomp-run", lambda: os.path.exists(sock))
        relay = rig.start_relay(sock, delay_ms=delay / 2, name="relay-" + tag)
        rig.start("cli-" + tag, [RCOMP_VIEW, "--socket", relay.socket], rig.local_env)
    else:
        csock = os.path.join(rig.tmp, tag + "-wpc.sock")
        rig.start("cli-" + tag, ["waypipe", "--oneshot", "-s", csock, "client"], rig.local_env)
        wait_for("waypipe client", lambda: os.path.exists(csock))
        relay = rig.start_relay(csock, delay_ms=delay / 2, name="relay-" + tag)
        server = rig.start("srv-" + tag, ["waypipe", "-s", relay.socket, "server", "--", ANIM,
                                          "0"], rig.remote_env)
    w = wait_for("the window", lambda: rig.window(app_id="rcomp-anim-test"), timeout=30)
    r = w["rect"]
    pointer = subprocess.Popen([VPOINTER, "1280", "800"], env=rig.local_env, text=True,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def send(line):
        pointer.stdin.write(line + "\nsync\n")
        pointer.stdin.flush()
        pointer.stdout.readline()

    time.sleep(0.5)
    send("move %d %d" % (r["x"] + 150, r["y"] + 150))
    time.sleep(0.5)
    probe = {"x": r["x"] + 110, "y": r["y"] + 110, "width": 1, "height": 1}
    path = os.path.join(rig.tmp, "probe.ppm")
    samples = []
    for i in range(clicks):
        red_before = is_red(rig, probe, path)
        t0 = time.monotonic()
        send("press 272")
        send("release 272")
        deadline = t0 + 5
        while time.monotonic() < deadline and is_red(rig, probe, path) == red_before:
            pass
        samples.append((time.monotonic() - t0) * 1000)
        time.sleep(0.3)
    pointer.stdin.close()
    pointer.wait(timeout=10)
    server.terminate()
    server.wait(timeout=10)
    return statistics.median(samples)


def is_red(rig, rect, path):
    subprocess.run(["grim", "-t", "ppm", "-g", "%d,%d 1x1" % (rect["x"], rect["y"]), path],
                   env=rig.local_env, check=True, capture_output=True)
    w, h, p = read_ppm(path)
    return p[0] > 0xb0 and p[1] < 0x50


def soak(rig):
    sock = os.path.join(rig.remote_rt, "soak.sock")
    server = rig.start("soak", [RCOMP_RUN, "--socket", sock, "--", "timeout", "310",
                                "weston-simple-egl"], rig.remote_env)
    wait_for("rcomp-run", lambda: os.path.exists(sock))
    relay = rig.start_relay(sock, delay_ms=20, rate_mbit=1, buffer_kb=64, name="relay-soak")
    rig.start("soak-view", [RCOMP_VIEW, "--socket", relay.socket], rig.local_env)
    rows = []
    for i in range(11):
        time.sleep(30 if i else 5)
        with open("/proc/%d/status" % server.pid) as f:
            rss = [int(line.split()[1]) for line in f if line.startswith("VmRSS")][0]
        rows.append((5 + 30 * i if i else 5, rss))
        print("soak: %3d s RSS %d KiB" % rows[-1], flush=True)
    server.wait(timeout=60)
    return rows


def fmt(v, spec="%.0f"):
    return "n/a" if v != v else spec % v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer conditions")
    ap.add_argument("--soak", action="store_true", help="5 minutes at 1 Mbit/s")
    ap.add_argument("--direct-only", action="store_true", help="only the apps run directly")
    args = ap.parse_args()
    rtts = [0, 100] if args.quick else [0, 20, 50, 100]
    rates = [0, 10] if args.quick else [0, 50, 10]
    apps = [("weston-simple-egl", egl_app()), ("glmark2 800x600", glmark_app())]
    rig = Rig()
    rows = []
    direct = {}
    try:
        for name, app in apps:
            direct[name] = run_direct(rig, name.split()[0], app)
            print("%s directly on the local desktop: %.0f fps" % (name, direct[name]), flush=True)
        if args.direct_only:
            return 0
        for name, app in apps:
            for rtt in rtts:
                for rate in rates:
                    tag = "%s-%d-%d" % (name.split()[0].split("-")[-1], rtt, rate)
                    rc = run_rcomp(rig, tag, app, rtt, rate)
                    wp = run_waypipe(rig, tag, app, rtt, rate)
                    rows.append((name, rtt, rate, rc, wp))
                    print("%s rtt %d rate %s: rcomp app %.0f shown %.0f %.2f MB/s cpu %.0f%% "
                          "rss %.0f MB | waypipe app %.0f %.2f MB/s" % (
                              name, rtt, rate or "inf", rc["app"], rc["shown"],
                              rc["bytes"] / 1e6, rc["cpu"], rc["rss"], wp["app"],
                              wp["bytes"] / 1e6), flush=True)
        lat = []
        for rtt in rtts:
            lat.append((rtt, latency(rig, "rcomp", rtt), latency(rig, "waypipe", rtt)))
            print("latency rtt %d: rcomp %.0f ms, waypipe %.0f ms" % lat[-1], flush=True)
        soak_rows = soak(rig) if args.soak else []
    except Failure as e:
        print("benchmark failed:", e)
        return 1
    finally:
        rig.close()

    print("\nDirectly on the local desktop: " + ", ".join(
        "%s %.0f fps" % (name, fps) for name, fps in direct.items()))
    print("\n| app | RTT ms | link | rcomp app fps | rcomp shown fps | rcomp MB/s | "
          "rcomp-run CPU % | rcomp-run RSS MB | waypipe app fps | waypipe MB/s |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, rtt, rate, rc, wp in rows:
        print("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            name, rtt, "%d Mbit/s" % rate if rate else "unlimited", fmt(rc["app"]),
            fmt(rc["shown"]), fmt(rc["bytes"] / 1e6, "%.2f"), fmt(rc["cpu"]), fmt(rc["rss"]),
            fmt(wp["app"]), fmt(wp["bytes"] / 1e6, "%.2f")))
    print("\n| RTT ms | rcomp input to photon (ms, median) | waypipe input to photon (ms) |")
    print("|---:|---:|---:|")
    for rtt, a, b in lat:
        print("| %d | %.0f | %.0f |" % (rtt, a, b))
    if soak_rows:
        print("\n| time s | rcomp-run RSS KiB (1 Mbit/s, weston-simple-egl) |")
        print("|---:|---:|")
        for t, rss in soak_rows:
            print("| %d | %d |" % (t, rss))
    return 0


if __name__ == "__main__":
    sys.exit(main())
