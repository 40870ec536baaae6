"""The regression gate (issue 14): equivalence of victory shares between two runs
(TOST as a 90 % interval inside ±margin), paired when the runs played the same matches."""

from __future__ import annotations

import subprocess
import sys

import polars as pl
import pytest

from sim.analysis.gate import compared, failures, gate, passed, same_matches
from sim.rules.tables import REPO_ROOT
from tests.conftest import FIXTURE_TABLES


def _run(victories: list[str], variant: str = "baseline") -> pl.DataFrame:
    return pl.DataFrame({"variant": variant, "match_index": list(range(len(victories))),
                         "victory": victories, "winner": 0, "end_turn": 80})


def test_identical_runs_pass_whatever_their_size():
    small = _run(["conquest", "science", "dominance", "turn_limit"] * 5)
    table = gate(small, small, paired=True)
    assert passed(table) and set(table.get_column("verdict")) == {"PASS identical"}


def test_a_planted_five_point_shift_fails_as_changed_and_a_small_one_passes():
    n = 4000
    before = ["dominance" if i % 5 == 0 else "conquest" for i in range(n)]       # 20 %
    planted = ["dominance" if i % 5 == 0 or i % 20 == 1 else "conquest"
               for i in range(n)]                                                # 25 %
    table = gate(_run(planted), _run(before), paired=True)
    dom = table.filter(pl.col("victory") == "dominance")
    assert dom.item(0, "difference") == pytest.approx(0.05)
    assert dom.item(0, "verdict") == "FAIL changed" and not passed(table)
    nudged = ["dominance" if i % 5 == 0 or i % 400 == 1 else "conquest" for i in range(n)]
    assert passed(gate(_run(nudged), _run(before), paired=True, margin=0.02))


def test_too_few_matches_are_inconclusive_and_independent_runs_use_wider_intervals():
    before = ["dominance" if i % 5 == 0 else "conquest" for i in range(200)]
    shifted = ["dominance" if i % 5 == 1 else "conquest" for i in range(200)]
    table = gate(_run(shifted), _run(before), paired=True)
    played = table.filter(pl.col("victory").is_in(["conquest", "dominance"]))
    assert set(played.get_column("verdict")) == {"FAIL inconclusive"}
    # a type no match of either run ended with is trivially equivalent
    assert set(table.filter(pl.col("victory") == "science").get_column("verdict")) == {"PASS"}
    alone = gate(_run(shifted), _run(before), paired=False)
    assert not alone.get_column("paired").any()
    assert (alone.get_column("hi") - alone.get_column("lo")).min() > 0


def test_paired_runs_of_different_sizes_compare_every_column_on_the_common_matches():
    # the shorter run is the first half of the longer one, match for match: every
    # share the gate prints is over those 100 pairs, so before − now is its difference
    long = _run(["science"] * 30 + ["conquest"] * 70 + ["science"] * 100)
    short = _run(["science"] * 30 + ["conquest"] * 70)
    table = gate(short, long, paired=True)
    science = table.filter(pl.col("victory") == "science").row(0, named=True)
    assert science["before"] == science["now"] == 0.3 and science["difference"] == 0
    assert science["n_now"] == science["n_before"] == 100
    assert set(table.get_column("verdict")) == {"PASS identical"}


def test_a_variant_gone_from_the_new_run_fails_and_a_new_one_is_not_gated():
    before = pl.concat([_run(["science", "conquest"] * 50),
                        _run(["dominance"] * 100, variant="hegemon")])
    now = pl.concat([_run(["science", "conquest"] * 50),
                     _run(["science"] * 100, variant="fresh")])
    table = gate(now, before, paired=True)
    verdicts = dict(table.group_by("variant").agg(pl.col("verdict").unique().first())
                    .iter_rows())
    assert verdicts == {"baseline": "PASS identical", "hegemon": "FAIL missing",
                        "fresh": "not gated (not in the earlier run)"}
    assert not passed(table)
    assert failures(table) == 4 and compared(table) == 8  # hegemon's 4 types of 8
    # a new variant alone neither passes nor fails the gate
    assert passed(gate(now, before.filter(pl.col("variant") == "baseline"), paired=True))
    # every match of a variant failed (no victory): missing, not silently skipped
    broken = now.with_columns(pl.when(pl.col("variant") == "baseline").then(None)
                              .otherwise(pl.col("victory")).alias("victory"))
    assert set(gate(broken, before, paired=True).filter(pl.col("variant") == "baseline")
               .get_column("verdict")) == {"FAIL missing"}


