"""The batch runner: experiment expansion, Parquet tables with provenance, equality
across workers / backends / chunk sizes, resume after a kill, failing matches as rows."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from sim.outputs.schemas import (
    SCHEMAS,
    SORT_KEYS,
    SUMMARY_SCHEMAS,
    SUMMARY_SORT_KEYS,
    WRITTEN,
)
from sim.outputs.store import scan
from sim.rules.tables import REPO_ROOT
from sim.runner.experiments import ExperimentError, load_experiment
from sim.runner.pool import SWEEP_MODULES, LocalPool, shared_pool
from sim.runner.sweep import prepare_folder, run_sweep
from tests.conftest import FIXTURE_TABLES

SMALL = f"""
name = "small"
tables = "{FIXTURE_TABLES}"
root_seed = 99
matches = 8
seats = 4
length = "short"
personalities = ["balanced", "conqueror", "scholar", "merchant"]
chunk_size = 3

[[variants]]
name = "baseline"

[[grids]]
name = "gold"
axes = {{ "score.gold_per_point" = [3] }}
"""


def write_experiment(tmp_path: Path, text: str = SMALL, name: str = "exp.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def read_all(out: Path) -> dict[str, pl.DataFrame]:
    keys = {**SORT_KEYS, **SUMMARY_SORT_KEYS}
    return {t: scan(out, t).collect().sort(["variant", *keys[t]]) for t in WRITTEN
            if (out / t).exists()}


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ref")
    exp = load_experiment(write_experiment(tmp))
    out = tmp / "out"
    run_sweep(exp, out, jobs=1, progress=False)
    return exp, out, read_all(out)


def test_expansion_is_pure_and_names_every_variant(tmp_path):
    exp = load_experiment(write_experiment(tmp_path))
    again = load_experiment(write_experiment(tmp_path))
    assert [v.id for v in exp.variants] == ["baseline", "gold.gold_per_point-3"]
    assert exp.variants == again.variants
    assert exp.variants[1].overrides == {"score.gold_per_point": 3}
    assert exp.variants[0].tables_hash != exp.variants[1].tables_hash
    chunks = exp.chunks()
    assert [(c.variant, c.start, c.stop) for c in chunks[:3]] == [
        ("baseline", 0, 3), ("baseline", 3, 6), ("baseline", 6, 8)]
    assert len(chunks) == 6


def test_grids_expand_to_every_combination(tmp_path):
    text = SMALL + '\n[[grids]]\nname = "g2"\naxes = { "score.w_city" = [8, 12], ' \
                   '"revolt.transfer_turns" = [2, 4] }\n'
    exp = load_experiment(write_experiment(tmp_path, text))
    g2 = [v for v in exp.variants if v.id.startswith("g2.")]
    assert len(g2) == 4
    assert {tuple(sorted(v.overrides.items())) for v in g2} == {
        (("revolt.transfer_turns", r), ("score.w_city", w)) for w in (8, 12) for r in (2, 4)}


def test_personalities_rotate_so_every_personality_sits_in_every_seat(tmp_path):
    from sim.runner.chunk import personalities_for, settings_for

    exp = load_experiment(write_experiment(tmp_path))
    settings = settings_for(exp, tmp_path / "run")
    seats = [personalities_for(settings, i) for i in range(4)]
    for s in range(4):
        assert sorted(row[s] for row in seats) == sorted(exp.spec.personalities)


@pytest.mark.parametrize("mutation,needle", [
    ('matches = 8', 'matches = 0'), ('name = "baseline"', 'name = "bad name!"'),
    ('axes = { "score.gold_per_point" = [3] }', 'axes = { "score.gold_per_pt" = [3] }'),
    ('length = "short"', 'length = "epic"'), ('chunk_size = 3', 'chunk_sise = 3'),
])
def test_malformed_experiments_name_file_and_key(tmp_path, mutation, needle):
    path = write_experiment(tmp_path, SMALL.replace(mutation, needle))
    with pytest.raises(ExperimentError) as exc:
        load_experiment(path)
    assert str(path) in str(exc.value)
    proc = subprocess.run([sys.executable, "-m", "sim.cli", "sweep", str(path), "--quiet"],
                          capture_output=True, text=True, cwd=REPO_ROOT)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_every_bad_key_of_an_experiment_file_is_a_line_of_its_own(tmp_path):
    path = write_experiment(tmp_path, SMALL.replace("matches = 8", "matches = -1")
                            .replace("chunk_size = 3", "chunk_size = 0"))
    proc = subprocess.run([sys.executable, "-m", "sim.cli", "sweep", str(path), "--quiet"],
                          capture_output=True, text=True, cwd=REPO_ROOT)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(lines) == 2 and ": matches: " in lines[0] and ": chunk_size: " in lines[1]


def test_a_bad_override_is_named_at_its_own_key_and_line(tmp_path):
    """A grid's axis value or a variant's set value the tables refuse: the error names
    the key where it was written (grids.N.axes.KEY, variants.N.set.KEY) and that line,
    not the grid's header."""
    text = SMALL + '\n[[grids]]\nname = "g2"\nset = { "units.warrior.attack" = 3 }\n' \
                   'axes = { "score.w_city" = [-2, 12] }\n'
    path = write_experiment(tmp_path, text)
    with pytest.raises(ExperimentError) as exc:
        load_experiment(path)
    line = text.splitlines().index('axes = { "score.w_city" = [-2, 12] }') + 1
    assert f"{path}:{line}: grids.1.axes.score.w_city: variant g2.w_city--2: " in str(exc.value)
    path.write_text(text.replace('"units.warrior.attack" = 3', '"units.warrior.atack" = 3'))
    with pytest.raises(ExperimentError, match=r"grids\.1\.set\.units\.warrior\.atack: "):
        load_experiment(path)


