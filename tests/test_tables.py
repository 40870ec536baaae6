"""Balance tables: validation with file:line: key: reason, overrides, hashing, arrays."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from sim.rules.tables import DEFAULT_TABLES, TablesError, load_tables, parse_overrides, tables_hash
from tests.conftest import FIXTURE_TABLES


def broken(tmp_path, old: str, new: str, text: str | None = None):
    # the frozen fixture, so designers' edits to tables/default.toml never break this
    text = text if text is not None else FIXTURE_TABLES.read_text()
    assert old in text, old
    path = tmp_path / "bad.toml"
    path.write_text(text.replace(old, new, 1))
    return path


def errors_of(path) -> list[str]:
    with pytest.raises(TablesError) as exc:
        load_tables(path)
    return exc.value.errors


def line_number(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if line.startswith(needle))


def test_default_and_fixture_tables_validate():
    for path in (DEFAULT_TABLES, FIXTURE_TABLES):
        t = load_tables(path)
        assert t.hash == load_tables(path).hash


def test_every_error_is_reported_at_once_with_file_line_and_key(tmp_path):
    text = FIXTURE_TABLES.read_text()
    text = text.replace("w_city = 10 ", 'w_city = "ten" ', 1)
    text = text.replace("radius = 9 ", "radius = 99 ", 1)
    text = text.replace("[units.warrior]\ncost = 10", "[units.warrior]\ncots = 10", 1)
    path = tmp_path / "bad.toml"
    path.write_text(text)
    errs = errors_of(path)
    assert len(errs) == 4
    joined = "\n".join(errs)
    assert f"{path}:{line_number(text, 'w_city')}: score.w_city: " in joined
    assert f"{path}:{line_number(text, 'radius = 99')}: map.radius: " in joined
    assert "units.warrior.cots: unknown key" in joined
    assert "units.warrior.cost: missing key" in joined


@pytest.mark.parametrize("old,new,key", [
    ('requires = ["philosophy"]', 'requires = ["alchemy"]', "techs.prosperity.requires.0"),
    ('tech = "prosperity"         # V16', 'tech = "nope"', "buildings.observatory.tech"),
    ('length = "standard"', 'length = "epic"', "match.length"),
    ("grown_ring_radius = 2", "grown_ring_radius = 3", "territory.grown_ring_radius"),
    ('law_tech = "law"', 'law_tech = "lore"', "revolt.law_tech"),
    ('kind = "public_unrest"', 'kind = "plague"', "events.cards.public_unrest.kind"),
])
def test_cross_checks_name_the_key(tmp_path, old, new, key):
    errs = errors_of(broken(tmp_path, old, new))
    assert any(f": {key}: " in e for e in errs), errs
    assert all(e.startswith(str(tmp_path)) for e in errs)


def test_prerequisite_cycle_is_an_error(tmp_path):
    path = broken(tmp_path, '[techs.law]\ncost = 20\nfocus = "economy"\nrequires = []',
                  '[techs.law]\ncost = 20\nfocus = "economy"\nrequires = ["prosperity"]')
    assert any("cycle" in e for e in errors_of(path))


def test_unreadable_and_invalid_toml_are_table_errors(tmp_path):
    assert "cannot read" in errors_of(tmp_path / "missing.toml")[0]
    path = tmp_path / "x.toml"
    path.write_text("[score\n")
    assert "not valid TOML" in errors_of(path)[0]


def test_overrides_make_a_variant_with_its_own_hash():
    base = load_tables()
    variant = base.with_overrides({"score.gold_per_point": 3})
    assert variant.model.score.gold_per_point == 3
    assert variant.hash != base.hash
    assert variant.overrides == {"score.gold_per_point": 3}
    same = load_tables(overrides={"score.gold_per_point": 3})
    assert same.hash == variant.hash


def test_override_errors_name_the_key():
    with pytest.raises(TablesError) as exc:
        load_tables(overrides={"score.gold_per_pt": 3})
    assert "score.gold_per_pt" in exc.value.errors[0]
    with pytest.raises(TablesError) as exc:
        load_tables(overrides={"score": 3})
    assert "is a table" in exc.value.errors[0]
    with pytest.raises(TablesError) as exc:
        load_tables(overrides={"score.w_city": -1})
    assert "score.w_city" in exc.value.errors[0]


def test_hash_ignores_order_and_formatting(tmp_path):
    text = FIXTURE_TABLES.read_text()
    path = tmp_path / "reformatted.toml"
    path.write_text("\n".join(line.split("#")[0].rstrip() for line in text.splitlines()))
    assert load_tables(path).hash == load_tables(FIXTURE_TABLES).hash
    assert tables_hash({"a": 1, "b": 2}) == tables_hash({"b": 2, "a": 1})


def test_parse_overrides_reads_toml_values():
    assert parse_overrides(["score.gold_per_point=3", "match.length=short",
                            "map.terrain_weights.water = 0"]) == {
        "score.gold_per_point": 3, "match.length": "short", "map.terrain_weights.water": 0}
    with pytest.raises(TablesError):
        parse_overrides(["nonsense"])


def test_arrays_follow_sorted_names_and_carry_the_values(tables):
    tb = tables.arrays()
    assert tables.unit_names == sorted(tables.unit_names)
    w = tables.unit_names.index("warrior")
    assert tb.unit_attack[w] == tables.model.units["warrior"].attack
    obs = tables.building_names.index("observatory")
    assert tb.observatory == obs and tb.building_science_victory[obs] == 1
    assert tb.building_rushable[obs] == 0
    p = tables.tech_names.index("prosperity")
    assert tb.tech_requires[p, tables.tech_names.index("philosophy")] == 1
    assert tb.w_city == tables.model.score.w_city
    assert isinstance(tb.unit_cost, np.ndarray)


def test_tables_check_command_exits_2_with_every_error(tmp_path):
    path = broken(tmp_path, "w_city = 10 ", "w_city = -3 ")
    proc = subprocess.run([sys.executable, "-m", "sim.cli", "tables", "check", str(path)],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "score.w_city" in proc.stderr and "Traceback" not in proc.stderr
    ok = subprocess.run([sys.executable, "-m", "sim.cli", "tables", "check"],
                        capture_output=True, text=True)
    assert ok.returncode == 0 and "ok (hash" in ok.stdout


def test_fixture_tables_have_the_same_keys_as_the_defaults():
    """The frozen fixture may lag the designers' values, never the schema."""
    import tomllib

    def keys(node, prefix=""):
        out = set()
        for k, v in node.items():
            out.add(prefix + k)
            if isinstance(v, dict):
                out |= keys(v, prefix + k + ".")
        return out

    default = keys(tomllib.loads(DEFAULT_TABLES.read_text()))
    fixture = keys(tomllib.loads(FIXTURE_TABLES.read_text()))
    assert default == fixture
