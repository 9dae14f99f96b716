"""What `meson install` puts on a machine: the programs, their man pages and
shell completion, checked as a user meets them (man, bash, zsh, fish)."""
import os
import re
import shutil
import subprocess
import tempfile

import pytest

from rig import BUILD, RCOMP_GATE, RCOMP_RUN, RCOMP_VIEW, WEB, wait_for

GATE = os.path.exists(RCOMP_GATE)

PREFIX = "/usr/local"


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The build installed into a fresh destdir; returns its prefix."""
    dest = str(tmp_path_factory.mktemp("destdir"))
    r = subprocess.run(["meson", "install", "-C", BUILD, "--no-rebuild", "--destdir", dest,
                        "--quiet"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return dest + PREFIX


def long_options(program):
    out = subprocess.run([program, "--help"], capture_output=True, text=True,
                         timeout=10).stdout
    return sorted(set(re.findall(r"^\s+(?:-\w, )?(--[a-z][a-z-]+)", out, re.M)))


def test_meson_install_puts_programs_man_pages_and_completion_in_the_standard_places(installed):
    for path in ("bin/rcomp-run", "bin/rcomp-view"):
        assert os.access(os.path.join(installed, path), os.X_OK), path
    for path in ("share/man/man1/rcomp-run.1", "share/man/man1/rcomp-view.1",
                 "share/man/man5/rcomp.5",
                 "share/bash-completion/completions/rcomp-run",
                 "share/bash-completion/completions/rcomp-view",
                 "share/zsh/site-functions/_rcomp",
                 "share/fish/vendor_completions.d/rcomp-run.fish",
                 "share/fish/vendor_completions.d/rcomp-view.fish"):
        assert os.path.isfile(os.path.join(installed, path)), path
    r = subprocess.run([os.path.join(installed, "bin/rcomp-run"), "--version"],
                       capture_output=True, text=True, timeout=10)
    assert r.returncode == 0 and r.stdout.startswith("rcomp-run ")
    if GATE:
        for path in ("sbin/rcomp-gate", "share/man/man8/rcomp-gate.8",
                     "share/rcomp/web/gate.html", "share/rcomp/web/gate.js"):
            assert os.path.isfile(os.path.join(installed, path)), path


@pytest.mark.skipif(not WEB, reason="built without libwebsockets")
def test_meson_install_puts_the_browser_viewer_where_rcomp_run_serves_it_from(installed):
    web = os.path.join(installed, "share/rcomp/web")
    # Every module the page loads, from its script on: what each imports,
    # and the sound worklet it adds by its URL.
    wanted, seen = ["index.html"], set()
    while wanted:
        name = wanted.pop()
        if name in seen:
            continue
        seen.add(name)
        path = os.path.join(web, name)
        assert os.path.isfile(path), "%s (the page loads it) is not installed" % name
        with open(path) as f:
            text = f.read()
        wanted += re.findall(r"""(?:src=|from |new URL\()['"]\.?/?([\w-]+\.js)['"]""", text)
    assert {"rcomp.js", "messages.js", "playout.js", "input.js"} <= seen, seen
    with open(os.path.join(web, "messages.js")) as f:
        assert "hello: {code: 0x0101" in f.read()
    out = subprocess.run(["strings", os.path.join(installed, "bin/rcomp-run")],
                         capture_output=True, text=True, timeout=30).stdout
    assert PREFIX + "/share/rcomp/web" in out


@pytest.mark.parametrize("page", ["man1/rcomp-run.1", "man1/rcomp-view.1", "man5/rcomp.5",
                                  "man8/rcomp-gate.8"])
def test_each_man_page_renders_without_warnings(installed, page):
    if page == "man8/rcomp-gate.8" and not GATE:
        pytest.skip("built without rcomp-gate")
    r = subprocess.run(["man", "--warnings", "-l", os.path.join(installed, "share/man", page)],
                       capture_output=True, text=True, timeout=30,
                       env=dict(os.environ, MANWIDTH="80", MANPAGER="cat", PAGER="cat"))
    assert r.returncode == 0
    assert r.stderr == "", r.stderr
    assert "SEE ALSO" in r.stdout


def rendered(installed, page):
    return subprocess.run(["man", "-l", os.path.join(installed, "share/man", page)],
                          capture_output=True, text=True, timeout=30,
                          env=dict(os.environ, MANWIDTH="200", MANPAGER="cat")).stdout


@pytest.mark.parametrize("program, page", [(RCOMP_RUN, "man1/rcomp-run.1"),
                                           (RCOMP_VIEW, "man1/rcomp-view.1"),
                                           (RCOMP_GATE, "man8/rcomp-gate.8")],
                         ids=["rcomp-run", "rcomp-view", "rcomp-gate"])
def test_every_long_option_of_help_is_in_the_man_page(installed, program, page):
    if program == RCOMP_GATE and not GATE:
        pytest.skip("built without rcomp-gate")
    text = rendered(installed, page)
    options = long_options(program)
    assert len(options) > (2 if program == RCOMP_GATE else 10)
    missing = [o for o in options if not re.search(r"^\s+(-\w, )?%s\b" % re.escape(o), text,
                                                   re.M)]
    assert not missing, "not documented in %s: %s" % (page, missing)


def test_the_settings_page_documents_every_key_of_both_programs(installed, tmp_path):
    text = rendered(installed, "man5/rcomp.5")
    env = dict(os.environ, HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path),
               XDG_CONFIG_DIRS=str(tmp_path))
    for program in (RCOMP_RUN, RCOMP_VIEW):
        out = subprocess.run([program, "--show-config"], capture_output=True, text=True,
                             env=env, timeout=10).stdout
        keys = re.findall(r"^(\S+) = ", out, re.M)
        assert len(keys) > 8
        missing = [k for k in keys if not re.search(r"^\s+%s = " % re.escape(k), text, re.M)]
        assert not missing, "keys of %s not in rcomp(5): %s" % (program, missing)