def test_tables_match_the_documented_columns_and_types(reference_run):
    _exp, out, frames = reference_run
    doc = (REPO_ROOT / "docs" / "outcomes.md").read_text()
    documented: dict[str, dict[str, str]] = {}
    table = None
    for line in doc.splitlines():
        head = re.match(r"## (\w+) — ", line)
        if head:
            table = head.group(1)
            documented[table] = {}
        row = re.match(r"\| (\w+) \| ([\w()]+) \| ", line)
        if table and row and row.group(1) != "column":
            documented[table][row.group(1)] = row.group(2)
    schemas = {**SCHEMAS, **SUMMARY_SCHEMAS}
    assert set(documented) == set(schemas)
    for name, columns in documented.items():
        assert list(columns) == list(schemas[name]), name
        for path in (out / name).rglob("*.parquet"):
            schema = pl.read_parquet_schema(path)
            for column, dtype in columns.items():
                assert str(schema[column]) == {"Utf8": "String"}.get(dtype, dtype), (name,
                                                                                    column)
    assert frames["matches"].height == 16
    assert frames["seats"].height == 64
    assert frames["errors"].height == 0


def test_every_event_kind_is_documented_with_its_fields():
    """docs/outcomes.md lists every kind of sim.rules.codes.EVENT_KINDS in the events
    table's `kind` row and gives each its own row of the kinds table."""
    from sim.rules.codes import EVENT_NAMES

    doc = (REPO_ROOT / "docs" / "outcomes.md").read_text()
    kind_row = next(line for line in doc.splitlines() if line.startswith("| kind | Utf8 |"))
    listed = re.findall(r"\w+", kind_row.split("|")[3])
    documented = re.findall(r"^\| `(\w+)` \|", doc, flags=re.MULTILINE)
    assert sorted(documented) == sorted(EVENT_NAMES)
    assert set(EVENT_NAMES) <= set(listed)


def test_turn_rows_carry_cities_science_and_units_by_type(reference_run):
    """turns: one row per match × turn × seat; units is one count per unit type in the
    provenance's unit order, and a seat's units and cities agree with its seat row at
    the end of the match."""
    _exp, out, frames = reference_run
    turns, seats = frames["turns"], frames["seats"]
    assert turns.select("variant", "match_index", "turn", "seat").is_duplicated().sum() == 0
    prov = json.loads((out / "provenance.json").read_text())
    order = prov["variants"][0]["items"]["units"]
    assert order == sorted(prov["variants"][0]["tables"]["units"])
    assert set(turns["units"].list.len().to_list()) == {len(order)}
    last = turns.sort("turn").group_by("variant", "match_index", "seat").agg(
        pl.all().last())
    both = last.join(seats.select("variant", "match_index", "seat",
                                  pl.col("cities").alias("cities_at_end"), "science_unspent"),
                     on=["variant", "match_index", "seat"])
    assert both.height == seats.height
    assert (both["cities_held"] == both["cities_at_end"]).all()
    assert (both["science_stock"] == both["science_unspent"]).all()
    assert (turns["science_gained"] >= 0).all()
    assert turns["units"].list.sum().max() > 0


