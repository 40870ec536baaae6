"""`sim sensitivity` (issue 13): the design of low/high values, its experiment, the
paired effects, inert parameters, the report, resuming, and clear input errors."""

from __future__ import annotations

import json
import subprocess
import sys

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from sim.rules.tables import REPO_ROOT, load_tables
from sim.runner.experiments import load_experiment
from sim.runner.sensitivity import (
    BASELINE,
    SensitivityError,
    SensitivitySpec,
    design,
    group_of,
    load_sensitivity,
    moved,
    numeric_values,
    select,
    write_experiment,
)
from tests.conftest import FIXTURE_TABLES


def spec(**kw) -> SensitivitySpec:
    return SensitivitySpec(**{"name": "t", "root_seed": 1, "matches": 4,
                              "parameters": ["units.warrior.attack"], **kw})


def test_numeric_values_are_the_numeric_leaves_only():
    values = numeric_values({"a": {"b": 3, "c": True, "d": "x", "e": [1, 2], "f": 0.5}, "g": 7})
    assert values == {"a.b": 3, "a.f": 0.5, "g": 7}


def test_select_globs_all_and_exclude_keep_table_order():
    values = {"units.warrior.attack": 4, "units.archer.attack": 5, "units.archer.cost": 9,
              "score.w_region": 1}
    assert select(values, ["units.*.attack"], []) == ["units.warrior.attack",
                                                      "units.archer.attack"]
    assert select(values, ["all"], ["units.*"]) == ["score.w_region"]
    assert select(values, ["score.w_region", "units.archer.*"], ["*.cost"]) == \
        ["score.w_region", "units.archer.attack"]
    with pytest.raises(SensitivityError, match="matches no numeric table value"):
        select(values, ["units.*.atack"], [])
    with pytest.raises(SensitivityError, match=r"exclude: '\*\.cots' matches no numeric"):
        select(values, ["all"], ["*.cots"])


@pytest.mark.parametrize(("base", "up", "want"), [(10, True, 12), (10, False, 8), (3, True, 4),
                                                  (3, False, 2), (0, True, 1), (560, True, 672),
                                                  (0.5, False, 0.4)])
def test_moved_rounds_integers_and_moves_them_by_at_least_one(base, up, want):
    assert moved(base, 0.2, up) == pytest.approx(want)


def test_design_keeps_a_refused_side_at_the_base_and_skips_a_parameter_that_cannot_move():
    tables = load_tables(FIXTURE_TABLES)
    values = numeric_values(tables.data)
    d = design(spec(parameters=["units.warrior.attack", "score.gold_per_point"]),
               FIXTURE_TABLES, tables)
    warrior = next(p for p in d.parameters if p.key == "units.warrior.attack")
    assert warrior.low < warrior.base == values["units.warrior.attack"] < warrior.high
    assert (warrior.low_variant, warrior.high_variant) == ("units.warrior.attack-lo",
                                                          "units.warrior.attack-hi")
    # a percentage the schema keeps >= 0 moves up only: its low side is the baseline
    road = design(spec(parameters=["ai.research.science_road_pct"]), FIXTURE_TABLES, tables)
    p = road.parameters[0]
    assert (p.base, p.low, p.high, p.low_variant) == (0, 0, 1, BASELINE)


def test_the_match_setup_is_grouped_apart_from_the_balance_values():
    """The match's length, board size and game-speed and seat-count scales move many
    values at once; the design marks them so their effects rank apart."""
    for key in ("match.lengths.standard", "match.cost_scale_pct.short",
                "match.seat_dominance_scale_pct.2", "map.radius"):
        assert group_of(key) == "setup", key
    for key in ("techs.prosperity.cost", "dominance.counter_to_win", "map.node_share_pct",
                "units.warrior.attack"):
        assert group_of(key) == "balance", key
    tables = load_tables(FIXTURE_TABLES)
    d = design(spec(parameters=["map.radius", "techs.prosperity.cost"]), FIXTURE_TABLES,
               tables)
    assert {p.key: p.group for p in d.parameters} == {"map.radius": "setup",
                                                      "techs.prosperity.cost": "balance"}
    assert [p["group"] for p in d.to_json()["parameters"]] == ["setup", "balance"]


