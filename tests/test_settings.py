"""Settings: the files, the environment and the flags, in that order, and
what --show-config says of each; bad values and unknown keys; settings
taking effect in a real session."""
import os
import re
import subprocess

import pytest

from rig import INPUT_CLIENT, RCOMP_RUN, RCOMP_VIEW, wait_for


class Settings:
    """A user's settings files and environment, of this test alone."""

    def __init__(self, tmp):
        self.tmp = str(tmp)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("RCOMP_")}
        self.env.update(HOME=self.tmp, XDG_CONFIG_HOME=os.path.join(self.tmp, "config"),
                        XDG_CONFIG_DIRS="%s:%s" % (os.path.join(self.tmp, "xdg-first"),
                                                   os.path.join(self.tmp, "xdg-last")))

    def write(self, where, text):
        """where: "user" ($XDG_CONFIG_HOME), "system" (the first of
        $XDG_CONFIG_DIRS) or "system-last"; returns the file's path."""
        base = {"user": "config", "system": "xdg-first", "system-last": "xdg-last"}[where]
        path = os.path.join(self.tmp, base, "rcomp", "rcomp.ini")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        return path

    def run(self, program, *args, env=()):
        r = subprocess.run([program, *args], env=dict(self.env, **dict(env)),
                           capture_output=True, text=True, timeout=10)
        return r

    def show(self, program, *args, env=()):
        """--show-config: {key: (value, source)}."""
        r = self.run(program, "--show-config", *args, env=env)
        assert r.returncode == 0, r.stderr
        shown = {}
        for line in r.stdout.splitlines():
            m = re.fullmatch(r"(\S+) = (.*?)  # (.+)", line)
            assert m, "not key = value  # source: %r" % line
            shown[m.group(1)] = (m.group(2), m.group(3))
        return shown


@pytest.fixture
def settings(tmp_path):
    return Settings(tmp_path)


def test_each_layer_overrides_the_one_below_and_show_config_names_its_source(settings):
    last = settings.write("system-last", "[run]\nfps = 10\naudio = off\n")
    first = settings.write("system", "[run]\nfps = 20\ncodec = lossless\ndump-dir = /tmp/a\n")
    user = settings.write("user", "# mine\n[run]\nfps = 30\ncodec = video\ncompress = zstd\n")
    env = {"RCOMP_FPS": "40", "RCOMP_COMPRESS": "none", "RCOMP_NO_XWAYLAND": "true"}
    shown = settings.show(RCOMP_RUN, "--fps", "50", env=env)
    assert shown["fps"] == ("50", "flag --fps")
    assert shown["compress"] == ("none", "env RCOMP_COMPRESS")
    assert shown["no-xwayland"] == ("true", "env RCOMP_NO_XWAYLAND")
    assert shown["codec"] == ("video", "%s:4" % user)
    assert shown["dump-dir"] == ("/tmp/a", "%s:4" % first)
    assert shown["audio"] == ("off", "%s:3" % last)
    assert shown["stats"] == ("false", "default")
    # Each layer taken away shows the one below it.
    assert settings.show(RCOMP_RUN, env=env)["fps"] == ("40", "env RCOMP_FPS")
    assert settings.show(RCOMP_RUN)["fps"] == ("30", "%s:3" % user)
    os.unlink(user)
    assert settings.show(RCOMP_RUN)["fps"] == ("20", "%s:2" % first)
    os.unlink(first)
    assert settings.show(RCOMP_RUN)["fps"] == ("10", "%s:2" % last)
    os.unlink(last)
    assert settings.show(RCOMP_RUN)["fps"] == ("auto", "default")


def test_the_viewer_reads_its_own_section_and_every_flag_is_a_key(settings):
    path = settings.write("user", "[run]\nstats = true\n[view]\ntitle-host = yes\n"
                                  "remote-bin = /opt/rcomp/bin/rcomp-run\n")
    shown = settings.show(RCOMP_VIEW, "--mic")
    assert shown["title-host"] == ("yes", "%s:4" % path)
    assert shown["remote-bin"] == ("/opt/rcomp/bin/rcomp-run", "%s:5" % path)
    assert shown["stats"] == ("false", "default"), "[run] is rcomp-run's"
    assert shown["mic"] == ("true", "flag --mic")
    assert settings.show(RCOMP_RUN)["stats"] == ("true", "%s:2" % path)


def test_an_app_section_applies_only_to_that_app(settings):
    system = settings.write("system", "[app:foot]\nfps = 24\ncompress = zstd:9\n")
    user = settings.write("user", "[run]\nfps = 60\n[app:foot]\ncompress = lz4\n")
    foot = settings.show(RCOMP_RUN, "--", "/usr/bin/foot", "-e", "top")
    assert foot["fps"] == ("24", "%s:2 [app:foot]" % system)
    assert foot["compress"] == ("lz4", "%s:4 [app:foot]" % user)
    other = settings.show(RCOMP_RUN, "--", "weston-terminal")
    assert other["fps"] == ("60", "%s:2" % user)
    assert other["compress"] == ("lz4", "default")


