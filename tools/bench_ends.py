"""Every end state of the browser viewer, timed: from its cause to the veil
over the window with its reason (the page can send no input), and from a
click on its way on (or the cause's end) to the window live again. Prints
numbers; it passes or fails nothing. Target (issue 50): each within 2 s.

    python3 tools/bench_ends.py [--only token,gate] [--runs 3]

token: a session's own door (rcomp-run --listen-web): another viewer takes
it over (a hello on the session's socket; way on: take it back); a wrong token (the right one typed in the
veil's field); the app exits (no way on but the veil); the link breaks (a
relay in front, killed; way on: the relay back and "try now").
gate: through rcomp-gate with real accounts: a logout in another tab (log
in again, which returns to the session); another user's session's name
(your sessions); the app exits (start it again); the gate restarts (the
page comes back by itself).

Times are wall-clock in this script, from just before the cause to the
page's answer to a wait polled every 50 ms, so each holds up to ~60 ms of
the measuring itself.
"""
import argparse
import os
import socket
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
import rig  # noqa: E402
from rig import (INPUT_CLIENT, RCOMP_RUN, Browser, Gate, Rig, free_port, hello,  # noqa: E402
                 wait_for)

TOKEN = "bench-ends-token-0123456789abcdef"
VEIL = "Boolean(document.getElementById('rcomp-veil'))"
LIVE = ("window.rcomp && window.rcomp.session().welcomed && !document.getElementById("
        "'rcomp-veil') && window.rcomp.stats().some((w) => w.presented > 0)")


def timed(action, page, js, timeout=20):
    t0 = time.monotonic()
    action()
    page.wait(js, timeout=timeout)
    return (time.monotonic() - t0) * 1000


def click_way(page, way):
    return lambda: page.eval("document.querySelector('#rcomp-veil [data-way=\"%s\"]').click()"
                             % way)


def token_session(r, app, name="rcomp-run"):
    port = free_port()
    token_file = os.path.join(r.tmp, name + ".token")
    with open(token_file, "w") as f:
        f.write(TOKEN + "\n")
    os.chmod(token_file, 0o600)
    sock = os.path.join(r.remote_rt, name + ".sock")
    r.start(name, [RCOMP_RUN, "--socket", sock, "--listen-web", "127.0.0.1:%d" % port,
                   "--token-file", token_file, "--", *app], r.remote_env)
    wait_for("rcomp-run", lambda: "listening for browsers" in r.read_log(name))
    return port


def token_cases(results):
    r = Rig()
    pages = []
    try:
        page = Browser(r)
        pages.append(page)
        port = token_session(r, [INPUT_CLIENT])
        sock = os.path.join(r.remote_rt, "rcomp-run.sock")
        url = "http://127.0.0.1:%d/#token=%s" % (port, TOKEN)
        page.open(url)
        page.wait(LIVE)
        # Taken over by another viewer (a hello on the session's socket),
        # then taken back.
        taker = []

        def take():
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(sock)
            s.sendall(hello())
            taker.append(s)
        results.setdefault("taken over", []).append((
            timed(take, page, VEIL), timed(click_way(page, "take-back"), page, LIVE)))
        for s in taker:
            s.close()
        # A wrong token, then the right one in the veil's field.
        t_veil = timed(lambda: page.open("http://127.0.0.1:%d/#token=wrong" % port), page,
                       "Boolean(document.querySelector('#rcomp-veil #rcomp-token input'))")

        def right():
            page.eval("document.querySelector('#rcomp-token input').value = %r; "
                      "document.querySelector('#rcomp-token button').click()" % TOKEN)
        results.setdefault("wrong token", []).append((t_veil, timed(right, page, LIVE)))
        # The link breaks (a relay in front of the door), then comes back.
        near = free_port()
        relay = r.start_relay("tcp:127.0.0.1:%d" % port, listen="tcp:127.0.0.1:%d" % near,
                              name="relay-%d" % near)
        page.open("http://127.0.0.1:%d/#token=%s" % (near, TOKEN))
        page.wait(LIVE)
        t_veil = timed(lambda: (relay.kill(), relay.wait()), page, VEIL)

        def back():
            r.start_relay("tcp:127.0.0.1:%d" % port, listen="tcp:127.0.0.1:%d" % near,
                          name="relay-again-%d" % near)
            click_way(page, "now")()
        results.setdefault("link down", []).append((t_veil, timed(back, page, LIVE)))
        # The app exits.
        go = os.path.join(r.tmp, "exit-now")
        port2 = token_session(r, ["sh", "-c", "%s & app=$!; while [ ! -e %s ]; do sleep 0.05; "
                                  "done; kill $app; exit 3" % (INPUT_CLIENT, go)],
                              name="exiting")
        page.open("http://127.0.0.1:%d/#token=%s" % (port2, TOKEN))
        page.wait(LIVE)
        results.setdefault("app exited", []).append((
            timed(lambda: open(go, "w").close(), page, VEIL), None))
    finally:
        for p in pages:
            p.close()
        r.close()