def test_a_parameter_both_of_whose_values_are_refused_is_skipped_with_the_reason(monkeypatch):
    import sim.runner.sensitivity as sensitivity

    monkeypatch.setattr(sensitivity, "overrides_at",
                        lambda base, overrides, seats, length: (None, "must be 7"))
    d = design(spec(), FIXTURE_TABLES, load_tables(FIXTURE_TABLES))
    assert d.parameters == ()
    assert d.skipped[0][0] == "units.warrior.attack" and "must be 7" in d.skipped[0][1]


def test_moved_values_are_checked_on_the_board_of_the_seats_the_sensitivity_plays():
    """A board too small for the tables' default 4 seats is a value a 2-seat
    sensitivity can play, and one that holds 4 seats may hold too little land for 6:
    each side is checked at the file's own seats and length (D1), so the first plays
    and the second is refused (the sweep's experiment would otherwise fail on it)."""
    tables = load_tables(FIXTURE_TABLES)

    def radius(seats: int, length: str, step: float):
        d = design(spec(parameters=["map.radius"], seats=seats, length=length, step=step),
                   FIXTURE_TABLES, tables)
        return d.parameters[0], d.one_sided

    two, refused = radius(2, "standard", 0.45)
    assert (two.low, two.low_variant, refused) == (5, "map.radius-lo", ())
    four, refused = radius(4, "standard", 0.45)
    assert four.low_variant == BASELINE and "no room for 4 starts" in refused[0][1]
    six, refused = radius(6, "short", 0.3)
    assert six.low_variant == BASELINE and "6 seats need" in refused[0][1]
    assert radius(4, "short", 0.3)[0].low == 6


ONE_LEVER = ("dominance.counter_to_win", "match.dominance_scale_pct.short")
UNREAD = "match.lengths.long"


def test_sides_that_play_the_same_matches_are_played_once(tmp_path):
    """The dominance counter (8 ± 2) and the short game's dominance scale (100 ± 20 %,
    so 8 × 0.8 and 8 × 1.2 round to 6 and 10) compile to the same matches: one lever,
    played once; the long game's length is never read by short matches: it plays as
    the baseline. The experiment holds only the variants that play."""
    d = design(spec(parameters=[*ONE_LEVER, UNREAD, "units.warrior.attack"], seats=4,
                    length="short"), FIXTURE_TABLES, load_tables(FIXTURE_TABLES))
    by_key = {p.key: p for p in d.parameters}
    first, second = sorted(ONE_LEVER, key=[p.key for p in d.parameters].index)
    assert by_key[second].same_as == first and by_key[first].same_as is None
    assert {d.plays[by_key[second].low_variant], d.plays[by_key[second].high_variant]} == {
        by_key[first].low_variant, by_key[first].high_variant}
    unread = by_key[UNREAD]
    assert d.plays[unread.low_variant] == d.plays[unread.high_variant] == BASELINE
    assert unread.same_as is None and by_key["units.warrior.attack"].same_as is None
    ids = [v.id for v in load_experiment(write_experiment(d, tmp_path)).variants]
    assert ids == [BASELINE, by_key[first].low_variant, by_key[first].high_variant,
                   "units.warrior.attack-lo", "units.warrior.attack-hi"]
    assert json.loads((tmp_path / "sensitivity.json").read_text())["plays"] == d.plays


def test_a_side_that_plays_as_another_plays_the_same_match():
    """What `plays` rests on: the tables of an aliased or unread side play, from the
    same streams, exactly the match of the variant it plays as."""
    from sim.engine.match import play_match

    base = load_tables(FIXTURE_TABLES)
    d = design(spec(parameters=[*ONE_LEVER, UNREAD], seats=4, length="short"),
               FIXTURE_TABLES, base)
    value = {f"{p.key}-{side}": (p.key, v) for p in d.parameters
             for side, v in (("lo", p.low), ("hi", p.high))}

    def played(variant: str):
        tables = base if variant == BASELINE else base.with_overrides(dict([value[variant]]))
        state, _board, log = play_match(tables, 11, 3, 4, "short")
        return state.tobytes(), log.tobytes()

    for name, ran in d.plays.items():
        assert played(name) == played(ran), name


