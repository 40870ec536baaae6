"""Crown on the workbench (issue 48): a Crown experiment swept, checked and reported
through the game interface (sim.outputs.games), with the hex game's run helpers.

What is asserted is real behaviour: each row of the run's matches table is the
outcome `play_crown_match` gives that match (winner, score terms K10/K11, leads K03,
decided attacks K07, fault leader L6), the rounds table adds up to it, results do not
depend on the chunk size, `sim check-run` sees a damaged Crown part, the report shows
Crown's sections and not the hex game's, and a bad `set` key is refused with the
experiment file's line.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from sim.engine.crown import play_crown_match
from sim.outputs.games import CROWN, CROWN_SCHEMAS
from sim.outputs.store import scan
from sim.rules.crown import (
    ATTACK_COUNTS,
    NO_WINNER,
    SCORE_TERMS,
    SIDES,
    WIDGETS,
    load_crown_tables,
    term_column,
)
from sim.runner.experiments import ExperimentError, load_experiment
from sim.runner.sweep import run_sweep
from tests.test_runs_support import one_line_error, sim, write

CROWN_TINY = """
name = "crown-tiny"
game = "crown"
root_seed = 5
matches = 6
chunk_size = {chunk}
baseline = "baseline"

[[variants]]
name = "baseline"

[[variants]]
name = "face8-booster"
set = {{ "core.faces.7" = "booster" }}