def gate_cases(results):
    r = Rig()
    rig.make_accounts()
    page = None
    try:
        gate = Gate(r)
        page = Browser(r)

        def start_foot():
            page.open(gate.url)
            page.wait("document.querySelector('li[data-app=\"foot\"] button') || "
                      "!document.getElementById('door').hidden")
            if page.eval("!document.getElementById('door').hidden"):
                rig.log_in_page(page, rig.ALICE)
            page.wait("document.querySelector('li[data-app=\"foot\"] button')")
            page.eval("document.querySelector('li[data-app=\"foot\"] button').click()")
            page.wait(LIVE, timeout=30)
            return page.eval("new URLSearchParams(location.hash.slice(1)).get('gate')")

        start_foot()
        # Logged out in another tab (the same cookie), then in again.
        logout = ("fetch('/api/me', {credentials: 'same-origin'}).then((r) => r.json()).then("
                  "(me) => fetch('/api/logout', {method: 'POST', credentials: 'same-origin', "
                  "body: new URLSearchParams({csrf: me.csrf})}))")
        t_veil = timed(lambda: page.eval(logout), page, VEIL)

        def again():
            href = page.eval("document.querySelector('#rcomp-veil [data-way=\"login\"]')"
                             ".getAttribute('href')")
            page.open(gate.url.rstrip("/") + href)
            rig.log_in_page(page, rig.ALICE)
        results.setdefault("gate: logged out", []).append((t_veil, timed(again, page, LIVE)))
        # Another user's session by its name.
        bob = gate.client()
        bob.login(rig.BOB)
        theirs = bob.start("foot")
        t_veil = timed(lambda: page.open(gate.url + "index.html#gate=" + theirs), page, VEIL)
        results.setdefault("gate: another's session", []).append((t_veil, timed(
            click_way(page, "sessions"), page,
            "document.getElementById('home') && !document.getElementById('home').hidden")))
        # The app exits; started again from the veil.
        start_foot()
        t_veil = timed(lambda: (page.command("keyboard_type", text="exit"), page.key("Enter")),
                       page, VEIL)
        results.setdefault("gate: app exited", []).append((t_veil, timed(
            click_way(page, "again"), page, LIVE)))
        # The gate restarts: the page comes back by itself, within the login.
        t_veil = timed(gate.stop, page, VEIL)
        results.setdefault("gate: restart", []).append((t_veil, timed(
            lambda: Gate(r, name=gate.name, port=gate.port), page, LIVE)))
    finally:
        if page:
            page.close()
        for user in rig.USERS:
            rig.end_sessions(user)
        r.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="token,gate")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    results = {}
    for _ in range(args.runs):
        if "token" in args.only:
            token_cases(results)
        if "gate" in args.only and rig.gate_possible() is None:
            gate_cases(results)
    print("%-26s %22s %26s" % ("end state", "veil shown, ms", "live again, ms"))
    for case, runs in results.items():
        veil = [v for v, _ in runs]
        live = [w for _, w in runs if w is not None]
        print("%-26s %22s %26s" % (
            case, "%.0f (%s)" % (statistics.median(veil), ", ".join("%.0f" % v for v in veil)),
            "%.0f (%s)" % (statistics.median(live), ", ".join("%.0f" % v for v in live))
            if live else "-"))


if __name__ == "__main__":
    main()
