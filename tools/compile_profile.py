"""Where a cold compile of the engine goes, by numba's own event API.

    .venv/bin/python tools/compile_profile.py [--top N] [--skill 1] [--signatures]
        [--tree] [--matches M]

Plays one standard match (with --skill 1 or 2, seat 0 at that skill: the loop's entry
with the lookahead and the search, sim.kernels.loop.run_match_held_skilled) with an
empty numba cache (a temporary SIM_CACHE_DIR) while
recording numba's "numba:compile" events, then prints the functions whose compile took
the most CPU time of their own (the compiles of the functions they call subtracted;
CPU, not wall, so other work on a shared machine slows the figures less), how
many specializations (signatures) each dispatcher of sim.kernels compiled, and the
total. A function compiled more than once is a candidate for fewer specializations
(a caller passing a literal where a variable would do).

Each row also gives the CPU of its own compile spent in LLVM (numba's "numba:llvm_lock"
events while it is the innermost function compiling), its inclusive CPU (its callees'
compiles included), how many compiles sit above it when it is compiled (its depth in
the call tree) and the size of its finalized LLVM module (`inspect_llvm`, in thousands
of lines): numba finalizes a function with every function it calls linked in, so a big
module at a shallow level is the code LLVM optimizes and emits once more for it.
`--tree` prints the compile tree (inclusive CPU, own LLVM, module size) for the deep
chains. `--matches M` then plays M more standard matches in the same process, the
engine compiled: the warm match rate per CPU second.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import defaultdict


def _short(numba_type) -> str:
    """A numba type's name, a record's cut to its kind and size (the state's repr is
    its hundreds of fields)."""
    text = str(numba_type)
    if text.startswith("Record("):
        return f"Record(size={numba_type.size}, aligned={numba_type.aligned})"
    return text[:120]


def _module_lines(dispatcher) -> int:
    """Lines of LLVM IR in the finalized modules of a dispatcher's compiled signatures
    (numba's public `inspect_llvm`: each with its callees linked in)."""
    try:
        return sum(text.count("\n") for text in dispatcher.inspect_llvm().values())
    except Exception:  # an overload's dispatcher may keep no library to inspect
        return 0


def _slowest_passes(dispatcher, callees: float, n: int = 5) -> str:
    """The n slowest passes of a dispatcher's first compile, from numba's public
    `get_metadata` (wall seconds; type inference less `callees`, the compiles of the
    functions it calls, which run inside it)."""
    try:
        times = dispatcher.get_metadata(dispatcher.signatures[0])["pipeline_times"]["nopython"]
    except Exception:  # an overload's dispatcher may keep no metadata
        return ""
    runs = {}
    for key, timing in times.items():
        name = key.split("_", 1)[1]
        runs[name] = timing.run - (callees if "type_inference" in name else 0.0)
    slowest = sorted(runs.items(), key=lambda kv: -kv[1])[:n]
    return ", ".join(f"{name} {seconds:.2f}" for name, seconds in slowest)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--skill", type=int, default=0,
                        help="seat 0's AI skill (D11): 0 plays the all-skill-0 entry")
    parser.add_argument("--signatures", action="store_true",
                        help="print the argument types of each repeated compile")
    parser.add_argument("--tree", action="store_true",
                        help="print the compile tree: inclusive CPU, own LLVM, module size")
    parser.add_argument("--passes", action="store_true",
                        help="for each row, numba's slowest compiler passes (wall seconds)")
    parser.add_argument("--matches", type=int, default=0,
                        help="standard matches to play warm after the first: matches/CPU s")
    args = parser.parse_args()
    os.environ["SIM_CACHE_DIR"] = tempfile.mkdtemp(prefix="sim-compile-profile-")
    from numba.core import event

    stack: list[list] = []
    own: dict[str, float] = defaultdict(float)
    count: dict[str, int] = defaultdict(int)
    signatures: dict[str, list[tuple]] = defaultdict(list)
    callers: dict[str, list[str]] = defaultdict(list)
    inclusive: dict[str, float] = defaultdict(float)
    depth: dict[str, int] = {}
    own_llvm: dict[str, float] = defaultdict(float)
    dispatchers: dict[str, object] = {}
    # the compile tree in the order compiles started: (depth, name, index into done)
    tree: list[tuple[int, str]] = []

    class Own(event.Listener):
        def on_start(self, ev):
            name = ev.data["dispatcher"].py_func.__qualname__
            dispatchers[name] = ev.data["dispatcher"]
            signatures[name].append(tuple(ev.data["args"]))
            callers[name].append(stack[-1][0] if stack else "(Python)")
            depth.setdefault(name, len(stack))
            tree.append((len(stack), name))
            stack.append([name, time.process_time(), 0.0])

        def on_end(self, ev):
            name, t0, children = stack.pop()
            spent = time.process_time() - t0
            own[name] += spent - children
            inclusive[name] += spent
            count[name] += 1
            if stack:
                stack[-1][2] += spent

    class LLVMTime(event.Listener):
        """CPU under numba's LLVM lock, to the innermost function compiling."""

        def __init__(self):
            self.nested = 0
            self.t0 = 0.0

        def on_start(self, ev):
            if self.nested == 0:
                self.t0 = time.process_time()
            self.nested += 1

        def on_end(self, ev):
            self.nested -= 1
            if self.nested == 0 and stack:
                own_llvm[stack[-1][0]] += time.process_time() - self.t0

    llvm: list[float] = []
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    with event.install_listener("numba:compile", Own()), \
            event.install_listener("numba:llvm_lock", LLVMTime()), \
            event.install_timer("numba:llvm_lock", lambda dt: llvm.append(dt)):
        from sim.engine.match import play_match
        from sim.rules.tables import load_tables

        tables = load_tables()
        seat_ai = [{"skill": args.skill}] if args.skill else None
        play_match(tables, 1, seat_ai=seat_ai)
    total = time.perf_counter() - t0
    print(f"cold first match: {total:.1f} s wall, {time.process_time() - cpu0:.1f} s CPU; "
          f"{sum(count.values())} compiles of {len(count)} functions; "
          f"{sum(llvm):.1f} s of it in LLVM (numba's llvm_lock held)")
    if args.matches:
        cpu0 = time.process_time()
        for i in range(args.matches):
            play_match(tables, 20260101, i, seat_ai=seat_ai)
        print(f"warm: {args.matches / (time.process_time() - cpu0):.1f} matches per CPU second "
              f"({args.matches} matches)")
    lines = {name: _module_lines(d) for name, d in dispatchers.items()}
    print("   own CPU  own LLVM  inclusive  depth  module kL  compiles  function")
    for name, seconds in sorted(own.items(), key=lambda kv: -kv[1])[:args.top]:
        print(f"{seconds:8.2f} s {own_llvm[name]:7.2f} s {inclusive[name]:8.2f} s "
              f"{depth[name]:5d} {lines[name] / 1000:9.1f}  {count[name]:7d}x  {name}")
        if args.passes:
            print("      " + _slowest_passes(dispatchers[name], inclusive[name] - seconds))
    if args.tree:
        print("compile tree (inclusive CPU, own LLVM CPU, module kL):")
        for level, name in tree:
            print(f"{'  ' * level}{name} {inclusive[name]:.2f} s, {own_llvm[name]:.2f} s, "
                  f"{lines[name] / 1000:.1f}")
    repeated = {n: c for n, c in count.items() if c > 1}
    print("compiled more than once:", ", ".join(f"{n} {c}x" for n, c in
                                                sorted(repeated.items(), key=lambda kv: -kv[1]))
          or "none", file=sys.stdout)
    if args.signatures:
        for name in repeated:
            sigs = signatures[name]
            differ = [k for k in range(len(sigs[0]))
                      if len({str(sig[k]) for sig in sigs if k < len(sig)}) > 1]
            for k in differ:
                print(f"  {name} argument {k}: " + " | ".join(
                    f"{_short(sig[k])} (from {caller})"
                    for sig, caller in zip(sigs, callers[name], strict=True) if k < len(sig)))


if __name__ == "__main__":
    main()
