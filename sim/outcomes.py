"""The outcome tables a sweep writes, as column schemas and row builders.

docs/outcomes.md documents every column; tests check the Parquet files against
it. Each table is written per variant under the hive layout
`TABLE/variant=ID/part-CHUNK.parquet`, so `variant` comes from the path.
Seat and city owners are integers: a seat index, -2 the neutral side, -3 bandits.
"""

from __future__ import annotations

from typing import Any

import polars as pl

MATCH_KEYS = {"match_id": pl.Utf8, "match_index": pl.Int64}

SCHEMAS: dict[str, dict[str, Any]] = {
    "matches": {
        **MATCH_KEYS, "seed": pl.Int64, "seats": pl.Int64, "length": pl.Int64,
        "personalities": pl.Utf8, "tables_hash": pl.Utf8, "winner": pl.Int64,
        "victory": pl.Utf8, "end_turn": pl.Int64, "events_dropped": pl.Int64,
        "replay": pl.Utf8,
    },
    "seats": {
        **MATCH_KEYS, "seat": pl.Int64, "personality": pl.Utf8, "winner": pl.Boolean,
        "alive": pl.Boolean, "rank": pl.Int64, "score": pl.Int64, "region_points": pl.Int64,
        "population_points": pl.Int64, "cities_points": pl.Int64, "gold_points": pl.Int64,
        "monuments_points": pl.Int64, "gold_stock": pl.Int64, "cities": pl.Int64,
        "population": pl.Int64, "techs": pl.Int64, "eliminated_turn": pl.Int64,
        "capitals_lost": pl.Int64, "cities_captured": pl.Int64,
        "observatory_queued_turn": pl.Int64, "observatory_lost_turn": pl.Int64,
        "observatory_completed_turn": pl.Int64, "peak_dominance": pl.Int64,
    },
    "events": {
        **MATCH_KEYS, "event": pl.Int64, "turn": pl.Int64, "kind": pl.Utf8, "seat": pl.Int64,
        "by": pl.Int64, "city": pl.Int64, "cause": pl.Int64, "value": pl.Int64,
        "detail": pl.Utf8,
    },
    "turns": {
        **MATCH_KEYS, "turn": pl.Int64, "seat": pl.Int64, "region": pl.Int64,
        "population": pl.Int64, "cities": pl.Int64, "gold": pl.Int64, "monuments": pl.Int64,
        "score": pl.Int64, "dominance": pl.Int64, "gold_stock": pl.Int64,
    },
    "errors": {
        **MATCH_KEYS, "seed": pl.Int64, "message": pl.Utf8, "replay": pl.Utf8,
    },
}
TABLES = tuple(SCHEMAS)
SORT_KEYS = {"matches": ["match_index"], "seats": ["match_index", "seat"],
             "events": ["match_index", "event"], "turns": ["match_index", "turn", "seat"],
             "errors": ["match_index"]}

_OWNER = {"neutral": -2, "bandit": -3}
# which event field fills the generic `value` column, and which the `detail` column
_VALUE = {"capital_fall": "new_capital", "transfer": "cause", "kept": "cause",
          "eliminated": "cause", "revolt_start": "turns", "unrest": "turns", "truce": "turns",
          "tile_bought": "price", "camp_cleared": "gold", "capture": "unit"}
_DETAIL = {"victory": "victory", "built": "item", "revolt_start": "cause",
           "revolt_end": "cause"}


def _owner(value: Any) -> int | None:
    if value is None:
        return None
    return _OWNER.get(value, value) if isinstance(value, str) else int(value)


def empty_columns(table: str) -> dict[str, list]:
    return {name: [] for name in SCHEMAS[table]}


def add_match(cols: dict[str, dict[str, list]], result: dict[str, Any], match_id: str,
              replay: str, personalities: list[str]) -> None:
    """Append one match's outcome (sim.match.outcome) to the column lists."""
    idx = result["match_index"]
    m = cols["matches"]
    for key, value in (("match_id", match_id), ("match_index", idx), ("seed", result["seed"]),
                       ("seats", result["seats_n"]), ("length", result["length"]),
                       ("personalities", ",".join(personalities)),
                       ("tables_hash", result["tables_hash"]), ("winner", result["winner"]),
                       ("victory", result["victory"]), ("end_turn", result["end_turn"]),
                       ("events_dropped", result["events_dropped"]), ("replay", replay)):
        m[key].append(value)
    s = cols["seats"]
    for row in result["seats"]:
        s["match_id"].append(match_id)
        s["match_index"].append(idx)
        s["winner"].append(row["seat"] == result["winner"])
        for key in SCHEMAS["seats"]:
            if key not in ("match_id", "match_index", "winner"):
                s[key].append(row[key])
    e = cols["events"]
    for ev in result["events"]:
        kind = ev["kind"]
        e["match_id"].append(match_id)
        e["match_index"].append(idx)
        e["event"].append(ev["row"])
        e["turn"].append(ev["turn"])
        e["kind"].append(kind)
        e["seat"].append(_owner(ev.get("seat")))
        e["by"].append(_owner(ev.get("by")))
        e["city"].append(ev.get("city"))
        e["cause"].append(ev.get("cause") if isinstance(ev.get("cause"), int) else None)
        value = ev.get(_VALUE.get(kind, ""), None)
        e["value"].append(value if isinstance(value, int) else None)
        detail = ev.get(_DETAIL.get(kind, ""), None)
        e["detail"].append(detail if isinstance(detail, str) else None)
    t = cols["turns"]
    rows = result["turns"]
    t["match_id"].extend([match_id] * len(rows))
    t["match_index"].extend([idx] * len(rows))
    for key in SCHEMAS["turns"]:
        if key not in MATCH_KEYS:
            t[key].extend([row[key] for row in rows])


def frames(cols: dict[str, dict[str, list]]) -> dict[str, pl.DataFrame]:
    """Typed, key-sorted frames from column lists."""
    return {table: pl.DataFrame(data, schema=SCHEMAS[table]).sort(SORT_KEYS[table])
            for table, data in cols.items()}