def test_same_matches_needs_the_same_seed_seats_length_and_personalities():
    prov = {"root_seed": 7, "seats": 4, "length": "standard",
            "personalities": ["balanced"], "rotate_personalities": True}
    assert same_matches(prov, dict(prov))
    assert not same_matches(prov, {**prov, "root_seed": 8})


def _sim(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sim.cli", *args], capture_output=True,
                          text=True, cwd=REPO_ROOT)


def test_report_against_an_earlier_run_exits_3_when_the_gate_fails(tmp_path):
    def sweep(name: str, setting: str, seats: int = 4) -> str:
        exp = tmp_path / f"{name}.toml"
        exp.write_text(f'name = "{name}"\ntables = "{FIXTURE_TABLES}"\nroot_seed = 3\n'
                       f'matches = 16\nseats = {seats}\nlength = "short"\nchunk_size = 16\n'
                       f'[[variants]]\nname = "baseline"\n{setting}\n')
        out = tmp_path / name
        proc = _sim("sweep", str(exp), "--out", str(out), "--jobs", "1", "--quiet")
        assert proc.returncode == 0, proc.stderr
        return str(out)

    first = sweep("first", "")
    again = _sim("report", first, "--against", first, "--out", str(tmp_path / "a.html"))
    assert again.returncode == 0, again.stderr
    assert "PASS" in again.stdout and "Regression gate: PASS" in (tmp_path / "a.html").read_text()
    moved = sweep("moved", 'set = { "units.warrior.attack" = 9 }')
    proc = _sim("report", moved, "--against", first, "--out", str(tmp_path / "b.html"))
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "FAIL" in proc.stdout and (tmp_path / "b.html").is_file()
    assert "note:" not in proc.stderr  # the same game, another balance
    # a margin with no gate to apply it to is refused, not ignored
    assert "file's [gate]" in _sim("report", "--help").stdout  # not eaten as markup
    alone = _sim("report", first, "--margin", "0.05", "--out", str(tmp_path / "c.html"))
    assert alone.returncode == 2 and "--margin" in alone.stderr and "--against" in alone.stderr
    # the shares of another game (3 seats against 4) are compared, and said to be
    three = sweep("three", "", seats=3)
    other = _sim("report", three, "--against", first, "--out", str(tmp_path / "d.html"))
    assert other.returncode in (0, 3), other.stderr
    assert "played 3 seats" in other.stderr and "4 seats" in other.stderr
    # and the page says so too, where the verdict is read
    page = (tmp_path / "d.html").read_text()
    assert "two different games" in page and "played 3 seats" in page


def test_history_index_counts_each_run_once_and_the_report_charts_it(tmp_path):
    from sim.analysis.history import append_history, history_rows, read_history

    prov = {"run_id": "night-1", "finished": "2026-12-01T02:00:00+00:00",
            "code_version": {"commit": "abc"}, "experiment": {"name": "nightly"},
            "variants": [{"id": "baseline", "tables_hash": "h1"}]}
    rows = history_rows(_run(["conquest", "science", "science", "dominance"]), prov)
    assert rows.filter(pl.col("victory") == "science").item(0, "share") == 0.5
    assert set(rows.get_column("tables_hash")) == {"h1"}
    index = tmp_path / "history.parquet"
    append_history(index, rows)
    append_history(index, rows)                     # the same run written twice
    night2 = history_rows(_run(["conquest"] * 4), {**prov, "run_id": "night-2",
                                                   "finished": "2026-12-02T02:00:00+00:00"})
    whole = append_history(index, night2)
    assert whole.get_column("run_id").unique().sort().to_list() == ["night-1", "night-2"]
    assert whole.height == read_history(index).height == 2 * rows.height
    from sim.analysis import charts

    spec = charts.history_trend(whole, "baseline").to_dict()
    assert spec["title"] == "baseline: victory mix night by night"
    # nights on a time axis, so that their labels thin out as the index grows
    x = spec["layer"][0]["encoding"]["x"]
    assert x["type"] == "temporal" and x["axis"]["labelOverlap"] is True
