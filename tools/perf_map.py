"""Play standard matches under Linux `perf` with the compiled engine's functions named.

numba's machine code has no symbols perf can see (it is loaded into anonymous memory),
so a profile shows bare addresses. The cached object of the match loop
(sim.kernels.loop.run_match_held, linked with every function it calls) is an ELF file
with a symbol per compiled function (and, when a helper process compiled part of it,
sim.jit._split_off, so is that share); this script plays matches, then writes
/tmp/perf-<pid>.map (perf's map for code generated at run time) from those symbols,
placed where the loop's entry point (and a function of the share) was loaded. Run it
under perf:

    perf record -F 2000 -o /tmp/perf.data .venv/bin/python tools/perf_map.py --matches 1500
    perf report -i /tmp/perf.data --no-children --sort sym

`--delay` (seconds, default 0) lets `perf record -D` skip the imports: pass the same
time in milliseconds to perf. Needs `nm` (binutils). Addresses perf still shows bare
are numba's runtime (the reference counts NRT_incref at +0x50, NRT_decref at +0x60 of
its page) and other generated code. Used for issue 15's profile (README: benchmarks).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import time
from pathlib import Path

from sim.engine.match import play_match
from sim.jit import cache_dir
from sim.kernels.loop import run_match_held
from sim.rules.tables import load_tables


def short_name(symbol: str) -> str:
    """A numba symbol (Itanium-mangled qualified name, then its signature) as the dotted
    Python name and numba's version suffix: sim.kernels.ai.paths.step_toward#v312."""
    m = re.match(r"(?:cfunc\.)?_ZN(.*)", symbol)
    if not m:
        return symbol
    rest, parts = m.group(1), []
    while rest[:1].isdigit():
        digits = re.match(r"\d+", rest).group(0)
        size = int(digits)
        parts.append(rest[len(digits): len(digits) + size])
        rest = rest[len(digits) + size:]
    version = re.match(r"B\d+v(\d+)", rest)
    return ".".join(parts) + (f"#v{version.group(1)}" if version else "")


def engine_object(symbol: str) -> bytes:
    """The ELF object numba cached for the run_match_held overload named `symbol`."""
    for path in sorted(cache_dir().glob("kernels_*/loop.run_match_held-*.nbc")):
        data = path.read_bytes()
        start = data.find(b"\x7fELF")
        if start >= 0 and symbol.encode() in data:
            return data[start:]   # what follows is ignored: ELF locates its sections
    raise SystemExit(f"no cached object of {symbol[:60]}... under {cache_dir()}")


def functions(obj: bytes) -> list[tuple[int, int, str]]:
    """(offset in its code section, size, symbol) of every function an object defines."""
    path = Path(f"/tmp/hexsim-engine-{os.getpid()}.o")
    path.write_bytes(obj)
    try:
        listing = subprocess.run(["nm", "-S", "--defined-only", str(path)], check=True,
                                 capture_output=True, text=True).stdout
    finally:
        path.unlink()
    found = []
    for line in listing.splitlines():
        fields = line.split()
        if len(fields) == 4 and fields[2] in "TtWw":
            offset, size, _kind, name = fields
            found.append((int(offset, 16), int(size, 16), name))
    return found


def placed_objects(compiled, loop_object: bytes) -> list[tuple[int, list]]:
    """(load address of its code section, functions) of the loop's object, its entry
    point at offset 0, and of each share of its code a helper process compiled
    (sim.jit._split_off), placed by a function only that share defines."""
    entry = compiled.library.get_pointer_to_function(compiled.fndesc.llvm_func_name)
    placed = [(entry, functions(loop_object))]
    engine = compiled.library._codegen._engine
    own = {name for _offset, _size, name in placed[0][1]}
    for share in getattr(compiled.library, "_share_objects", None) or []:
        theirs = functions(share)
        offset, name = next((o, n) for o, _s, n in theirs if n not in own)
        placed.append((engine.get_function_address(name) - offset, theirs))
    return placed


def write_map(placed: list[tuple[int, list]], out: Path) -> int:
    """perf's map (start, size, name per line, hex) of every function placed."""
    lines = [f"{base + offset:x} {size:x} {short_name(name)}"
             for base, found in placed for offset, size, name in found]
    out.write_text("\n".join(lines) + "\n")
    return len(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=20260101)
    parser.add_argument("--delay", type=float, default=0.0,
                        help="seconds to wait after the warm-up match")
    args = parser.parse_args()
    tables = load_tables()
    play_match(tables, args.seed, 0)   # compiles or loads the engine
    compiled = next(iter(run_match_held.overloads.values()))
    out = Path(f"/tmp/perf-{os.getpid()}.map")
    n = write_map(placed_objects(compiled, engine_object(compiled.fndesc.llvm_func_name)), out)
    print(f"{n} functions mapped in {out}")
    time.sleep(args.delay)
    t0 = time.perf_counter()
    for i in range(args.matches):
        play_match(tables, args.seed, i)
    seconds = time.perf_counter() - t0
    print(f"{args.matches} matches in {seconds:.1f} s ({args.matches / seconds:.1f}/s)")


if __name__ == "__main__":
    main()
