"""Resume trusts nothing it has not verified (issue 12, items 1 and 3): a run whose
parts are deleted, truncated or corrupted, or whose done markers are garbage, empty,
incomplete or from the older format, is reported chunk by chunk by `sim check-run`,
refused by `sim report` and `sim replay-command`, and repaired by running the same
sweep again, row for row. The tables a sweep plays are fixed when it starts."""

from __future__ import annotations

import json
import shutil

import polars as pl
import pytest

from sim.outputs.schemas import WRITTEN
from sim.outputs.store import RunError, marker_path, part_path, require_complete, verify_run
from sim.runner.experiments import load_experiment
from sim.runner.sweep import RunFolderMismatch, run_sweep
from tests.conftest import FIXTURE_TABLES
from tests.test_runs_support import (
    assert_same_tables,
    experiment_text,
    lock_held,
    markers,
    one_line_error,
    read_all,
    sim,
    start,
    wait_for,
    write,
)


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished run (2 variants x 8 matches in chunks of 2) and its tables."""
    tmp = tmp_path_factory.mktemp("resume")
    exp = write(tmp / "exp.toml", experiment_text())
    out = tmp / "run"
    run_sweep(load_experiment(exp), out, jobs=1, progress=False)
    return exp, out, read_all(out)


def _damage(out):
    """Seven kinds of damage, one chunk each: (variant, chunk, what check-run says)."""
    def part(chunk, table="seats", variant="baseline"):
        return part_path(out, table, variant, chunk)

    def marker(chunk, variant="dominance-50"):
        return marker_path(out, variant, chunk)

    part(0).unlink()
    raw = part(1, "events").read_bytes()
    part(1, "events").write_bytes(raw[: len(raw) // 2])
    raw = bytearray(part(2, "turns").read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    part(2, "turns").write_bytes(bytes(raw))
    marker(0).write_text("{ this is not json")
    marker(1).write_text("")
    m = json.loads(marker(2).read_text())
    del m["parts"]["matches"]
    marker(2).write_text(json.dumps(m))
    m = json.loads(marker(3).read_text())
    marker(3).write_text(json.dumps({k: v for k, v in m.items() if k not in ("parts",
                                                                              "format")}))
    return [("baseline", 0, "seats part is missing"), ("baseline", 1, "events part is short"),
            ("baseline", 2, "turns part is corrupt"),
            ("dominance-50", 0, "not valid JSON"), ("dominance-50", 1, "marker is empty"),
            ("dominance-50", 2, "does not describe every table"),
            ("dominance-50", 3, "older format")]


def test_damaged_parts_and_markers_are_found_refused_and_redone(finished, tmp_path):
    exp, ref_out, reference = finished
    out = tmp_path / "run"
    shutil.copytree(ref_out, out)
    damage = _damage(out)

    check = sim("check-run", out)
    assert check.returncode == 2 and "Traceback" not in check.stderr, check.stderr
    lines = check.stderr.strip().splitlines()
    assert len(lines) == len(damage), lines
    for variant, chunk, needle in damage:
        assert any(f"chunk {variant}/{chunk} " in line and needle in line for line in lines), \
            (variant, chunk, needle, lines)

    report = sim("report", out, "--out", tmp_path / "r.html")
    one_line_error(report, "chunk baseline/0 (matches 0–1): its seats part is missing")
    assert not (tmp_path / "r.html").exists()
    with pytest.raises(RunError, match="chunk baseline/0"):
        require_complete(out)
    one_line_error(sim("replay-command", out, "baseline:3"), "chunk baseline/1")

    resumed = sim("sweep", exp, "--out", out, "--jobs", "1", "--quiet")
    assert resumed.returncode == 0, resumed.stderr
    for variant, chunk, _needle in damage:
        assert f"chunk {variant}/{chunk} " in resumed.stderr and "playing it again" in \
            resumed.stderr
    assert "in 8 chunks (1 already written)" in resumed.stdout  # 7 redone
    assert_same_tables(out, reference)
    assert sim("check-run", out).returncode == 0
    replay = sim("replay-command", out, "baseline:3")
    assert replay.returncode == 0 and replay.stdout.startswith("sim match --seed 11 --match 3")


def test_a_part_without_its_marker_is_an_interrupted_write(finished, tmp_path):
    """A chunk killed between its parts and its marker: readers refuse it, resume
    redoes it; a file of no chunk of the plan makes the sweep refuse to touch it."""
    exp, ref_out, reference = finished
    out = tmp_path / "run"
    shutil.copytree(ref_out, out)
    marker_path(out, "baseline", 3).unlink()
    check = verify_run(out)
    assert [c.chunk for c in check.pending] == [3] and len(check.strays) == len(WRITTEN)
    line = one_line_error(sim("report", out), "incomplete: 1 of 8 chunks not written yet, "
                          "first chunk baseline/3 (matches 6–7) "
                          f"(and {len(WRITTEN)} more")
    assert "sim check-run" in line
    listed = sim("check-run", out).stderr
    assert listed.count("has no done marker (an interrupted write)") == len(WRITTEN)
    stray = part_path(out, "matches", "baseline", 7)
    shutil.copy(part_path(out, "matches", "baseline", 0), stray)
    one_line_error(sim("sweep", exp, "--out", out, "--jobs", "1", "--quiet"),
                   "matches/variant=baseline/part-00007.parquet belongs to no chunk")
    stray.unlink()
    resumed = sim("sweep", exp, "--out", out, "--jobs", "1", "--quiet")
    assert resumed.returncode == 0, resumed.stderr
    assert_same_tables(out, reference)


def test_check_run_on_good_missing_and_foreign_folders(finished, tmp_path):
    _exp, out, _reference = finished
    ok = sim("check-run", out)
    assert ok.returncode == 0 and "8 chunks intact, 16 matches, 0 failed" in ok.stdout
    one_line_error(sim("check-run", tmp_path / "nope"), "no such run folder")
    one_line_error(sim("check-run", tmp_path), "not a sweep run folder")
    (tmp_path / "provenance.json").write_text("{}")
    one_line_error(sim("check-run", tmp_path), "unreadable provenance")


def test_tables_are_fixed_when_the_sweep_starts(tmp_path):
    """An edit that breaks the tables file mid-sweep reaches no chunk; resuming on an
    edited file is refused in one line; --replace-stale starts afresh."""
    tables = tmp_path / "tables.toml"
    original = FIXTURE_TABLES.read_text()
    tables.write_text(original)
    exp = write(tmp_path / "exp.toml", experiment_text(matches=20, chunk_size=1,
                                                       tables="tables.toml"))
    out = tmp_path / "run"
    proc = start("sweep", exp, "--out", out, "--jobs", "1", "--quiet")
    assert wait_for(lambda: markers(out) >= 1), proc.communicate()
    tables.write_text(original + "\n[[[ not toml\n")
    assert proc.poll() is None and markers(out) < 40, "the edit should land mid-sweep"
    _stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    prov = json.loads((out / "provenance.json").read_text())
    hashes = {v["id"]: v["tables_hash"] for v in prov["variants"]}
    m = read_all(out)["matches"]
    assert m.height == 40
    assert m.group_by("variant").agg(pl.col("tables_hash").unique()).sort("variant").rows() \
        == sorted((v, [h]) for v, h in hashes.items())

    one_line_error(sim("sweep", exp, "--out", out, "--quiet"), "not valid TOML")
    tables.write_text(original.replace("share_pct = 75", "share_pct = 70", 1))
    assert tables.read_text() != original
    refused = sim("sweep", exp, "--out", out, "--quiet")
    one_line_error(refused, "the tables changed since this run started")
    assert "--replace-stale" in refused.stderr
    fresh = sim("sweep", exp, "--out", out, "--jobs", "1", "--quiet", "--replace-stale")
    assert fresh.returncode == 0, fresh.stderr
    assert "starting afresh" in fresh.stderr
    new = json.loads((out / "provenance.json").read_text())
    # the variant that overrides share_pct itself plays the same tables as before
    assert {v["id"]: v["tables_hash"] == hashes[v["id"]] for v in new["variants"]} == {
        "baseline": False, "dominance-50": True}
    assert read_all(out)["matches"].height == 40
    assert not lock_held(out)



def test_a_sweep_never_writes_among_files_that_are_not_a_runs(tmp_path):
    """A folder that holds no run but other files is refused, untouched; --replace-stale
    clears only what a sweep writes, so a file of the user's beside a run survives it."""
    from sim.runner.sweep import SweepError

    exp = load_experiment(write(tmp_path / "exp.toml", experiment_text(matches=2,
                                                                       chunk_size=1)))
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    (out / "drafts").mkdir()
    with pytest.raises(SweepError, match=r"not a sweep's \(drafts, notes.txt\)"):
        run_sweep(exp, out, jobs=1, progress=False)
    assert sorted(p.name for p in out.iterdir()) == ["drafts", "notes.txt"]

    run = tmp_path / "run"
    run_sweep(exp, run, jobs=1, progress=False)
    (run / "notes.txt").write_text("keep me")
    other = load_experiment(write(tmp_path / "other.toml", experiment_text(
        matches=2, chunk_size=1, root_seed=12)))
    result = run_sweep(other, run, jobs=1, progress=False, replace_stale=True,
                       say=lambda line: None)
    assert result["matches"] == 4 and not result["problems"]
    assert (run / "notes.txt").read_text() == "keep me"
    assert json.loads((run / "provenance.json").read_text())["root_seed"] == 12


