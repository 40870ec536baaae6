"""The regression gate (issues 14, 44): a sequential three-way test of every victory
share between two runs on anytime-valid bounds (PASS inside ±margin, FAIL changed
beyond it, INCONCLUSIVE while neither), paired when the runs played the same matches;
`sim report --against` grows both runs until it decides (exit 0, 3, 4)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import polars as pl
import pytest

from sim.analysis.gate import (
    INCONCLUSIVE,
    compared,
    failures,
    gate,
    matches_needed,
    overall,
    passed,
    renamed_variants,
    same_matches,
    sequence_verdict,
    share_verdict,
    simulated_runs,
    still_needed,
    summary,
    variant_definitions,
)
from sim.rules.tables import REPO_ROOT
from tests.conftest import FIXTURE_TABLES


def _run(victories: list[str], variant: str = "baseline") -> pl.DataFrame:
    return pl.DataFrame({"variant": variant, "match_index": list(range(len(victories))),
                         "victory": victories, "winner": 0, "end_turn": 80})


def test_identical_runs_pass_whatever_their_size_and_still_print_their_interval():
    small = _run(["conquest", "science", "dominance", "turn_limit"] * 5)
    table = gate(small, small, paired=True)
    assert passed(table) and set(table.get_column("verdict")) == {"PASS identical"}
    assert table.get_column("lo").null_count() == 0 and (table.get_column("lo") < 0).all()
    assert (table.get_column("hi") > 0).all()


def test_an_interval_touching_the_margin_decides_nothing():
    # "inside ±margin" and "beyond the margin" are both strict
    assert share_verdict(-0.02, 0.01, 0.02) == INCONCLUSIVE
    assert share_verdict(0.02, 0.05, 0.02) == INCONCLUSIVE
    assert share_verdict(-0.0199, 0.0199, 0.02) == "PASS"
    assert share_verdict(0.0201, 0.05, 0.02) == "FAIL changed"


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


def test_too_few_matches_are_inconclusive_with_the_matches_still_needed():
    before = ["dominance" if i % 5 == 0 else "conquest" for i in range(200)]
    shifted = ["dominance" if i % 5 == 1 else "conquest" for i in range(200)]
    table = gate(_run(shifted), _run(before), paired=True)
    played = table.filter(pl.col("victory").is_in(["conquest", "dominance"]))
    assert set(played.get_column("verdict")) == {INCONCLUSIVE}
    assert overall(table) == INCONCLUSIVE and not passed(table) and failures(table) == 0
    # 40 % of the pairs disagree: the bounds need thousands of matches, not 200
    assert 2_000 < still_needed(table) < 1_000_000
    assert "INCONCLUSIVE (4 of 4 shares undecided; about" in summary(table)
    # a type no match of either run ended with (no pair disagrees) needs far fewer
    need = dict(table.select("victory", "needed").iter_rows())
    assert need["science"] * 10 < need["conquest"]
    alone = gate(_run(shifted), _run(before), paired=False)
    assert not alone.get_column("paired").any()
    assert (alone.get_column("hi") - alone.get_column("lo")).min() > 0


def test_matches_needed_grows_as_the_estimate_nears_the_margin():
    def differences(gains: int, losses: int) -> np.ndarray:
        return np.r_[np.ones(gains), -np.ones(losses), np.zeros(2000 - gains - losses)]

    at_zero, nearer = differences(400, 400), differences(410, 390)    # 0 and +0.01
    assert 2000 < matches_needed(at_zero, 0.02) < matches_needed(nearer, 0.02) < 1_000_000
    assert matches_needed(at_zero, 0.05) < matches_needed(at_zero, 0.02)
    # the bounds tuned to half the margin narrow to about a quarter of it at most: an
    # estimate on the margin is never decided, and says so
    rng = np.random.default_rng(5)
    on_margin = gate(_run(list(rng.permutation(["science"] * 620 + ["conquest"] * 1380))),
                     _run(list(rng.permutation(["science"] * 580 + ["conquest"] * 1420))),
                     paired=False)
    assert still_needed(on_margin) is None
    assert "2 on their margin so far" in summary(on_margin)  # science and conquest


def test_the_sequence_on_simulated_runs_decides_as_the_gate_does():
    rng = np.random.default_rng(7)
    mix = np.array([[0.30, 0.25, 0.16, 0.29]] * 2)
    moved = mix.copy()
    moved[0, 0], moved[0, 3] = 0.20, 0.39
    names = ["conquest", "science", "dominance", "turn_limit"]
    for now_mix, expect in ((mix, "PASS"), (moved, "FAIL")):
        now, before = simulated_runs(rng, mix, now_mix, 6000, 0.13)
        verdict, stopped = sequence_verdict(now, before, 0.05, [2000, 4000, 6000])
        assert verdict == expect

        def frame(codes: np.ndarray, held: int) -> pl.DataFrame:
            return pl.concat([_run([names[c] for c in codes[v, :held]], f"v{v}")
                              for v in range(2)])

        table = gate(frame(now, stopped), frame(before, stopped), paired=True, margin=0.05)
        assert overall(table) == expect
    # the marginals are the mixes, and pairing keeps a share of matches alike
    now, before = simulated_runs(rng, mix[:1], mix[:1], 200_000, 0.13)
    assert np.bincount(now[0]) / 200_000 == pytest.approx(mix[0], abs=0.005)
    changed = (1 - 0.13) * (1 - (mix[0] ** 2).sum())
    assert (now != before).mean() == pytest.approx(changed, abs=0.005)


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
                        "fresh": "none (first night)"}
    assert not passed(table)
    assert failures(table) == 4 and compared(table) == 8  # hegemon's 4 types of 8
    # a new variant alone neither passes nor fails the gate
    assert passed(gate(now, before.filter(pl.col("variant") == "baseline"), paired=True))
    # every match of a variant failed (no victory): missing, not silently skipped
    broken = now.with_columns(pl.when(pl.col("variant") == "baseline").then(None)
                              .otherwise(pl.col("victory")).alias("victory"))
    assert set(gate(broken, before, paired=True).filter(pl.col("variant") == "baseline")
               .get_column("verdict")) == {"FAIL missing"}


def _prov(*variants: tuple[str, dict, list]) -> dict:
    return {"variants": [{"id": name, "overrides": overrides, "seat_ai": seat_ai}
                         for name, overrides, seat_ai in variants]}


SKILL_1 = [{"forbid": [], "skill": 1}] * 4


def test_a_variant_renamed_by_skills_is_found_by_what_it_sets_and_plays():
    """`skills = [0, 1]` renames NAME to NAME.skill-0 (the same tables, every seat at
    the default skill) and adds NAME.skill-1; a designer's rename keeps the `set`."""
    night_1 = _prov(("baseline", {}, []), ("revolt-2", {"revolt.transfer_turns": 2}, []),
                    ("dominance-70", {"dominance.share_pct": 70}, []))
    night_2 = _prov(("baseline.skill-0", {}, [{"skill": 0}] * 4),
                    ("baseline.skill-1", {}, SKILL_1),
                    ("revolt-short.skill-0", {"revolt.transfer_turns": 2}, []),
                    ("revolt-short.skill-1", {"revolt.transfer_turns": 2}, SKILL_1))
    assert renamed_variants(night_2, night_1) == {
        "baseline": "baseline.skill-0", "revolt-2": "revolt-short.skill-0"}
    # skills dropped again: the skill-0 variants are renamed back, the skill-1 ones gone
    assert renamed_variants(night_1, night_2) == {
        "baseline.skill-0": "baseline", "revolt-short.skill-0": "revolt-2"}
    # a seat's forbid is part of what a variant plays: no rename across it
    walls = _prov(("no-walls", {}, [{"forbid": ["walls"]}]))
    assert renamed_variants(walls, night_1) == {}
    # a variant kept under its name is never the target of a rename
    kept = _prov(("baseline", {}, []), ("control", {}, []))
    assert renamed_variants(kept, _prov(("old-control", {}, []), ("baseline", {}, []))) \
        == {"old-control": "control"}