def test_parquet_reads_in_polars_pyarrow_and_duckdb(reference_run):
    import duckdb
    import pyarrow.dataset as ds

    _exp, out, frames = reference_run
    table = ds.dataset(out / "matches", format="parquet", partitioning="hive").to_table()
    assert table.num_rows == frames["matches"].height
    con = duckdb.connect()
    n, variants = con.execute(
        f"select count(*), count(distinct variant) from read_parquet("
        f"'{out}/seats/*/*.parquet', hive_partitioning = true)").fetchone()
    assert (n, variants) == (64, 2)


def test_common_random_numbers_same_streams_across_variants(reference_run):
    """Match i of every variant is played from the same seeds and seating: the replay
    commands differ only by the variant's --set overrides."""
    _exp, _out, frames = reference_run
    m = frames["matches"].sort("match_index")

    def without_sets(cmd: str) -> str:
        return re.sub(r" --set \S+", "", cmd)

    base = m.filter(pl.col("variant") == "baseline")
    gold = m.filter(pl.col("variant") == "gold.gold_per_point-3")
    assert [without_sets(c) for c in base["replay"]] == [without_sets(c) for c in gold["replay"]]
    assert all("--set score.gold_per_point=3" in c for c in gold["replay"])
    turn1 = frames["turns"].filter(pl.col("turn") == 1).sort("variant", "match_index", "seat")
    regions = {v: d["region"].to_list() for v, d in turn1.group_by("variant")}
    assert regions[("baseline",)] == regions[("gold.gold_per_point-3",)]  # same opening maps


def test_provenance_and_replay_command(reference_run):
    exp, out, frames = reference_run
    prov = json.loads((out / "provenance.json").read_text())
    for key in ("code_version", "packages", "experiment", "root_seed", "variants",
                "started", "finished", "fingerprint"):
        assert key in prov
    assert {v["id"]: v["tables_hash"] for v in prov["variants"]} == {
        v.id: v.tables_hash for v in exp.variants}
    assert prov["summary"]["matches"] == 16
    row = frames["matches"].filter(pl.col("match_id") == "gold.gold_per_point-3:4").row(
        0, named=True)
    proc = subprocess.run([sys.executable, "-m", "sim.cli", "replay-command", str(out),
                           "gold.gold_per_point-3:4"], capture_output=True, text=True,
                          cwd=REPO_ROOT)
    assert proc.returncode == 0 and proc.stdout.strip() == row["replay"]
    args = [*row["replay"].split()[1:], "--json"]
    replay = subprocess.run([sys.executable, "-m", "sim.cli", *args], capture_output=True,
                            text=True, cwd=REPO_ROOT)
    result = json.loads(replay.stdout)
    assert (result["winner"], result["victory"], result["end_turn"]) == (
        row["winner"], row["victory"], row["end_turn"])


def test_same_tables_for_two_workers_and_another_chunk_size(reference_run, tmp_path):
    exp, _out, frames = reference_run
    out = tmp_path / "jobs2"
    run_sweep(exp, out, jobs=2, chunk_size=5, progress=False)
    other = read_all(out)
    for table in WRITTEN:
        if table in frames:
            assert other[table].equals(frames[table]), table


def test_sweeps_on_a_shared_pool_reuse_its_workers_and_give_the_same_tables(reference_run,
                                                                           tmp_path):
    """A tune's trials and a precision sweep's looks play on one set of workers
    (shared_pool): the second sweep finds the first one's workers alive and uses them,
    the tables are the ones a fresh pool writes, and the block's end stops them."""
    exp, _out, frames = reference_run
    with shared_pool(2) as pool:
        # started at once: their imports run while the caller prepares its first sweep
        assert all(s.process is not None and s.process.is_alive() for s in pool.slots)
        run_sweep(exp, tmp_path / "first", jobs=2, chunk_size=5, progress=False, pool=pool)
        workers = [s.process for s in pool.slots]
        assert all(w is not None and w.is_alive() for w in workers)
        run_sweep(exp, tmp_path / "second", jobs=2, chunk_size=5, progress=False, pool=pool)
        assert [s.process for s in pool.slots] == workers  # not started again
    assert all(not w.is_alive() for w in workers)
    for folder in ("first", "second"):
        other = read_all(tmp_path / folder)
        for table in WRITTEN:
            if table in frames:
                assert other[table].equals(frames[table]), (folder, table)
    with shared_pool(1) as none, shared_pool(2, backend="dask") as dask:
        assert none is None and dask is None  # in-process, or Dask's own workers


