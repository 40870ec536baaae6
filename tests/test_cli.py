"""The `sim` command line: map drawing, scenario reports, benchmark output."""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import sys

import pytest

from sim.rules.tables import REPO_ROOT


def sim(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sim.cli", *args], capture_output=True,
                          text=True, cwd=REPO_ROOT, **kw)


def test_map_draws_svg_and_png(tmp_path):
    svg = tmp_path / "m.svg"
    proc = sim("map", "--seed", "3", "--out", str(svg))
    assert proc.returncode == 0, proc.stderr
    text = svg.read_text()
    assert text.startswith("<svg") and text.count("<polygon") > 271
    # a title, each seat's label at its capital, and the legend (seats, unit glyphs)
    assert ">seed 3, match 0: 4 seats, standard, opening position (tables " in text
    for s in range(4):
        assert re.search(rf'font-weight="bold"[^>]*>seat {s}</text>', text), s
        assert re.search(rf">seat {s} \(\w+\)</text>", text), s
    for name in ("settler", "spearman", "swordsman", "warrior", "bandit", "bandit camp"):
        assert f">{name}</text>" in text, name
    assert ">Se</text>" in text and ">Sp</text>" in text  # glyphs tell the S units apart
    assert "Territory and score" in proc.stdout
    png = tmp_path / "m.png"
    assert sim("map", "--seed", "3", "--out", str(png)).returncode == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # a short match's board (D6: radius 7, 169 tiles against 271)
    short = tmp_path / "short.svg"
    assert sim("map", "--seed", "3", "--length", "short", "--out", str(short)).returncode == 0
    hexes = short.read_text().count('stroke="#ffffff" stroke-width="1.0"')
    assert hexes == text.count('stroke="#ffffff" stroke-width="1.0"') - 271 + 169


def test_map_rejects_bad_arguments(tmp_path):
    proc = sim("map", "--out", str(tmp_path / "m.gif"))
    assert proc.returncode == 2 and ".svg or .png" in proc.stderr
    proc = sim("map", "--seats", "9")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    proc = sim("map", "--set", "score.nope=1")
    assert proc.returncode == 2 and "score.nope" in proc.stderr
    proc = sim("map", "--length", "medium")
    assert proc.returncode == 2 and "--length medium" in proc.stderr