def test_a_rename_two_variants_could_be_is_no_rename():
    before = _prov(("a", {}, []), ("b", {}, []))
    assert renamed_variants(_prov(("c", {}, [])), before) == {}
    assert renamed_variants(before, _prov(("c", {}, []))) == {}
    assert variant_definitions(before)["a"] == variant_definitions(before)["b"]


def test_a_renamed_variant_is_gated_under_its_new_name_and_a_new_one_is_none():
    before = pl.concat([_run(["science", "conquest"] * 50),
                        _run(["dominance"] * 100, variant="gone")])
    now = pl.concat([_run(["science", "conquest"] * 50, variant="baseline.skill-0"),
                     _run(["science"] * 100, variant="baseline.skill-1")])
    table = gate(now, before, paired=True, renamed={"baseline": "baseline.skill-0"})
    verdicts = dict(table.group_by("variant").agg(pl.col("verdict").unique().first())
                    .iter_rows())
    assert verdicts == {"baseline.skill-0": "PASS identical", "gone": "FAIL missing",
                        "baseline.skill-1": "none (first night)"}
    assert failures(table) == 4 and compared(table) == 8
    # without the gone variant: the renamed one passes, the new one is no failure
    table = gate(now, before.filter(pl.col("variant") == "baseline"), paired=True,
                 renamed={"baseline": "baseline.skill-0"})
    assert passed(table)
    # unrenamed, the same runs fail: the earlier name is missing
    assert overall(gate(now, before.filter(pl.col("variant") == "baseline"),
                        paired=True)) == "FAIL"


