#!/usr/bin/env python3
"""The house's include graph, checked: every #include "..." of the C
sources, resolved to the file it names, must point down the layers or
within a folder, never up and never round in a circle.

The layers, bottom first (doc/house.md):

    common/                      settings, sessions, log, ids, buffers
    protocol/                    the wire format, the channel, pacing
    net/   media/                the network; the codecs and sound (apart)
    compositor/ viewer/ gate/ web/   the programs (apart)

A file may include files of its own folder and of folders in lower
layers; folders of one layer include nothing of each other. Within the
tree no two modules (a .c with its .h) include each other, directly or
round a longer circle. tests/ and tools/ sit above everything and are not
checked.

    tools/layers.py            # prints the folders' arrows; status 1 on any fault
    tools/layers.py --modules  # also every module's arrows
"""

import argparse
import os
import re
import sys

LAYERS = [
    ["common"],
    ["protocol"],
    ["net", "media"],
    ["compositor", "viewer", "gate", "web"],
]
RANK = {folder: i for i, layer in enumerate(LAYERS) for folder in layer}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def top(path):
    return path.split("/", 1)[0]


def sources(root):
    out = []
    for folder in RANK:
        for base, dirs, files in os.walk(os.path.join(root, folder)):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(files):
                if name.endswith((".c", ".h")):
                    out.append(os.path.relpath(os.path.join(base, name), root))
    return out


def resolve(root, including, name, by_base):
    """The file an #include "name" in including finds: beside it first
    (as the compiler looks), then under the same program's folder, then in
    a library (each library's folder is on every include path)."""
    here = os.path.normpath(os.path.join(os.path.dirname(including), name))
    if os.path.exists(os.path.join(root, here)):
        return here
    candidates = by_base.get(os.path.basename(name), [])
    own = [c for c in candidates if top(c) == top(including)]
    if len(own) == 1:
        return own[0]
    if len(candidates) == 1:
        return candidates[0]  # whichever layer it is in: the check judges it
    libraries = [c for c in candidates if RANK[top(c)] < RANK[top(including)]]
    if len(libraries) == 1:
        return libraries[0]
    if not candidates:
        return None  # generated (wayland-scanner's headers) or a system one
    return ("ambiguous", candidates)


def module(path):
    return os.path.splitext(path)[0]


def circles(graph):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, on, stack, found = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--modules", action="store_true", help="print every module's arrows")
    args = ap.parse_args()
    root = os.path.normpath(args.root)

    files = sources(root)
    by_base = {}
    for f in files:
        by_base.setdefault(os.path.basename(f), []).append(f)

    faults = []
    folder_arrows = {}
    module_graph = {}
    for f in files:
        with open(os.path.join(root, f), encoding="utf-8") as fh:
            text = fh.read()
        for name in INCLUDE.findall(text):
            target = resolve(root, f, name, by_base)
            if target is None:
                continue
            if isinstance(target, tuple):
                faults.append(f'{f}: #include "{name}" could be any of {", ".join(target[1])}')
                continue
            a, b = top(f), top(target)
            if a != b:
                folder_arrows.setdefault((a, b), []).append(f"{f} -> {target}")
                if RANK[b] > RANK[a]:
                    faults.append(f"{f} -> {target}: an arrow back up ({a}/ is below {b}/)")
                elif RANK[b] == RANK[a]:
                    faults.append(f"{f} -> {target}: {a}/ and {b}/ are one layer, apart")
            ma, mb = module(f), module(target)
            if ma != mb:
                module_graph.setdefault(ma, set()).add(mb)

    for part in circles(module_graph):
        faults.append("a circle of includes: " + " -> ".join(part))

    for i, layer in reversed(list(enumerate(LAYERS))):
        print(f"layer {i}: " + "  ".join(f + "/" for f in layer))
    for (a, b), why in sorted(folder_arrows.items()):
        print(f"  {a}/ -> {b}/  ({len(why)} includes)")
    if args.modules:
        for m in sorted(module_graph):
            print(f"  {m} -> {', '.join(sorted(module_graph[m]))}")
    modules = len({module(f) for f in files})
    arrows = sum(len(v) for v in module_graph.values())
    print(f"{len(files)} files, {modules} modules, {arrows} arrows between modules")
    for fault in faults:
        print("fault: " + fault)
    print(f"{len(faults)} faults")
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())
