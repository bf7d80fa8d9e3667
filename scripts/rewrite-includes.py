#!/usr/bin/env python3
"""Rewrites include paths after files moved (issue 21's layout).

Reads scripts/layout-moves.txt (`old -> new` a line, paths from the
repository root) and, in every C file under gateway/, plugins/, tools/,
srtpplus/, tests/ and bench/:
  - `#include "core/x.h"` becomes `#include "engine/x.h"` (include paths are
    relative to gateway/, the include directory every target has);
  - a full path `gateway/core/x.c` (in comments, meson.build files, scripts
    and documents) becomes the new one.
Then it lists meson.build entries that name a file no longer in that folder
(a branch merged after the split may have added a file to the old folder's
list): move those lines by hand to the new folder's meson.build.

Idempotent: run it again after merging branches that still use old paths.
  scripts/rewrite-includes.py            rewrite in place, print what changed
  scripts/rewrite-includes.py --check    change nothing; exit 1 if a rewrite
                                         or a meson.build entry is pending
"""
import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
C_DIRS = ["gateway", "plugins", "tools", "srtpplus", "tests", "bench"]
TEXT_SUFFIXES = {".c", ".h", ".py", ".sh", ".md", ".txt", ".build"}
INCLUDE = re.compile(r'^(\s*#\s*include\s+")([^"]+)(")', re.M)


def read_moves(path):
    moves = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        old, arrow, new = line.partition(" -> ")
        if not arrow:
            sys.exit(f"{path}: not `old -> new`: {line}")
        moves[old.strip()] = new.strip()
    return moves


def include_map(moves):
    """Old include path (relative to gateway/) -> new one, headers only."""
    out = {}
    for old, new in moves.items():
        if old.startswith("gateway/") and new.startswith("gateway/") and old.endswith(".h"):
            out[old[len("gateway/"):]] = new[len("gateway/"):]
    return out


def text_files():
    for d in C_DIRS + ["scripts", "docs"]:
        base = ROOT / d
        if not base.is_dir():
            continue
        for p in sorted(base.rglob("*")):
            if p.is_file() and (p.suffix in TEXT_SUFFIXES or p.name == "meson.build"):
                if p.name in ("layout-moves.txt", "rewrite-includes.py", "apply-layout.py"):
                    continue
                yield p
    for name in ("README.md", "Makefile", "meson.build"):
        if (ROOT / name).is_file():
            yield ROOT / name


def rewrite(text, is_c, includes, paths):
    if is_c:
        def fix(m):
            return m.group(1) + includes.get(m.group(2), m.group(2)) + m.group(3)
        text = INCLUDE.sub(fix, text)
    for old, new in paths:
        text = re.sub(r"(?<![\w.-])" + re.escape(old) + r"(?![\w.])", new, text)
    return text


def stale_meson_entries(moves):
    """meson.build entries under gateway/ naming a file not in that folder."""
    found = []
    by_name = {pathlib.PurePath(old).name: new for old, new in moves.items()}
    for build in sorted((ROOT / "gateway").rglob("meson.build")):
        folder = build.parent
        for m in re.finditer(r"'([\w./-]+\.c)'", build.read_text()):
            if not (folder / m.group(1)).exists():
                where = by_name.get(m.group(1), "a new file: see docs/LAYERS.md")
                found.append(f"{build.relative_to(ROOT)}: '{m.group(1)}' is not in "
                             f"{folder.relative_to(ROOT)}/ (now {where})")
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="change nothing, exit 1 if pending")
    parser.add_argument("--moves", default=str(ROOT / "scripts/layout-moves.txt"))
    args = parser.parse_args()
    moves = read_moves(pathlib.Path(args.moves))
    includes = include_map(moves)
    paths = sorted(moves.items(), key=lambda kv: -len(kv[0]))
    pending = 0
    for p in text_files():
        try:
            text = p.read_text()
        except UnicodeDecodeError:
            continue
        new = rewrite(text, p.suffix in (".c", ".h"), includes, paths)
        if new != text:
            pending += 1
            print(f"{'would rewrite' if args.check else 'rewrote'} {p.relative_to(ROOT)}")
            if not args.check:
                p.write_text(new)
    stale = stale_meson_entries(moves)
    for line in stale:
        print(f"move by hand: {line}")
    if args.check and (pending or stale):
        return 1
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
