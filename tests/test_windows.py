"""A faithful window model: popups as local popups, nested, with grabs and
dismissal both ways. Run one case: python3 test_windows.py CASE."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rig import Failure, TEST_CLIENTS, log, main, wait_for  # noqa: E402
from test_e2e import VirtualPointer  # noqa: E402

INPUT_CLIENT = os.path.join(TEST_CLIENTS, "input-client")
BTN_LEFT, BTN_RIGHT, BTN_MIDDLE = 272, 273, 274
BLUE, ORANGE = (0x20, 0x40, 0xe0), (0xe0, 0x80, 0x20)


def case_popups(rig):
    """A right click opens the app's popup, which appears as a local popup
    reaching past its parent's edges (so it cannot be clipped into the
    parent's picture); a nested one opens from it; the app closes the nested
    one itself (on a middle click); a click outside dismisses the first
    locally and the app hears popup_done."""
    server = rig.start_server([INPUT_CLIENT])
    rig.start_viewer(server)
    w = wait_for("the window", lambda: rig.window(app_id="rcomp-input-test"))
    r = w["rect"]
    rig.swaymsg("[app_id=rcomp-input-test] focus")
    pointer = VirtualPointer(rig)
    time.sleep(0.5)
    ox, oy = r["x"], r["y"]
    pointer.send("move %d %d" % (ox + 10, oy + 10))
    time.sleep(0.2)
    pointer.send("move %d %d" % (ox + 350, oy + 250))
    wait_for("the pointer at 350,250", lambda: "main 350.00 250.00" in rig.read_log("rcomp-run"))
    pointer.send("press %d" % BTN_RIGHT, "release %d" % BTN_RIGHT)
    wait_for("the app to open its popup", lambda: "popup-open 0" in rig.read_log("rcomp-run"))
    # 120x80 from (350,250) of a 400x300 window: 70 px past the right edge.
    outside = (ox + 440, oy + 320)
    inside = (ox + 380, oy + 270)
    wait_for("the popup's pixels past the parent's edge",
             lambda: rig.pixel(*outside) == BLUE and rig.pixel(*inside) == BLUE,
             interval=0.2)
    if len([x for x in rig.windows() if x["app_id"] == "rcomp-input-test"]) != 1:
        raise Failure("the popup became a toplevel window")

    # A nested popup from inside the first.
    pointer.send("move %d %d" % (ox + 410, oy + 290))
    wait_for("the pointer on the popup at 60,40",
             lambda: "popup0 60.00 40.00" in rig.read_log("rcomp-run"))
    pointer.send("press %d" % BTN_RIGHT, "release %d" % BTN_RIGHT)
    wait_for("the nested popup", lambda: "popup-open 1" in rig.read_log("rcomp-run"))
    nested = (ox + 500, oy + 340)  # (410,290) + 100x60, past both popups' edges
    wait_for("the nested popup's pixels", lambda: rig.pixel(*nested) == ORANGE,
             interval=0.2)

    # The app closes the nested one (on a middle click): the local popup goes.
    pointer.send("press %d" % BTN_MIDDLE, "release %d" % BTN_MIDDLE)
    wait_for("the app to close its nested popup",
             lambda: "popup-closed 1" in rig.read_log("rcomp-run"))
    wait_for("the nested popup to vanish", lambda: rig.pixel(*nested) != ORANGE,
             interval=0.2)
    if rig.pixel(*outside) != BLUE:
        raise Failure("the first popup went with the nested one")

    # A click outside every window dismisses the popup here, and there.
    pointer.send("move 3 3")
    time.sleep(0.3)
    pointer.send("press %d" % BTN_LEFT, "release %d" % BTN_LEFT)
    wait_for("the app to hear popup_done", lambda: "popup-done 0" in rig.read_log("rcomp-run"))
    wait_for("the popup to vanish", lambda: rig.pixel(*outside) != BLUE, interval=0.2)
    rig.check_alive(server)
    log("popup at (350,250) 120x80 drawn past the parent's edge at %s; nested popup drawn at "
        "%s; the app closed the nested one; a click outside dismissed the "
        "first (app printed popup-done)" % (outside, nested))


if __name__ == "__main__":
    case = sys.argv[1] if len(sys.argv) > 1 else ""
    body = globals().get("case_" + case)
    if not body:
        print("unknown case %r" % case)
        sys.exit(2)
    main(body, floating=True)
