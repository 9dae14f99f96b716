"""The cores rcomp uses: video is encoded and decoded on threads that
follow the cores each program is given (its CPU affinity, as taskset sets
it), and --stats says how many."""
import os
import re

import pytest

from rig import ANIM_CLIENT, VIDEO, wait_for

pytestmark = pytest.mark.skipif(not VIDEO, reason="built without video")


@pytest.mark.parametrize("cores", [1, 2])
def test_video_is_encoded_and_decoded_on_as_many_threads_as_the_programs_have_cores(
        desktop, cores):
    if len(os.sched_getaffinity(0)) < cores:
        pytest.skip("this machine has fewer than %d cores" % cores)
    # 800x600 has room for 3 slices: the cores are the limit. Sharpness
    # first keeps it at that size on a loaded machine (half size has room
    # for one).
    server = desktop.start_server([ANIM_CLIENT, "30", "800", "600"],
                                  ["--stats", "--codec", "video", "--motion", "sharpness"],
                                  cores=cores)
    desktop.start_viewer(server, ["--stats"], cores=cores)
    plural = "" if cores == 1 else "s"
    line = wait_for("a stats line of the window's video", lambda: re.search(
        r"stats window \d+ \(rcomp-anim-test\): .*video libx264 [\d.]+ Mbit/s on (\d+) "
        r"threads? \((\d+) cores?, (\d+) streams?\)", desktop.read_log("rcomp-run")),
        timeout=30)
    assert line.groups() == (str(cores), str(cores), "1"), line.group(0)
    decoded = wait_for("the viewer's stats line of the window's video", lambda: re.search(
        r"stats window \d+: .*video decoded on (\d+) threads?", desktop.read_log("rcomp-view")),
        timeout=30)
    assert decoded.group(1) == str(cores), decoded.group(0)
    assert "on %d thread%s (%d core%s" % (cores, plural, cores, plural) in line.group(0)
    # Each program says what it has: the cores, its workers and its band
    # helpers (the cores less its own thread).
    helpers = "%d more thread%s" % (cores - 1, "" if cores == 2 else "s")
    run = desktop.read_log("rcomp-run")
    assert re.search(r"stats cores %d: \d+ video streams? share them; frames encoded on %d "
                     r"workers?; pictures scaled and copied in bands on %s" % (cores, cores, helpers),
                     run), run[-2000:]
    assert "stats cores %d: video decoded in slices on up to as many threads; pictures scaled " \
        "in bands on %s" % (cores, helpers) in desktop.read_log("rcomp-view")
