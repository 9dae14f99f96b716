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
    with open(os.path.join(ROOT, "wire", "PROTOCOL.md")) as f:
        return re.search(r"version (\d+\.\d+)", f.readline()).group(1)


@pytest.mark.parametrize("program", [RCOMP_RUN, RCOMP_VIEW], ids=["rcomp-run", "rcomp-view"])
def test_both_programs_say_their_version_and_wire_protocol(program):
    for flag in ("--version", "-V"):
        out = subprocess.run([program, flag], capture_output=True, text=True, timeout=10)
        assert out.returncode == 0, out.stderr
        assert out.stdout == "%s %s (wire protocol %s)\n" % (
            os.path.basename(program), project_version(), wire_version())
