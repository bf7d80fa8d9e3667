"""Every binary the release build makes is hardened (issue 20, meson.build):
PIE, full RELRO (GNU_RELRO and BIND_NOW), stack canaries and FORTIFY's
checked calls, and not only in the static libraries linked in (usrsctp,
libsrtp): Moat's own functions, those defined in the build's object files,
must carry them. MOAT_BUILD_DIR checks another build tree (default build/)."""
import os
import re
import subprocess
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("MOAT_BUILD_DIR") or ROOT / "build")


def is_elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def built_binaries():
    """The gateway, the plugins, the tools and the benches (not the tests)."""
    found = [BUILD / "gateway" / "moat", BUILD / "tools" / "moat-flood"]
    found += sorted((BUILD / "plugins").rglob("*.so"))
    bench = BUILD / "bench"
    if bench.is_dir():
        found += sorted(p for p in bench.iterdir()
                        if p.is_file() and os.access(p, os.X_OK) and is_elf(p))
    return found


BINARIES = built_binaries()
IDS = [str(p.relative_to(BUILD)) for p in BINARIES]


def tool(*args):
    return subprocess.run(args, capture_output=True, text=True, check=True).stdout


@lru_cache(maxsize=None)
def moat_functions():
    """Names of the functions the build's own object files define."""
    objects = [str(p) for p in BUILD.rglob("*.o") if "tests" not in p.relative_to(BUILD).parts]
    names = set()
    for i in range(0, len(objects), 200):
        out = tool("nm", "--defined-only", "-P", *objects[i:i + 200])
        for line in out.splitlines():
            fields = line.split()
            if len(fields) >= 2 and fields[1] in ("T", "t"):
                names.add(fields[0])
    return frozenset(names)


@lru_cache(maxsize=None)
def callers(binary):
    """{callee: set of functions of `binary` that call it through the PLT}."""
    result = {}
    function = None
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(binary)],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <([^>]+)>:$", line)
        if m:
            function = m.group(1)
            continue
        m = re.search(r"\s(?:call|jmp)\s+[0-9a-f]+ <([^@>+]+)@plt>", line)
        if m and function:
            result.setdefault(m.group(1), set()).add(function)
    return result


def own(functions):
    return sorted(f for f in functions if f in moat_functions())


def test_the_build_has_every_kind_of_binary():
    assert (BUILD / "gateway" / "moat").is_file(), f"no gateway in {BUILD}: build it first"
    kinds = {p.parent.name for p in BINARIES}
    assert {"gateway", "tools", "bench"} <= kinds and any(p.suffix == ".so" for p in BINARIES)


@pytest.mark.parametrize("binary", BINARIES, ids=IDS)
def test_position_independent(binary):
    header = tool("readelf", "-h", str(binary))
    assert re.search(r"Type:\s+DYN", header), f"{binary} is not position independent"
    if binary.suffix != ".so":
        assert re.search(r"FLAGS_1\).*\bPIE\b", tool("readelf", "-d", str(binary))), \
            f"{binary} is not a PIE executable"


@pytest.mark.parametrize("binary", BINARIES, ids=IDS)
def test_full_relro(binary):
    assert "GNU_RELRO" in tool("readelf", "-lW", str(binary)), f"{binary} has no RELRO segment"
    dynamic = tool("readelf", "-d", str(binary))
    assert re.search(r"\(BIND_NOW\)|FLAGS\).*\bBIND_NOW\b|FLAGS_1\).*\bNOW\b", dynamic), \
        f"{binary} binds lazily: its GOT stays writable"


@pytest.mark.parametrize("binary", BINARIES, ids=IDS)
def test_moat_functions_carry_stack_canaries(binary):
    guarded = own(callers(binary).get("__stack_chk_fail", ()))
    assert guarded, f"none of Moat's functions in {binary} checks a stack canary"


@lru_cache(maxsize=None)
def compile_commands():
    import json
    return json.loads((BUILD / "compile_commands.json").read_text())


@pytest.mark.parametrize("binary", BINARIES, ids=IDS)
def test_compiled_with_fortify(binary):
    """Each of the binary's own objects (in <target>.p/) had FORTIFY on."""
    objects = str(binary.relative_to(BUILD)) + ".p/"
    commands = [e["command"] for e in compile_commands() if e["output"].startswith(objects)]
    assert commands, f"no compile commands for {binary}"
    unchecked = [c.split()[-1] for c in commands if "-D_FORTIFY_SOURCE=" not in c]
    assert not unchecked, f"compiled without _FORTIFY_SOURCE: {unchecked[:5]}"


@pytest.mark.parametrize("binary", BINARIES, ids=IDS)
def test_moat_functions_use_fortified_calls(binary):
    """The gateway, tools and benches call checked variants from their own
    functions. A plugin may have no call whose size the compiler cannot
    prove (moat-echo.so's memcpys): test_compiled_with_fortify covers it."""
    checked = {callee: own(fs) for callee, fs in callers(binary).items()
               if re.fullmatch(r"__\w+_chk", callee) and callee != "__stack_chk_fail"}
    if binary.suffix == ".so" and not checked:
        pytest.skip(f"{binary.name} has no call FORTIFY needed to check")
    imported = tool("nm", "-D", "--undefined-only", str(binary))
    assert re.search(r"\b__\w+_chk\b", imported), f"{binary} imports no __*_chk function"
    assert any(checked.values()), f"none of Moat's functions in {binary} calls a __*_chk function"
