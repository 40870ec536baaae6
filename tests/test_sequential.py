"""Precision-targeted sweeps (issue 13): anytime-valid confidence sequences, the two
stopping targets, and a sweep that stops on a prefix equal to a fixed-size sweep of
that prefix, row for row, also after a resume."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from sim.analysis.sequential import (
    confidence_sequence,
    detect_look,
    precision_look,
    stopping_rule,
)
from sim.outputs.schemas import SORT_KEYS, TABLES
from sim.outputs.store import scan, verify_run
from sim.runner.experiments import ExperimentError, load_experiment
from sim.runner.sequential import extend_run, grow_until_decided, run_sequential
from sim.runner.sweep import run_sweep
from tests.test_runs_support import experiment_text, one_line_error, sim

# ---- the confidence sequence -------------------------------------------------------


@pytest.mark.nojit
@pytest.mark.parametrize("target", [None, 0.05])
def test_the_sequence_covers_the_mean_at_every_look_at_once(target):
    """Time-uniform coverage: over 400 Bernoulli(0.3) sequences of 1,500 observations,
    the share of sequences whose interval ever misses 0.3 is at most alpha (with the
    simulation's own 3-sigma slack)."""
    rng = np.random.default_rng(20261201)
    alpha, runs, misses = 0.1, 400, 0
    for _ in range(runs):
        x = (rng.random(1500) < 0.3).astype(float)
        lo, hi = confidence_sequence(x, alpha, target=target)
        misses += bool(((lo > 0.3) | (hi < 0.3)).any())
    assert misses / runs <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / runs)


@pytest.mark.nojit
def test_the_sequence_narrows_and_holds_its_running_mean():
    rng = np.random.default_rng(3)
    x = rng.choice([-1.0, 0.0, 1.0], size=3000, p=[0.1, 0.75, 0.15])
    lo, hi = confidence_sequence(x, 0.05, -1.0, 1.0, target=0.02)
    assert np.all(np.diff(lo) >= 0) and np.all(np.diff(hi) <= 0)
    mean = np.cumsum(x) / np.arange(1, x.size + 1)
    assert np.all(lo[100:] <= mean[100:]) and np.all(mean[100:] <= hi[100:])
    # variance-adaptive: the differences' variance (0.25) is far below the worst
    # case (1) of the range [-1, 1], and the half-width shows it
    assert (hi[-1] - lo[-1]) / 2 < 0.03
    with pytest.raises(ValueError, match="outside"):
        confidence_sequence(np.array([0.5, 2.0]))


@pytest.mark.nojit
def test_the_sequence_costs_matches_over_a_fixed_size_interval_but_not_many():
    """The price of looking at every block: wider than the fixed-size Wilson interval
    at the same n, but by less than half (about 1.3x at the tuned n)."""
    from sim.analysis.stats import wilson

    x = (np.random.default_rng(8).random(4000) < 0.25).astype(float)
    lo, hi = confidence_sequence(x, 0.05, target=0.02)
    w_lo, w_hi = wilson(int(x.sum()), x.size, 0.95)
    assert (w_hi - w_lo) < (hi[-1] - lo[-1]) < 1.5 * (w_hi - w_lo)


# ---- the two targets on known data ------------------------------------------------

def _matches(victories: dict[str, list[str]]) -> pl.DataFrame:
    rows = [(v, i, w) for v, ws in victories.items() for i, w in enumerate(ws)]
    return pl.DataFrame(rows, schema={"variant": pl.Utf8, "match_index": pl.Int64,
                                      "victory": pl.Utf8}, orient="row")


@pytest.mark.nojit
def test_precision_is_met_only_once_every_share_is_narrow_enough():
    rng = np.random.default_rng(1)
    kinds = np.array(["conquest", "science", "dominance", "turn_limit"])
    frame = _matches({"baseline": list(kinds[rng.integers(0, 4, 3000)])})
    early, late = precision_look(frame, 200, 0.03), precision_look(frame, 3000, 0.03)
    assert not early.met and late.met
    assert early.table.get_column("n").to_list() == [200] * 4
    assert late.table.get_column("half_width").max() <= 0.03
    # rows at or past the prefix are never read
    assert precision_look(frame.filter(pl.col("match_index") < 200), 200, 0.03).table.equals(
        early.table)


