"""`sim tune` (issue 13): the distance to the bands on known values, the paired
before/after table, clear errors for bad tune files, a tiny tune end to end, and
resuming: a tune extended, stopped mid-trial (in-process and by a real SIGTERM)
and rerun ends exactly where an uninterrupted one does."""

from __future__ import annotations

import json
import math
import signal
import subprocess
import sys
import tomllib
from pathlib import Path

import optuna
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from sim.analysis.stats import mcnemar_exact, paired_share_interval, wilson
from sim.analysis.tune import (
    band_gap,
    confirm_table,
    distance,
    outcome_values,
    scorer,
    with_best_so_far,
)
from sim.report.tune import write_tune_outputs
from sim.rules.tables import REPO_ROOT
from sim.runner import tune as tune_runner
from sim.runner.experiments import ExperimentError
from sim.runner.sweep import SweepInterrupted
from sim.runner.tune import (
    TRIALS_DIR,
    TuneError,
    load_tune,
    run_tune,
    sampler_seed,
    study_storage,
)
from tests.conftest import FIXTURE_TABLES

TINY = FIXTURE_TABLES.parent / "tune-tiny.toml"
KEYS = ("techs.prosperity.cost", "dominance.counter_to_win")


def sim(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sim.cli", *args], capture_output=True,
                          text=True, cwd=REPO_ROOT)


def tiny_copy(folder: Path, **changes: object) -> Path:
    """The tiny tune file with some top-level values changed (tables made absolute)."""
    text = TINY.read_text().replace('tables = "tables.toml"', f'tables = "{FIXTURE_TABLES}"')
    for key, value in changes.items():
        lines = text.splitlines()
        at = next(i for i, line in enumerate(lines) if line.startswith(f"{key} ="))
        lines[at] = f"{key} = {json.dumps(value)}"
        text = "\n".join(lines) + "\n"
    path = folder / f"tune-{len(list(folder.glob('tune-*.toml')))}.toml"
    path.write_text(text)
    return path


# ------------------------------------------------------------------ the score


def test_band_gap_counts_shares_in_share_units_and_turns_per_hundred():
    assert band_gap("conquest", 0.25, (0.20, 0.30)) == 0.0
    assert band_gap("conquest", 0.20, (0.20, 0.30)) == 0.0      # the edges are inside
    assert band_gap("science", 0.35, (0.20, 0.30)) == pytest.approx(0.05)
    assert band_gap("dominance", 0.05, (0.15, 0.25)) == pytest.approx(0.10)
    assert band_gap("median_end_turn", 60, (70, 95)) == pytest.approx(0.10)
    assert band_gap("median_end_turn", 100, (70, 95)) == pytest.approx(0.05)


def test_distance_sums_the_banded_outcomes_only_and_needs_every_one():
    bands = {"conquest": (0.2, 0.3), "science": (0.2, 0.3), "median_end_turn": (70, 95)}
    values = {"conquest": 0.1, "science": 0.25, "dominance": 0.9, "turn_limit": 0.0,
              "median_end_turn": 100.0}
    # conquest 0.10 below, science inside, 5 turns past the band; dominance has no band
    assert distance(values, bands) == pytest.approx(0.10 + 0.0 + 0.05)
    assert distance(values, {"science": (0.2, 0.3)}) == 0.0
    assert distance({**values, "median_end_turn": None}, bands) is None