def bash_complete(installed, line, env=None):
    """What bash-completion offers at the end of line, with our script."""
    command = line.split()[0]
    script = os.path.join(installed, "share/bash-completion/completions", command)
    program = r'''
source /usr/share/bash-completion/bash_completion
source "$1"
COMP_LINE=$2
COMP_POINT=${#COMP_LINE}
read -ra COMP_WORDS <<< "$COMP_LINE"
[[ $COMP_LINE == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
func=$(complete -p "${COMP_WORDS[0]}" | sed -E 's/.*-F ([^ ]+).*/\1/')
"$func" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
printf '%s\n' "${COMPREPLY[@]}"
'''
    r = subprocess.run(["bash", "-c", program, "bash", script, line], capture_output=True,
                       text=True, timeout=30, env=env or os.environ)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def test_bash_completes_options_values_sessions_and_ssh_hosts(installed, tmp_path):
    assert bash_complete(installed, "rcomp-run --co") == ["--compress", "--codec"]
    assert bash_complete(installed, "rcomp-run --codec ") == ["auto", "lossless", "video"]
    assert "zstd:9" in bash_complete(installed, "rcomp-view --compress zs")
    assert "--hud" in bash_complete(installed, "rcomp-view --h")
    assert bash_complete(installed, "rcomp-view ") == ["ssh"]
    # Session names come from rcomp-run --list: a real session, listed.
    # A short path: a socket's address is at most 107 bytes.
    sessions = tempfile.mkdtemp(prefix="rcomp-")
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "config").write_text("Host build-box\n  HostName 127.0.0.1\n")
    env = dict(os.environ, RCOMP_DIR=sessions, HOME=str(home),
               XDG_RUNTIME_DIR=str(tmp_path), PATH="%s:%s" % (
                   os.path.dirname(RCOMP_RUN), os.environ["PATH"]))
    run = subprocess.Popen([RCOMP_RUN, "--name", "completed", "--audio", "off", "--",
                            "sleep", "30"], env=env, stderr=open(str(tmp_path / "run.log"), "w"))
    try:
        wait_for("the session in rcomp-run --list", lambda: "completed" in subprocess.run(
            [RCOMP_RUN, "--list"], env=env, capture_output=True, text=True).stdout)
        assert bash_complete(installed, "rcomp-view --attach co", env) == ["completed"]
        assert bash_complete(installed, "rcomp-run --attach ", env) == ["completed"]
    finally:
        run.terminate()
        run.wait(timeout=10)
        shutil.rmtree(sessions, ignore_errors=True)
    assert "build-box" in bash_complete(installed, "rcomp-view ssh bui", env)
    assert bash_complete(installed, "rcomp-view ssh -p 22 build-box ", env) == [
        "--", "--attach", "--stop", "--list"]
    assert bash_complete(installed, "rcomp-run --sto", env) == ["--stop"]
    assert bash_complete(installed, "rcomp-run --sta", env) == ["--stall-timeout", "--stats"]
    # A remote host's sessions come from ssh with the options given: a
    # stand-in ssh says what it was asked.
    env, asked = fake_ssh(tmp_path, env)
    for verb in ("--attach", "--stop"):
        line = "rcomp-view ssh -p 2222 -i %s/key build-box %s " % (tmp_path, verb)
        assert bash_complete(installed, line, env) == ["remote-one"]
        with open(asked) as f:
            words = f.read().split()
        assert words[words.index("-p"):] == ["-p", "2222", "-i", "%s/key" % tmp_path,
                                             "build-box", "rcomp-run", "--list"], words


