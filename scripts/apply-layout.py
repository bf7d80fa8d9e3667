#!/usr/bin/env python3
"""Applies issue 21's layout to a tree that still has gateway/core/.

For the lead: instead of merging the `layers` branch's first two commits into
a main that gained other branches' edits in gateway/core/, redo them there:

  scripts/apply-layout.py moves   # git mv from scripts/layout-moves.txt only;
                                  # refuses if gateway/core/ holds a file the
                                  # list does not place (add a line, rerun)
  git commit -m "Layout: moves only"
  scripts/apply-layout.py edits   # meson.build per folder, then
                                  # scripts/rewrite-includes.py
  git commit -am "Layout: include paths and meson.build files"

then cherry-pick the branch's later commits (layers check, engine/session
port, registered routes, READMEs, test):
  git cherry-pick $(git log --reverse --format=%h <layers' "edits" commit>..layers -- . ':!scripts')
Both phases are idempotent. Conflicts seen when trying this on other branches:
  - session/session.h: the prototypes the worker calls moved to
    engine/session_port.h; keep the deletion and carry a branch's signature
    change there (dcbp, rxfuzz: moat_session_handle_dtls returns bool).
  - http/http_router.c: keep both sides; a branch's lines in
    moat_http_router_clear stay, and the `/api/calls` branch of moat_http_route
    becomes `else if (api && serve_registered(...)) return;` followed by the
    branch's own lines of the `else if (api) {` block (surfaces: admit_create).
  - app/gateway.c: moat_gateway_pick_worker, moat_gateway_candidates and the
    candidate priority moved to session/gateway_state.c; carry changes there.
  - tests/unit/core/test_http_routes.c: with api merged, moat_http_router_init
    also allocates gateway->pending_sources; add
    `moat_source_counts_free(gateway.pending_sources);` after
    moat_http_router_clear, or LeakSanitizer fails the test.
The compiler catches a missed one (conflicting types); then
`tests/layers/check_layers.py` and `meson test -C build-asan`.
"""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
MOVES = ROOT / "scripts/layout-moves.txt"

HEADERS = {
    "gateway/base": "# What every layer may use: logging, the configuration as read, the version.",
    "gateway/engine": "# The media engine: workers, their sockets, receive and send batches, the\n"
                      "# cross-worker relay, counters.",
    "gateway/session": "# Sessions and what they own; the control thread's state and registries;\n"
                       "# transport-neutral session setup (WHIP, WHEP, ingest, call legs).",
    "gateway/http": "# The HTTP and WebSocket adapter (libsoup-3) and every API route.",
    "gateway/app": "# The daemon's composition: start-up and shut-down of every module, the ng\n"
                   "# socket's wiring to the call layer. main.c is the executable's own.",
}
NEW_FOLDERS = ["base", "engine", "session", "http", "app"]


def read_moves():
    moves = {}
    for line in MOVES.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            old, _, new = line.partition(" -> ")
            moves[old.strip()] = new.strip()
    return moves


def git(*args):
    subprocess.run(["git", "-C", str(ROOT), *args], check=True)


def moves_phase(moves):
    core = ROOT / "gateway/core"
    if core.is_dir():
        unplaced = [f"gateway/core/{p.name}" for p in sorted(core.iterdir())
                    if f"gateway/core/{p.name}" not in moves]
        if unplaced:
            print("not placed by scripts/layout-moves.txt (add `old -> new` lines, see "
                  "docs/LAYERS.md for the folder):")
            for p in unplaced:
                print(f"  {p}")
            return 1
    for old, new in moves.items():
        if (ROOT / old).exists() and not (ROOT / new).exists():
            (ROOT / new).parent.mkdir(parents=True, exist_ok=True)
            git("mv", old, new)
    return 0


def quoted_sources(text):
    return re.findall(r"'([\w.-]+\.c)'", text)


def edits_phase(moves):
    # The old gateway/core/meson.build was moved to engine/meson.build: its
    # list names every core source; each goes to its new folder's list.
    engine_build = ROOT / "gateway/engine/meson.build"
    old_list = engine_build.read_text()
    lists = {f"gateway/{f}": [] for f in NEW_FOLDERS}
    core_list = "'worker.c'" in old_list and "'gateway.c'" in old_list
    if core_list:
        for name in quoted_sources(old_list):
            new = moves.get(f"gateway/core/{name}")
            if not new:
                print(f"gateway/core/meson.build names {name}, which layout-moves.txt does not "
                      "place")
                return 1
            lists[str(pathlib.PurePath(new).parent)].append(name)
    # Sources moved between existing folders (and out of them into app/).
    for old, new in moves.items():
        if not old.endswith(".c") or old.startswith("gateway/core/") or old == "gateway/main.c":
            continue
        old_build = ROOT / pathlib.PurePath(old).parent / "meson.build"
        name = pathlib.PurePath(old).name
        text = old_build.read_text()
        text = re.sub(rf"^libmoat_sources \+= files\('{re.escape(name)}'\)\n", "", text, flags=re.M)
        text = re.sub(rf"^\s*'{re.escape(name)}',\n", "", text, flags=re.M)
        old_build.write_text(text)
        folder = str(pathlib.PurePath(new).parent)
        if folder in lists and core_list:
            lists[folder].append(name)
        else:
            new_build = ROOT / folder / "meson.build"
            text = new_build.read_text()
            if f"'{name}'" not in text:
                new_build.write_text(text + f"libmoat_sources += files('{name}')\n")
    for folder, names in lists.items():
        build = ROOT / folder / "meson.build"
        if not names:
            continue
        body = "".join(f"  '{n}',\n" for n in sorted(set(names)))
        build.write_text(f"{HEADERS[folder]}\nlibmoat_sources += files(\n{body})\n")
    top = ROOT / "gateway/meson.build"
    text = top.read_text()
    if "subdir('core')" in text:
        text = text.replace("subdir('core')\n", "subdir('base')\nsubdir('engine')\n"
                            "subdir('session')\n")
        text = re.sub(r"(subdir\('transcode'\)\n)", r"\1subdir('http')\nsubdir('app')\n", text)
        text = text.replace("executable('moat', 'main.c'", "executable('moat', 'app/main.c'")
        top.write_text(text)
    return subprocess.run([sys.executable, str(ROOT / "scripts/rewrite-includes.py")]).returncode


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in ("moves", "edits"):
        sys.exit(__doc__)
    moves = read_moves()
    return moves_phase(moves) if sys.argv[1] == "moves" else edits_phase(moves)


if __name__ == "__main__":
    sys.exit(main())
