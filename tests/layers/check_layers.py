#!/usr/bin/env python3
"""Checks Moat's layering (docs/LAYERS.md, docs/layers.txt).

Reads every `#include "..."` in the C files under gateway/, plugins/, tools/
and srtpplus/, resolves it (next to the including file first, then in the
include directories gateway/ and srtpplus/), maps both files to their folder
(the deepest folder docs/layers.txt lists that holds them) and fails on:
  - an include of a folder that is not above the including one in the list
    (lower layers never include higher ones; folders on one line are peers
    that include neither way);
  - a file in a folder the list does not name (a new folder gets a line;
    `dir/**` stands for dir and every folder below it);
  - any cycle between folders (reported whatever the list says);
  - a folder of C files without a README.md (what it owns, who calls it, on
    which thread).
Exit status 0 when the tree keeps its layers, 1 otherwise.

  tests/layers/check_layers.py [--root DIR] [--layers FILE] [--graph]
"""
import argparse
import collections
import pathlib
import re
import sys

SCANNED = ["gateway", "plugins", "tools", "srtpplus"]
INCLUDE_ROOTS = ["gateway", "srtpplus"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def read_layers(path):
    ranks = {}
    for rank, line in enumerate(
            l.split("#")[0].split() for l in path.read_text().splitlines()):
        for folder in line:
            if folder in ranks:
                sys.exit(f"{path}: {folder} listed twice")
            ranks[folder.rstrip("/")] = rank
    for folder in [f for f in ranks if f.endswith("/**")]:
        ranks[folder[:-3]] = ranks[folder]
    return ranks


def folder_of(rel, ranks):
    """The listed folder of `rel`: its own directory, or the nearest one
    above it listed as `dir/**`; else (its own directory, False)."""
    parts = rel.parts[:-1]
    own = "/".join(parts)
    if own in ranks:
        return own, True
    for n in range(len(parts), 0, -1):
        candidate = "/".join(parts[:n])
        if candidate + "/**" in ranks:
            return candidate, True
    return own, False


def resolve(root, source, name):
    candidates = [source.parent / name] + [root / r / name for r in INCLUDE_ROOTS]
    for c in candidates:
        if c.is_file():
            return c.resolve().relative_to(root)
    return None


def sources(root):
    for top in SCANNED:
        for p in sorted((root / top).rglob("*")):
            if p.suffix in (".c", ".h") and p.is_file():
                yield p


def strongly_connected(graph):
    """Tarjan's algorithm; the components of more than one folder."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    here = pathlib.Path(__file__).resolve()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=str(here.parent.parent.parent))
    parser.add_argument("--layers", help="default: <root>/docs/layers.txt")
    parser.add_argument("--graph", action="store_true", help="print the folder graph")
    args = parser.parse_args()
    root = pathlib.Path(args.root).resolve()
    ranks = read_layers(pathlib.Path(args.layers) if args.layers else root / "docs/layers.txt")

    edges = collections.defaultdict(list)  # (from, to) -> ["file:line -> header"]
    unlisted = collections.defaultdict(int)
    folders = set()
    n_files = n_includes = 0
    for path in sources(root):
        n_files += 1
        rel = path.relative_to(root)
        src, listed = folder_of(rel, ranks)
        folders.add(path.parent)
        if not listed:
            unlisted[src] += 1
        text = path.read_text(errors="replace")
        for m in INCLUDE.finditer(text):
            target = resolve(root, path, m.group(1))
            if target is None:
                continue  # not in the tree (a system or generated header)
            n_includes += 1
            dst, _ = folder_of(target, ranks)
            if dst != src:
                line = text.count("\n", 0, m.start()) + 1
                edges[(src, dst)].append(f"{rel}:{line} includes {target}")

    problems = 0
    for folder, count in sorted(unlisted.items()):
        print(f"UNLISTED  {folder}/ ({count} files) is not in docs/layers.txt")
        problems += 1
    for folder in sorted(folders):
        if not (folder / "README.md").is_file():
            print(f"NO README {folder.relative_to(root)}/ has no README.md")
            problems += 1
    for (src, dst), where in sorted(edges.items()):
        if src not in ranks or dst not in ranks:
            continue
        if ranks[dst] >= ranks[src]:
            kind = "PEER" if ranks[dst] == ranks[src] else "UPWARD"
            print(f"{kind:<9} {src} -> {dst} ({len(where)} includes), e.g.")
            for w in where[:3]:
                print(f"            {w}")
            problems += 1
    graph = collections.defaultdict(set)
    for src, dst in edges:
        graph[src].add(dst)
    for component in strongly_connected(graph):
        members = set(component)
        print(f"CYCLE     between {', '.join(component)}:")
        for (src, dst), where in sorted(edges.items()):
            if src in members and dst in members:
                print(f"            {src} -> {dst}: {where[0]}"
                      + (f" (+{len(where) - 1} more)" if len(where) > 1 else ""))
        problems += 1
    if args.graph:
        for (src, dst), where in sorted(edges.items()):
            print(f"edge {src} -> {dst} ({len(where)})")
    print(f"check_layers: {n_files} files, {n_includes} includes in the tree, "
          f"{len(edges)} folder edges, {problems} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
