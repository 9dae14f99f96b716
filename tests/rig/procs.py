"""Processes: their memory, their descendants, programs hidden from a
desktop."""
import os
import time

from .base import Failure

def hide_programs(desktop, *names):
    """The remote side's PATH as it is, less the named programs: a host
    without them. A directory of links to every other program on PATH."""
    bin_dir = os.path.join(desktop.tmp, "host-bin")
    os.makedirs(bin_dir, exist_ok=True)
    for d in desktop.remote_env.get("PATH", os.defpath).split(":"):
        if not os.path.isdir(d):
            continue
        for entry in os.listdir(d):
            link = os.path.join(bin_dir, entry)
            if entry not in names and not os.path.lexists(link):
                os.symlink(os.path.join(d, entry), link)
    desktop.remote_env["PATH"] = bin_dir


def rss_kib(pid):
    """Resident memory of a process, in KiB."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise Failure("no VmRSS for %d" % pid)


def descendant(pid, comm):
    """The pid of the first process below pid whose name is comm, or None."""
    todo = [pid]
    while todo:
        p = todo.pop(0)
        try:
            with open("/proc/%d/comm" % p) as f:
                if p != pid and f.read().strip() == comm[:15]:
                    return p
            for task in os.listdir("/proc/%d/task" % p):
                with open("/proc/%d/task/%s/children" % (p, task)) as f:
                    todo += [int(c) for c in f.read().split()]
        except OSError:
            continue
    return None


# An app that ignores SIGTERM, with a helper in a session of its own that
# ignores it too; run with a path P, they write their pids to P.app and
# P.helper.
STUBBORN_APP = """#!/bin/sh
trap '' TERM
setsid sh -c 'trap "" TERM; echo $$ > "$0.helper"; while :; do sleep 0.1; done' "$1" &
echo $$ > "$1.app"
while :; do sleep 0.1; done
"""


def alive(pid):
    """Running: not gone, and not a zombie waiting to be reaped."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def stubborn_pids(where):
    """The pids STUBBORN_APP wrote at where, once both run; else None."""
    try:
        found = [int(open(where + ext).read()) for ext in (".app", ".helper")]
    except (OSError, ValueError):
        return None
    return found if all(alive(p) for p in found) else None


def all_gone_by(pids, deadline):
    """Waits until none of pids runs, at most until deadline (monotonic);
    returns when that was, or raises with what still runs."""
    while True:
        left = [p for p in pids if alive(p)]
        if not left:
            return time.monotonic()
        if time.monotonic() > deadline:
            raise Failure("still running %.1f s past the deadline: %s" % (
                time.monotonic() - deadline, left))
        time.sleep(0.02)


def memory_holds(pid, needle):
    """Whether the writable memory of process pid (root may read it) holds
    needle anywhere: a secret it should have wiped. Read in pieces, each
    overlapping the last by the needle's length, so that a sanitizer's
    allocator (gigabytes reserved) costs no more than it holds; a mapping of
    a terabyte or more is a sanitizer's shadow of the whole address space,
    which holds only its marks, never the program's bytes."""
    piece = 16 << 20
    with open("/proc/%d/maps" % pid) as maps, open("/proc/%d/mem" % pid, "rb", 0) as mem:
        for line in maps:
            fields = line.split()
            if "w" not in fields[1] or (len(fields) > 5 and fields[5].startswith("[v")):
                continue
            start, end = (int(x, 16) for x in fields[0].split("-"))
            if end - start >= 1 << 40:
                continue
            at = start
            while at < end:
                try:
                    mem.seek(at)
                    got = mem.read(min(piece + len(needle), end - at))
                except OSError:
                    break
                if needle in got:
                    return True
                at += piece
    return False