def matches_frame(rows: list[tuple[str, int, str | None, int]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema={"variant": pl.Utf8, "match_index": pl.Int64,
                                      "victory": pl.Utf8, "end_turn": pl.Int64}, orient="row")


def test_outcome_values_are_shares_of_finished_matches_and_their_median_end_turn():
    frame = matches_frame([("a", 0, "conquest", 50), ("a", 1, "science", 80),
                           ("a", 2, "science", 90), ("a", 3, None, 100),
                           ("b", 0, "dominance", 10)])
    values = outcome_values(frame, "a")
    assert values == {"matches": 3.0, "conquest": 1 / 3, "science": 2 / 3, "dominance": 0.0,
                      "turn_limit": 0.0, "median_end_turn": 80.0}
    assert outcome_values(frame.filter(pl.col("victory").is_null()))["conquest"] is None


def test_confirm_table_pairs_before_and_after_on_the_same_matches():
    before = ["conquest"] * 6 + ["science"] * 4
    after = ["conquest"] * 3 + ["science"] * 7           # 3 matches moved to science
    rows = [("baseline", i, v, 60 + i) for i, v in enumerate(before)] + \
        [("tuned", i, v, 80 + i) for i, v in enumerate(after)]
    bands = {"median_end_turn": (70, 95), "conquest": (0.2, 0.4)}
    table = confirm_table(matches_frame(rows), bands, "baseline", "tuned")
    assert table.get_column("outcome").to_list() == ["conquest", "median_end_turn"]
    c = table.row(0, named=True)
    assert (c["before"], c["after"]) == (0.6, 0.3)
    assert (c["before_lo"], c["before_hi"]) == pytest.approx(wilson(6, 10))
    assert (c["before_in_band"], c["after_in_band"]) == (False, True)
    assert c["after_interval_in_band"] is False                  # 10 matches: wide interval
    diff, lo, hi = paired_share_interval(3, 0, 3, 4)
    assert (c["difference"], c["difference_lo"], c["difference_hi"]) == \
        pytest.approx((diff, lo, hi))
    assert c["p_value"] == pytest.approx(mcnemar_exact(0, 3)) and c["n_pairs"] == 10
    m = table.row(1, named=True)
    assert (m["before"], m["after"], m["difference"]) == (64.5, 84.5, 20.0)
    assert (m["before_in_band"], m["after_in_band"]) == (False, True)
    assert m["before_lo"] <= 64.5 <= m["before_hi"] and m["difference_lo"] is None


def test_the_eta_leaves_out_the_first_trial_once_another_is_timed():
    from sim.runner.tune import _eta

    assert _eta([], 100) == "–"
    # the first trial waited for the workers' start: an upper bound until a second
    assert _eta([(3.0, 100)], 1000) == "at most 0:00:30"
    assert _eta([(3.0, 100), (1.0, 100), (1.2, 100)], 1000) == "0:00:11"


def test_best_so_far_is_the_running_minimum_over_scored_trials():
    history = pl.DataFrame({"trial": [3, 1, 2, 4], "distance": [0.1, None, 0.3, 0.2]})
    assert with_best_so_far(history).get_column("best_so_far").to_list() == \
        [None, 0.3, 0.1, 0.1]


def test_each_trial_has_its_own_sampler_seed():
    seeds = {sampler_seed(7, k) for k in range(1, 50)}
    assert len(seeds) == 49 and all(0 <= s < 2**32 for s in seeds)
    assert sampler_seed(7, 3) == sampler_seed(7, 3) != sampler_seed(8, 3)


# ------------------------------------------------------------------ bad files

GOOD = f'''name = "t"
tables = "{FIXTURE_TABLES}"
root_seed = 1
matches = 4
trials = 2

[bands]
science = [0.1, 0.5]

[keys]
"techs.prosperity.cost" = [25, 90]
'''


@pytest.mark.parametrize(("old", "new", "line", "message"), [
    ("trials = 2", "trails = 2", 5, r"trails: unknown key"),
    ("trials = 2", "", None, r"trials: field required"),
    ("science = [0.1, 0.5]", "sience = [0.1, 0.5]", 8, r"bands\.sience: no such outcome"),
    ("science = [0.1, 0.5]", "science = [0.5, 0.1]", 8, r"bands\.science: .*need low <= high"),
    ("science = [0.1, 0.5]", "science = [10, 50]", 8, r"within \[0, 1\]"),
    ("science = [0.1, 0.5]", "science = [0.1]", 8, r"bands\.science: list should have at least"),
    ('"techs.prosperity.cost" = [25, 90]', '"techs.prosperity.cots" = [25, 90]', 11,
     r"not a numeric value of the tables \(did you mean 'techs\.prosperity\.cost'\?\)"),
    ('"techs.prosperity.cost" = [25, 90]', '"techs.prosperity.cost" = [25.5, 90]', 11,
     r"integer table value \(base 45\).*integer bounds"),
    ('"techs.prosperity.cost" = [25, 90]', '"techs.prosperity.cost" = [90, 25]', 11,
     r"need low < high"),
    ('"techs.prosperity.cost" = [25, 90]', '"techs.prosperity.cost" = [-5, 90]', 11,
     r"-5: the tables refuse it"),
    ("trials = 2", 'trials = 2\nsampler = "random"', 6, r"unknown sampler 'random'"),
    ("trials = 2", 'trials = 2\nsampler = "cmaes"', 6, r"CMA-ES needs at least 2 keys"),
    ("trials = 2", 'trials = 2\nlength = "epic"', 6, r"unknown length 'epic'"),
])
def test_a_bad_tune_file_names_file_line_key_and_reason(tmp_path, old, new, line, message):
    path = tmp_path / "t.toml"
    assert old in GOOD
    path.write_text(GOOD.replace(old, new))
    with pytest.raises(TuneError, match=message) as info:
        load_tune(path)
    where = f"{path}:{line}: " if line else f"{path}: "
    assert str(info.value).startswith(where), str(info.value)


def test_every_bad_key_of_a_tune_file_is_a_line_of_its_own(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(GOOD.replace("trials = 2", "trails = 2").replace("matches = 4",
                                                                     "matches = -4"))
    with pytest.raises(TuneError) as exc:
        load_tune(path)
    lines = str(exc.value).splitlines()
    # the misspelling first (it is also the missing "trials"), then the bad matches
    assert lines[0].endswith("trails: unknown key") and len(lines) == 3
    assert any(": matches: " in line for line in lines)


def test_the_good_file_loads_with_integer_keys_and_float_bands(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(GOOD.replace("[bands]", "[bands]\nmedian_end_turn = [30, 50]"))
    tune = load_tune(path)
    (key,) = tune.keys
    assert (key.name, key.low, key.high, key.integer, key.base) == \
        ("techs.prosperity.cost", 25, 90, True, 45)
    assert tune.bands == {"median_end_turn": (30.0, 50.0), "science": (0.1, 0.5)}
    assert tune.confirm_seed != tune.spec.root_seed and 0 <= tune.confirm_seed < 2**63


def test_a_bound_is_checked_on_the_board_of_the_seats_the_tune_plays(tmp_path):
    """A radius too small for the tables' default 4 seats bounds a 2-seat tune, and is
    refused for a 4-seat one (D1), naming why."""
    path = tmp_path / "t.toml"
    board = GOOD.replace('"techs.prosperity.cost" = [25, 90]', '"map.radius" = [5, 9]')
    path.write_text(board.replace("trials = 2", "trials = 2\nseats = 2"))
    assert load_tune(path).keys[0].low == 5
    path.write_text(board.replace("trials = 2", "trials = 2\nseats = 4"))
    with pytest.raises(TuneError, match=r"map\.radius: 5: the tables refuse it: map\.radius: "
                                        r"no room for 4 starts"):
        load_tune(path)


def test_the_cli_prints_a_bad_file_without_a_traceback_and_exits_2(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(GOOD.replace("trials = 2", "trials = 0"))
    proc = sim("tune", str(path), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert f"{path}:5: trials: input should be greater than or equal to 1" in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "out").exists()


def test_the_example_file_is_valid():
    tune = load_tune(REPO_ROOT / "experiments" / "tune" / "example.toml")
    assert [k.name for k in tune.keys] == list(KEYS)
    assert set(tune.bands) == {"conquest", "science", "dominance", "turn_limit",
                               "median_end_turn"}


# ------------------------------------------------------------------ end to end


def history(folder: Path) -> pl.DataFrame:
    return pl.read_parquet(folder / "tune.parquet").drop("seconds")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """The tiny tune, uninterrupted, through the CLI: the reference of the resumes."""
    out = tmp_path_factory.mktemp("tiny") / "run"
    return out, sim("tune", str(TINY), "--out", str(out), "--jobs", "1")


def test_a_tiny_tune_end_to_end(tiny):
    out, proc = tiny
    result = json.loads((out / "tune.json").read_text())
    assert proc.returncode == (0 if result["inside"] else 4), proc.stderr
    assert "Traceback" not in proc.stderr
    # one progress line per trial, with its distance, the best so far and an ETA
    lines = [x for x in proc.stderr.splitlines() if x.startswith("trial ")]
    assert [x.split(":")[0] for x in lines] == [f"trial {k} of 4" for k in (1, 2, 3, 4)]
    assert all("distance" in x and "best" in x and "ETA" in x for x in lines)
    h = pl.read_parquet(out / "tune.parquet")
    assert h.get_column("trial").to_list() == [1, 2, 3, 4]
    assert h.schema["techs.prosperity.cost"] == pl.Int64
    assert h.get_column("techs.prosperity.cost").is_between(25, 400).all()
    assert h.get_column("dominance.counter_to_win").is_between(3, 8).all()
    tune = load_tune(TINY)
    for row in h.iter_rows(named=True):
        assert row["distance"] == pytest.approx(distance(row, tune.bands))
        assert row["matches"] == 8
    assert h.get_column("best_so_far").to_list() == \
        h.get_column("distance").cum_min().to_list()
    # every trial is an ordinary sweep of its proposal on the same seeded matches
    seeds = None
    for row in h.iter_rows(named=True):
        sweep = out / TRIALS_DIR / f"{row['trial']:04d}" / "sweep"
        prov = json.loads((sweep / "provenance.json").read_text())
        assert prov["variants"][0]["overrides"] == {k: row[k] for k in KEYS}
        m = pl.read_parquet(sweep / "matches" / "**" / "*.parquet").sort("match_index")
        these = m.select("match_index", "seed").rows()
        assert seeds is None or these == seeds
        seeds = these
    # the best trial (smallest distance, earliest on a tie) is the tuned file
    best = h.sort("distance", "trial").row(0, named=True)
    tuned = tomllib.loads((out / "tuned.toml").read_text())
    assert tuned == {k: best[k] for k in KEYS} == result["best"]["params"]
    assert result["best"]["trial"] == best["trial"]
    # the confirmation: baseline and tuned on the same fresh matches
    cm = pl.read_parquet(out / "confirm" / "sweep" / "matches" / "**" / "*.parquet",
                         hive_partitioning=True)
    assert cm.group_by("variant").len().sort("variant").rows() == [("baseline", 8),
                                                                   ("tuned", 8)]
    by = {v: part.sort("match_index").get_column("seed").to_list()
          for (v,), part in cm.group_by("variant")}
    assert by["baseline"] == by["tuned"] and set(by["tuned"]).isdisjoint(s for _, s in seeds)
    science = next(r for r in result["confirm"]["table"] if r["outcome"] == "science")
    tuned_rows = cm.filter(pl.col("variant") == "tuned")
    assert science["after"] == pytest.approx((tuned_rows.get_column("victory") ==
                                              "science").mean())
    assert result["inside"] == all(r["after_in_band"] for r in result["confirm"]["table"])
    page = (out / "tune.html").read_text()
    assert "Before and after" in page and "<svg" in page and "median_end_turn" in page
    assert (out / "study.db").is_file()


def test_a_tune_extended_from_two_to_four_trials_continues_the_same_study(tiny, tmp_path):
    reference, _ = tiny
    out = tmp_path / "run"
    first = sim("tune", str(tiny_copy(tmp_path, trials=2)), "--out", str(out), "--jobs", "1")
    assert first.returncode in (0, 4), first.stderr
    assert history(out).height == 2
    kept = {p: p.stat().st_mtime_ns for p in (out / TRIALS_DIR).rglob("*.parquet")}
    again = sim("tune", str(tiny_copy(tmp_path)), "--out", str(out), "--jobs", "1")
    assert again.returncode in (0, 4), again.stderr
    assert "resuming: 2 of 4 trials told before" in again.stderr
    assert [x.split(":")[0] for x in again.stderr.splitlines() if x.startswith("trial ")] == \
        ["trial 3 of 4", "trial 4 of 4"]
    assert {p: p.stat().st_mtime_ns for p in kept} == kept       # trials 1, 2 not replayed
    study = optuna.load_study(study_name="tune", storage=f"sqlite:///{out / 'study.db'}")
    indices = [t.user_attrs["tune_index"] for t in study.trials]
    assert sorted(indices) == [1, 2, 3, 4]                       # four trials, none twice
    assert all(t.state == optuna.trial.TrialState.COMPLETE for t in study.trials)
    assert_frame_equal(history(out), history(reference))
    # the same values and confirmation (the first line names the tune file)
    assert (out / "tuned.toml").read_text().splitlines()[1:] == \
        (reference / "tuned.toml").read_text().splitlines()[1:]


def test_a_folder_holding_another_tune_is_refused(tiny, tmp_path):
    reference, _ = tiny
    other = load_tune(tiny_copy(tmp_path, root_seed=8))
    with pytest.raises(TuneError, match="holds a tune with different root_seed"):
        run_tune(other, reference, scorer(other.bands), say=lambda _line: None)


def test_a_tune_stopped_inside_a_trial_sweep_resumes_it_and_ends_as_if_never_stopped(
        tiny, tmp_path, monkeypatch):
    """SIGTERM's effect (SweepInterrupted) after trial 3's first chunk: the trial stays
    running with its values; the rerun plays only its missing chunk, tells it, and the
    whole tune ends with the uninterrupted one's history and tuned values."""
    reference, _ = tiny
    tune = load_tune(TINY)
    out = tmp_path / "run"
    real = tune_runner.run_sweep

    def stop_in_trial_3(experiment, folder, *args, **kw):
        if folder.parent.name != "0003":
            return real(experiment, folder, *args, **kw)

        def stop(_summary):
            raise SweepInterrupted(signal.SIGTERM)

        return real(experiment, folder, *args, **{**kw, "on_chunk": stop})

    monkeypatch.setattr(tune_runner, "run_sweep", stop_in_trial_3)
    said: list[str] = []
    with pytest.raises(SweepInterrupted):
        run_tune(tune, out, scorer(tune.bands), say=said.append)
    storage = study_storage(out)
    running = optuna.load_study(study_name="tune", storage=storage).get_trials(
        states=(optuna.trial.TrialState.RUNNING,))
    storage.engine.dispose()
    assert [t.user_attrs["tune_index"] for t in running] == [3]
    chunk = out / TRIALS_DIR / "0003" / "sweep" / "_done"
    assert [p.name for p in chunk.iterdir()] == ["trial__00000.json"]
    first = (out / TRIALS_DIR / "0003" / "sweep" / "_done" / "trial__00000.json").stat()
    monkeypatch.setattr(tune_runner, "run_sweep", real)
    summary = run_tune(tune, out, scorer(tune.bands), say=said.append)
    write_tune_outputs(tune, summary, out)
    assert summary["resumed"] == 2 and summary["played"] == 2
    assert (out / TRIALS_DIR / "0003" / "sweep" / "_done" / "trial__00000.json").stat() \
        .st_mtime_ns == first.st_mtime_ns
    assert_frame_equal(history(out), history(reference))
    assert (out / "tuned.toml").read_text().splitlines()[1:] == \
        (reference / "tuned.toml").read_text().splitlines()[1:]


def test_a_real_sigterm_mid_tune_exits_143_and_the_rerun_finishes_the_same_trials(tmp_path):
    """Longer trials (24 matches) so the signal lands while the tune runs; the trial it
    stopped keeps its values, no trial is duplicated, and every file is there."""
    file = tiny_copy(tmp_path, matches=24, trials=3)
    out = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "sim.cli", "tune", str(file), "--out",
                             str(out), "--jobs", "1"], cwd=REPO_ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    for line in proc.stderr:
        if line.startswith("trial 1 of 3"):
            proc.send_signal(signal.SIGTERM)
            break
    _stdout, rest = proc.communicate(timeout=300)
    assert proc.returncode == 128 + signal.SIGTERM, rest
    assert "to resume, run the same command again" in rest
    storage = study_storage(out)
    before = {t.user_attrs.get("tune_index"): (t.state, t.params)
              for t in optuna.load_study(study_name="tune", storage=storage).trials}
    storage.engine.dispose()
    # trial 1 was told; trial 2, if the signal found it begun, is running with its values
    assert before.pop(1)[0] == optuna.trial.TrialState.COMPLETE
    assert set(before) <= {2} and all(s == optuna.trial.TrialState.RUNNING and len(p) == 2
                                       for s, p in before.values())
    again = sim("tune", str(file), "--out", str(out), "--jobs", "1")
    assert again.returncode in (0, 4), again.stderr
    storage = study_storage(out)
    after = optuna.load_study(study_name="tune", storage=storage).trials
    storage.engine.dispose()
    told = [t for t in after if t.state == optuna.trial.TrialState.COMPLETE]
    assert sorted(t.user_attrs["tune_index"] for t in told) == [1, 2, 3]
    for t in told:   # a trial begun before the signal kept its values
        if t.user_attrs["tune_index"] in before:
            assert before[t.user_attrs["tune_index"]][1] == t.params
    assert history(out).get_column("trial").to_list() == [1, 2, 3]
    for name in ("tuned.toml", "tune.json", "tune.html", "tune.parquet"):
        assert (out / name).is_file()


def test_a_proposal_the_tables_refuse_is_a_refused_trial_that_counts_in_the_budget(
        tmp_path, monkeypatch):
    """Each bound alone may pass while a combination fails (a cross-key check): such a
    trial is recorded as refused with the tables' reason, scores nothing, and the
    tune goes on to its budget."""
    tune = load_tune(tiny_copy(tmp_path, trials=3))
    real = tune_runner.load_experiment

    def refuse_trial_2(path):
        if path.parent.name == "0002":
            raise ExperimentError(f"{path}:12: variants.0.set: units: too strong together")
        return real(path)

    monkeypatch.setattr(tune_runner, "load_experiment", refuse_trial_2)
    said: list[str] = []
    summary = run_tune(tune, tmp_path / "run", scorer(tune.bands), say=said.append)
    result = write_tune_outputs(tune, summary, tmp_path / "run")
    h = pl.read_parquet(tmp_path / "run" / "tune.parquet")
    assert h.get_column("state").to_list() == ["complete", "refused", "complete"]
    refused = h.row(1, named=True)
    assert refused["distance"] is None and refused["refused"] == "units: too strong together"
    assert refused["techs.prosperity.cost"] is not None      # its proposal is kept
    assert "trial 2 of 3: refused by the tables (units: too strong together)" in said
    assert result["trials_refused"] == 1 and result["best"]["trial"] in (1, 3)
    assert not (tmp_path / "run" / TRIALS_DIR / "0002" / "sweep").exists()


def test_cmaes_tunes_inside_the_ranges(tmp_path):
    pytest.importorskip("cmaes")
    file = tiny_copy(tmp_path, sampler="cmaes", trials=3, startup_trials=1)
    tune = load_tune(file)
    summary = run_tune(tune, tmp_path / "run", scorer(tune.bands), say=lambda _line: None)
    result = write_tune_outputs(tune, summary, tmp_path / "run")
    h = history(tmp_path / "run")
    assert h.height == 3 and h.get_column("distance").is_not_null().all()
    assert h.get_column("techs.prosperity.cost").is_between(25, 400).all()
    assert result["sampler"] == "cmaes" and not math.isnan(result["best"]["distance"])


def test_a_damaged_study_file_is_one_line(tmp_path):
    """A study.db that is not a database (a half-copied folder, a stray file) is told
    in one line naming it, exit 2, before any match plays."""
    (tmp_path / "study.db").write_text("not a database")
    proc = sim("tune", str(TINY), "--out", str(tmp_path), "--jobs", "1")
    assert proc.returncode == 2, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(f"{tmp_path / 'study.db'}: not a readable study (file is not a "
                           "database)"), proc.stderr
    assert "Traceback" not in proc.stderr