def test_same_matches_needs_the_same_seed_seats_length_and_personalities():
    prov = {"root_seed": 7, "seats": 4, "length": "standard",
            "personalities": ["balanced"], "rotate_personalities": True}
    assert same_matches(prov, dict(prov))
    assert not same_matches(prov, {**prov, "root_seed": 8})


def _sim(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sim.cli", *args], capture_output=True,
                          text=True, cwd=REPO_ROOT)


def _swept(tmp_path, name: str, experiment: str) -> str:
    """The run folder of `sim sweep` on the experiment text (written as NAME.toml)."""
    exp = tmp_path / f"{name}.toml"
    exp.write_text(experiment)
    out = tmp_path / name
    proc = _sim("sweep", str(exp), "--out", str(out), "--jobs", "1", "--quiet")
    assert proc.returncode == 0, proc.stderr
    return str(out)


def test_report_against_an_earlier_run_exits_0_3_or_4_and_grows_both_runs(tmp_path):
    def sweep(name: str, setting: str, seats: int = 4, variants: str = "") -> str:
        return _swept(tmp_path, name,
                      f'name = "{name}"\ntables = "{FIXTURE_TABLES}"\nroot_seed = 3\n'
                      f'matches = 16\nseats = {seats}\nlength = "short"\nchunk_size = 16\n'
                      f'[gate]\nblock = 16\n'
                      f'[[variants]]\nname = "baseline"\n{setting}\n{variants}')

    first = sweep("first", "", variants='[[variants]]\nname = "gold-3"\n'
                  'set = { "score.gold_per_point" = 3 }\n')
    again = _sim("report", first, "--against", first, "--out", str(tmp_path / "a.html"))
    assert again.returncode == 0, again.stderr
    assert "PASS" in again.stdout and "Regression gate: PASS" in (tmp_path / "a.html").read_text()
    moved = sweep("moved", 'set = { "units.warrior.attack" = 9 }')
    # gold-3 is gone from the new run: FAIL missing, exit 3 (whatever the shares say)
    proc = _sim("report", moved, "--against", first, "--out", str(tmp_path / "b.html"),
                "--budget", "16")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "FAIL" in proc.stdout and (tmp_path / "b.html").is_file()
    assert "note:" in proc.stderr and "gold-3" in proc.stderr
    # 16 matches decide no share: INCONCLUSIVE, exit 4, with the matches still needed
    again = sweep("again", "")
    proc = _sim("report", again, "--against", moved, "--out", str(tmp_path / "c.html"),
                "--budget", "16", "--margin", "0.1")
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "INCONCLUSIVE" in proc.stdout and "matches per variant in each run" in proc.stdout
    assert "Regression gate: INCONCLUSIVE" in (tmp_path / "c.html").read_text()
    # a budget of 32: both runs grow by the [gate] block to 32 matches and are looked at
    # again (the same folders: a report of the grown runs reads 32 pairs)
    proc = _sim("report", again, "--against", moved, "--out", str(tmp_path / "d.html"),
                "--budget", "32", "--margin", "0.1", "--jobs", "1")
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "growing both runs to 32" in proc.stderr
    for run in (again, moved):
        prov = json.loads((tmp_path / run / "provenance.json").read_text())
        assert prov["matches_per_variant"] == 32
    assert "32 matches per variant" in proc.stdout
    assert _sim("check-run", moved).returncode == 0
    # a run made by other code cannot grow here: refused, nothing played
    prov_path = tmp_path / "moved" / "provenance.json"
    prov = json.loads(prov_path.read_text())
    prov["fingerprint"]["code"]["source"] = "0" * 16
    prov_path.write_text(json.dumps(prov))
    grow = _sim("extend", moved, "--to", "48", "--quiet")
    assert grow.returncode == 2 and "another code version" in grow.stderr
    # nor does the gate grow it: it says so, and tonight's run is not grown alone
    proc = _sim("report", again, "--against", moved, "--out", str(tmp_path / "g.html"),
                "--budget", "48", "--margin", "0.1", "--jobs", "1")
    # (at 32 matches the bounds are some ±0.6 wide: nothing is decided at ±0.1)
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "could not add matches" in proc.stderr and "another code version" in proc.stderr
    assert json.loads((tmp_path / "again" / "provenance.json").read_text())[
        "matches_per_variant"] == 32
    # options of the gate without a gate are refused, not ignored
    assert "file's [gate]" in _sim("report", "--help").stdout  # not eaten as markup
    for option in (("--margin", "0.05"), ("--budget", "100")):
        alone = _sim("report", first, *option, "--out", str(tmp_path / "e.html"))
        assert alone.returncode == 2 and option[0] in alone.stderr
        assert "--against" in alone.stderr
    # the shares of another game (3 seats against 4) are compared, and said to be
    three = sweep("three", "", seats=3)
    other = _sim("report", three, "--against", first, "--out", str(tmp_path / "f.html"),
                 "--budget", "16")
    assert other.returncode in (0, 3, 4), other.stderr
    assert "played 3 seats" in other.stderr and "4 seats" in other.stderr
    # and the page says so too, where the verdict is read
    page = (tmp_path / "f.html").read_text()
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