@pytest.mark.nojit
def test_detect_decides_a_real_difference_and_an_absent_one():
    rng = np.random.default_rng(2)
    n = 4000
    base = np.where(rng.random(n) < 0.3, "science", "conquest")
    # "same" agrees with the baseline but for 10 % of matches drawn afresh from the
    # same shares (pairs disagree, the shares do not); "more" turns 15 % of the
    # baseline's conquests into science wins
    redraw = np.where(rng.random(n) < 0.3, "science", "conquest")
    same = np.where(rng.random(n) < 0.1, redraw, base)
    more = np.where((base == "conquest") & (rng.random(n) < 0.15), "science", base)
    frame = _matches({"baseline": list(base), "same": list(same), "more": list(more)})
    result = detect_look(frame, n, "baseline", detect=0.05)
    decided = {(r["variant"], r["victory"]): r["decided"] for r in result.table.to_dicts()}
    assert decided[("more", "science")] == "differs"
    assert decided[("same", "science")] == "within"
    assert decided[("same", "dominance")] == "within"   # never won: exactly 0
    assert result.met
    assert not detect_look(frame, 100, "baseline", detect=0.05).met
    assert "fixed-size test at power 0.8 would need about" in result.summary


# ---- sweeps ------------------------------------------------------------------------

TARGET = "precision = 0.1\nmax_matches = 200\nblock = 20\n"


def sequential_experiment(tmp_path: Path, keys: str = TARGET, name: str = "seq") -> Path:
    text = experiment_text(name=name, matches=20, chunk_size=10)
    head, variants = text.split("[[variants]]", 1)
    path = tmp_path / f"{name}.toml"
    path.write_text(f"{head}{keys}\n[[variants]]{variants}")
    return path


def _look(experiment):
    return stopping_rule(experiment.spec, experiment.baseline)


def _tables(out: Path) -> dict[str, pl.DataFrame]:
    return {t: scan(out, t).collect().sort(["variant", *SORT_KEYS[t]]) for t in TABLES
            if (out / t).exists()}


