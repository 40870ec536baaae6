"""Inputs that used to get past validation (issue 12, item 7): each is one line on
stderr, exit 2, before anything runs (no run folder is created)."""

from __future__ import annotations

import json
import shutil

import pytest

from sim.runner.experiments import load_experiment
from sim.runner.sweep import run_sweep
from tests.conftest import FIXTURE_TABLES
from tests.test_runs_support import experiment_text, one_line_error, sim, write


@pytest.mark.parametrize("case,needle", [
    ("seed", "root_seed: input should be less than 9223372036854775808"),
    ("long-name", "is 300 characters; at most 120"),
    ("path-name", "name: experiment name '../elsewhere': letters, digits, _ . - only"),
    ("utf8-experiment", "exp.toml: line 3: not UTF-8 text (byte 0xff at column 10)"),
    ("utf8-tables", "tables.toml: line 2: not UTF-8 text (byte 0xfe at column 1)"),
])
def test_bad_inputs_are_one_line_before_anything_runs(tmp_path, case, needle):
    tables = tmp_path / "tables.toml"
    shutil.copy(FIXTURE_TABLES, tables)
    text = experiment_text(tables="tables.toml")
    if case == "seed":
        text = text.replace("root_seed = 11", f"root_seed = {2**63}")
    elif case == "long-name":
        text = text.replace('name = "dominance-50"', f'name = "{"v" * 300}"')
    elif case == "path-name":  # the default run folder is runs/NAME
        text = text.replace('name = "runs"', 'name = "../elsewhere"', 1)
    elif case == "utf8-tables":
        tables.write_bytes(b"# tables\n\xfe\n" + FIXTURE_TABLES.read_bytes())
    path = write(tmp_path / "exp.toml", text)
    if case == "utf8-experiment":
        lines = path.read_bytes().split(b"\n")
        lines[2] = lines[2][:9] + b"\xff" + lines[2][9:]
        path.write_bytes(b"\n".join(lines))
    out = tmp_path / "run"
    one_line_error(sim("sweep", path, "--out", out, "--quiet"), needle)
    assert not out.exists()


def test_the_largest_root_seed_runs(tmp_path):
    """2**63 - 1 is a valid seed: it fits the Int64 seed column."""
    path = write(tmp_path / "exp.toml", experiment_text(matches=1, root_seed=2**63 - 1))
    result = run_sweep(load_experiment(path), tmp_path / "run", progress=False)
    assert (result["matches"], result["errors"]) == (2, 0)


def test_tables_check_and_match_name_invalid_utf8(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b"[match]\nseats = 4 # \xe9\n")
    one_line_error(sim("tables", "check", bad), "bad.toml: line 2: not UTF-8 text (byte 0xe9")
    one_line_error(sim("match", "--tables", bad), "not UTF-8 text")
    one_line_error(sim("match", "--seed", str(2**63)), "--seed and --match must be")


def test_replay_command_refuses_a_folder_that_is_not_a_run_and_notes_changed_tables(
        tmp_path):
    one_line_error(sim("replay-command", tmp_path, "baseline:0"), "not a sweep run folder")
    # a sensitivity's or tune's folder: the line points at the sweep inside it
    outer = tmp_path / "sens"
    (outer / "sweep").mkdir(parents=True)
    (outer / "sweep" / "provenance.json").write_text("{}")
    one_line_error(sim("report", outer), f"its sweeps: {outer / 'sweep'}")
    tables = tmp_path / "tables.toml"
    shutil.copy(FIXTURE_TABLES, tables)
    path = write(tmp_path / "exp.toml", experiment_text(matches=2, tables="tables.toml"))
    out = tmp_path / "run"
    run_sweep(load_experiment(path), out, progress=False)
    one_line_error(sim("replay-command", out, "baseline:7"), "no match 'baseline:7'")
    one_line_error(sim("replay-command", out, "baseline:7"), "baseline played matches 0–1")
    one_line_error(sim("replay-command", out, "base:1"), "its variants: baseline, dominance-50")
    same = sim("replay-command", out, "dominance-50:1")
    assert same.returncode == 0 and same.stderr == ""
    assert same.stdout.startswith("sim match --seed 11 --match 1 --tables ")
    # an index written with leading zeros is the same match
    assert sim("replay-command", out, "dominance-50:01").stdout == same.stdout
    prov = json.loads((out / "provenance.json").read_text())
    tables.write_text(tables.read_text().replace("share_pct = 75", "share_pct = 80", 1))
    changed = sim("replay-command", out, "baseline:1")
    assert changed.returncode == 1, changed.stderr
    assert changed.stdout.startswith("sim match --seed 11 --match 1 --tables ")
    assert "--set" not in changed.stdout
    baseline_hash = next(v["tables_hash"] for v in prov["variants"] if v["id"] == "baseline")
    assert f"the tables changed since the run (variant baseline had tables hash " \
           f"{baseline_hash}, now hash " in changed.stderr
    assert "will not replay the same match" in changed.stderr
    # the variant that sets share_pct itself still plays the tables of the run
    assert sim("replay-command", out, "dominance-50:1").returncode == 0
