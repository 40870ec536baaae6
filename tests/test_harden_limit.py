"""Sweeps that ask before they explode (issue 47, item 2): a sweep over its limit of
matches (variants x matches per variant) or variants stops before it plays, and
before its grids expand, with one line saying how much it would play, about how
long, and the command with --yes that plays it; the limit is the experiment's
`[limit]` or a flag."""

from __future__ import annotations

import re

import pytest

from sim.runner.experiments import parse_experiment, planned_size
from tests.conftest import FIXTURE_TABLES
from tests.test_runs_support import experiment_text, write
from tools.fuzz_inputs import _call, _main


def _sweep(*args) -> tuple[int | None, str, str]:
    status, out, err, escaped = _call(_main(["sweep", *map(str, args)]))
    assert not escaped and "Traceback" not in err, (escaped, err)
    return status, out, err


def _grid(tmp_path, sizes: tuple[int, ...], matches: int = 200, extra: str = ""):
    """An experiment with one grid whose axes have `sizes` values each."""
    keys = ("score.gold_per_point", "dominance.counter_to_win", "techs.prosperity.cost")
    axes = ", ".join(f'"{k}" = {list(range(1, n + 1))}' for k, n in zip(keys, sizes,
                                                                            strict=False))
    return write(tmp_path / "grid.toml", f'name = "big-grid"\nroot_seed = 1\n'
                 f'matches = {matches}\ntables = "{FIXTURE_TABLES}"\n{extra}\n'
                 f'[[grids]]\nname = "g"\naxes = {{ {axes} }}\n')


def test_a_grid_of_2303_variants_is_refused_before_it_plays(tmp_path):
    exp = _grid(tmp_path, (7, 7, 47))
    out = tmp_path / "run"
    status, stdout, stderr = _sweep(exp, "--out", out, "--jobs", "2")
    lines = stderr.strip().splitlines()
    assert status == 2 and len(lines) == 1 and stdout == "", stderr
    line = lines[0]
    assert line.startswith(f"{exp}:6: limit.variants: this sweep would play 2,303 variants "
                           "x 200 matches = 460,600 matches, about ")
    assert re.search(r"about \d+:\d\d:\d\d on 2 workers \(at about \d+ matches/s per worker",
                     line), line
    assert "over its limit of 500 variants ([limit] variants in the file, or " \
           "--limit-variants)" in line
    assert line.endswith("--jobs 2 --yes") and "sim sweep " in line
    assert not out.exists()


def test_too_many_matches_is_refused_and_the_file_or_a_flag_can_raise_the_limit(tmp_path):
    exp = write(tmp_path / "exp.toml", experiment_text(matches=60_000, chunk_size=1000))
    status, _, stderr = _sweep(exp, "--jobs", "1", "--dry-run")
    assert status == 2 and "2 variants x 60,000 matches = 120,000 matches" in stderr
    assert "over its limit of 100,000 matches" in stderr and "1 worker (" in stderr
    for more in (["--limit-matches", "120000"], ["--yes"]):
        status, stdout, stderr = _sweep(exp, "--jobs", "1", "--dry-run", *more)
        assert status == 0, stderr
        assert "dry run: would play 120,000 matches in 120 chunks, about " in stdout
    raised = write(tmp_path / "raised.toml", experiment_text(
        matches=60_000, chunk_size=1000, extra="\n[limit]\nmatches = 150000\n"))
    assert _sweep(raised, "--jobs", "1", "--dry-run")[0] == 0
    # a flag below the file's limit wins for that command
    status, _, stderr = _sweep(raised, "--jobs", "1", "--dry-run", "--limit-variants", "1")
    assert status == 2 and "limit.variants: this sweep would play 2 variants" in stderr


def test_yes_plays_a_sweep_over_its_limit(tmp_path):
    exp = write(tmp_path / "exp.toml", experiment_text(matches=2))
    out = tmp_path / "run"
    status, _, stderr = _sweep(exp, "--jobs", "1", "--quiet", "--out", out,
                               "--limit-matches", "3")
    assert status == 2 and "4 matches" in stderr and not out.exists()
    status, stdout, stderr = _sweep(exp, "--jobs", "1", "--quiet", "--out", out,
                                    "--limit-matches", "3", "--yes")
    assert status == 0, stderr
    assert "done: 4 matches in 2 chunks" in stdout


def test_a_million_variant_grid_is_counted_not_expanded(tmp_path):
    """planned_size multiplies the axes: a grid of 100 x 100 x 100 is refused as fast as
    any other file (expanding it would validate a million tables first)."""
    exp = _grid(tmp_path, (100, 100, 100), matches=1)
    spec, _text, _lines = parse_experiment(exp)
    assert planned_size(spec) == (1_000_000, 1_000_000)
    status, _, stderr = _sweep(exp, "--jobs", "1")
    assert status == 2 and "1,000,000 variants" in stderr


@pytest.mark.parametrize("extra,want", [
    ("", (2, 16)),
    ("precision = 0.1\nmax_matches = 40\n", (2, 80)),
])
def test_planned_size_counts_a_precision_sweep_at_its_most(tmp_path, extra, want):
    exp = write(tmp_path / "exp.toml", experiment_text(matches=8).replace(
        "chunk_size = 2\n", f"chunk_size = 2\n{extra}"))
    spec, _text, _lines = parse_experiment(exp)
    assert planned_size(spec) == want
