"""The record kernels receive (`TableArrays`), generated from the schema by one field map.

Every number and flag of the validated tables reaches kernels as a field of one
numpy record (numba passes a record as a single pointer, which keeps kernels
quick to compile; field access reads `tb.w_city`, `tb.unit_cost[u]`). Its fields
are derived from `sim.rules.schema` by these rules, so adding a key to the
schema adds it to the record:

- a number or flag `section.key` (also inside a grouping sub-table such as
  `ai.war.key`) becomes the scalar `key`: int64, flags uint8;
- a table keyed by code names (`map.terrain_weights`, one key per terrain)
  becomes the vector `terrain_weights` in code order, and one keyed by code
  names whose values are tables (`terrain.<terrain>.defence_pct`) one vector
  per value (`terrain_defence_pct`);
- a table of named items (`units.<name>.attack`) becomes one array per value
  over the items sorted by name (`unit_attack`, (U,)), the singular prefix
  from `ITEMS`;
- a name that refers to other items (`revolt.law_tech`, `units.<name>.tech`)
  becomes that item's index (-1 for ""), and a `Literal` choice (a tech's focus,
  a card's kind) the position of the choice in its code tuple;
- `RENAMES` gives a few scalars a clearer name than their key (`city.defence_base`
  -> `city_defence_base`), `DERIVED` builds the fields that combine several keys
  (the (4,) yield vectors, `tech_requires` (K, K), ...), and `NOT_IN_RECORD`
  names the keys only Python reads (with why).

Item names are ordered by `item_names` (sorted), so item codes depend on the
content of the tables only, like their hash. The generated field list, with
shapes and source keys, is `RECORD_DOC` (appended to this docstring; print it
with `python -m sim.rules.record`). Building the field map checks that every
schema key is placed once and that no two fields share a name.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel

from sim.rules.codes import (
    CARD_KINDS,
    NODE_KINDS,
    NONE,
    PERSONALITY_WEIGHTS,
    TERRAINS,
    VALUE_FEATURES,
    YIELDS,
)
from sim.rules.schema import AI_PARTS, TablesModel, personality_values

TableArrays = np.record  # the compiled tables; fields: RECORD_DOC (generated from FIELDS)

# tables of named items -> (singular prefix of their fields, shape letter)
ITEMS = {
    "units": ("unit", "U"),
    "buildings": ("building", "B"),
    "techs": ("tech", "K"),
    "events.cards": ("card", "E"),
}
# name tuples a table may be keyed by (a vector in the tuple's order)
CODE_TUPLES = {"TERRAINS": TERRAINS, "NODE_KINDS": NODE_KINDS, "YIELDS": YIELDS,
               "PERSONALITY_WEIGHTS": PERSONALITY_WEIGHTS, "CARD_KINDS": CARD_KINDS}
# keys holding the name of an item of another table -> that table
NAME_REFS = {
    "revolt.law_tech": "techs",
    "science.observatory": "buildings",
    "science.observatory_tech": "techs",
    "units.*.tech": "techs",
    "buildings.*.tech": "techs",
}
# scalars whose key alone would be unclear in kernels, and code-keyed item tables
RENAMES = {
    "city.defence_base": "city_defence_base",
    "city.defence_per_population": "city_defence_per_population",
    "revolt.transfer_turns": "revolt_transfer_turns",
    "revolt.defence_pct": "revolt_defence_pct",
    "dominance.share_pct": "dominance_share_pct",
    "dominance.counter_to_win": "dominance_to_win",
    "combat.city_attack_retaliation": "city_retaliation",
    "ai.lookahead.every_pct": "lookahead_every_pct",
    "ai.lookahead.horizon_pct": "lookahead_horizon_pct",
    "ai.lookahead.start_pct": "lookahead_start_pct",
    "ai.lookahead.keep_margin": "lookahead_keep_margin",
    "ai.lookahead.stop_pct": "lookahead_stop_pct",
    "ai.lookahead.candidates": "lookahead_candidates",
    "ai.lookahead.targets": "lookahead_targets",
    "ai.lookahead.win_value": "lookahead_win_value",
    "ai.lookahead.city_candidate": "lookahead_city_candidate",
    "ai.lookahead.plan_candidate": "lookahead_plan_candidate",
    "ai.search.every_pct": "search_every_pct",
    "ai.search.horizon_pct": "search_horizon_pct",
    "ai.search.start_pct": "search_start_pct",
    "ai.search.stop_pct": "search_stop_pct",
    "ai.search.keep_margin": "search_keep_margin",
    "ai.search.rollouts": "search_rollouts",
    "ai.search.targets": "search_targets",
    "ai.search.win_value": "search_win_value",
}
# keys only Python reads, never kernels
NOT_IN_RECORD = {
    "match.seats": "the engine picks the seat count of a match",
    "match.length": "the engine turns the preset into the state's last_turn",
    "match.personalities": "the engine sets each seat's personality index in the state",
    "match.lengths": "the engine turns the preset into the state's last_turn",
    "match.cost_scale_pct": "compile_record scales the cost fields by it (D6)",
    "match.dominance_scale_pct": "compile_record scales dominance_to_win by it (D6)",
    "match.seat_cost_scale_pct": "compile_record scales the cost fields by it too",
    "match.seat_dominance_scale_pct": "compile_record scales dominance_to_win by it too",
    "match.seat_length_scale_pct": "Tables.match_length scales the preset's turns by it",
    "match.radius_scale_pct": "Tables.board_radius scales the record's radius by it (D6)",
    "territory.max_ring_tiles": "validation only: bounds grown_ring_radius (T15)",
}


@dataclass(frozen=True)
class RecordField:
    """One field of the record: `tb.<name>`."""

    name: str
    sources: tuple[str, ...]   # table keys it reads; `*` stands for every named item
    shape: str                 # "" for a scalar, else e.g. "(U,)" or "(B, 4) YIELDS"
    flag: bool                 # uint8 0/1, else int64
    build: Callable[[TablesModel], Any]


def item_names(items: Mapping[str, Any]) -> list[str]:
    """The names of a table of items in code order (sorted)."""
    return sorted(items)


def _at(model: BaseModel, path: tuple[str, ...]) -> Any:
    node: Any = model
    for part in path:
        node = node[part] if isinstance(node, Mapping) else getattr(node, part)
    return node


def _items(model: TablesModel, table: str) -> list[Any]:
    """The items of `table` (a dotted key of ITEMS) in code order."""
    items = _at(model, tuple(table.split(".")))
    return [items[n] for n in item_names(items)]


def _index(model: TablesModel, table: str, name: str) -> int:
    """Code of the item `name` of `table`, NONE for ""."""
    return item_names(_at(model, tuple(table.split(".")))).index(name) if name else NONE


def _i64(values) -> np.ndarray:
    return np.asarray(list(values), dtype=np.int64)


def _flags(values) -> np.ndarray:
    return np.asarray(list(values), dtype=np.uint8)


def _economy_vector(pattern: str, codes: tuple[str, ...]) -> tuple[tuple[str, ...], Callable]:
    keys = tuple(pattern.format(c) for c in codes)
    return keys, lambda m: _i64(getattr(m.economy, k) for k in keys)


def _derived() -> list[RecordField]:
    """The fields that combine several keys, or need another table's names."""
    base_keys, base = _economy_vector("{}_base", YIELDS)
    pop_keys, pop = _economy_vector("{}_per_population", YIELDS)
    node_keys, node = _economy_vector("node_{}", NODE_KINDS)

    def start_units(m: TablesModel) -> np.ndarray:
        return _i64(_index(m, "units", n) for n in m.match.start_units)

    def building_yield(m: TablesModel) -> np.ndarray:
        rows = [[getattr(b, y) for y in YIELDS] for b in _items(m, "buildings")]
        return np.asarray(rows, dtype=np.int64).reshape(len(rows), len(YIELDS))

    def tech_requires(m: TablesModel) -> np.ndarray:
        names = item_names(m.techs)
        out = np.zeros((len(names), len(names)), dtype=np.uint8)
        for i, name in enumerate(names):
            for req in m.techs[name].requires:
                out[i, names.index(req)] = 1
        return out

    return [
        RecordField("start_units", ("match.start_units",), "(N,) unit codes", False,
                    start_units),
        RecordField("yield_base", tuple(f"economy.{k}" for k in base_keys), "(4,) YIELDS",
                    False, base),
        RecordField("yield_per_population", tuple(f"economy.{k}" for k in pop_keys),
                    "(4,) YIELDS", False, pop),
        RecordField("node_yield", tuple(f"economy.{k}" for k in node_keys), "(3,) NODE_KINDS",
                    False, node),
        RecordField("building_yield", tuple(f"buildings.*.{y}" for y in YIELDS),
                    "(B, 4) YIELDS", False, building_yield),
        RecordField("tech_requires", ("techs.*.requires",), "(K, K) [t, p]: t needs p", True,
                    tech_requires),
    ]


