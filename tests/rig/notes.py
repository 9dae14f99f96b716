"""Notifications: the local desktop's own session bus and notification
daemon (Debian's mako on the rig's sway), and what it lists."""
import json
import os
import subprocess

from .base import wait_for


class LocalNotifications:
    """The laptop's session bus (a dbus-daemon of the rig's own) with mako
    serving org.freedesktop.Notifications on it, on the local sway. The
    viewers started after it show the session's notifications there.
    stamps: a file where mako writes each notification's id and the wall
    clock when it shows it (the benchmarks')."""

    def __init__(self, rig, stamps=None):
        self.rig = rig
        self.dir = os.path.join(rig.tmp, "local-bus")
        os.makedirs(self.dir, exist_ok=True)
        self.address = "unix:path=" + os.path.join(self.dir, "bus")
        # A bus that starts no service of its own: a call to the
        # notifications' name before mako holds it would otherwise start
        # another mako from its D-Bus service file, and ours would find the
        # name taken.
        bus_config = os.path.join(self.dir, "bus.conf")
        with open(bus_config, "w") as f:
            f.write('<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration '
                    '1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">\n'
                    "<busconfig><type>session</type><listen>%s</listen>"
                    '<policy context="default"><allow send_destination="*" eavesdrop="true"/>'
                    '<allow eavesdrop="true"/><allow own="*"/></policy></busconfig>\n'
                    % self.address)
        rig.start("local-dbus", ["dbus-daemon", "--config-file=" + bus_config, "--nofork",
                                 "--nopidfile"], rig.local_env)
        rig.local_env["DBUS_SESSION_BUS_ADDRESS"] = self.address
        wait_for("the local session bus", lambda: os.path.exists(self.address[10:]))
        config = os.path.join(self.dir, "mako.conf")
        # mako's list has no urgency: its criteria do, and the critical
        # ones' ids are written down as they are shown.
        self.critical = os.path.join(self.dir, "critical")
        with open(config, "w") as f:
            f.write("default-timeout=0\nmax-visible=20\n")
            if stamps:
                f.write("on-notify=exec echo $id $(date +%%s.%%N) >> %s\n" % stamps)
            f.write("[urgency=critical]\non-notify=exec echo $id >> %s\n" % self.critical)
        self.mako = rig.start("mako", ["mako", "-c", config], rig.local_env)
        wait_for("mako on the local bus", lambda: self.listed() is not None)

    def makoctl(self, *args):
        return subprocess.run(["makoctl", *args], env=self.rig.local_env, capture_output=True,
                              text=True, timeout=10)

    def listed(self):
        """What mako shows: a list of {id, app, summary, body, icon,
        critical, actions}, newest first; None while it is not on the bus."""
        self.rig.check_alive(self.mako)
        out = self.makoctl("list")
        if out.returncode != 0:
            return None
        critical = set()
        if os.path.exists(self.critical):
            with open(self.critical) as f:
                critical = {int(line) for line in f if line.strip()}
        notes = []
        for n in json.loads(out.stdout)["data"][0]:
            notes.append({"id": n["id"]["data"], "app": n["app-name"]["data"],
                          "summary": n["summary"]["data"], "body": n["body"]["data"],
                          "icon": n["app-icon"]["data"],
                          "critical": n["id"]["data"] in critical,
                          "actions": n.get("actions", {}).get("data", {})})
        return notes

    def invoke(self, note_id, action="default"):
        out = self.makoctl("invoke", "-n", str(note_id), action)
        assert out.returncode == 0, out.stderr

    def dismiss(self, note_id):
        out = self.makoctl("dismiss", "-n", str(note_id))
        assert out.returncode == 0, out.stderr
