"""Balance tables: validation with file:line: key: reason, overrides, hashing, arrays."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sim.rules.record import AI_DTYPE, AI_KEYS, FIELDS, NOT_IN_RECORD, source_pattern
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
    # --set errors all at once: an unknown key hid the others' bad values
    sets = subprocess.run([sys.executable, "-m", "sim.cli", "tables", "check", "--set",
                           "score.gold_per_point=abc", "--set", "score.nokey=1", "--set",
                           "match.seats=9"], capture_output=True, text=True)
    assert sets.returncode == 2
    for key in ("score.gold_per_point", "score.nokey", "match.seats"):
        assert f"--set: {key}:" in sets.stderr, (key, sets.stderr)
    # on a broken file, the --set values are said to wait, not silently passed over
    both = subprocess.run([sys.executable, "-m", "sim.cli", "tables", "check", str(path),
                           "--set", "match.seats=9"], capture_output=True, text=True)
    assert both.returncode == 2 and "score.w_city" in both.stderr
    assert "--set: not checked until the tables themselves are valid" in both.stderr


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


# ---------------------------------------------------------------- the record (sim.rules.record)


def numeric_leaves(node, prefix=()):
    """(dotted key, value) of every number and flag of resolved tables data."""
    for k, v in node.items():
        path = (*prefix, k)
        if isinstance(v, dict):
            yield from numeric_leaves(v, path)
        elif isinstance(v, bool | int):
            yield ".".join(path), v


def fields_of(key: str) -> set[str]:
    """The record fields whose sources name `key`."""
    return {f.name for f in FIELDS for src in f.sources if source_pattern(src).match(key)}


def changed_fields(a, b) -> set[str]:
    return {n for n in a.dtype.names if not np.array_equal(a[n], b[n])}


def a_variant(tables, key: str, value):
    """The tables with `key` nudged to a valid different value (None if none validates)."""
    candidates = [not value] if isinstance(value, bool) else [value + 1, value - 1]
    for new in candidates:
        try:
            return tables.with_overrides({key: new})
        except TablesError:
            continue
    return None


def test_every_numeric_schema_value_reaches_the_record(tables):
    """Each number and flag of the tables feeds the record fields the field map says it
    does, and only those: nudging it changes exactly them. Keys only Python reads are
    the declared NOT_IN_RECORD ones."""
    base = tables.arrays()
    leaves = list(numeric_leaves(tables.data))
    assert len(leaves) > 200
    skipped = []
    for key, value in leaves:
        if any(key == k or key.startswith(k + ".") for k in NOT_IN_RECORD):
            assert not fields_of(key), key
            continue
        expected = fields_of(key)
        assert expected, f"{key} feeds no record field"
        variant = a_variant(tables, key, value)
        if variant is None:
            skipped.append(key)
            continue
        assert changed_fields(base, variant.arrays()) == expected, key
    # only flags the cross-checks pin (the one science building, the one settler)
    assert set(skipped) <= {"buildings.observatory.science_victory",
                            "units.settler.founds_city"}, skipped


def test_names_and_choices_reach_the_record_as_codes(tables):
    base = tables.arrays()
    techs = tables.tech_names
    for key, value, field in [
        ("revolt.law_tech", "philosophy", "law_tech"),
        ("techs.law.focus", "military", "tech_focus"),
        ("units.warrior.tech", "archery", "unit_tech"),
        ("events.cards.harvest.kind", "gold", "card_kind"),
        ("match.start_units", ["settler"], "start_units"),
        ("techs.law.requires", ["archery"], "tech_requires"),
    ]:
        variant = tables.with_overrides({key: value})
        assert changed_fields(base, variant.arrays()) == {field}, key
    tb = tables.with_overrides({"revolt.law_tech": "philosophy"}).arrays()
    assert tb.law_tech == techs.index("philosophy")


def test_every_field_source_is_a_schema_key(tables):
    """No stale entry in the field map: each source names at least one key of the tables."""
    keys = set()

    def walk(node, prefix=()):
        for k, v in node.items():
            keys.add(".".join((*prefix, k)))
            if isinstance(v, dict):
                walk(v, (*prefix, k))

    walk(tables.data)
    for f in FIELDS:
        for src in f.sources:
            if src.startswith("ai.personalities.*.") and ".weights." not in src:
                continue   # a personality's override (D8) is optional: the shared key is checked
            assert any(source_pattern(src).match(k) for k in keys), (f.name, src)
    assert set(NOT_IN_RECORD) <= keys


def test_kernels_read_only_fields_the_record_has():
    """Every `tb.<name>` in sim/kernels is a field of its game's record (a typo fails
    here, not in numba): Crown's kernels read Crown's record, the others the hex one."""
    import ast

    import sim
    from sim.rules.crown import CROWN_RECORD_DTYPE

    hex_names = {f.name for f in FIELDS}
    kernels = Path(sim.__file__).parent / "kernels"
    missing = []
    for path in sorted(kernels.rglob("*.py")):
        names = set(CROWN_RECORD_DTYPE.names) if path.name == "crown.py" else hex_names
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                    node.value.id == "tb" and node.attr not in names:
                missing.append(f"{path}:{node.lineno}: tb.{node.attr}")
    assert not missing, "\n".join(missing)


def test_record_dtypes_are_int64_and_uint8_flags(tb):
    for f in FIELDS:
        if f.name == "ai":   # (P,) nested records (D8): their own fields follow the same rule
            for _part, key, flag in AI_KEYS:
                assert AI_DTYPE[key] == (np.uint8 if flag else np.int64), key
            assert tb.dtype["ai"].base == AI_DTYPE
            continue
        assert tb.dtype[f.name].base == (np.uint8 if f.flag else np.int64), f.name