def test_written_experiment_is_an_ordinary_experiment(tmp_path):
    tables = load_tables(FIXTURE_TABLES)
    d = design(spec(parameters=["units.warrior.attack", "dominance.counter_to_win"]),
               FIXTURE_TABLES, tables)
    path = write_experiment(d, tmp_path)
    experiment = load_experiment(path)
    ids = [v.id for v in experiment.variants]
    assert ids[0] == BASELINE and experiment.baseline == BASELINE
    assert set(ids[1:]) == {f"{k}-{s}" for k in ("units.warrior.attack",
                                                 "dominance.counter_to_win")
                            for s in ("lo", "hi")}
    hi = experiment.variant("dominance.counter_to_win-hi")
    assert hi.overrides == {"dominance.counter_to_win":
                            next(p.high for p in d.parameters
                                 if p.key == "dominance.counter_to_win")}
    assert json.loads((tmp_path / "sensitivity.json").read_text())["parameters"][0]["key"] == \
        "units.warrior.attack"
    # the same design writes the same bytes: a rerun resumes the same sweep
    before = path.read_bytes()
    write_experiment(d, tmp_path)
    assert path.read_bytes() == before


def test_a_base_set_plays_at_every_point_and_the_parameters_move_from_it(tmp_path):
    """`set` in a sensitivity file: the baseline and every moved variant carry the base
    overrides; a parameter the base sets moves from the set value, not the tables'."""
    path = tmp_path / "s.toml"
    path.write_text(f'name = "s"\nroot_seed = 1\nmatches = 4\ntables = "{FIXTURE_TABLES}"\n'
                    'parameters = ["units.warrior.attack", "buildings.monument.cost"]\n'
                    'set = { "buildings.monument.cost" = 100000 }\n')
    d = load_sensitivity(path)
    cost = next(p for p in d.parameters if p.key == "buildings.monument.cost")
    assert (cost.base, cost.low, cost.high) == (100000, 80000, 120000)
    experiment = load_experiment(write_experiment(d, tmp_path / "out"))
    assert experiment.variant(BASELINE).overrides == {"buildings.monument.cost": 100000}
    assert experiment.variant("units.warrior.attack-hi").overrides == {
        "buildings.monument.cost": 100000,
        "units.warrior.attack": next(p.high for p in d.parameters
                                     if p.key == "units.warrior.attack")}
    assert experiment.variant("buildings.monument.cost-lo").overrides == {
        "buildings.monument.cost": 80000}
    path.write_text(path.read_text().replace("monument.cost\" = 100000",
                                             "monument.cots\" = 100000"))
    with pytest.raises(SensitivityError, match=r"s\.toml: set: buildings\.monument\.cots: "
                                               r"unknown key"):
        load_sensitivity(path)
    # the base's board too is checked at the seats the sensitivity plays
    small = tmp_path / "small.toml"
    small.write_text(f'name = "s"\nroot_seed = 1\nmatches = 4\ntables = "{FIXTURE_TABLES}"\n'
                     'parameters = ["units.warrior.attack"]\nseats = 2\n'
                     'set = { "map.radius" = 5 }\n')
    assert load_sensitivity(small).parameters
    small.write_text(small.read_text().replace("seats = 2", "seats = 4"))
    with pytest.raises(SensitivityError, match=r"small\.toml: set: map\.radius: no room for 4"):
        load_sensitivity(small)


def test_bad_files_name_file_line_and_key(tmp_path):
    bad = tmp_path / "s.toml"
    bad.write_text('name = "s"\nroot_seed = 1\nmatches = 10\nparameters = ["all"]\nstepp = 1\n')
    with pytest.raises(SensitivityError, match=r"s\.toml:5: stepp: unknown key"):
        load_sensitivity(bad)
    bad.write_text('name = "s"\nroot_seed = 1\nmatches = 10\nparameters = ["units.*.atak"]\n'
                   f'tables = "{FIXTURE_TABLES}"\n')
    with pytest.raises(SensitivityError, match=r"units\.\*\.atak.*matches no numeric"):
        load_sensitivity(bad)
    # the file's own line, before any folder is made (not a traceback, nor a line of the
    # experiment file a sensitivity writes)
    good = f'name = "s"\nroot_seed = 1\nmatches = 10\nparameters = ["all"]\n' \
        f'tables = "{FIXTURE_TABLES}"\n'
    bad.write_text(good + 'length = "medium"\n')
    with pytest.raises(SensitivityError, match=r"s\.toml:6: length: unknown length 'medium'"):
        load_sensitivity(bad)
    bad.write_text(good + 'personalities = ["balanced", "nosuch"]\n')
    with pytest.raises(SensitivityError,
                       match=r"s\.toml:6: personalities\.1: unknown personality 'nosuch'"):
        load_sensitivity(bad)


