"""Helpers shared by the run-folder tests (tests/test_runs_*.py); no tests here.

The tests run real `sim sweep` processes in temporary folders and signal, kill,
truncate and corrupt them; these helpers start them, find their worker processes
(from /proc: no extra dependency) and compare a run's tables with a reference.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import polars as pl

from sim.outputs.schemas import SORT_KEYS, TABLES
from sim.outputs.store import scan
from sim.rules.tables import REPO_ROOT
from tests.conftest import FIXTURE_TABLES

PERSONALITIES = '["balanced", "conqueror", "scholar", "merchant"]'


def experiment_text(name: str = "runs", matches: int = 8, chunk_size: int = 2,
                    tables: Path | str = FIXTURE_TABLES, root_seed: int = 11,
                    extra: str = "") -> str:
    """A small experiment on short matches: a baseline and one variant."""
    return f"""
name = "{name}"
tables = "{tables}"
root_seed = {root_seed}
matches = {matches}
seats = 4
length = "short"
personalities = {PERSONALITIES}
chunk_size = {chunk_size}

[[variants]]
name = "baseline"

[[variants]]
name = "dominance-50"
set = {{ "dominance.share_pct" = 50 }}
{extra}"""


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def quiet_run(folder: Path, name: str, text: str) -> Path:
    """The experiment `text`, written to folder/NAME.toml, swept in this process with
    nothing printed; its run folder (folder/run)."""
    from sim.runner.experiments import load_experiment
    from sim.runner.sweep import run_sweep

    exp = write(folder / f"{name}.toml", text)
    run_sweep(load_experiment(exp), folder / "run", progress=False, say=lambda _: None)
    return folder / "run"


def env() -> dict[str, str]:
    """The environment of a child `sim`: this tree first on the path."""
    path = os.environ.get("PYTHONPATH", "")
    return {**os.environ, "PYTHONPATH": f"{REPO_ROOT}{os.pathsep}{path}" if path
            else str(REPO_ROOT)}


def sim(*args: str, cwd: Path | str = REPO_ROOT, timeout: float = 300,
        **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sim.cli", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, env=kw.pop("env", env()),
                          timeout=timeout, **kw)


def start(*args: str, cwd: Path | str = REPO_ROOT) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "sim.cli", *map(str, args)], cwd=cwd,
                            env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def one_line_error(proc: subprocess.CompletedProcess, needle: str) -> str:
    """Assert exit 2 with exactly one line on stderr, no traceback, containing `needle`."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert "Traceback" not in proc.stderr and len(lines) == 1, proc.stderr
    assert needle in lines[0], lines[0]
    return lines[0]


def read_all(out: Path) -> dict[str, pl.DataFrame]:
    return {t: scan(out, t).collect().sort(["variant", *SORT_KEYS[t]]) for t in TABLES}


def assert_same_tables(out: Path, reference: dict[str, pl.DataFrame]) -> None:
    """Row for row and column for column."""
    got = read_all(out)
    for table in TABLES:
        assert got[table].columns == reference[table].columns, table
        assert got[table].equals(reference[table]), (table, got[table].height,
                                                     reference[table].height)


def markers(out: Path) -> int:
    done = out / "_done"
    return len(list(done.glob("*.json"))) if done.is_dir() else 0


def wait_for(predicate, timeout: float = 120, every: float = 0.02) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(every)
    return False


def _stat(pid: int) -> tuple[int, str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2:].split()
    return int(fields[1]), fields[0]  # (ppid, state)


def alive(pid: int) -> bool:
    st = _stat(pid)
    return st is not None and st[1] != "Z"


def workers_of(pid: int) -> list[int]:
    """The sweep worker processes whose parent is `pid` (multiprocessing's spawned
    children, not its resource tracker)."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        st = _stat(int(entry.name))
        if st is None or st[0] != pid or st[1] == "Z":
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if b"spawn_main" in cmdline:
            out.append(int(entry.name))
    return out


def all_gone(pids, timeout: float = 10) -> bool:
    return wait_for(lambda: not any(alive(p) for p in pids), timeout, every=0.05)


def lock_held(out: Path, pid: int | None = None) -> bool:
    """Some process (or process `pid`) holds the run folder's lock; a sweep's signal
    handlers are in place by then. (A killed sweep leaves its PID in the file, but
    no lock: `pid` tells the new holder from the dead one.)"""
    try:
        text = (out / ".lock").read_text()
    except OSError:
        return False
    if pid is None:
        return bool(text)
    try:
        return json.loads(text).get("pid") == pid
    except ValueError:
        return False
