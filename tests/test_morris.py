"""The Morris screen of `sim sensitivity` (issue 13): SALib's indices on synthetic
designs whose answer is known, the choice of the strongest parameters, a
reproducible design of validated points, and the whole command end to end with
resume."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from SALib.sample import morris as morris_sample

from sim.analysis.load import empty_table
from sim.analysis.morris import morris_indices, per_match_outcomes
from sim.analysis.sensitivity import top_parameters
from sim.outputs.folders import MORRIS_DESIGN_FILE
from sim.outputs.store import part_path
from sim.rules.tables import REPO_ROOT, load_tables
from sim.runner.experiments import load_experiment
from sim.runner.morris import (
    morris_design,
    morris_experiment_text,
    write_morris_experiment,
)
from sim.runner.sensitivity import SensitivityError, SensitivitySpec, design
from tests.conftest import FIXTURE_TABLES

BOUNDS = {"a": (10.0, 20.0), "b": (0.5, 1.5), "c": (-2.0, 2.0)}


def synthetic(keys: list[str], trajectories: int, levels: int = 4) -> dict:
    """A morris.json-shaped design over float parameters of BOUNDS, one variant per row."""
    problem = {"num_vars": len(keys), "names": keys, "bounds": [list(BOUNDS[k]) for k in keys]}
    x = morris_sample.sample(problem, trajectories, num_levels=levels, seed=3)
    return {"parameters": [{"key": k, "base": sum(BOUNDS[k]) / 2, "low": BOUNDS[k][0],
                            "high": BOUNDS[k][1]} for k in keys],
            "x": x.tolist(), "values": x.tolist(), "rows": [f"p{i:03d}" for i in range(len(x))],
            "trajectories": trajectories, "levels": levels, "seed": 11}


def outcomes(d: dict, value, n_matches: int, metric: str = "m") -> pl.DataFrame:
    """per_match_outcomes-shaped rows: value(point as {key: x}, match_index, row)."""
    keys = [p["key"] for p in d["parameters"]]
    rows = [{"variant": name, "match_index": i, "metric": metric,
             "value": float(value(dict(zip(keys, x, strict=True)), i, r))}
            for r, (name, x) in enumerate(zip(d["rows"], d["x"], strict=True))
            for i in range(n_matches)]
    return pl.DataFrame(rows)


def by_key(table: pl.DataFrame) -> dict[str, dict]:
    return {r["parameter"]: r for r in table.iter_rows(named=True)}


def test_additive_in_one_parameter_zero_in_the_other():
    """Outcome = 0.03 a + a per-match term shared by every point (common random
    numbers): a's elementary effects are all 0.03 x its range, b's all 0."""
    d = synthetic(["a", "b"], trajectories=6)
    noise = np.random.default_rng(0).normal(size=50)
    table = morris_indices(d, outcomes(d, lambda p, i, r: 0.03 * p["a"] + noise[i], 50))
    rows = by_key(table)
    assert rows["a"]["mu_star"] == pytest.approx(0.03 * 10) == pytest.approx(rows["a"]["mu"])
    assert rows["a"]["sigma"] == pytest.approx(0, abs=1e-9)
    assert rows["a"]["mu_star_per_10pct"] == pytest.approx(0.3 * 0.1 * 15 / 10)
    assert rows["b"]["mu_star"] == pytest.approx(0, abs=1e-12)
    assert rows["b"]["sigma"] == pytest.approx(0, abs=1e-12)
    # identical noise at every point cancels in each paired difference
    assert rows["a"]["ee_se"] == pytest.approx(0, abs=1e-9)
    assert not rows["a"]["interacts"] and not rows["b"]["interacts"]
    assert (rows["a"]["rank"], rows["b"]["rank"]) == (1, 2)
    assert rows["a"]["n_matches"] == 50 and math.isfinite(rows["a"]["mu_star_conf"])


def test_a_product_interacts_and_an_additive_term_beside_it_does_not():
    """Outcome = a' b' + 0.5 c' (each scaled to [-1, 1]): a's effect is b' and b's is
    a' (sign changing: sigma > mu_star, mu near 0); c's is the same everywhere."""
    d = synthetic(["a", "b", "c"], trajectories=40)

    def unit(p, k):
        lo, hi = BOUNDS[k]
        return (p[k] - (lo + hi) / 2) / ((hi - lo) / 2)

    table = morris_indices(d, outcomes(
        d, lambda p, i, r: unit(p, "a") * unit(p, "b") + 0.5 * unit(p, "c"), 3))
    rows = by_key(table)
    for k in ("a", "b"):
        assert rows[k]["sigma"] > rows[k]["mu_star"] > 0.5
        assert abs(rows[k]["mu"]) < 0.5 * rows[k]["mu_star"]
        assert rows[k]["interacts"]
    # c moves the outcome by 0.5 per unit, over a range of 2 units: 1.0, everywhere
    assert rows["c"]["mu_star"] == pytest.approx(1.0)
    assert rows["c"]["sigma"] == pytest.approx(0, abs=1e-9)
    assert not rows["c"]["interacts"]


def test_noise_alone_is_not_an_interaction():
    """Independent noise at every point (no common random numbers): b does nothing,
    its elementary effects are noise (sigma about mu_star), and the flag stays down
    because mu_star is under twice ee_se, which matches the noise's theory."""
    d = synthetic(["a", "b"], trajectories=8)
    rng = np.random.default_rng(1)
    eps = rng.normal(0, 0.1, size=(len(d["rows"]), 400))
    table = morris_indices(d, outcomes(d, lambda p, i, r: 0.03 * p["a"] + eps[r, i], 400))
    rows = by_key(table)
    expected_se = 0.1 * math.sqrt(2 / 400) / (4 / 6)   # sd of a paired mean / the step
    for k in ("a", "b"):
        assert rows[k]["ee_se"] == pytest.approx(expected_se, rel=0.15)
    assert rows["a"]["mu_star"] == pytest.approx(0.3, abs=0.03) and not rows["a"]["interacts"]
    assert rows["b"]["mu_star"] < 2 * rows["b"]["ee_se"] and not rows["b"]["interacts"]