def sim(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sim.cli", *args], capture_output=True,
                          text=True, cwd=REPO_ROOT)


def test_small_sensitivity_end_to_end_finds_the_planted_inert_lever_and_resumes(tmp_path):
    """Three parameters on 24 matches: the warrior's attack changes matches, a
    personality no seat plays is inert, and a second run plays nothing again
    (no chunk rewritten) and re-analyses to the same table."""
    file = tmp_path / "s.toml"
    inert_key = "ai.personalities.hegemon.war.war_turn_pct"
    file.write_text(f'''name = "s"
tables = "{FIXTURE_TABLES}"
root_seed = 5
matches = 24
seats = 4
length = "short"
personalities = ["balanced", "conqueror", "scholar", "merchant"]
chunk_size = 12
parameters = ["dominance.counter_to_win", "{inert_key}", "units.warrior.attack",
              "match.dominance_scale_pct.short", "{UNREAD}"]
''')
    out = tmp_path / "run"
    proc = sim("sensitivity", str(file), "--out", str(out), "--jobs", "2", "--quiet")
    assert proc.returncode == 0, proc.stderr
    # a resolution note is a line in words, not a Python warning with its source line
    assert "Warning" not in proc.stderr and "tests = " not in proc.stderr, proc.stderr
    table = pl.read_parquet(out / "sensitivity.parquet")
    assert set(table.get_column("parameter")) == {"dominance.counter_to_win", inert_key,
                                                  "units.warrior.attack", *ONE_LEVER, UNREAD}
    inert = table.filter(pl.col("inert")).get_column("parameter").unique().to_list()
    assert inert_key in inert and UNREAD in inert and "units.warrior.attack" not in inert
    # one lever under two keys: the same paired tests, one rank, one of them names the other
    lever = [table.filter(pl.col("parameter") == k).sort("metric") for k in ONE_LEVER]
    same = ["low_value", "high_value", "effect", "lo", "hi", "p_value", "n_pairs", "rank"]
    assert_frame_equal(lever[0].select(same), lever[1].select(same))
    named = {k: set(f.get_column("same_as").drop_nulls()) for k, f in zip(ONE_LEVER, lever,
                                                                         strict=True)}
    holder = next(k for k, v in named.items() if v)
    assert named[holder] == set(ONE_LEVER) - {holder} and not named[min(named.keys() - {holder})]
    # the match setup ranks apart from the balance values, in the same order as `rank`
    groups = dict(table.select("parameter", "group").unique().iter_rows())
    assert groups == {"dominance.counter_to_win": "balance", inert_key: "balance",
                      "units.warrior.attack": "balance", ONE_LEVER[1]: "setup",
                      UNREAD: "setup"}
    for (_metric, _group), rows in table.group_by("metric", "group"):
        places = sorted(set(rows.get_column("group_rank")))
        assert places == list(range(1, len(places) + 1))
    # the sweep played the baseline and the two other parameters' sides only
    variants = {p.name.split("=", 1)[1] for p in (out / "sweep" / "matches").iterdir()}
    assert len(variants) == 1 + 2 * 3, sorted(variants)
    assert inert_key in proc.stdout.split("inert (")[1]
    assert "4 moved values play the same matches as another variant" in proc.stdout
    assert "one lever with an earlier key: 1 " in proc.stdout
    # every effect is the high value's metric minus the low value's, on 24 pairs
    assert (table.get_column("effect") - (table.get_column("high_value") -
                                          table.get_column("low_value"))).abs().max() < 1e-12
    dom = table.filter((pl.col("parameter") == "dominance.counter_to_win") &
                       (pl.col("metric") == "victory=dominance"))
    assert dom.height == 1 and dom.item(0, "n_pairs") == 24
    html = (out / "sensitivity.html").read_text()
    assert "What moves victory=dominance: balance values" in html and inert_key in html
    # its two setup keys are inert on these 24 matches: said, not drawn
    setup = html.split("<h2>victory=dominance</h2>")[1].split("<h2>")[0] \
        .split("<h3>match setup</h3>")[1]
    assert setup.startswith("<p class='muted'>None moved this outcome.</p>")
    shared = html.split("Keys that play the same matches")[1]
    assert "7 variants played" in shared and UNREAD in shared.split("Never read")[1]
    written = {p: p.stat().st_mtime_ns for p in (out / "sweep").rglob("*.parquet")}
    assert written
    again = sim("sensitivity", str(file), "--out", str(out), "--jobs", "1", "--quiet")
    assert again.returncode == 0, again.stderr
    # the same rows and verdicts (means may differ in the last bits: polars sums in parallel)
    assert_frame_equal(pl.read_parquet(out / "sensitivity.parquet"), table, check_exact=False)
    assert written == {p: p.stat().st_mtime_ns for p in (out / "sweep").rglob("*.parquet")}
    # another step into the same folder is refused before the folder's design is touched
    # (it was rewritten, and a later analysis read the played matches at the new values)
    design = {name: (out / name).read_bytes()
              for name in ("sensitivity.json", "sensitivity-experiment.toml")}
    file.write_text(file.read_text() + "step = 0.3\n")
    other = sim("sensitivity", str(file), "--out", str(out), "--jobs", "1", "--quiet")
    assert other.returncode == 2 and "another design" in other.stderr, other.stderr
    assert "Traceback" not in other.stderr
    assert design == {name: (out / name).read_bytes() for name in design}


