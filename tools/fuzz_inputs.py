"""Hostile input files: mutate the project's own input files and count what `sim` does.

Usage: .venv/bin/python tools/fuzz_inputs.py [--mutants N] [--seed S] [--kind KIND]

Each mutant is one of the project's input files (tables/default.toml, every experiment,
sensitivity and tune file under experiments/, the scenario examples) with one to three
mutations: a value replaced by a hostile one (huge, negative, NaN, markup, a path, a
10,000-character string, a few thousand nested brackets), lines deleted, duplicated
or swapped, bytes inserted (invalid UTF-8 too), the file cut short, deep nesting or
dotted keys appended. Each is given to the command that reads that file, in this
process (sim.cli's main, as the shell would call it), and sorted by outcome:

  ok          exit 0 (the mutant is still a valid file)
  refused     exit 2, every line on stderr names the file (`file:line: key: reason`)
  unnamed     exit 2, but some stderr line does not start with the file's path
  traceback   anything else: an exception out of the command, a traceback on stderr,
              another exit status

tests/test_harden_fuzz.py draws its mutants from the same functions with hypothesis.
A sensitivity or tune file is read by its loader (as `sim sensitivity`/`sim tune`
do before they play anything; their commands print the loader's error and exit 2).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import random
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as a script: the project's package first
    sys.path.insert(0, str(REPO))

# values a mutation writes in place of a key's value (TOML source text)
HOSTILE_VALUES = (
    "-1", "0", "1", "9223372036854775808", "-9223372036854775809", "1e309", "nan", "-inf",
    "3.5", "true", '""', '"<script>alert(1)</script>"', '"../../x"', '"/dev/zero"',
    '"\\u0000"', '"a\\nb"', '"é€𝄞"', f'"{"x" * 10_000}"', "[]", "{}", '["../../x"]',
    "[1, \"a\"]", "1979-05-27T07:32:00Z", '{ "a" = 1 }',
)
# names a mutation gives a key, a table or an array of tables
HOSTILE_NAMES = ('"<script>alert(1)</script>"', '"../../x"', '"a\\u0000b"', '"a.b"',
                 '"é"', "x" * 300, "name", "variants", "set", "units")

Pick = Callable[[int], int]  # pick(n): a whole number in [0, n)


def _deep(pick: Pick) -> str:
    depth = (1, 20, 33, 200, 3000)[pick(5)]
    return "[" * depth + "]" * depth if pick(2) else "{a=" * depth + "1" + "}" * depth


def _value(pick: Pick) -> str:
    return _deep(pick) if pick(4) == 0 else HOSTILE_VALUES[pick(len(HOSTILE_VALUES))]


def _key_lines(lines: list[bytes]) -> list[int]:
    return [i for i, line in enumerate(lines) if b"=" in line and
            not line.lstrip().startswith(b"#")] or [0]


def mutate_once(data: bytes, pick: Pick) -> bytes:
    """`data` with one mutation, chosen and placed by `pick`."""
    lines = data.split(b"\n")
    at = pick(len(lines))
    kind = pick(9)
    if kind == 0:  # a value replaced
        i = _key_lines(lines)[pick(len(_key_lines(lines)))]
        key = lines[i].split(b"=", 1)[0]
        lines[i] = key + b"= " + _value(pick).encode()
    elif kind == 1:  # a key, table or array of tables renamed
        i = _key_lines(lines)[pick(len(_key_lines(lines)))] if pick(2) else at
        name = HOSTILE_NAMES[pick(len(HOSTILE_NAMES))].encode()
        line = lines[i]
        if line.lstrip().startswith(b"["):
            lines[i] = (b"[[" if line.lstrip().startswith(b"[[") else b"[") + name + \
                (b"]]" if line.lstrip().startswith(b"[[") else b"]")
        else:
            lines[i] = name + b" =" + line.split(b"=", 1)[-1]
    elif kind == 2:
        del lines[at]
    elif kind == 3:
        lines.insert(at, lines[pick(len(lines))])
    elif kind == 4:
        j = pick(len(lines))
        lines[at], lines[j] = lines[j], lines[at]
    elif kind == 5:  # bytes inserted: markup, quotes, brackets, invalid UTF-8, NUL
        junk = (b"\xff\xfe", b"\x00", b"[[", b"]", b'"', b"'''", b"=", b"<script>", b"\xc3",
                b"{", b"#", b"\t\r")[pick(12)]
        pos = pick(len(data) + 1)
        return data[:pos] + junk + data[pos:]
    elif kind == 6:  # cut short
        return data[: pick(len(data) + 1)]
    elif kind == 7:  # deep nesting appended (a new key, or a variant's set)
        lines.append(b"zz_deep = " + _deep(pick).encode())
    else:  # dotted keys that nest tables without a bracket
        lines.append(b".".join([b"zz"] * (1, 40, 5000)[pick(3)]) + b" = 1")
    return b"\n".join(lines)


def mutate(data: bytes, pick: Pick) -> bytes:
    """`data` with one to three mutations."""
    for _ in range(1 + pick(3)):
        data = mutate_once(data, pick)
    return data


@dataclass(frozen=True)
class Seed:
    """An input file to mutate and how `sim` reads it: `kind` is tables, sweep,
    sensitivity, tune or scenario."""

    path: Path
    kind: str


def seeds() -> list[Seed]:
    """Every input file the project ships: the default tables, every file under
    experiments/ (by the command that reads it) and the scenario examples."""
    out = [Seed(REPO / "tables" / "default.toml", "tables")]
    for path in sorted((REPO / "experiments").rglob("*.toml")):
        kind = {"sensitivity": "sensitivity", "tune": "tune", "scenarios": "scenario"}.get(
            path.parent.name, "sweep")
        out.append(Seed(path, kind))
    scenarios = REPO / "tests" / "scenarios"
    out += [Seed(p, "scenario") for p in sorted(scenarios.glob("*.toml"))[::6]]
    out += [Seed(p, "scenario") for p in sorted((scenarios / "malformed").glob("*.toml"))[::4]]
    return out


@dataclass(frozen=True)
class Outcome:
    """What one command did: `label` (ok, refused, unnamed, traceback), its exit
    status, stderr and, for a traceback, what escaped."""

    label: str
    status: int | None
    stderr: str
    escaped: str = ""


def _call(run: Callable[[], None]) -> tuple[int | None, str, str, str]:
    """(exit status, stdout, stderr, escaped exception) of `run` in this process."""
    out, err = io.StringIO(), io.StringIO()
    status: int | None = 0
    escaped = ""
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            run()
        except SystemExit as exc:
            status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException as exc:
            status, escaped = None, f"{type(exc).__name__}: {exc}"[:300]
    return status, out.getvalue(), err.getvalue(), escaped


def _main(args: list[str]) -> Callable[[], None]:
    def run() -> None:
        from sim.cli import main

        # main() leaves SIGINT and SIGTERM ignored (its process is about to end): this
        # one goes on, and must stay interruptible
        saved = sys.argv, {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
        sys.argv = ["sim", *args]
        try:
            main()
        finally:
            sys.argv = saved[0]
            for s, handler in saved[1].items():
                signal.signal(s, handler)
    return run


def _loader(kind: str, path: Path) -> Callable[[], None]:
    """What `sim sensitivity`/`sim tune` do with a file before they play: load it and
    check its name; their error is one `fail` (exit 2) of the message."""
    def run() -> None:
        from sim.runner.experiments import run_name_problem

        if kind == "sensitivity":
            from sim.runner.sensitivity import SensitivityError as Error
            from sim.runner.sensitivity import load_sensitivity as load
        else:
            from sim.runner.tune import TuneError as Error
            from sim.runner.tune import load_tune as load
        try:
            spec = load(path).spec
            why = run_name_problem(spec.name, kind)
            if why is not None:
                raise Error(f"{path}: name: {why}")
        except Error as exc:
            print(str(exc), file=sys.stderr)
            raise SystemExit(2) from None
    return run


def check(kind: str, path: Path, work: Path) -> Outcome:
    """Give the file `path` to the command that reads a `kind` file, in this process."""
    run = {
        "tables": lambda: _main(["tables", "check", str(path)]),
        "sweep": lambda: _main(["sweep", str(path), "--dry-run", "--jobs", "1", "--quiet",
                                "--out", str(work / "run")]),
        "scenario": lambda: _main(["scenario", str(path), "--json"]),
    }.get(kind, lambda: _loader(kind, path))()
    status, _out, err, escaped = _call(run)
    lines = err.strip().splitlines()
    if escaped or "Traceback" in err or status not in (0, 2):
        return Outcome("traceback", status, err, escaped)
    if status == 0:
        return Outcome("ok", 0, err)
    if not lines or not all(line.startswith(str(path)) for line in lines):
        return Outcome("unnamed", 2, err)
    return Outcome("refused", 2, err)


def write_mutant(work: Path, data: bytes) -> Path:
    """The mutant's file, two folders down in `work` beside a link to the project's
    tables/, so a tables path relative to the file (`../../tables/default.toml`, as the
    fairness experiments write it) or to the project root finds the same file."""
    tables = work / "tables"
    if not tables.exists():
        tables.symlink_to(REPO / "tables", target_is_directory=True)
    path = work / "in" / "put" / "mutant.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def run_mutants(n: int, seed: int, work: Path, kind: str | None = None,
                ) -> tuple[collections.Counter, list[str]]:
    """Counts by (kind, outcome) over `n` mutants of the seed files (of `kind` only,
    if given), and a line for each unnamed or traceback outcome."""
    rng = random.Random(seed)
    counts: collections.Counter = collections.Counter()
    findings = []
    files = [s for s in seeds() if kind in (None, s.kind)]
    for k in range(n):
        s = files[k % len(files)]
        got = check(s.kind, write_mutant(work, mutate(s.path.read_bytes(), rng.randrange)),
                    work)
        counts[(s.kind, got.label)] += 1
        if got.label in ("unnamed", "traceback"):
            findings.append(f"{s.path.relative_to(REPO)} mutant {k}: {got.label}: "
                            f"{(got.escaped or got.stderr).strip()[:200]!r}")
    return counts, findings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutants", type=int, default=300)
    parser.add_argument("--seed", type=int, default=47)
    parser.add_argument("--kind", choices=["tables", "sweep", "sensitivity", "tune",
                                           "scenario"], help="mutate files of this kind only")
    args = parser.parse_args(argv)
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        counts, findings = run_mutants(args.mutants, args.seed, Path(tmp), args.kind)
    labels = ("ok", "refused", "unnamed", "traceback")
    kinds = sorted({k for k, _ in counts})
    files = sum(args.kind in (None, s.kind) for s in seeds())
    print(f"{args.mutants} mutants (seed {args.seed}) of {files} input files:")
    print(f"  {'file kind':<12}" + "".join(f"{label:>11}" for label in labels))
    for kind in kinds:
        print(f"  {kind:<12}" + "".join(f"{counts[(kind, label)]:>11}" for label in labels))
    print(f"  {'all':<12}" + "".join(
        f"{sum(v for (_, lab), v in counts.items() if lab == label):>11}" for label in labels))
    for line in findings:
        print(line)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