DERIVED = _derived()

# D8: every AI value, per personality. `tb.ai` is a (P,) array of records (personalities in
# code order), each the whole parameter set of one personality: its weights and every
# `[ai.<part>]` key, overridden where the personality says so. Kernels read
# `ai = tb.ai[plan_of(st, seat)]` (the seat's personality or the plan its lookahead
# adopted), then `ai.army_base_pct`, `ai.weights[W_MILITARY]`.
AI_KEYS = tuple((part, key, info.annotation is bool)
                for part, model in AI_PARTS.items()
                for key, info in model.model_fields.items())
AI_DTYPE = np.dtype([("weights", np.int64, (len(PERSONALITY_WEIGHTS),))] +
                    [(key, np.uint8 if flag else np.int64) for _part, key, flag in AI_KEYS],
                    align=True)
AIRecord = np.record  # one element of tb.ai; fields: AI_DTYPE


def _ai_table(m: TablesModel) -> np.ndarray:
    names = item_names(m.ai.personalities)
    out = np.zeros(len(names), dtype=AI_DTYPE)
    for i, name in enumerate(names):
        own = m.ai.personalities[name]
        out[i]["weights"] = [getattr(own.weights, w) for w in PERSONALITY_WEIGHTS]
        values = personality_values(m.ai, name)
        for part, key, _flag in AI_KEYS:
            out[i][key] = int(values[part][key])
    return out


