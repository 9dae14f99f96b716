"""Input devices of the local desktop: a virtual pointer and keyboard, and
an input method."""
import subprocess

from .base import Failure, IM_CLIENT, KEY_LEFTSHIFT, VKEYBOARD, VPOINTER, wait_for
from .sound import heard

class VirtualPointer:
    """tests/clients/vpointer: a local pointer driven line by line. It must
    stay alive for the whole test, or the seat loses its pointer."""

    def __init__(self, rig, width=1280, height=800):
        self.proc = rig.start("vpointer", [VPOINTER, str(width), str(height)], rig.local_env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def send(self, *lines):
        for line in lines:
            self.proc.stdin.write(line + "\n")
        self.proc.stdin.write("sync\n")
        self.proc.stdin.flush()
        if self.proc.stdout.readline().strip() != "ok":
            raise Failure("the virtual pointer did not answer")


class VirtualKeyboard(VirtualPointer):
    """tests/clients/vkeyboard: a local keyboard with the layout we choose."""

    def __init__(self, rig):
        self.proc = rig.start("vkeyboard", [VKEYBOARD], rig.local_env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def take_seat(self, layout, heard):
        """Makes this keyboard, with layout, the seat's: its keymap, then a
        Shift tap, until heard() says the app heard a key. sway may take a
        new virtual keyboard's first keymap before the device is its own and
        drop what follows, now and then, when its machine is busy."""
        for _ in range(6):
            self.send("layout %s" % layout, "tap %d" % KEY_LEFTSHIFT)
            try:
                return wait_for("the first key of the virtual keyboard", heard, timeout=3)
            except Failure:
                continue
        raise Failure("the virtual keyboard's keys never reached the app")


class InputMethod(VirtualPointer):
    """tests/clients/im-client: the desktop's input method, driven line by
    line; what the desktop tells it is in the log "im"."""

    def __init__(self, rig):
        self.proc = rig.start("im", [IM_CLIENT], rig.local_env, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
