"""One end-to-end run under valgrind memcheck: rcomp-run and rcomp-view with
an app that animates (video), stops (lossless refresh) and is closed by the
user. Any memcheck error or definite leak in either fails it. Skipped in
sanitizer builds, where valgrind cannot run."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rig import (Failure, RCOMP_RUN, RCOMP_VIEW, TEST_CLIENTS, log, main,  # noqa: E402
                 wait_for)

SUPP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "valgrind.supp")
VALGRIND = ["valgrind", "--error-exitcode=42", "--leak-check=full",
            "--errors-for-leak-kinds=definite", "--suppressions=" + SUPP]


def case_e2e(rig):
    sock = os.path.join(rig.remote_rt, "memcheck.sock")
    server = rig.start("rcomp-run", VALGRIND + [
        RCOMP_RUN, "--socket", sock, "--", os.path.join(TEST_CLIENTS, "anim-client"), "2"],
        rig.remote_env)
    wait_for("rcomp-run under valgrind", lambda: os.path.exists(sock), timeout=90)
    viewer = rig.start("rcomp-view", VALGRIND + [RCOMP_VIEW, "--socket", sock], rig.local_env)
    wait_for("the window", lambda: rig.window(app_id="rcomp-anim-test"), timeout=90)
    wait_for("the app to stop moving", lambda: "still after" in rig.read_log("rcomp-run"),
             timeout=90)
    time.sleep(2)
    rig.swaymsg('[app_id="rcomp-anim-test"] kill')
    codes = (server.wait(timeout=120), viewer.wait(timeout=120))
    for name in ("rcomp-run", "rcomp-view"):
        summary = [line for line in rig.read_log(name).splitlines() if "ERROR SUMMARY" in line]
        if not summary or " 0 errors" not in summary[-1]:
            raise Failure("%s under memcheck: %s\n%s" % (name, summary,
                                                        rig.read_log(name, 6000)))
    if codes != (0, 0):
        raise Failure("exit statuses under memcheck: %s" % (codes,))
    log("memcheck: no errors and no definite leaks in rcomp-run or rcomp-view")


if __name__ == "__main__":
    if os.environ.get("RCOMP_SANITIZED") == "1":
        print("SKIP: valgrind does not run sanitizer builds")
        sys.exit(77)
    main(case_e2e)
