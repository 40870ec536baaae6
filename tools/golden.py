"""Golden match transcripts (tests/golden/): check them against a replay, or regenerate.

Usage (from the repository root, with the package importable):
    python tools/golden.py                  # replay each golden match, print the first
                                            # difference of each; exit 1 if any differ
    python tools/golden.py --write          # regenerate every transcript
    python tools/golden.py --write NAME...  # regenerate only these (names in matches.toml)

The matches are listed in tests/golden/matches.toml and played on the frozen fixture
tables it names. Regenerate only after an intended engine change, and read the
`git diff` of the transcripts before committing it. The transcript text is made by
sim.engine.transcript, the same function tests/test_golden.py compares against.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sim.engine.transcript import (
    first_difference,
    match_transcript,
    read_specs,
    split_blocks,
    transcript_blocks,
)
from sim.rules.tables import load_tables

GOLDEN = Path(__file__).resolve().parent.parent / "tests" / "golden"
MANIFEST = GOLDEN / "matches.toml"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="regenerate the transcripts")
    parser.add_argument("names", nargs="*", help="only these matches (default: all)")
    args = parser.parse_args(argv)
    specs = read_specs(MANIFEST)
    unknown = set(args.names) - {s.name for s in specs}
    if unknown:
        parser.error(f"not in {MANIFEST.name}: {', '.join(sorted(unknown))}")
    failed = 0
    for spec in specs:
        if args.names and spec.name not in args.names:
            continue
        tables = load_tables(spec.tables)
        path = GOLDEN / f"{spec.name}.txt"
        if args.write:
            text = match_transcript(tables, spec.seed, spec.match_index, spec.seats,
                                    spec.length)
            path.write_text(text)
            print(f"wrote {path.relative_to(GOLDEN.parent.parent)} ({len(text):,} bytes)")
            continue
        if not path.exists():
            print(f"{spec.name}: no transcript yet (run with --write)")
            failed += 1
            continue
        problem = first_difference(split_blocks(path.read_text()),
                                   transcript_blocks(tables, spec.seed, spec.match_index,
                                                     spec.seats, spec.length), spec.name)
        print(problem or f"{spec.name}: matches")
        failed += problem is not None
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
