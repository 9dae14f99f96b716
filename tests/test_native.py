"""Native feel: remote windows behave like local ones where people notice
first. Titles that say where a window runs; windows that draw their own
title bars (GTK) moved and resized by the local desktop, through rcomp as
directly."""
import time

import pytest

from rig import BTN_LEFT, INPUT_CLIENT, VirtualPointer, wait_for

GTK_APP_ID = "gtk3-demo"


def test_titles_begin_with_the_remote_host_only_with_title_host(desktop):
    # rcomp-run on a host of its own name: the name comes from the remote side.
    server = desktop.start_server([INPUT_CLIENT, "a remote title"], host="far-away-box")
    desktop.start_viewer(server, ["--title-host"], name="with-host")
    wait_for("the title with the host", lambda: desktop.window(
        title="far-away-box: a remote title"))
    plain = desktop.start_server([INPUT_CLIENT, "another title"], name="plain-run",
                                 host="far-away-box")
    desktop.start_viewer(plain, name="without-host")
    wait_for("the plain title", lambda: desktop.window(title="another title"))
    assert desktop.window(title="far-away-box: another title") is None


def gtk_demo(desktop, way):
    """gtk3-demo (a GtkHeaderBar, no xdg-decoration: it draws its own title
    bar and shadow), through rcomp or straight on the desktop; its window
    once it has settled, and a pointer."""
    if way == "through rcomp":
        server = desktop.start_server(["env", "NO_AT_BRIDGE=1", "gtk3-demo"])
        desktop.start_viewer(server)
    else:
        desktop.start("gtk3-demo", ["gtk3-demo"],
                      dict(desktop.local_env, GDK_BACKEND="wayland", NO_AT_BRIDGE="1"))
    wait_for("gtk3-demo's window", lambda: desktop.window(app_id=GTK_APP_ID), timeout=30)
    pointer = VirtualPointer(desktop)
    time.sleep(1.5)  # GTK's first frames, and the pointer device settling
    return desktop.window(app_id=GTK_APP_ID), pointer


def drag(pointer, x, y, dx, dy, steps=20):
    """Presses at x, y, moves by dx, dy in steps as a hand would, releases."""
    pointer.send("move %d %d" % (x, y))
    time.sleep(0.3)
    pointer.send("press %d" % BTN_LEFT)
    time.sleep(0.2)
    for i in range(1, steps + 1):
        pointer.send("move %d %d" % (x + dx * i // steps, y + dy * i // steps))
        time.sleep(0.03)
    time.sleep(0.3)
    pointer.send("release %d" % BTN_LEFT)
    time.sleep(0.5)


WAYS = ["through rcomp", "directly"]


@pytest.mark.parametrize("way", WAYS)
def test_dragging_a_gtk_header_bar_moves_the_local_window(desktop, way):
    window, pointer = gtk_demo(desktop, way)
    before = window["rect"]
    drag(pointer, before["x"] + before["width"] // 2 - 100, before["y"] + 20, 100, 60)
    after = wait_for("the window to move", lambda: desktop.window(app_id=GTK_APP_ID)["rect"]
                     if desktop.window(app_id=GTK_APP_ID)["rect"] != before else None)
    moved = (after["x"] - before["x"], after["y"] - before["y"])
    # GTK starts the move once the pointer passed its drag threshold: the
    # window follows the rest of the drag.
    assert 75 <= moved[0] <= 100 and 40 <= moved[1] <= 60, moved
    assert (after["width"], after["height"]) == (before["width"], before["height"])