def test_a_side_refused_by_the_tables_is_told_not_hidden(tmp_path):
    """map.radius 9 at step 0.9: the low side (1) is below the tables' bound, so it plays
    the base value; the design says so (the command prints it) instead of a silent
    baseline on that side."""
    path = tmp_path / "s.toml"
    path.write_text(f'name = "s"\nroot_seed = 1\nmatches = 4\ntables = "{FIXTURE_TABLES}"\n'
                    'parameters = ["map.radius", "units.warrior.attack"]\nstep = 0.9\n')
    d = load_sensitivity(path)
    radius = next(p for p in d.parameters if p.key == "map.radius")
    assert radius.low == radius.base and radius.high > radius.base
    assert [key for key, _why in d.one_sided] == ["map.radius"]
    assert "greater than or equal to 3" in d.one_sided[0][1]


def test_the_page_ranks_balance_values_and_the_match_setup_apart():
    """A setup key that moves the outcome gets its own tornado and table; the balance
    values' table numbers them from 1 and keeps the rank among all keys beside it."""
    from sim.report.sensitivity import build_sensitivity_report

    # (key, group, rank, group_rank, slope, inert): a setup key these matches never read
    # is left out; an inert one (no winner, victory or end turn changed) that still moved
    # this outcome is shown
    rows = [("match.lengths.standard", "setup", 1, 1, 0.11, False),
            ("map.radius", "setup", 2, 2, 0.09, False),
            ("techs.prosperity.cost", "balance", 3, 1, -0.04, False),
            ("match.seat_cost_scale_pct.4", "setup", 4, 3, 0.02, True),
            ("units.warrior.attack", "balance", 5, 2, 0.01, False),
            ("match.lengths.long", "setup", 6, 4, 0.0, True)]
    table = pl.DataFrame(
        [{"parameter": k, "group": g, "rank": r, "group_rank": gr, "metric": "victory=science",
          "same_as": None, "base": 10.0, "low": 8.0, "high": 12.0, "low_value": 0.3,
          "high_value": 0.3 + e * 4, "effect": e * 4, "lo": e * 3, "hi": e * 5,
          "effect_per_10pct": e, "p_adjusted": 0.001, "changed": e != 0, "inert": inert}
         for k, g, r, gr, e, inert in rows])
    design = {"name": "t", "step": 0.2, "parameters": [], "setup_keys": ["match.*", "map.radius"]}
    page = build_sensitivity_report(table, design)
    assert "<code>match.*</code>, <code>map.radius</code>: its length" in page
    science = page.split("<h2>victory=science</h2>")[1].split("<h2>")[0]
    balance, setup = science.split("<h3>balance values</h3>")[1].split("<h3>match setup</h3>")
    assert "What moves victory=science: balance values" in balance
    assert "techs.prosperity.cost" in balance and "map.radius" not in balance
    assert "rank of all keys" in balance
    assert "What moves victory=science: match setup" in setup
    assert "map.radius" in setup and "techs.prosperity.cost" not in setup
    assert "match.seat_cost_scale_pct.4" in setup and "match.lengths.long" not in setup