[[variants]]
name = "teams-2v3"
set = {{ "match.team_sizes" = [2, 3] }}
side_skill = [1, 0]
"""


def _read(out: Path, table: str) -> pl.DataFrame:
    return scan(out, table).collect().sort(["variant", *CROWN.sort_keys[table]])


@pytest.fixture(scope="module")
def crown_run(tmp_path_factory) -> Path:
    """The tiny Crown experiment swept by `sim sweep` (a child process, as a designer
    runs it), in chunks of 4 matches: every variant has a full and a partial chunk."""
    folder = tmp_path_factory.mktemp("crown")
    exp = write(folder / "crown.toml", CROWN_TINY.format(chunk=4))
    proc = sim("sweep", exp, "--out", folder / "run", "--jobs", "1")
    assert proc.returncode == 0, proc.stderr
    return folder / "run"


def test_a_crown_run_holds_the_outcome_of_every_match(crown_run):
    matches = _read(crown_run, "matches")
    assert matches.columns == [*CROWN_SCHEMAS["matches"], "variant"]
    assert matches.height == 18 and _read(crown_run, "errors").height == 0
    base = load_crown_tables()
    overrides = {"baseline": {}, "face8-booster": {"core.faces.7": "booster"},
                 "teams-2v3": {"match.team_sizes": [2, 3]}}
    skills = {"baseline": (0, 0), "face8-booster": (0, 0), "teams-2v3": (1, 0)}
    for row in matches.iter_rows(named=True):
        v, i = row["variant"], row["match_index"]
        out = play_crown_match(base.with_overrides(overrides[v]), 5, i, skills[v])
        assert row["winner"] == ("draw" if out.winner == NO_WINNER else SIDES[out.winner])
        assert (row["total_a"], row["total_b"]) == tuple(int(x) for x in out.totals)
        for k, term in enumerate(SCORE_TERMS):  # K10, K11
            for s, side in enumerate(SIDES):
                assert row[term_column(term, side)] == out.terms[s, k]
        # K13's tie-breaks: zones and region majorities held at the end, not points
        assert (row["zones_a"], row["zones_b"]) == tuple(int(x) for x in out.zones)
        assert (row["majorities_a"], row["majorities_b"]) == \
            tuple(int(x) for x in out.majorities)
        for w, widget in enumerate(WIDGETS):  # K03, K07: both sides summed
            assert row[f"leads_{widget}"] == out.lead_counts[:, w].sum()
            for c, count in enumerate(ATTACK_COUNTS):
                assert row[f"{count}_{widget}"] == out.attack_counts[:, w, c].sum()
        leader = None if out.fault_leader < 0 else SIDES[out.fault_leader]
        assert row["fault_leader"] == leader  # L6
        assert (row["team_a"], row["team_b"]) == ((2, 3) if v == "teams-2v3" else (3, 3))
        assert (row["skill_a"], row["skill_b"]) == skills[v]
    # face 8 a Booster: more Booster leads than the default Core on the same streams
    leads = matches.group_by("variant").agg(pl.col("leads_booster").sum())
    by = dict(zip(leads["variant"], leads["leads_booster"], strict=True))
    assert by["face8-booster"] > by["baseline"]


def test_the_zones_held_at_the_end_are_the_last_rounds_count_not_the_zone_points(crown_run):
    """K10, K13: `zones_a/b` is how many zones the side holds at the end (the last
    round's count); the `zones` score term's points, summed over the rounds, are
    `zones_points_a/b`. Different things: they differ in some match of this run."""
    matches, rounds = _read(crown_run, "matches"), _read(crown_run, "rounds")
    last = rounds.filter(pl.col("round") == 10).select(
        "variant", "match_index", pl.col("zones_a").alias("held_a"),
        pl.col("zones_b").alias("held_b"))
    joined = matches.join(last, on=["variant", "match_index"])
    assert joined.height == matches.height
    assert (joined["zones_a"] == joined["held_a"]).all()
    assert (joined["zones_b"] == joined["held_b"]).all()
    assert (joined["zones_a"] != joined[term_column("zones", "A")]).any()


def test_the_rounds_table_adds_up_to_each_match(crown_run):
    matches, rounds = _read(crown_run, "matches"), _read(crown_run, "rounds")
    assert rounds.height == matches.height * 10  # K04: 10 rounds
    last = rounds.filter(pl.col("round") == 10).select("variant", "match_index", "total_a",
                                                       "total_b")
    joined = matches.join(last, on=["variant", "match_index"], suffix="_last")
    assert (joined["total_a"] == joined["total_a_last"]).all()
    assert (joined["total_b"] == joined["total_b_last"]).all()


def test_a_crown_sweep_does_not_depend_on_the_chunk_size(crown_run, tmp_path):
    exp = write(tmp_path / "crown.toml", CROWN_TINY.format(chunk=6))
    run_sweep(load_experiment(exp), tmp_path / "run", progress=False, say=lambda _: None)
    for table in CROWN.tables:
        mine, theirs = _read(tmp_path / "run", table), _read(crown_run, table)
        assert mine.drop("replay", strict=False).equals(theirs.drop("replay", strict=False)), \
            table


def test_check_run_sees_a_damaged_crown_rounds_part(crown_run, tmp_path):
    assert sim("check-run", crown_run).returncode == 0
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(crown_run, copy)
    part = sorted((copy / "rounds").rglob("*.parquet"))[0]
    part.write_bytes(part.read_bytes()[:-20])
    proc = sim("check-run", copy)
    assert proc.returncode != 0 and "rounds" in proc.stdout + proc.stderr


def test_the_report_of_a_crown_run_shows_crowns_sections(crown_run, tmp_path):
    page = tmp_path / "crown.html"
    proc = sim("report", crown_run, "--out", page)
    assert proc.returncode == 0, proc.stderr
    text = page.read_text()
    for title in (*CROWN.report_sections, "Against the baseline"):
        assert f"<h2>{title}</h2>" in text
    assert "2 v 3" in text and "3 v 3" in text  # side win rates by team size
    assert "face8-booster" in text and "booster leads, share of rolls" in text
    assert "Victory mix" not in text and "victory" not in text.lower().split("provenance")[0]


@pytest.mark.parametrize("snippet, needle", [
    ('set = { "core.faces.7" = "dragon" }', "core.faces.7"),
    ('set = { "core.faces.12" = "booster" }', "not a position"),
    ('side_skill = [2, 0]', "side_skill"),
])
def test_a_bad_crown_variant_is_refused_with_its_line(tmp_path, snippet, needle):
    text = ('name = "bad"\ngame = "crown"\nroot_seed = 1\nmatches = 2\n\n'
            f'[[variants]]\nname = "baseline"\n\n[[variants]]\nname = "broken"\n{snippet}\n')
    path = write(tmp_path / "bad.toml", text)
    with pytest.raises(ExperimentError) as err:
        load_experiment(path)
    message = str(err.value)
    assert message.startswith(f"{path}:11: ") and needle in message, message


@pytest.mark.parametrize("line", ["seats = 4", "precision = 0.05"])
def test_a_key_crown_does_not_read_is_refused(tmp_path, line):
    path = write(tmp_path / "bad.toml", 'name = "bad"\ngame = "crown"\nroot_seed = 1\n'
                 f'matches = 2\n{line}\n')
    with pytest.raises(ExperimentError) as err:
        load_experiment(path)
    assert str(err.value).startswith(f"{path}:5: {line.split()[0]}: "), str(err.value)


def test_a_hex_only_key_in_a_crown_experiment_is_refused(tmp_path):
    path = write(tmp_path / "bad.toml", 'name = "bad"\ngame = "crown"\nroot_seed = 1\n'
                 'matches = 2\nseats = 4\n')
    one_line_error(sim("sweep", path, "--out", tmp_path / "run"), f"{path}:5: seats")


def test_the_gate_and_plan_read_a_crown_runs_winner_sides(crown_run, tmp_path):
    """`sim report --against` on the same run (a copy: every pair alike) passes on
    the shares of side A, side B and draws; `sim plan` plans on those shares."""
    import shutil

    before = tmp_path / "before"
    shutil.copytree(crown_run, before)
    page = tmp_path / "gate.html"
    proc = sim("report", crown_run, "--against", before, "--out", page)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = page.read_text()
    assert "<h2>Regression gate</h2>" in text and "PASS identical" in text
    assert "conquest" not in text  # no hex victory type
    planned = sim("plan", crown_run, "--detect", "0.1")
    assert planned.returncode == 0, planned.stderr
    rows = [line for line in planned.stdout.splitlines() if "face8-booster" in line]
    assert {cell.strip() for line in rows for cell in line.split("┆")[1:2]} == \
        {"A", "B", "draw"}
