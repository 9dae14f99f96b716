"""Printing: the person's own printer, a CUPS scheduler of the rig's with
one raw queue, the default, whose backend keeps what it is given: what
rcomp-view's lp prints lands in a file."""
import os
import socket
import subprocess

from .base import wait_for


class LocalPrinter:
    """cupsd with the queue "desk" writing each job to self.out;
    rig.local_env's CUPS_SERVER points lp at it."""

    def __init__(self, rig):
        self.rig = rig
        d = self.dir = os.path.join(rig.tmp, "local-cups")
        for sub in ("run", "spool", "spool/tmp", "cache", "state", "log", "ppd", "bin"):
            os.makedirs(os.path.join(d, sub), exist_ok=True)
        os.chmod(os.path.join(d, "run"), 0o700)
        for part in ("filter", "daemon", "notifier", "cgi-bin"):
            target = os.path.join("/usr/lib/cups", part)
            if os.path.exists(target):
                os.symlink(target, os.path.join(d, "bin", part))
        self.socket = os.path.join(d, "run", "cups.sock")
        self.out = os.path.join(d, "printed")
        # The printer: a backend that keeps each job's bytes (mode 0700: run
        # as root, as cupsd is).
        os.makedirs(os.path.join(d, "bin", "backend"))
        backend = os.path.join(d, "bin", "backend", "desk")
        with open(backend, "w") as f:
            f.write('#!/bin/sh\n[ $# -eq 0 ] && exit 0\ncat ${6:-} > %s.new && '
                    'mv %s.new %s\n' % (self.out, self.out, self.out))
        os.chmod(backend, 0o700)
        with open(os.path.join(d, "cupsd.conf"), "w") as f:
            f.write("Listen %s\nBrowsing No\nDefaultAuthType None\nWebInterface No\n"
                    "LogLevel warn\n<Location />\nOrder allow,deny\nAllow all\n</Location>\n"
                    "<Policy default>\n<Limit All>\nOrder deny,allow\n</Limit>\n</Policy>\n"
                    % self.socket)
        with open(os.path.join(d, "cups-files.conf"), "w") as f:
            f.write("ServerRoot {d}\nServerBin {d}/bin\nDataDir /usr/share/cups\n"
                    "CacheDir {d}/cache\nStateDir {d}/state\nRequestRoot {d}/spool\n"
                    "TempDir {d}/spool/tmp\nErrorLog {d}/log/error_log\n"
                    "AccessLog {d}/log/access_log\nPageLog {d}/log/page_log\n".format(d=d))
        with open(os.path.join(d, "printers.conf"), "w") as f:
            f.write("<DefaultPrinter desk>\nInfo the printer on the desk\n"
                    "DeviceURI desk:/\nState Idle\nAccepting Yes\nShared No\n"
                    "JobSheets none none\n</DefaultPrinter>\n")
        self.daemon = rig.start("local-cupsd", [
            "cupsd", "-f", "-c", os.path.join(d, "cupsd.conf"),
            "-s", os.path.join(d, "cups-files.conf")], rig.local_env)
        wait_for("the local printer", self._ready)
        rig.local_env["CUPS_SERVER"] = self.socket

    def _ready(self):
        self.rig.check_alive(self.daemon)
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect(self.socket)
            return True
        except OSError:
            return False
        finally:
            s.close()

    def printed(self):
        """The bytes of what it printed last, or None."""
        if not os.path.exists(self.out) or not os.path.getsize(self.out):
            return None
        with open(self.out, "rb") as f:
            return f.read()

    def jobs(self):
        """lpstat's completed jobs: their titles."""
        out = subprocess.run(["lpstat", "-W", "completed", "-o", "desk", "-l"],
                             env=self.rig.local_env, capture_output=True, text=True,
                             timeout=10).stdout
        return out