def test_a_lever_across_the_groups_ranks_in_each_by_its_own_slope():
    """The dominance counter is one lever with the game speed's dominance scale (the same
    matches at both sides) but, moved by another step, has its own slope: among all keys
    the lever takes one place, among the balance values the counter takes its own."""
    from sim.analysis.sensitivity import rank_effects

    slopes = {"match.dominance_scale_pct.standard": -0.25, "units.warrior.attack": -0.22,
              "dominance.counter_to_win": -0.20, "buildings.walls.cost": 0.0}
    tests = pl.DataFrame([{"parameter": k, "metric": "victory=dominance", "effect": 4 * v,
                           "effect_per_10pct": v, "changed": v != 0}
                          for k, v in slopes.items()])
    same_as = {"dominance.counter_to_win": "match.dominance_scale_pct.standard"}
    group = {k: "setup" if k.startswith("match.") else "balance" for k in slopes}
    ranked = rank_effects(tests, same_as, group)
    place = {r["parameter"]: (r["rank"], r["group_rank"]) for r in ranked.iter_rows(named=True)}
    assert place == {"match.dominance_scale_pct.standard": (1, 1),
                     "dominance.counter_to_win": (1, 2), "units.warrior.attack": (2, 1),
                     "buildings.walls.cost": (3, 3)}


def test_the_command_prints_a_lever_once_with_its_other_keys(capsys):
    """Two keys of one lever (the same matches at both sides) are one of the three
    entries, the second named after the first; a balance key that is one lever with a
    setup key still stands among the balance values."""
    from sim.cli.sensitivity import _print_sensitivity

    rows = [("match.radius_scale_pct.standard", "setup", None, 1, 0.14),
            ("map.radius", "setup", "match.radius_scale_pct.standard", 2, 0.12),
            ("match.lengths.standard", "setup", None, 3, 0.11),
            ("match.dominance_scale_pct.standard", "setup", None, 4, 0.05),
            ("match.cost_scale_pct.standard", "setup", None, 5, -0.04),
            ("dominance.counter_to_win", "balance", "match.dominance_scale_pct.standard", 1,
             0.04), ("techs.prosperity.cost", "balance", None, 2, -0.03)]
    table = pl.DataFrame(
        [{"parameter": k, "group": g, "same_as": a, "group_rank": gr, "rank": 0,
          "metric": "victory=science", "effect": e * 4, "effect_per_10pct": e,
          "changed": True, "inert": False} for k, g, a, gr, e in rows])
    _print_sensitivity(table)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == ("victory=science per +10 %: dominance.counter_to_win +0.040*, "
                        "techs.prosperity.cost -0.030*")
    assert lines[1] == ("  match setup: match.radius_scale_pct.standard +0.140* (= map.radius), "
                        "match.lengths.standard +0.110*, "
                        "match.dominance_scale_pct.standard +0.050*")


def test_a_value_that_moves_only_the_gold_term_is_not_inert():
    """Issue 44: the winner, victory and end turn of every match alike at both sides,
    but the standing seats' gold shares moved: the parameter has an effect, so it is
    not inert; a parameter whose sides are alike in everything is."""
    from sim.analysis.sensitivity import effects
    from tests.test_analysis import frame, matches_of

    n = 40
    victories = ["science", "conquest"] * (n // 2)
    sides = ("gold.lo", "gold.hi", "same.lo", "same.hi")
    matches = pl.concat([matches_of(v, victories) for v in sides])
    seats = frame("seats", [
        {"match_id": f"{v}:{i}", "match_index": i, "seat": s, "winner": s == 0,
         "alive": True, "score": 100, "variant": v,
         "gold_points": (30 if v == "gold.hi" else 10) + s + i % 3}
        for v in sides for i in range(n) for s in range(2)])
    design_ = {"parameters": [
        {"key": k, "base": 3.0, "low": 2.0, "high": 4.0, "low_variant": f"{k}.lo",
         "high_variant": f"{k}.hi"} for k in ("gold", "same")]}
    table = effects(design_, matches, seats, frame("events", []))
    inert = dict(table.select("parameter", "inert").unique().iter_rows())
    assert inert == {"gold": False, "same": True}
    gold = table.filter((pl.col("parameter") == "gold")
                        & (pl.col("metric") == "standing_gold_share")).row(0, named=True)
    assert gold["effect"] == pytest.approx(0.2) and gold["changed"]