def test_per_match_outcomes_are_on_the_matches_every_variant_finished():
    matches = pl.DataFrame({
        "variant": ["x", "x", "x", "y", "y", "y"], "match_index": [0, 1, 2, 0, 1, 2],
        "victory": ["science", "conquest", "conquest", "science", None, "dominance"],
        "end_turn": [50, 60, 70, 52, 0, 80], "winner": [0, 1, 1, 0, None, 1]})
    out = per_match_outcomes(matches, empty_table("seats"), empty_table("events"))
    # match 1 did not finish in y: it is left out of both variants
    assert set(out.get_column("match_index")) == {0, 2}
    science = out.filter(pl.col("metric") == "victory=science").sort("variant", "match_index")
    assert science.get_column("value").to_list() == [1.0, 0.0, 1.0, 0.0]
    ends = out.filter(pl.col("metric") == "end_turn").sort("variant", "match_index")
    assert ends.get_column("value").to_list() == [50.0, 70.0, 52.0, 80.0]


def effects_table(rows: list[tuple[str, str, float, bool]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema={"parameter": pl.Utf8, "metric": pl.Utf8,
                                      "effect_per_10pct": pl.Float64, "inert": pl.Boolean},
                        orient="row").with_columns(pl.col("effect_per_10pct").alias("effect"))


def test_top_parameters_rank_within_each_outcome_and_skip_inert_ones():
    # end_turn's turns dwarf shares: a raw |effect| would pick p and q for it alone
    table = effects_table([
        ("p", "end_turn", 5.0, False), ("q", "end_turn", 4.0, False),
        ("r", "end_turn", 0.0, True), ("s", "end_turn", 1.0, False),
        ("p", "victory=science", 0.01, False), ("q", "victory=science", 0.001, False),
        ("r", "victory=science", 0.0, True), ("s", "victory=science", 0.05, False)])
    # p: ranks (1, 2); s: (1, 3); q: (2, 3); r is inert
    assert top_parameters(table, 2) == ["p", "s"]
    assert top_parameters(table, 10) == ["p", "s", "q"]
    assert top_parameters(table, 0) == []
    # a tie in every rank is broken by the key's name, and last bits do not count
    tie = effects_table([("b", "m", 0.1 + 1e-15, False), ("a", "m", 0.1, False)])
    assert top_parameters(tie, 1) == ["a"]


def test_top_parameters_take_balance_values_before_the_match_setup():
    # the board's size moves everything (a setup key, ranked apart as in the tornado):
    # the screen studies the values a designer tunes, and the setup only to fill it
    table = effects_table([
        ("map.radius", "m", 9.0, False), ("match.lengths.standard", "m", 8.0, False),
        ("p", "m", 1.0, False), ("q", "m", 0.5, False), ("r", "m", 0.0, True),
    ]).with_columns(pl.when(pl.col("parameter").str.contains(r"^(map|match)\."))
                    .then(pl.lit("setup")).otherwise(pl.lit("balance")).alias("group"))
    assert top_parameters(table, 2) == ["p", "q"]
    assert top_parameters(table, 3) == ["p", "q", "map.radius"]
    assert top_parameters(table, 10) == ["p", "q", "map.radius", "match.lengths.standard"]
    # one lever under a setup key listed first and a balance key: studied once, under
    # the balance key (the screen moves values a designer tunes)
    lever = table.with_columns(pl.when(pl.col("parameter") == "p")
                               .then(pl.lit("match.lengths.standard"))
                               .otherwise(pl.lit(None, dtype=pl.Utf8)).alias("same_as"))
    assert top_parameters(lever, 3) == ["p", "q", "map.radius"]
    plain = lever.with_columns(pl.lit("balance").alias("group"))  # two balance keys: the lead
    assert "p" not in top_parameters(plain, 10)


def spec(**kw) -> SensitivitySpec:
    return SensitivitySpec(**{"name": "t", "root_seed": 7, "matches": 4,
                              "parameters": ["units.warrior.attack", "dominance.counter_to_win",
                                             "techs.prosperity.cost"],
                              "morris_top": 2, "morris_trajectories": 3, **kw})


def test_design_is_seeded_from_the_root_seed_rounds_integers_and_stays_in_range(tmp_path):
    tables = load_tables(FIXTURE_TABLES)
    d = design(spec(), FIXTURE_TABLES, tables)
    keys = ["units.warrior.attack", "techs.prosperity.cost"]
    m = morris_design(d, keys, tables)
    assert morris_design(d, keys, tables) == m
    assert morris_design(design(spec(root_seed=8), FIXTURE_TABLES, tables), keys, tables).x \
        != m.x
    assert len(m.x) == len(m.rows) == 3 * (2 + 1)
    params = {p.key: p for p in d.parameters}
    for row_x, row_v in zip(m.x, m.values, strict=True):
        for p, x, v in zip(m.parameters, row_x, row_v, strict=True):
            assert params[p.key].low <= x <= params[p.key].high
            assert isinstance(v, int) and v == round(x)
    # one variant per distinct point, and the written experiment plays exactly them
    assert len(set(m.rows)) == len(set(m.values))
    experiment = load_experiment(write_morris_experiment(m, tmp_path))
    assert [v.id for v in experiment.variants] == list(dict.fromkeys(m.rows))
    for name, values in zip(m.rows, m.values, strict=True):
        assert experiment.variant(name).overrides == dict(zip(keys, values, strict=True))
    assert (experiment.spec.root_seed, experiment.spec.matches) == (7, 4)
    saved = json.loads((tmp_path / MORRIS_DESIGN_FILE).read_text())
    assert saved["x"] == [list(r) for r in m.x] and saved["rows"] == list(m.rows)
    assert morris_experiment_text(m) == (tmp_path / "morris-experiment.toml").read_text()


def test_a_point_the_tables_refuse_is_named(monkeypatch):
    tables = load_tables(FIXTURE_TABLES)
    d = design(spec(), FIXTURE_TABLES, tables)

    def refuse(self, overrides, source="<overrides>", check_board=True):
        from sim.rules.tables import TablesError
        raise TablesError([f"{source}: units.warrior.attack: too strong"])

    monkeypatch.setattr(type(tables), "with_overrides", refuse)
    with pytest.raises(SensitivityError, match=r"Morris point morris-000 .* too strong"):
        morris_design(d, ["units.warrior.attack", "dominance.counter_to_win"], tables)


@pytest.mark.parametrize(("key", "value", "why"), [("morris_top", 1, "at least 2"),
                                                   ("morris_levels", 5, "must be even")])
def test_bad_morris_settings_are_refused(tmp_path, key, value, why):
    from sim.runner.sensitivity import load_sensitivity

    bad = tmp_path / "s.toml"
    bad.write_text(f'name = "s"\nroot_seed = 1\nmatches = 10\nparameters = ["all"]\n'
                   f'{key} = {value}\n')
    with pytest.raises(SensitivityError, match=rf"s\.toml:5: {key}: .*{why}"):
        load_sensitivity(bad)


def sim(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sim.cli", *args], capture_output=True,
                          text=True, cwd=REPO_ROOT)


def test_morris_end_to_end_is_reproducible_and_resumes(tmp_path):
    """Three parameters, one of them inert (a personality no seat plays), on 8 short
    matches: the screen takes the other two, plays its points as a second sweep and
    writes finite indices and the report's section. Run again after one chunk of
    the Morris sweep is lost, the same file designs the same points byte for byte
    (else the sweep would refuse its folder as stale), plays only that chunk and
    gives the same table."""
    inert_key = "ai.personalities.hegemon.war.war_turn_pct"
    file = tmp_path / "s.toml"
    file.write_text(f'''name = "s"
tables = "{FIXTURE_TABLES}"
root_seed = 5
matches = 8
seats = 4
length = "short"
personalities = ["balanced", "conqueror", "scholar", "merchant"]
chunk_size = 4
parameters = ["units.archer.attack", "{inert_key}", "units.warrior.attack"]
morris_top = 2
morris_trajectories = 2
''')
    out = tmp_path / "run"
    proc = sim("sensitivity", str(file), "--out", str(out), "--jobs", "1", "--quiet")
    assert proc.returncode == 0, proc.stderr
    saved = json.loads((out / MORRIS_DESIGN_FILE).read_text())
    assert [p["key"] for p in saved["parameters"]] == ["units.archer.attack",
                                                      "units.warrior.attack"]
    assert len(saved["rows"]) == 2 * 3
    table = pl.read_parquet(out / "morris.parquet")
    assert table.height == 2 * table.get_column("metric").n_unique()
    assert {"victory=conquest", "end_turn"} <= set(table.get_column("metric"))
    for column in ("mu", "mu_star", "mu_star_conf", "sigma", "ee_se"):
        assert table.get_column(column).is_finite().all(), column
    assert table.get_column("mu_star").max() > 0
    assert (table.get_column("n_matches") == 8).all()
    variants = {p.name.removeprefix("variant=") for p in (out / "morris" / "matches").iterdir()}
    assert variants == set(saved["rows"])
    assert "morris (mu*" in proc.stdout and "victory=conquest mu*/sigma:" in proc.stdout
    html = (out / "sensitivity.html").read_text()
    assert "Interactions (Morris screen)" in html and "Interactions on victory=conquest" in html

    designed = {name: (out / name).read_bytes()
                for name in (MORRIS_DESIGN_FILE, "morris-experiment.toml")}
    lost = part_path(out / "morris", "matches", saved["rows"][-1], 1)
    before = {p: p.stat().st_mtime_ns for p in (out / "morris").rglob("*.parquet")}
    oat = {p: p.stat().st_mtime_ns for p in (out / "sweep").rglob("*.parquet")}
    lost.unlink()
    resumed = sim("sensitivity", str(file), "--out", str(out), "--jobs", "1", "--quiet")
    assert resumed.returncode == 0, resumed.stderr
    assert designed == {name: (out / name).read_bytes() for name in designed}
    after = {p: p.stat().st_mtime_ns for p in (out / "morris").rglob("*.parquet")}
    assert after.keys() == before.keys()
    rewritten = {p for p in after if after[p] != before[p]}
    assert lost in rewritten and all(p.name == lost.name and
                                     p.parent.name == lost.parent.name for p in rewritten)
    assert oat == {p: p.stat().st_mtime_ns for p in (out / "sweep").rglob("*.parquet")}
    # the same rows and flags (means may differ in the last bits: polars sums in parallel)
    assert_frame_equal(pl.read_parquet(out / "morris.parquet"), table, check_exact=False)