AI_FIELD = RecordField(
    "ai", tuple(f"ai.personalities.*.weights.{w}" for w in PERSONALITY_WEIGHTS) +
    tuple(f"ai.{p}.{k}" for p, k, _f in AI_KEYS) +
    tuple(f"ai.personalities.*.{p}.{k}" for p, k, _f in AI_KEYS),
    "(P,) AI records (AI_DTYPE)", False, _ai_table)


def _value_weights(m: TablesModel) -> np.ndarray:
    """[ai.value] weights in VALUE_FEATURES order; (0,) when the tables have no
    [ai.value] (the lookahead then values a play-out by the score margin)."""
    if m.ai.value is None:
        return np.zeros(0, dtype=np.int64)
    return _i64(getattr(m.ai.value.weights, f) for f in VALUE_FEATURES)


# D11: the learned value of a position (sim.kernels.lookahead.position_value)
VALUE_FIELD = RecordField(
    "value_weights", tuple(f"ai.value.weights.{f}" for f in VALUE_FEATURES),
    "(F,) VALUE_FEATURES, or (0,): the score margin", False, _value_weights)


def _code_tuple(model_type: type) -> str | None:
    """Name of the code tuple whose names are exactly the keys of `model_type`, or None."""
    if not (isinstance(model_type, type) and issubclass(model_type, BaseModel)):
        return None
    keys = set(model_type.model_fields)
    return next((name for name, codes in CODE_TUPLES.items() if set(codes) == keys), None)


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