def test_the_nightly_gate_across_a_skills_rename_passes_and_names_what_changed(tmp_path):
    """The night `skills = [0, 1]` is added: every variant is renamed NAME.skill-0 and
    NAME.skill-1 appears. The gate compares each NAME.skill-0 with last night's NAME
    (the same matches: PASS identical), says so, takes NAME.skill-1 as its first night
    (none) and exits 0; a variant dropped on the same night still fails it (exit 3)."""
    def sweep(name: str, head: str, variants: str) -> str:
        return _swept(tmp_path, name,
                      f'name = "nightly"\ntables = "{FIXTURE_TABLES}"\nroot_seed = 5\n'
                      f'matches = 12\nseats = 4\nlength = "short"\nchunk_size = 12\n'
                      f'{head}\n[gate]\nmargin = 0.4\nbudget = 12\n'
                      f'[[variants]]\nname = "baseline"\n{variants}')

    gold = '[[variants]]\nname = "gold-3"\nset = { "score.gold_per_point" = 3 }\n'
    last_night = sweep("last", "", gold)
    tonight = sweep("tonight", "skills = [0, 1]", gold)
    proc = _sim("report", tonight, "--against", last_night, "--out", str(tmp_path / "a.html"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "baseline -> baseline.skill-0, gold-3 -> gold-3.skill-0" in proc.stderr
    assert "first night" in proc.stderr and "baseline.skill-1, gold-3.skill-1" in proc.stderr
    assert "PASS identical" in proc.stdout and "FAIL" not in proc.stdout
    assert "renamed since" in (tmp_path / "a.html").read_text()
    # tonight without gold-3: gone under every name, the gate fails and says which
    dropped = sweep("dropped", "skills = [0, 1]", "")
    proc = _sim("report", dropped, "--against", last_night, "--out", str(tmp_path / "b.html"))
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "gone since" in proc.stderr and "gold-3 (FAIL missing)" in proc.stderr
    assert "baseline -> baseline.skill-0" in proc.stderr