def test_scenario_json_report_has_the_contract_keys():
    proc = sim("scenario", "experiments/scenarios/capital_fall.toml", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    for key in ("turn", "active_seat", "finished", "winner", "victory", "seats", "cities",
                "units", "commands", "events"):
        assert key in report
    seat = report["seats"][0]
    for key in ("seat", "alive", "gold", "science", "techs", "capital", "cities",
                "dominance_counter", "dominance_share", "score", "rank", "score_terms"):
        assert key in seat
    assert set(seat["score_terms"]) == {"region", "population", "cities", "gold", "monuments"}
    city = report["cities"][0]
    for key in ("id", "seat", "at", "pop", "hp", "hp_max", "capital", "revolt", "revolt_cause",
                "region", "bought", "buildings", "queue", "production", "food"):
        assert key in city
    fall = next(e for e in report["events"] if e["kind"] == "capital_fall")
    assert (fall["transferred"], fall["kept"], fall["new_capital"]) == ([1], [2], 2)


def test_bench_territory_prints_the_ratio_keys():
    proc = sim("bench", "territory", "--json", "--positions", "20")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert {"kernel_us", "reference_us", "ratio"} <= set(result)
    assert result["ratio"] > 1


def test_bench_ai_times_every_skill_level_against_skill0_in_one_run():
    """D11's levels: every seat at 0, 1 and 2, and seat 0 alone at 1 and 2, each with its
    cost ratio to skill 0 (a tiny run: the figures are the benchmark's)."""
    proc = sim("bench", "ai", "--json", "--matches", "2", "--search-matches", "1")
    assert proc.returncode == 0, proc.stderr
    cases = json.loads(proc.stdout)["cases"]
    assert list(cases) == ["every seat skill 0", "every seat skill 1", "every seat skill 2",
                           "seat 0 skill 1", "seat 0 skill 2"]
    assert cases["every seat skill 0"]["cost_ratio"] == 1
    assert [cases[k]["matches"] for k in cases] == [2, 2, 1, 2, 1]
    for row in cases.values():
        assert row["s_per_match"] > 0 and row["matches_per_s"] > 0
    # a search costs more than a lookahead, and a lookahead more than skill 0
    assert cases["every seat skill 2"]["cost_ratio"] > cases["every seat skill 1"]["cost_ratio"] > 1


def test_bench_sweep_times_fresh_and_started_workers_against_one():
    """Both efficiencies, the workers' start and the parent's memory, from one run (a
    small one: the figures themselves are the benchmark's, not this test's)."""
    proc = sim("bench", "sweep", "--json", "--matches", "40", "--jobs", "2", "--rounds", "2")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["matches"] == 80 and result["jobs"] == 2 and result["errors"] == 0
    for key in ("wall_s", "wall_s_started_workers", "single_worker_matches_per_s",
                "parallel_efficiency", "parallel_efficiency_one_worker_started",
                "parallel_efficiency_started_workers", "parent_rss_mb_before",
                "parent_peak_rss_mb_during"):
        assert result[key] > 0, key
    # a one-worker sweep before each fresh round, one after the last and one after
    # the started-worker sweep
    one = result["single_worker_wall_s_rounds"]
    assert len(one) == 2 + 2
    assert len(result["parallel_efficiency_rounds"]) == len(result["wall_s_rounds"]) == 2
    assert result["wall_s"] == pytest.approx(statistics.median(result["wall_s_rounds"]), abs=0.01)
    # each round's T1 is the mean of the one-worker sweeps around it
    for k, (wall, efficiency) in enumerate(zip(result["wall_s_rounds"],
                                               result["parallel_efficiency_rounds"],
                                               strict=True)):
        assert efficiency == pytest.approx((one[k] + one[k + 1]) / 2 / (2 * wall), abs=0.003)
    # the one worker's start counts in T1, so the reading with it is the larger
    assert result["parallel_efficiency"] >= result["parallel_efficiency_one_worker_started"]
    assert isinstance(result["worker_start_s"], float)


def test_warm_fills_the_cache_and_says_how_it_went():
    proc = sim("warm")
    assert proc.returncode == 0, proc.stderr
    last = proc.stdout.strip().splitlines()[-1]
    assert last.startswith("engine ") and (" compiled in " in last or
                                           " loaded from the cache in " in last)
    # once warm, a second call only loads
    again = sim("warm")
    assert "loaded from the cache" in again.stdout


def test_plan_refuses_a_folder_that_holds_no_run(tmp_path):
    proc = sim("plan", str(tmp_path / "nothing"), "--detect", "0.02")
    assert proc.returncode == 2
    assert "nothing" in proc.stderr and "Traceback" not in proc.stderr
    assert sim("plan", str(tmp_path), "--detect", "2").returncode == 2



@pytest.mark.nojit
@pytest.mark.parametrize(("args", "line"), [
    (("sweep", "experiments/demo.toml", "--backend", "foo"), "--backend foo: choose local or dask"),
    (("sensitivity", "experiments/sensitivity/small.toml", "--jobs", "0"), "--jobs must be >= 1"),
    (("tune", "experiments/tune/example.toml", "--scheduler", "x"),
     "--scheduler needs --backend dask"),
])
def test_every_sweeping_command_refuses_bad_run_options_in_one_line(args, line):
    done = sim(*args)
    assert done.returncode == 2 and done.stderr.strip() == line, done.stderr


def test_an_output_path_that_cannot_be_written_is_one_line(tmp_path):
    """--out naming a folder (or a place nothing can be written) is bad input: one line
    naming the path, exit 2, no traceback."""
    folder = tmp_path / "map.svg"
    folder.mkdir()
    proc = sim("map", "--out", str(folder))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == f"{folder}: cannot use this path (Is a directory)"