def test_plan_refuses_a_run_with_a_part_of_no_chunk(finished, tmp_path):
    """`sim plan` checks the run as `sim report` does: a foreign part would change the
    discordance it plans from, and the plan would look as sure."""
    _exp, out, _frames = finished
    run = tmp_path / "run"
    shutil.copytree(out, run)
    part = next((run / "matches").rglob("*.parquet"))
    shutil.copy(part, part.with_name("part-99999.parquet"))
    one_line_error(sim("plan", run), "belongs to no chunk")


def test_a_sweeps_end_check_reads_back_only_what_its_workers_did_not_write(tmp_path):
    """The check at a sweep's end takes the checksums its workers computed of the bytes
    they wrote (and fsynced) instead of reading every part back: the markers they return
    are the ones on disk, so that fast path is the one taken. A marker on disk that is
    not the one returned is read back, a short part is caught either way, and every
    reader of the run hashes every byte."""
    exp = write(tmp_path / "exp.toml", experiment_text())
    out = tmp_path / "run"
    returned = []
    result = run_sweep(load_experiment(exp), out, jobs=1, progress=False,
                       on_chunk=returned.append)
    assert result["problems"] == [] and len(returned) == 8
    written = {(m["variant"], m["chunk"]): m for m in returned}
    for (variant, chunk), marker in written.items():
        assert json.loads(marker_path(out, variant, chunk).read_text()) == marker
    part = part_path(out, "turns", "baseline", 2)
    raw = bytearray(part.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    part.write_bytes(bytes(raw))  # the same size: only a checksum tells
    assert verify_run(out, written=written).complete
    damaged = [(c.chunk, why) for c, why in verify_run(out).damaged]
    assert damaged == [(2, "its turns part is corrupt (its checksum differs from the "
                           "marker's)")]
    not_returned = {**written, ("baseline", 2): {**written[("baseline", 2)], "seconds": -1.0}}
    assert [c.chunk for c, _ in verify_run(out, written=not_returned).damaged] == [2]
    with pytest.raises(RunError, match="turns part is corrupt"):
        require_complete(out)
    part.write_bytes(bytes(raw[:-10]))
    assert [why for _, why in verify_run(out, written=written).damaged] == [
        f"its turns part is short ({len(raw) - 10} of {len(raw)} bytes)"]


def test_chunks_whose_provenance_is_gone_are_not_resumed_as_anothers(finished, tmp_path):
    """A folder with a run's chunks and markers but no provenance.json: nothing says
    what wrote them, so a sweep of another experiment (here 3 seats) must not count
    them as its own; --replace-stale starts afresh."""
    _exp, ref_out, _reference = finished
    out = tmp_path / "run"
    shutil.copytree(ref_out, out)
    (out / "provenance.json").unlink()
    other = write(tmp_path / "three.toml",
                  experiment_text().replace("seats = 4", "seats = 3"))
    with pytest.raises(RunFolderMismatch, match=r"but no provenance\.json"):
        run_sweep(load_experiment(other), out, jobs=1, progress=False)
    redone = run_sweep(load_experiment(other), out, jobs=1, progress=False,
                       replace_stale=True)
    assert redone["chunks_resumed"] == 0
    assert set(read_all(out)["seats"].get_column("seat")) == {0, 1, 2}


def test_a_resume_needs_the_same_code_on_disk_not_only_the_same_commit(finished, tmp_path):
    """The fingerprint carries a hash of the package's modules: an uncommitted edit of
    the engine or the chunk writer would otherwise resume a run and mix its matches
    with the old code's. An unreadable provenance is said to be unreadable."""
    exp, ref_out, _reference = finished
    out = tmp_path / "run"
    shutil.copytree(ref_out, out)
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["fingerprint"]["code"]["source"] == prov["code_version"]["source"]
    prov["fingerprint"]["code"]["source"] = "0" * 16   # as if sim/ had been edited since
    (out / "provenance.json").write_text(json.dumps(prov))
    with pytest.raises(RunFolderMismatch, match="different code version"):
        run_sweep(load_experiment(exp), out, jobs=1, progress=False)
    (out / "provenance.json").write_text("{")
    with pytest.raises(RunFolderMismatch, match=r"provenance\.json is unreadable"):
        run_sweep(load_experiment(exp), out, jobs=1, progress=False)


def test_the_source_hash_follows_every_module_of_the_package(tmp_path, monkeypatch):
    import sim.jitcache as jitcache

    (tmp_path / "runner").mkdir()
    (tmp_path / "runner" / "chunk.py").write_text("x = 1\n")
    (tmp_path / "jit.py").write_text("")
    monkeypatch.setattr(jitcache, "_PACKAGE", tmp_path)
    before = jitcache.source_hash(("",))
    compiled = jitcache.source_hash()
    (tmp_path / "runner" / "chunk.py").write_text("x = 2\n")
    assert jitcache.source_hash(("",)) != before
    assert jitcache.source_hash() == compiled   # the runner is not compiled code