class _FieldMap:
    """The walk of the schema that places every key in one field (_derive): the
    fields so far in schema order, and which DERIVED fields are emitted."""

    def __init__(self) -> None:
        self.fields: list[RecordField] = []
        self.claimed = {src: f for f in DERIVED for src in f.sources}
        self.emitted: set[str] = set()

    def claim(self, key: str) -> bool:
        """True when a derived field (emitted here, once) or NOT_IN_RECORD covers `key`."""
        if key in NOT_IN_RECORD:
            return True
        f = self.claimed.get(key)
        if f is None:
            return False
        if f.name not in self.emitted:
            self.emitted.add(f.name)
            self.fields.append(f)
        return True

    def walk(self, model_type: type, path: tuple[str, ...]) -> None:
        """Place every key of the (sub-)table `model_type` at `path`: the AI's parameter
        sets (D8), tables of named items, code-keyed tables, grouping sub-tables
        (walked in turn) and scalars."""
        for name, info in model_type.model_fields.items():
            sub = (*path, name)
            key = ".".join(sub)
            tp = info.annotation
            if self.claim(key):
                continue
            if key == "ai":
                self.fields.append(AI_FIELD)
                # the shared lookahead and search values are no personality's: plain
                # scalars
                for part in ("lookahead", "search"):
                    self.walk(tp.model_fields[part].annotation, (*sub, part))
                self.fields.append(VALUE_FIELD)
                continue
            if key in ITEMS:
                self.per_item(key, typing.get_args(tp)[1])
                continue
            codes = _code_tuple(tp)
            if codes is not None:
                self.code_keyed(key, name, sub, tp, codes)
            elif _is_model(tp):         # a grouping sub-table: its keys keep their names
                self.walk(tp, sub)
            else:
                self.scalar(key, sub, tp)

    def scalar(self, key: str, path: tuple[str, ...], tp: Any) -> None:
        """A number, a flag, or the name of another table's item (its code, -1 for "")."""
        name = RENAMES.get(key, path[-1])
        if tp is bool:
            self.fields.append(RecordField(name, (key,), "", True, lambda m: int(_at(m, path))))
        elif tp is int:
            self.fields.append(RecordField(name, (key,), "", False, lambda m: _at(m, path)))
        elif key in NAME_REFS:
            table = NAME_REFS[key]
            self.fields.append(RecordField(name, (key,), f"{ITEMS[table][1]} code", False,
                                           lambda m: _index(m, table, _at(m, path))))
        else:
            raise TypeError(f"{key}: no record field for a {tp!r}; add it to DERIVED or "
                            "NOT_IN_RECORD")

    def code_keyed(self, key: str, name: str, path: tuple[str, ...], tp: type,
                   codes: str) -> None:
        """A table keyed by the names of the code tuple `codes`: one vector in code order
        (map.terrain_weights.<t> -> terrain_weights, (6,) TERRAINS), or, when each value
        is a table, one vector per value (terrain.<t>.defence_pct -> terrain_defence_pct)."""
        code_names = CODE_TUPLES[codes]
        value = tp.model_fields[code_names[0]].annotation
        shape = f"({len(code_names)},) {codes}"
        if _is_model(value):    # terrain.<t>.<stat> -> terrain_<stat>
            for stat, stat_info in value.model_fields.items():
                flag = stat_info.annotation is bool
                self.fields.append(RecordField(
                    f"{name}_{stat}", tuple(f"{key}.{c}.{stat}" for c in code_names),
                    shape, flag,
                    lambda m, p=path, s=stat, f=flag, cs=code_names: np.asarray(
                        [getattr(getattr(_at(m, p), c), s) for c in cs],
                        dtype=np.uint8 if f else np.int64)))
        else:                   # map.terrain_weights.<t> -> terrain_weights
            self.fields.append(RecordField(
                RENAMES.get(key, name), tuple(f"{key}.{c}" for c in code_names), shape,
                False, lambda m, p=path, cs=code_names: _i64(getattr(_at(m, p), c)
                                                             for c in cs)))

    def per_item(self, table: str, item_type: type) -> None:
        """A table of named items (a key of ITEMS): one array per value over the items in
        code order (units.<name>.attack -> unit_attack, (U,)), or, for items keyed by
        code names, one (N, len) matrix."""
        prefix, dim = ITEMS[table]
        codes = _code_tuple(item_type)
        if codes is not None:   # items keyed by code names: one (N, len) matrix
            key = f"{table}.*"
            n = len(CODE_TUPLES[codes])
            self.fields.append(RecordField(
                RENAMES[table], tuple(f"{key}.{c}" for c in CODE_TUPLES[codes]),
                f"({dim}, {n}) {codes}", False,
                lambda m: np.asarray([[getattr(it, c) for c in CODE_TUPLES[codes]]
                                      for it in _items(m, table)],
                                     dtype=np.int64).reshape(-1, n)))
            return
        for stat, info in item_type.model_fields.items():
            key = f"{table}.*.{stat}"
            if not self.claim(key):
                self.fields.append(_item_stat(table, stat, info.annotation,
                                              f"{prefix}_{stat}", f"({dim},)"))

    def checked(self) -> tuple[RecordField, ...]:
        """The fields, once every DERIVED field was placed and no name is taken twice."""
        unused = [f.name for f in DERIVED if f.name not in self.emitted]
        if unused:
            raise TypeError(f"derived fields whose keys are not in the schema: {unused}")
        names = [f.name for f in self.fields]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise TypeError(f"record fields named twice: {dupes}; add a RENAMES entry")
        return tuple(self.fields)


def _item_stat(table: str, stat: str, tp: Any, name: str, shape: str) -> RecordField:
    """The field of one value of every item of `table` (`shape` (U,), (B,), ...): flags,
    numbers, a Literal choice as its position in the choices (a tech's focus, a card's
    kind), or another table's item as its code (-1 for "", NAME_REFS)."""
    key = f"{table}.*.{stat}"
    if tp is bool:
        return RecordField(name, (key,), shape, True,
                           lambda m, s=stat: _flags(getattr(it, s) for it in _items(m, table)))
    if tp is int:
        return RecordField(name, (key,), shape, False,
                           lambda m, s=stat: _i64(getattr(it, s) for it in _items(m, table)))
    if typing.get_origin(tp) is Literal:
        choices = typing.get_args(tp)
        codes_name = next(n for n, c in CODE_TUPLES.items() if c == choices) \
            if choices in CODE_TUPLES.values() else "choices"
        return RecordField(
            name, (key,), f"{shape} index into {codes_name}", False,
            lambda m, s=stat, ch=choices: _i64(ch.index(getattr(it, s))
                                               for it in _items(m, table)))
    if key in NAME_REFS:
        ref = NAME_REFS[key]
        return RecordField(
            name, (key,), f"{shape} {ITEMS[ref][1]} code, -1 none", False,
            lambda m, s=stat, r=ref: _i64(_index(m, r, getattr(it, s))
                                          for it in _items(m, table)))
    raise TypeError(f"{key}: no record field for a {tp!r}; add it to DERIVED "
                    "or NOT_IN_RECORD")


