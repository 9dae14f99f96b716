"""The integration test rig: a headless sway as the local desktop, rcomp-run
and rcomp-view between it and real apps, screenshots with grim, and the
helpers the tests share. conftest.py makes it the tests' fixtures; the
benchmarks in tools/ use it directly.

sway refuses to run as root, so it runs as nobody (65534) with its own
XDG_RUNTIME_DIR; root clients (the viewer, grim, wtype, swaymsg) connect to it.

The rig is split by concern (each module says what it holds); every name
in it is had from here: `from rig import Rig, wait_for, hello`.
"""
from .base import *  # noqa: F401,F403
from .procs import *  # noqa: F401,F403
from .screen import *  # noqa: F401,F403
from .desktop import *  # noqa: F401,F403
from .net import *  # noqa: F401,F403
from .sound import *  # noqa: F401,F403
from .notes import *  # noqa: F401,F403
from .printer import *  # noqa: F401,F403
from .input import *  # noqa: F401,F403
from .wire import *  # noqa: F401,F403
from .browser import *  # noqa: F401,F403
from .gate import *  # noqa: F401,F403
