"""The outcome rows of a match built the plain way, one dict per event and turn row
(sim.engine.match.outcome) appended value by value: the reference the sweep's columnar
path (sim.engine.columns, sim.runner.chunk.ChunkColumns) is checked against in
tests/test_columns.py. It was the sweep's own path until the dicts cost three to four
times the match."""

from __future__ import annotations

from typing import Any

from sim.outputs.schemas import MATCH_KEYS, SCHEMAS
from sim.rules.codes import OWNER_NAMES, TRUCE_AFTER_TURNS

_OWNER = {name: code for code, name in OWNER_NAMES.items()}
# which event field fills the generic `value` column, and which the `detail` column
_VALUE = {"capital_fall": "new_capital", "transfer": "cause", "kept": "cause",
          "eliminated": "cause", "revolt_start": "turns", "unrest": "turns", "truce": "turns",
          "truce_declined": "turns",
          "tile_bought": "price", "camp_cleared": "gold", "capture": "unit",
          "unit_disbanded": "unit", "attack": "damage", "rush": "gold", "research": "cost",
          "repair": "hp", "repairs": "hp", "heals": "hp"}
_DETAIL = {"victory": "victory", "built": "item", "revolt_start": "cause",
           "revolt_end": "cause", "unit_disbanded": "type", "attack": "attacker",
           "rush": "item", "research": "tech"}


def _owner(value: Any) -> int | None:
    if value is None:
        return None
    return _OWNER.get(value, value) if isinstance(value, str) else int(value)


def add_match(cols: dict[str, dict[str, list]], result: dict[str, Any], match_id: str,
              replay: str, personalities: list[str]) -> None:
    """Append one match's outcome (sim.engine.match.outcome) to the column lists."""
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
        for raw in ("a", "b", "c"):
            e[raw].append(ev[raw])
    t = cols["turns"]
    rows = result["turns"]
    t["match_id"].extend([match_id] * len(rows))
    t["match_index"].extend([idx] * len(rows))
    for key in SCHEMAS["turns"]:
        if key not in MATCH_KEYS:
            t[key].extend([row[key] for row in rows])
    tr = cols["truces"]
    held = {(row["turn"], row["seat"]): row for row in rows}
    last = max((row["turn"] for row in rows), default=0)
    offers = [ev for ev in result["events"] if ev["kind"] in ("truce", "truce_declined")]
    for k, ev in enumerate(offers):
        buyer, seller = _owner(ev["seat"]), _owner(ev["by"])
        before, after = min(max(ev["turn"] - 1, 1), last), min(ev["turn"] + TRUCE_AFTER_TURNS, last)
        for key, value in (("match_id", match_id), ("match_index", idx), ("offer", k),
                           ("turn", ev["turn"]), ("buyer", buyer), ("seller", seller),
                           ("price", ev["price"]), ("turns", ev["turns"]),
                           ("accepted", ev["kind"] == "truce"), ("after_turn", after)):
            tr[key].append(value)
        for side, seat in (("buyer", buyer), ("seller", seller)):
            for name, field in (("cities", "cities_held"), ("score", "score")):
                tr[f"{side}_{name}_before"].append(held[(before, seat)][field])
                tr[f"{side}_{name}_after"].append(held[(after, seat)][field])
