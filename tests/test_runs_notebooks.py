"""The notebooks as JupyterLab runs them (issue 12, item 17): the kernel's working
directory is notebooks/, SIM_RUN_DIR is relative to the project root, charts are
inline SVG (nothing from a CDN), and a missing or unfinished run stops the first
cell with one line that says what to do."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from sim.outputs.store import marker_path
from sim.rules.tables import REPO_ROOT
from sim.runner.experiments import load_experiment
from sim.runner.sweep import run_sweep
from tests.test_runs_support import experiment_text, write

jupytext = pytest.importorskip("jupytext")
nbclient = pytest.importorskip("nbclient")
NOTEBOOKS = sorted((REPO_ROOT / "notebooks").glob("*.py"))


def _execute(notebook, monkeypatch, run_dir: str):
    monkeypatch.setenv("SIM_RUN_DIR", run_dir)
    nb = jupytext.read(notebook)
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", resources={
        "metadata": {"path": str(REPO_ROOT / "notebooks")}})
    return nb, client


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("notebooks")
    exp = write(tmp / "exp.toml", experiment_text(matches=8, chunk_size=4))
    out = tmp / "run"
    run_sweep(load_experiment(exp), out, jobs=1, progress=False)
    return out


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebooks_read_a_run_named_from_the_project_root_and_draw_offline(
        notebook, run_dir, monkeypatch):
    relative = os.path.relpath(run_dir, REPO_ROOT)
    assert not (REPO_ROOT / "notebooks" / relative).exists()  # wrong from notebooks/
    nb, client = _execute(notebook, monkeypatch, relative)
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not any(o.get("output_type") == "error" for o in outputs)
    svgs = [o for o in outputs if "image/svg+xml" in o.get("data", {})]
    assert svgs, "charts are inline SVG"
    text = json.dumps(outputs)
    assert "<script" not in text and "cdn.jsdelivr" not in text and "https://" not in text


def test_a_missing_or_unfinished_run_stops_the_first_cell_with_one_line(run_dir, tmp_path,
                                                                      monkeypatch):
    notebook = NOTEBOOKS[0]
    for run, needle in (("runs/no-such-run", "runs/no-such-run: no such run folder"),
                        (None, "incomplete: 1 of 4 chunks not written yet")):
        if run is None:
            unfinished = tmp_path / "unfinished"
            shutil.copytree(run_dir, unfinished)
            marker_path(unfinished, "baseline", 1).unlink()
            run = str(unfinished)
        nb, client = _execute(notebook, monkeypatch, run)
        with pytest.raises(nbclient.exceptions.CellExecutionError):
            client.execute()
        errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
                  if o.get("output_type") == "error"]
        assert len(errors) == 1 and errors[0]["ename"] == "RunError"
        assert needle in errors[0]["evalue"]
        assert errors[0]["traceback"] == [f"RunError: {errors[0]['evalue']}"]
