#!/usr/bin/env python3
"""Checks that every C file opens with a comment saying what it owns.

The project's standard: each `.c` file under gateway/, srtpplus/, plugins/,
tools/, bench/ and tests/ opens with a short `/* ... */` (or `//`) comment,
before its first #include, that names its single responsibility. Fails naming every tracked `.c` file whose
first non-blank line is not a comment. Files are those `git ls-files` lists
(every `.c` file under the folders when the tree is not a git checkout).
Exit status 0 when every file opens with a comment, 1 otherwise.

  tests/layers/check_opening_comments.py [--root DIR]
"""
import argparse
import pathlib
import subprocess
import sys

SCANNED = ["gateway", "srtpplus", "plugins", "tools", "bench", "tests"]


def c_files(root):
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z", "--", *SCANNED],
            check=True, capture_output=True).stdout.decode()
        names = [n for n in out.split("\0") if n.endswith(".c")]
    except (OSError, subprocess.CalledProcessError):
        names = [str(p.relative_to(root)) for top in SCANNED
                 for p in (root / top).rglob("*.c") if p.is_file()]
    return sorted(names)


def opens_with_comment(path):
    with open(path, errors="replace") as f:
        for line in f:
            if line.strip():
                return line.lstrip().startswith(("/*", "//"))
    return False  # an empty file says nothing either


def main():
    here = pathlib.Path(__file__).resolve()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=str(here.parent.parent.parent))
    args = parser.parse_args()
    root = pathlib.Path(args.root).resolve()
    names = c_files(root)
    missing = [n for n in names if (root / n).is_file() and not opens_with_comment(root / n)]
    for n in missing:
        print(f"NO OPENING COMMENT  {n}")
    print(f"check_opening_comments: {len(names)} .c files, {len(missing)} without an "
          "opening comment saying what the file owns")
    return 1 if missing or not names else 0


if __name__ == "__main__":
    sys.exit(main())