def test_a_sweep_whose_workers_play_never_loads_numba_in_its_parent(reference_run, tmp_path):
    """The parent only hands chunks out, checks the compiled cache by name and verifies
    what the workers wrote: it does without numba and the engine (0.4 s of imports that
    would take a core from the workers' own start), and the tables are the same."""
    _exp, _out, frames = reference_run  # played in this process: the cache is warm
    path = write_experiment(tmp_path)
    code = ("import sys; from sim.runner.experiments import load_experiment; "
            "from sim.runner.sweep import run_sweep; "
            f"run_sweep(load_experiment({str(path)!r}), {str(tmp_path / 'two')!r}, jobs=2, "
            "progress=False); print('numba' in sys.modules, 'sim.engine.match' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=REPO_ROOT, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False"]
    other = read_all(tmp_path / "two")
    for table in WRITTEN:
        if table in frames:
            assert other[table].equals(frames[table]), table


def test_a_one_job_sweep_given_a_pool_plays_on_its_worker(reference_run, tmp_path):
    """How `sim bench sweep` times one worker: a one-worker pool's, not this process
    (where polars would compress on a second thread). The same tables either way."""
    exp, _out, frames = reference_run
    with contextlib.closing(LocalPool(1, preload=SWEEP_MODULES).start()) as alone:
        worker = alone.slots[0].process
        run_sweep(exp, tmp_path / "alone", jobs=1, chunk_size=5, progress=False, pool=alone)
        assert alone.slots[0].ran and alone.slots[0].process is worker and worker.is_alive()
    assert not worker.is_alive()
    other = read_all(tmp_path / "alone")
    for table in WRITTEN:
        if table in frames:
            assert other[table].equals(frames[table]), table


def test_a_sweep_that_fails_on_a_shared_pool_kills_its_workers(reference_run, tmp_path):
    """What the workers are writing then is redone on resume; the pool starts new
    workers for the caller's next sweep."""
    exp, _out, frames = reference_run

    def fail(_summary):
        raise RuntimeError("planted")

    with shared_pool(2) as pool:
        with pytest.raises(RuntimeError, match="planted"):
            run_sweep(exp, tmp_path / "failed", jobs=2, chunk_size=5, progress=False,
                      pool=pool, on_chunk=fail)
        assert all(s.process is None for s in pool.slots)  # killed and forgotten
        run_sweep(exp, tmp_path / "failed", jobs=2, chunk_size=5, progress=False, pool=pool)
    other = read_all(tmp_path / "failed")
    for table in WRITTEN:
        if table in frames:
            assert other[table].equals(frames[table]), table


@contextlib.contextmanager
def port_taken(port: int):
    """Something listens on `port` while the block runs (this test, or whoever already
    had it)."""
    sock = socket.socket()
    try:
        sock.bind(("0.0.0.0", port))
        sock.listen()
    except OSError:
        pass  # taken already: just as good
    try:
        yield
    finally:
        sock.close()


def test_same_tables_on_a_dask_local_cluster(reference_run, tmp_path):
    """With 8787 (Dask's default dashboard port) taken: the local cluster binds
    127.0.0.1 on free ports with no dashboard, so nothing warns (warnings are errors)."""
    pytest.importorskip("dask.distributed")
    exp, _out, frames = reference_run
    out = tmp_path / "dask"
    def environ() -> dict[str, str]:  # less Dask's marker of the process that imported it
        return {k: v for k, v in os.environ.items() if k != "__DASK_PARENT_PID"}

    before = environ()
    with port_taken(8787):
        run_sweep(exp, out, jobs=2, backend="dask", chunk_size=4, progress=False)
    # the nannies' settings (MALLOC_TRIM_THRESHOLD_, ...) do not outlive the cluster: a
    # local sweep's workers would inherit them and take them for the user's
    assert environ() == before
    other = read_all(out)
    for table in WRITTEN:
        if table in frames:
            assert other[table].equals(frames[table]), table