def test_a_host_section_applies_only_to_that_host(settings):
    path = settings.write("user", "[view]\naudio = off\n[host:box]\ncompress = zstd\n"
                                  "audio = on\n")
    box = settings.show(RCOMP_VIEW, "ssh", "-p", "2222", "me@box", "--", "foot")
    assert box["compress"] == ("zstd", "%s:4 [host:box]" % path)
    assert box["audio"] == ("on", "%s:5 [host:box]" % path)
    other = settings.show(RCOMP_VIEW, "ssh", "elsewhere", "--attach")
    assert other["compress"] == ("", "default")
    assert other["audio"] == ("off", "%s:2" % path)


@pytest.mark.parametrize("program, section", [(RCOMP_RUN, "run"), (RCOMP_VIEW, "view")],
                         ids=["rcomp-run", "rcomp-view"])
def test_a_bad_value_names_the_file_the_line_and_the_key_and_exits_2(settings, program,
                                                                      section):
    path = settings.write("user", "[%s]\naudio = on\nfps = fast\n" % section)
    r = settings.run(program, "--show-config")
    assert r.returncode == 2
    assert r.stderr.splitlines() == [
        "%s: %s:3: fps = fast: fps takes auto or a number from 1 to 240"
        % (os.path.basename(program), path)]
    settings.write("user", "[%s]\nthis line has no equals sign\n" % section)
    r = settings.run(program, "--show-config")
    assert r.returncode == 2 and "%s:2: " % path in r.stderr
    os.unlink(path)
    r = settings.run(program, "--show-config", env={"RCOMP_AUDIO": "loud"})
    assert r.returncode == 2
    takes = {"run": "on, off, pulseaudio or pipewire", "view": "on or off"}[section]
    assert "env RCOMP_AUDIO: audio = loud: audio takes %s" % takes in r.stderr


def test_an_unknown_key_or_section_is_a_warning_naming_file_and_line(settings):
    path = settings.write("user", "[run]\nfsp = 30\n[runn]\nfps = 30\n[view]\nfsp = 1\n")
    r = settings.run(RCOMP_RUN, "--show-config")
    assert r.returncode == 0
    assert "warning: %s:2: unknown key fsp in [run]" % path in r.stderr
    assert "warning: %s:4: [runn] is not a section" % path in r.stderr
    assert ":6:" not in r.stderr, "[view] is rcomp-view's to check"


def test_settings_files_take_effect_in_a_real_session(desktop):
    """The viewer's [view] puts the host in titles; rcomp-run's [app:NAME]
    names the session of that app only."""
    desktop.settings_file("local", "[view]\ntitle-host = true\n")
    desktop.settings_file("remote", "[app:%s]\nname = from-settings\n"
                          % os.path.basename(INPUT_CLIENT))
    server = desktop.start_server([INPUT_CLIENT, "set by a file"], host="settings-box")
    desktop.start_viewer(server)
    wait_for("the title with the host", lambda: desktop.window(
        title="settings-box: set by a file"))
    sessions = subprocess.run([RCOMP_RUN, "--list"], env=desktop.remote_env,
                              capture_output=True, text=True, timeout=10).stdout
    assert "from-settings" in sessions, sessions


def test_where_to_connect_can_be_a_setting_and_the_command_line_overrides_it(desktop):
    """[view] attach = NAME: a bare rcomp-view goes there, though two
    sessions run; --attach on the command line goes elsewhere."""
    desktop.start_server([INPUT_CLIENT, "first"], ["--name", "first"], name="run-a")
    desktop.start_server([INPUT_CLIENT, "second"], ["--name", "second"], name="run-b")
    desktop.settings_file("local", "[view]\nattach = second\n")
    desktop.start("view-setting", [RCOMP_VIEW], desktop.local_env)
    wait_for("the session the settings name", lambda: desktop.window(title="second"))
    desktop.start("view-flag", [RCOMP_VIEW, "--attach", "first"], desktop.local_env)
    wait_for("the session the command line names", lambda: desktop.window(title="first"))
    path = desktop.settings_file("local", "[view]\nattach = second\nsocket = /tmp/x.sock\n")
    r = subprocess.run([RCOMP_VIEW], env=desktop.local_env, capture_output=True, text=True,
                       timeout=10)
    assert r.returncode == 2
    assert "where to connect twice: attach (%s:2) and socket (%s:3)" % (path, path) in r.stderr
