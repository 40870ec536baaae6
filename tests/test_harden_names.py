"""Names are data (issue 47, item 3). A name from a file that names a folder or a file
(an experiment's, sensitivity's or tune's, a variant's, a unit's or personality's in
the tables) is refused at load, in one line and exit 2, when it could not be a sane
file name or label: markup, a path, a NUL, a newline, non-ASCII letters, 10,000
characters. Free text (a description, the run folder's own path) is taken as it is and
escaped in every page: a sweep, its report and a replay of one of its matches write no
unescaped `<script` and no file outside the folders they were given.
docs/names.md says which kinds of names are refused and which escaped."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from sim.rules.tables import REPO_ROOT
from tests.conftest import FIXTURE_TABLES
from tests.test_runs_support import experiment_text, write
from tools.fuzz_inputs import _call, _main

SCRIPT = "<script>alert(1)</script>"
# each as a TOML basic string (NUL and newline as TOML escapes)
HOSTILE = {"markup": SCRIPT, "path": "../../x", "long": "v" * 10_000, "nul": "a\\u0000b",
           "newline": "baseline\\n", "unicode": "variante-é", "dot-dot": "..", "dash": "-rf"}


def _files(*folders: Path) -> set[Path]:
    return {p for folder in folders if folder.exists() for p in folder.rglob("*")}


def _sim(*args) -> tuple[int | None, str]:
    status, _out, err, escaped = _call(_main([str(a) for a in args]))
    assert not escaped and "Traceback" not in err, (escaped, err)
    return status, err


def _refused_in_one_line(path: Path, *args) -> str:
    status, err = _sim(*args)
    lines = err.strip().splitlines()
    assert status == 2 and len(lines) == 1 and lines[0].startswith(str(path)), err
    return lines[0]


@pytest.mark.parametrize("where", ["experiment", "variant", "grid"])
@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_a_name_that_cannot_name_a_file_is_refused_before_anything_is_written(
        tmp_path, where, kind):
    name = HOSTILE[kind]
    text = experiment_text(tables=FIXTURE_TABLES)
    if where == "experiment":
        text = text.replace('name = "runs"', f'name = "{name}"', 1)
    elif where == "variant":
        text = text.replace('name = "dominance-50"', f'name = "{name}"')
    else:
        text += f'\n[[grids]]\nname = "{name}"\naxes = {{ "dominance.share_pct" = [40, 60] }}\n'
    exp = write(tmp_path / "exp.toml", text)
    watched = (tmp_path, REPO_ROOT / "runs", REPO_ROOT / "reports")
    before = _files(*watched)
    line = _refused_in_one_line(exp, "sweep", exp, "--jobs", "1", "--quiet")
    assert "name" in line and len(line) < 400, line
    assert _files(*watched) == before
    assert not (REPO_ROOT / "x").exists() and not (tmp_path.parent.parent / "x").exists()


@pytest.mark.parametrize("command", ["sensitivity", "tune"])
def test_sensitivity_and_tune_names_are_refused_too(tmp_path, command):
    if command == "tune":
        source = (FIXTURE_TABLES.parent / "tune-tiny.toml").read_text()
        text = source.replace('name = "tune-tiny"', f'name = "{SCRIPT}"') \
            .replace('tables = "tables.toml"', f'tables = "{FIXTURE_TABLES}"')
    else:
        source = (REPO_ROOT / "experiments" / "sensitivity" / "small.toml").read_text()
        text = "\n".join('name = "../../x"' if line.startswith("name =") else line
                         for line in source.splitlines())
    path = write(tmp_path / f"{command}.toml", text)
    before = _files(tmp_path, REPO_ROOT / "runs")
    line = _refused_in_one_line(path, command, path, "--jobs", "1")
    assert "name" in line and "letters, digits" in line, line
    assert _files(tmp_path, REPO_ROOT / "runs") == before


def test_a_table_item_named_with_markup_is_refused_at_its_line(tmp_path):
    text = FIXTURE_TABLES.read_text()
    at = text.index("[units.warrior]")
    tables = write(tmp_path / "tables.toml",
                   text[:at] + f'[units."{SCRIPT}"]\n' + text[at:].split("\n", 1)[1])
    line = _refused_in_one_line(tables, "tables", "check", tables)
    assert "a name: letters, digits, _ - only" in line and "<script>" in line


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory):
    """A small sweep whose free text is hostile: its description, and the path of its
    run folder (a folder named with markup), then its report and a replay."""
    tmp = tmp_path_factory.mktemp("names")
    text = experiment_text(matches=2, tables=FIXTURE_TABLES).replace(
        'name = "runs"', f'name = "runs"\ndescription = "{SCRIPT} &amp; é \\u0007"', 1)
    exp = write(tmp / "exp.toml", text)
    out = tmp / "<script>alert(2)<script>"
    pages = tmp / "pages"
    watched = (REPO_ROOT / "runs", REPO_ROOT / "reports")
    before = _files(*watched)
    for args in (("sweep", exp, "--jobs", "1", "--quiet", "--out", out),
                 ("report", out, "--out", pages / "report.html"),
                 ("replay", out, "baseline:1", "--out", pages / "replay.html")):
        status, err = _sim(*args)
        assert status == 0, (args[0], err)
    return tmp, out, pages, _files(*watched) - before


def test_hostile_free_text_is_escaped_in_the_report_and_the_replay(hostile_run):
    _tmp, _out, pages, _new = hostile_run
    report = (pages / "report.html").read_text()
    replay = (pages / "replay.html").read_text()
    assert "<script" not in report.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp;amp; é" in report  # it got there
    # the viewer's own two scripts (its data, its code), and no other: in its data the
    # folder's name is JSON-escaped, in its subtitle HTML-escaped
    assert replay.lower().count("<script") == 2
    assert "\\u003cscript\\u003ealert(2)\\u003cscript\\u003e" in replay
    assert "&lt;script&gt;alert(2)&lt;script&gt;" in replay


def test_nothing_is_written_outside_the_folders_given(hostile_run):
    tmp, out, pages, new_in_repo = hostile_run
    assert new_in_repo == set()
    assert {p.relative_to(tmp).parts[0] for p in tmp.rglob("*")} == \
        {"exp.toml", out.name, "pages"}
    assert sorted(p.name for p in pages.iterdir()) == ["replay.html", "report.html"]
    variants = {p.name for p in (out / "matches").iterdir()}
    assert variants == {"variant=baseline", "variant=dominance-50"}
    rows = pl.read_parquet(out / "matches" / "variant=baseline" / "part-00000.parquet")
    assert rows.height == 2


def test_the_sensitivity_page_escapes_what_it_is_given():
    """The page's own escaping, below the names refused at load: parameters and a
    design name holding markup (as no file can give them) come out as text."""
    from sim.report.sensitivity import build_sensitivity_report

    rows = [(f"units.{SCRIPT}.attack", "balance", 1, 1, 0.1), ("map.radius", "setup", 2, 1, 0.05)]
    table = pl.DataFrame(
        [{"parameter": k, "group": g, "rank": r, "group_rank": gr, "metric": "victory=science",
          "same_as": None, "base": 10.0, "low": 8.0, "high": 12.0, "low_value": 0.3,
          "high_value": 0.3 + e * 4, "effect": e * 4, "lo": e * 3, "hi": e * 5,
          "effect_per_10pct": e, "p_adjusted": 0.001, "changed": True, "inert": False}
         for k, g, r, gr, e in rows])
    design = {"name": SCRIPT, "step": 0.2, "parameters": [{"key": SCRIPT}],
              "setup_keys": [SCRIPT]}
    page = build_sensitivity_report(table, design)
    assert "<script" not in page.lower()
    assert page.count("units.&lt;script&gt;") >= 2  # its table row and its tornado bar


def test_a_hand_edited_provenance_cannot_lead_out_of_the_run_folder(hostile_run, tmp_path):
    """A variant id in provenance.json names the run's paths (and a replay's default
    page): one that is a path is refused by every reader, in one line."""
    _tmp, out, _pages, _new = hostile_run
    copy = tmp_path / "run"
    shutil.copytree(out, copy)
    prov = json.loads((copy / "provenance.json").read_text())
    prov["variants"][0]["id"] = "../../x"
    (copy / "provenance.json").write_text(json.dumps(prov))
    before = _files(tmp_path, REPO_ROOT / "reports")
    for args in (("check-run", copy), ("replay", copy, "../../x:1"), ("report", copy)):
        line = _refused_in_one_line(copy, *args)
        assert "unreadable provenance" in line and "variant name '../../x'" in line, line
    assert _files(tmp_path, REPO_ROOT / "reports") == before