def test_resume_after_a_kill_gives_the_uninterrupted_rows(reference_run, tmp_path):
    exp, _ref_out, frames = reference_run
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "sim.cli", "sweep", exp.path, "--out", str(out), "--jobs",
           "1", "--chunk-size", "1", "--quiet"]
    proc = subprocess.Popen(cmd, cwd=REPO_ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 300
    while time.time() < deadline and len(list((out / "_done").glob("*.json"))
                                         if (out / "_done").exists() else []) < 3:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = len(list((out / "_done").glob("*.json")))
    assert 3 <= done < 16, "the kill should land mid-sweep"
    assert not any(p.suffix == ".parquet" for p in (out / "matches").rglob("*")
                   if p.stat().st_size == 0)
    resumed = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    assert "already written" in resumed.stdout
    again = read_all(out)
    for table in WRITTEN:
        if table in frames:
            assert again[table].equals(frames[table]), table


def test_a_folder_from_another_experiment_is_refused(reference_run, tmp_path):
    _exp, out, _frames = reference_run
    other = load_experiment(write_experiment(tmp_path, SMALL.replace("root_seed = 99",
                                                                     "root_seed = 98")))
    from sim.runner.sweep import RunFolderMismatch

    with pytest.raises(RunFolderMismatch):
        run_sweep(other, out, jobs=1, progress=False)


def test_a_failing_match_becomes_an_errors_row(tmp_path):
    from sim.engine.match import play_match
    from sim.runner.chunk import settings_for
    from sim.runner.experiments import ChunkSpec
    from sim.runner.sweep import run_chunk

    exp = load_experiment(write_experiment(tmp_path))
    out = tmp_path / "errors"
    out.mkdir()
    prepare_folder(exp, out, 3, 1, "local")
    settings = settings_for(exp, out)

    def flaky(tables, seed, index, *args, **kw):
        if index == 1:
            raise RuntimeError("boom in match 1")
        return play_match(tables, seed, index, *args, **kw)

    summary = run_chunk(settings, ChunkSpec("baseline", 0, 0, 3),
                        exp.variant("baseline").tables, play=flaky)
    assert (summary["matches"], summary["errors"]) == (2, 1)
    errors = pl.read_parquet(out / "errors" / "variant=baseline" / "part-00000.parquet")
    assert errors["match_index"].to_list() == [1]
    assert "boom in match 1" in errors["message"][0]
    assert errors["replay"][0].startswith("sim match --seed 99 --match 1")
    matches = pl.read_parquet(out / "matches" / "variant=baseline" / "part-00000.parquet")
    assert matches["match_index"].to_list() == [0, 2]


def test_workers_send_back_only_small_summaries(tmp_path):
    """Memory stays flat: the parent receives a chunk's done marker (its summary and
    each part's rows, bytes and checksum), never rows: its size does not grow with the
    chunk's matches."""
    from sim.runner.chunk import settings_for
    from sim.runner.experiments import ChunkSpec
    from sim.runner.sweep import run_chunk

    exp = load_experiment(write_experiment(tmp_path))
    out = tmp_path / "o"
    out.mkdir()
    prepare_folder(exp, out, 3, 1, "local")
    sizes = [len(json.dumps(run_chunk(settings_for(exp, out), ChunkSpec("baseline", k, 0, n),
                                      exp.variant("baseline").tables)))
             for k, n in enumerate((3, 12))]
    assert sizes[0] < 1500 and abs(sizes[1] - sizes[0]) < 40, sizes


def test_a_sweep_with_skilled_seats_warms_the_skilled_entry_too():
    """D11: a cold sweep compiles the loop's skilled entry in the parent when some
    variant has a seat above skill 0 (lookahead, search or random play), so the workers
    load it instead of each compiling it; the chunk it warms is the first such one."""
    from sim.runner.chunk import RunSettings
    from sim.runner.experiments import ChunkSpec
    from sim.runner.progress import _skilled_chunk

    todo = [ChunkSpec("base", 0, 0, 10), ChunkSpec("greedy", 0, 0, 10),
            ChunkSpec("random", 0, 0, 10), ChunkSpec("look", 1, 10, 20)]
    settings = RunSettings(out="/x", tables_path="/t", overrides_by_variant={},
                           root_seed=1, seats=4, length=None, personalities=("balanced",),
                           rotate=True,
                           seat_ai_by_variant={"greedy": [{"skill": 0, "forbid": ["walls"]}],
                                               "random": [{}, {"skill": "random"}],
                                               "look": [{"skill": 1}]})
    assert _skilled_chunk(settings, todo) == todo[2]
    assert _skilled_chunk(settings, [todo[3], todo[2]]) == todo[3]
    assert _skilled_chunk(settings, todo[:2]) is None
