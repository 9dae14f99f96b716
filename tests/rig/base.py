"""Where the build and the test programs are, what the build has, the
constants the tests share, and the rig's small tools (waiting, logging,
pinning to cores)."""
import os
import subprocess
import time

# The tests folder.
TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

BUILD = os.environ.get("RCOMP_BUILD", os.path.join(TESTS, "..", "build"))
RCOMP_RUN = os.path.abspath(os.path.join(BUILD, "compositor", "rcomp-run"))
RCOMP_VIEW = os.path.abspath(os.path.join(BUILD, "viewer", "rcomp-view"))
TEST_CLIENTS = os.path.abspath(os.path.join(BUILD, "tests"))
RELAY = os.path.join(TESTS, "relay.py")
NETSIM = os.path.join(TEST_CLIENTS, "netsim")
INPUT_CLIENT = os.path.join(TEST_CLIENTS, "input-client")
ANIM_CLIENT = os.path.join(TEST_CLIENTS, "anim-client")
CLIP_CLIENT = os.path.join(TEST_CLIENTS, "clip-client")
ABUSE_CLIENT = os.path.join(TEST_CLIENTS, "abuse-client")
MODEL_CLIENT = os.path.join(TEST_CLIENTS, "model-client")
SCROLL_CLIENT = os.path.join(TEST_CLIENTS, "scroll-client")
VPOINTER = os.path.join(TEST_CLIENTS, "vpointer")
VKEYBOARD = os.path.join(TEST_CLIENTS, "vkeyboard")
IM_CLIENT = os.path.join(TEST_CLIENTS, "im-client")
DND_CLIENT = os.path.join(TEST_CLIENTS, "dnd-client")
TONE = os.path.join(TESTS, "tone.py")
def _linked(library):
    """Whether rcomp-run links a library (the build's features, without asking
    meson)."""
    try:
        out = subprocess.run(["ldd", RCOMP_RUN], capture_output=True, text=True,
                             timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return library in out
# A build with video (libavcodec), and one with sanitizers, where memory
# figures mean nothing (ASan holds freed memory in quarantine).
VIDEO = _linked("libavcodec")
UDP = _linked("libngtcp2")  # built with the UDP transport
WEB = _linked("libwebsockets")  # built with the browser viewer
# The browser viewer's page as the build gathers it (web/meson.build).
WEB_DIR = os.path.abspath(os.path.join(BUILD, "web"))
SANITIZED = _linked("libasan") or os.environ.get("RCOMP_SANITIZED") == "1"
BTN_LEFT, BTN_RIGHT, BTN_MIDDLE = 272, 273, 274
KEY_2, KEY_MINUS, KEY_Y, KEY_A, KEY_Z, KEY_LEFTSHIFT = 3, 12, 21, 30, 44, 42
# Colours the test clients draw.
GREEN, BLUE, ORANGE = (0x20, 0xc0, 0x20), (0x20, 0x40, 0xe0), (0xe0, 0x80, 0x20)
GREY, RED, MAGENTA = (0x80, 0x80, 0x80), (0xe0, 0x20, 0x20), (0xe0, 0x20, 0xe0)
YELLOW, CYAN = (0xe0, 0xe0, 0x20), (0x20, 0xe0, 0xe0)
# Reports of a sanitizer build in any process the test started fail the test.
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")
class Failure(AssertionError):
    """A test's expectation not met; pytest reports it as a failure."""
def log(*args):
    print(*args, flush=True)
def pinned(cores, argv):
    """argv on the first cores cores this process may use (taskset)."""
    mine = sorted(os.sched_getaffinity(0))
    if len(mine) < cores:
        raise RuntimeError("%d cores asked for, %d here" % (cores, len(mine)))
    return ["taskset", "-c", ",".join(map(str, mine[:cores])), *argv]
def wait_for(what, predicate, timeout=15.0, interval=0.05):
    """Polls predicate until it returns a true value; raises Failure on timeout."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    raise Failure("timed out after %.0f s waiting for %s (last: %r)" % (timeout, what, last))
WEB_DRIVER = os.path.join(TESTS, "web", "drive.mjs")
