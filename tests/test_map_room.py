"""D1 and issue 10 item 4: tables whose map cannot hold the seats' starts are refused
before any match runs, by `sim tables check` and by `sim sweep`, in one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import FIXTURE_TABLES


def _sim(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sim.cli", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


def test_tables_check_refuses_a_map_of_water_in_one_line():
    proc = _sim("tables", "check", str(FIXTURE_TABLES),
                "--set", "map.terrain_weights.water=1000000")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "map.terrain_weights: too little passable land" in lines[0]
    assert "Traceback" not in proc.stderr


def test_tables_check_refuses_a_board_too_small_for_the_starts():
    proc = _sim("tables", "check", str(FIXTURE_TABLES), "--set", "map.radius=5")
    assert proc.returncode == 2
    assert "map.radius: no room for 4 starts 4 steps apart" in proc.stderr
    assert "Traceback" not in proc.stderr


def _small_board_experiment(folder, seats: int, radius: int, baseline: bool) -> Path:
    """x.toml: a variant `small` on board `radius` at `seats` (and a baseline)."""
    experiment = folder / "x.toml"
    experiment.write_text(f'''name = "small-board"
tables = "{FIXTURE_TABLES}"
root_seed = 1
matches = 4
seats = {seats}
chunk_size = 2
{'[[variants]]' + chr(10) + 'name = "baseline"' if baseline else ''}

[[variants]]
name = "small"
set = {{ "map.radius" = {radius} }}
''')
    return experiment


def test_a_sweep_whose_variant_cannot_hold_its_seats_exits_2_before_any_match(tmp_path):
    experiment = _small_board_experiment(tmp_path, seats=6, radius=6, baseline=True)
    out = tmp_path / "run"
    proc = _sim("sweep", str(experiment), "--out", str(out), "--jobs", "1", "--quiet")
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "variant small: map." in lines[0] and "6 seats" in lines[0]
    assert "x.toml" in lines[0] and "Traceback" not in proc.stderr
    assert not (out / "matches").exists()


def test_a_board_too_small_for_the_tables_seats_loads_for_a_match_of_fewer(tmp_path):
    """The board is checked at the seats a match is played with, not at the tables'
    default 4: radius 5 holds 2 starts 4 steps apart, so a 2-seat experiment variant
    and `sim map --seats 2` on it are fine, while 4 seats there are refused."""
    from sim.runner.experiments import load_experiment

    experiment = _small_board_experiment(tmp_path, seats=2, radius=5, baseline=False)
    (variant,) = load_experiment(experiment).variants
    assert variant.tables.model.map.radius == 5
    two = _sim("map", "--seats", "2", "--tables", str(FIXTURE_TABLES), "--set", "map.radius=5")
    assert two.returncode == 0, two.stderr
    four = _sim("map", "--tables", str(FIXTURE_TABLES), "--set", "map.radius=5")
    assert four.returncode == 2 and "no room for 4 starts" in four.stderr, four.stderr