def fake_ssh(tmp_path, env):
    """An ssh on PATH that writes its arguments to a file and lists one
    session; returns the environment and the file."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    asked = tmp_path / "ssh-args"
    script = bin_dir / "ssh"
    script.write_text('#!/bin/sh\necho "$@" > %s\n'
                      'printf "SESSION PID STARTED VIEWERS APP\\nremote-one 1 x detached a\\n"\n'
                      % asked)
    script.chmod(0o755)
    return dict(env, PATH="%s:%s" % (bin_dir, env["PATH"])), str(asked)


def test_zsh_and_fish_completion_parse_and_fish_offers_options_and_remote_sessions(installed,
                                                                                tmp_path):
    zsh = os.path.join(installed, "share/zsh/site-functions/_rcomp")
    r = subprocess.run(["zsh", "-n", zsh], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    for command in ("rcomp-run", "rcomp-view"):
        fish = os.path.join(installed, "share/fish/vendor_completions.d", command + ".fish")
        r = subprocess.run(["fish", "-n", fish], capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, r.stderr
    fish = os.path.join(installed, "share/fish/vendor_completions.d/rcomp-run.fish")
    r = subprocess.run(["fish", "--no-config", "-c",
                        'source $argv[1]; complete -C "rcomp-run --co"', fish],
                       capture_output=True, text=True, timeout=30)
    offered = sorted(line.split("\t")[0] for line in r.stdout.splitlines())
    assert offered == ["--codec", "--compress"], r.stdout + r.stderr
    env, asked = fake_ssh(tmp_path, dict(os.environ))
    fish = os.path.join(installed, "share/fish/vendor_completions.d/rcomp-view.fish")
    r = subprocess.run(["fish", "--no-config", "-c", 'source $argv[1]; complete -C '
                        '"rcomp-view ssh -p 2222 build-box --stop "', fish],
                       capture_output=True, text=True, timeout=30, env=env)
    assert [line.split("\t")[0] for line in r.stdout.splitlines()] == ["remote-one"], \
        r.stdout + r.stderr
    with open(asked) as f:
        words = f.read().split()
    assert words[words.index("-p"):] == ["-p", "2222", "build-box", "rcomp-run", "--list"]
