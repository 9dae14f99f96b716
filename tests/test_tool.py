"""A tool people live with: what a user asks the programs themselves."""
import os
import re
import subprocess

import pytest

from rig import RCOMP_RUN, RCOMP_VIEW

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def project_version():
    with open(os.path.join(ROOT, "meson.build")) as f:
        return re.search(r"version: '([^']+)'", f.read()).group(1)


def wire_version():
    with open(os.path.join(ROOT, "protocol", "PROTOCOL.md")) as f:
        return re.search(r"version (\d+\.\d+)", f.readline()).group(1)


@pytest.mark.parametrize("program", [RCOMP_RUN, RCOMP_VIEW], ids=["rcomp-run", "rcomp-view"])
def test_both_programs_say_their_version_and_wire_protocol(program):
    for flag in ("--version", "-V"):
        out = subprocess.run([program, flag], capture_output=True, text=True, timeout=10)
        assert out.returncode == 0, out.stderr
        assert out.stdout == "%s %s (wire protocol %s)\n" % (
            os.path.basename(program), project_version(), wire_version())


def test_the_include_graph_points_only_down_the_layers_and_never_round_a_circle(tmp_path):
    layers = os.path.join(ROOT, "tools", "layers.py")
    out = subprocess.run(["python3", layers], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.endswith("\n0 faults\n"), out.stdout
    assert "common/ -> " not in out.stdout  # the bottom layer includes nothing above it
    # The check itself sees what it is for: a copy of the tree with one
    # arrow back up (the log including the protocol) and one circle.
    copy = tmp_path / "tree"
    copy.mkdir()
    for folder in ("common", "protocol", "net", "media", "compositor", "viewer", "gate", "web"):
        subprocess.run(["cp", "-r", os.path.join(ROOT, folder), str(copy)], check=True)
    log = copy / "common" / "log.c"
    log.write_text('#include "wire.h"\n' + log.read_text())
    buf = copy / "common" / "buffer.h"
    buf.write_text(buf.read_text().replace("#define", '#include "idmap.h"\n#define', 1))
    idmap = copy / "common" / "idmap.c"
    idmap.write_text('#include "buffer.h"\n' + idmap.read_text())
    out = subprocess.run(["python3", layers, "--root", str(copy)], capture_output=True,
        text=True, timeout=60)
    assert out.returncode == 1, out.stdout
    assert "common/log.c -> protocol/wire.h: an arrow back up" in out.stdout
    assert "a circle of includes: common/buffer -> common/idmap" in out.stdout
