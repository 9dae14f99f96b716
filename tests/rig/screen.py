"""Pictures: screenshots read, compared, and waited for."""
import os

from .base import Failure, wait_for

def read_ppm(path):
    with open(path, "rb") as f:
        data = f.read()
    # P6\n<w> <h>\n<max>\n<data>; grim and rcomp-run both write it plainly.
    fields = []
    pos = 0
    while len(fields) < 4:
        while data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b"#":
            pos = data.index(b"\n", pos) + 1
            continue
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    pos += 1
    if fields[0] != b"P6" or fields[3] != b"255":
        raise Failure("%s is not an 8-bit binary PPM" % path)
    w, h = int(fields[1]), int(fields[2])
    pixels = data[pos:pos + w * h * 3]
    if len(pixels) != w * h * 3:
        raise Failure("%s is truncated" % path)
    return w, h, pixels


def count_differences(a, b, inset=0):
    """Pixels that differ, or None for pictures of different sizes; inset:
    the rows and columns that far from an edge or nearer are not compared."""
    (wa, ha, pa), (wb, hb, pb) = a, b
    if (wa, ha) != (wb, hb):
        return None
    diff = 0
    for y in range(inset, ha - inset):
        row = y * wa * 3
        for i in range(row + inset * 3, row + (wa - inset) * 3, 3):
            if pa[i:i + 3] != pb[i:i + 3]:
                diff += 1
    return diff


def wait_screen_matches(rig, app_id, path, timeout=20, shows=None, pid=None, inset=0):
    """Waits until a screenshot of the local window (of viewer process pid,
    if given) equals the capture that rcomp-run dumped to path (and
    shows(screenshot) says it shows what the test waits for, if given);
    returns (screenshot, capture, window). inset: how far from the edges
    pixels are left out (an app's rounded corners are translucent, and the
    local desktop blends them with what lies behind)."""
    state = {}

    def attempt():
        w = rig.window(app_id=app_id, pid=pid)
        if not w or not os.path.exists(path):
            return None
        shot = rig.screenshot(w["rect"])
        dump = read_ppm(path)
        diff = count_differences(shot, dump, inset)
        state["last"] = "screen %dx%d, capture %dx%d, %s pixels differ" % (
            shot[0], shot[1], dump[0], dump[1], diff)
        if shows and diff == 0 and not shows(shot):
            state["last"] += ", but not yet what the test waits for"
            return None
        return (shot, dump, w) if diff == 0 else None

    try:
        return wait_for("the local window to match the capture", attempt, timeout, 0.3)
    except Failure as e:
        raise Failure("%s: %s" % (e, state.get("last")))