def _derive() -> tuple[RecordField, ...]:
    """Walk the schema and place every key in one field (see the module docstring)."""
    fields = _FieldMap()
    fields.walk(TablesModel, ())
    return fields.checked()


FIELDS = _derive()


# D6 game speed: the fields a length preset's cost_scale_pct multiplies
SPEED_SCALED = ("tech_cost", "unit_cost", "building_cost", "growth_base",
                "growth_per_population")


def scaled_cost(value: Any, pct: int) -> Any:
    """`value` × pct / 100, rounded half up; a positive cost stays at least 1 (D6)."""
    arr = np.asarray(value, dtype=np.int64)
    out = (arr * pct + 50) // 100
    out = np.where(arr > 0, np.maximum(out, 1), out)
    return out if arr.shape else int(out)


def compile_record(model: TablesModel, cost_scale_pct: int = 100,
                   dominance_scale_pct: int = 100, radius: int | None = None) -> TableArrays:
    """The record of validated tables: one field per entry of FIELDS, flags uint8,
    every other number int64; the SPEED_SCALED costs multiplied by cost_scale_pct %
    and the dominance counter to win (V18) by dominance_scale_pct % (a length preset's
    game speed, D6, and the seat count's adjustment: Tables.arrays); `radius` (when
    given) the board's in place of map.radius (the preset's board, D6)."""
    values = [(f, f.build(model)) for f in FIELDS]
    if radius is not None:
        values = [(f, radius if f.name == "radius" else v) for f, v in values]
    if cost_scale_pct != 100:
        values = [(f, scaled_cost(v, cost_scale_pct) if f.name in SPEED_SCALED else v)
                  for f, v in values]
    if dominance_scale_pct != 100:
        values = [(f, scaled_cost(v, dominance_scale_pct) if f.name == "dominance_to_win"
                   else v) for f, v in values]
    spec: list[tuple] = []
    for f, value in values:
        nested = isinstance(value, np.ndarray) and value.dtype.names is not None
        dtype = value.dtype if nested else np.uint8 if f.flag else np.int64
        shape = np.shape(value)
        spec.append((f.name, dtype, shape) if shape else (f.name, dtype))
    holder = np.zeros(1, dtype=np.dtype(spec, align=True)).view(np.recarray)
    rec = holder[0]
    for f, value in values:
        rec[f.name] = value
    return rec


def source_pattern(key: str) -> re.Pattern:
    """A regex matching the concrete keys a source (with `*` for item names) stands for."""
    return re.compile("^" + re.escape(key).replace(r"\*", r"[^.]+") + "$")


def describe() -> str:
    """The record's fields, one a line: name, dtype, shape, source keys."""
    width = max(len(f.name) for f in FIELDS)
    lines = []
    for f in FIELDS:
        kind = "uint8" if f.flag else "int64"
        shape = f" {f.shape}" if f.shape else ""
        srcs = f.sources[0] if len(f.sources) == 1 else \
            f"{f.sources[0]} .. {f.sources[-1]} ({len(f.sources)} keys)"
        lines.append(f"  {f.name:<{width}}  {kind}{shape}  <- {srcs}")
    lines.append("\n  fields of each tb.ai[p] (AI_DTYPE), personality p's value or the "
                 "shared default:")
    lines.append(f"    {'weights':<{width}}  int64 (4,) PERSONALITY_WEIGHTS  "
                 "<- ai.personalities.<p>.weights.<weight>")
    for part, key, flag in AI_KEYS:
        lines.append(f"    {key:<{width}}  {'uint8' if flag else 'int64'}  <- ai.{part}.{key}"
                     f" / ai.personalities.<p>.{part}.{key}")
    return "\n".join(lines)


RECORD_DOC = "Fields of the record (generated from the schema):\n\n" + describe()
__doc__ = (__doc__ or "") + "\n" + RECORD_DOC + "\n"

if __name__ == "__main__":
    print(RECORD_DOC)
