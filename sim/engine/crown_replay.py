"""One Crown match of a run played again, round by round (issue 48 item 1: `sim replay`).

A Crown run keeps, per variant, its resolved tables and side skills (provenance.json)
and, per match, its root seed and index (the `matches` row). That is everything a
match reads (L7: the stream is keyed by root seed and match index only), so playing
it again with `play_crown_match` gives the same match bit for bit; `replay_crown_match`
returns its transcript and the `matches` row the chunk player would write for it
(sim.engine.crown_chunk.match_row), which the caller compares with the run's row.
"""

from __future__ import annotations

from typing import Any

from sim.engine.crown import play_crown_match
from sim.engine.crown_chunk import match_row
from sim.rules.crown import (
    EF_A,
    EF_B,
    EF_KIND,
    EF_PLAYER,
    EF_ROUND,
    EF_WAVE,
    EF_ZONE,
    EMPTY,
    EVENTS,
    ORDERS,
    SIDES,
    WIDGETS,
    CrownTables,
)


def _event(tables: CrownTables, ev: Any) -> dict[str, Any]:
    """One event row (EVENT_FIELDS) in the game's words (EVENT_MEANING): zones by
    name, faces 1–12, leads and orders by name; players numbered from 0, side A's
    first (L4), each with its side."""
    kind = EVENTS[int(ev[EF_KIND])]
    zones = tables.zone_names
    zone, a, b = int(ev[EF_ZONE]), int(ev[EF_A]), int(ev[EF_B])
    wave = int(ev[EF_WAVE])
    # the fault, the eruption and a round's score belong to no wave (the kernel logs -1)
    out: dict[str, Any] = {"kind": kind, "round": int(ev[EF_ROUND]) + 1,
                           "wave": wave + 1 if wave >= 0 else None}
    player = int(ev[EF_PLAYER])
    side = SIDES[0 if player < tables.model.match.team_sizes[0] else 1]
    if kind == "roll":
        out |= {"player": player, "side": side, "face": zone + 1, "crown": a,
                "lead": WIDGETS[b]}
    elif kind == "order":
        out |= {"player": player, "side": side, "order": ORDERS[a],
                "zone": zones[zone] if zone != EMPTY else None, "place": b}
    elif kind == "attack":
        out |= {"player": player, "side": side, "zone": zones[zone], "attack": a,
                "defence": b, "taken": a > b}
    elif kind in ("fault", "eruption"):
        out |= {"zone": zones[zone], "lost": a, "left": b}
    else:  # round_score: the player field holds the side
        out |= {"side": SIDES[player], "points": a, "total": b}
    return out


def replay_crown_match(tables: CrownTables, seed: int, match_index: int,
                       side_skill: tuple[int, int]) -> dict[str, Any]:
    """Match `match_index` of root `seed` on `tables`, side skills `side_skill`,
    played again: {"row": its `matches` row (without match_id and replay), "rounds":
    a dict per round (round and ROUND_FIELDS: each side's points, total and zones
    after it), "events": the match's events in order (_event)}."""
    row, rounds = match_row(tables, seed, match_index, side_skill)
    events = play_crown_match(tables, seed, match_index, side_skill).events
    return {"row": row,
            "rounds": [{k: v for k, v in r.items() if k != "match_index"} for r in rounds],
            "events": [_event(tables, ev) for ev in events]}


def replay_run_match(tables: CrownTables, seed: int, match_index: int,
                     variant: dict[str, Any]) -> dict[str, Any]:
    """The game interface's match replay (sim.outputs.games.Game.match_replay): match
    `match_index` of a run's variant (its provenance entry: side_skill, default
    [0, 0]) on the variant's tables, as replay_crown_match gives it."""
    skills = variant.get("side_skill") or (0, 0)
    return replay_crown_match(tables, seed, match_index, (int(skills[0]), int(skills[1])))


__all__ = ["replay_crown_match", "replay_run_match"]