@pytest.fixture(scope="module")
def stopped(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("seq")
    experiment = load_experiment(sequential_experiment(tmp))
    out = tmp / "run"
    result = run_sequential(experiment, out, _look(experiment), progress=False)
    return tmp, experiment, out, result


def test_a_precision_sweep_stops_on_the_first_look_that_meets_its_target(stopped):
    _, experiment, out, result = stopped
    seq = result["sequential"]
    looks = [look["matches"] for look in seq["looks"]]
    assert looks == experiment.looks()[: len(looks)] and looks[0] == 20
    assert len(looks) >= 2, "the target should need more than the first look"
    assert [look["met"] for look in seq["looks"]] == [False] * (len(looks) - 1) + [True]
    assert seq["stopped_at"] == looks[-1] < 200 and seq["reason"] == "target met"
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["matches_per_variant"] == looks[-1] and prov["sequential"] == seq
    check = verify_run(out)
    assert check.complete and check.matches == 2 * looks[-1]


def test_the_stopped_sweep_equals_a_fixed_size_sweep_of_its_prefix(stopped):
    tmp, _, out, result = stopped
    n = result["sequential"]["stopped_at"]
    fixed = tmp / "fixed.toml"
    fixed.write_text(experiment_text(name="seq", matches=n, chunk_size=10))
    run_sweep(load_experiment(fixed), tmp / "fixed", progress=False)
    ours, theirs = _tables(out), _tables(tmp / "fixed")
    assert ours.keys() == theirs.keys()
    for table in ours:
        assert ours[table].equals(theirs[table]), table


def test_the_report_of_a_sequential_sweep_shows_the_intervals_it_stopped_on(stopped):
    from sim.report.html import build_report

    _, _, out, result = stopped
    page = build_report(out)
    assert "Where the sequential sweep stopped: anytime-valid intervals" in page
    assert f"stopped at {result['sequential']['stopped_at']} matches per variant" in page
    last = result["sequential"]["looks"][-1]["rows"][0]
    assert f"{100 * last['lo']:.1f}" in page and f"{100 * last['hi']:.1f}" in page


def test_a_grown_run_equals_a_fixed_size_sweep_of_its_size(stopped):
    """extend_run (what the regression gate grows both runs with) plays matches
    [20, 40) of the run's own experiment into its folder: the folder then equals a
    fixed-size sweep of 40 matches row for row."""
    tmp = stopped[0]
    small = tmp / "small.toml"
    small.write_text(experiment_text(name="grow", matches=20, chunk_size=10))
    run_sweep(load_experiment(small), tmp / "grow", progress=False)
    looks = []

    def look() -> tuple[bool, int, str]:
        held = json.loads((tmp / "grow" / "provenance.json").read_text())
        looks.append(held["matches_per_variant"])
        return False, looks[-1], "undecided"

    grown = grow_until_decided(look, [lambda n: extend_run(tmp / "grow", n)], budget=40,
                               block=10)
    assert [x["matches"] for x in grown] == looks == [20, 30, 40]
    assert extend_run(tmp / "grow", 30) is None  # never shrinks
    big = tmp / "big.toml"
    big.write_text(experiment_text(name="grow", matches=40, chunk_size=10))
    run_sweep(load_experiment(big), tmp / "big", progress=False)
    ours, theirs = _tables(tmp / "grow"), _tables(tmp / "big")
    for table in theirs:
        assert ours[table].equals(theirs[table]), table
    assert verify_run(tmp / "grow").complete


def test_a_resumed_sequential_sweep_stops_at_the_same_prefix(stopped, tmp_path):
    _, experiment, out, result = stopped
    before = _tables(out)
    # the last look's chunk of the baseline is lost, as if killed while writing it
    n = result["sequential"]["stopped_at"]
    chunk = n // 10 - 1
    (out / "_done" / f"baseline__{chunk:05d}.json").unlink()
    again = run_sequential(experiment, out, _look(experiment), progress=False)
    assert again["played_now"] == 10
    assert again["sequential"]["stopped_at"] == n
    assert [x["matches"] for x in again["sequential"]["looks"]] == \
        [x["matches"] for x in result["sequential"]["looks"]]
    after = _tables(out)
    for table in before:
        assert after[table].equals(before[table]), table


def test_a_sweep_stopped_between_looks_keeps_the_looks_it_took(stopped, tmp_path):
    """Stopped while the second look's matches play (here: as that look begins), the
    folder keeps the first look; resumed, it lists every look as an unbroken run does."""
    _, experiment, _, result = stopped
    out = tmp_path / "run"
    calls = []

    class Stopped(Exception):
        pass

    def stop_at_the_second_look(folder: Path, prefix: int):
        calls.append(prefix)
        if len(calls) == 2:
            raise Stopped
        return _look(experiment)(folder, prefix)

    with pytest.raises(Stopped):
        run_sequential(experiment, out, stop_at_the_second_look, progress=False)
    kept = json.loads((out / "provenance.json").read_text())["sequential"]
    assert [x["matches"] for x in kept["looks"]] == [20] and kept["stopped_at"] is None
    assert kept["reason"] == "in progress: going on to 40"
    again = run_sequential(experiment, out, _look(experiment), progress=False)
    assert again["sequential"] == result["sequential"]


def test_max_matches_ends_a_sweep_whose_target_is_out_of_reach(tmp_path):
    path = sequential_experiment(tmp_path, "precision = 0.001\nmax_matches = 30\nblock = 10\n",
                                 name="cap")
    experiment = load_experiment(path)
    seq = run_sequential(experiment, tmp_path / "run", _look(experiment),
                         progress=False)["sequential"]
    assert [x["matches"] for x in seq["looks"]] == [20, 30]
    assert seq["stopped_at"] == 30 and not seq["met"]
    assert seq["reason"] == "max_matches reached before the target"


@pytest.mark.parametrize("keys, needle", [
    ("precision = 0.02\n", "max_matches: a precision-targeted sweep needs max_matches"),
    ("precision = 0.02\nmax_matches = 10\n", "max_matches: 10 is below matches = 20"),
    ("precision = 0.02\nmax_matches = 100\nblock = 15\n",
     "block: 15 is not a multiple of chunk_size = 10"),
    ("max_matches = 100\n", "max_matches: only a precision-targeted sweep reads it"),
    ("precision = 0.7\nmax_matches = 100\n", "precision: input should be less than 0.5"),
])
def test_a_malformed_sequential_experiment_names_file_line_and_key(tmp_path, keys, needle):
    path = sequential_experiment(tmp_path, keys)
    with pytest.raises(ExperimentError, match=needle):
        load_experiment(path)
    one_line_error(sim("sweep", path, "--out", tmp_path / "run"), needle)


def test_sim_sweep_reports_the_looks_and_where_it_stopped(tmp_path):
    path = sequential_experiment(tmp_path, "detect = 0.3\nmax_matches = 60\nblock = 20\n")
    proc = sim("sweep", path, "--out", tmp_path / "run", "--jobs", "1", "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert "look at 20 matches per variant:" in proc.stderr
    assert "paired differences decided" in proc.stderr
    assert "stopped at" in proc.stdout and "matches per variant" in proc.stdout
