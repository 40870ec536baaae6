"""Crown's chunk player (issue 48): a sweep chunk's Crown matches as the columns of
Crown's outcome tables (sim.outputs.games.CROWN_SCHEMAS), through the game interface.

One match is `play_crown_match` (sim.engine.crown); its outcome record becomes one row
of `matches` (winner side or draw, what decided it, K13; score terms, K10/K11; lead
types, K03; attacks by the attacker's lead and how many Surge or the lead cycle
decided, K07; the fault-round leader, L6; waves each side was first in order, K05;
team sizes and skills) and a row per round of `rounds`. A match that raises is a row
of `errors` and the chunk goes on. Results depend only on (tables, root seed, match
index, side skills), as the hex game's do.
"""

from __future__ import annotations

import time
import traceback
from typing import Any

from sim.engine.crown import play_crown_match
from sim.rules.crown import (
    ATTACK_COUNTS,
    NO_WINNER,
    RESULTS,
    ROUND_FIELDS,
    SCORE_TERMS,
    SIDES,
    WIDGETS,
    CrownTables,
    term_column,
)


def _side(side: int) -> str | None:
    """A side index as its name ("A", "B"); None for EMPTY/NO_WINNER."""
    return SIDES[side] if side >= 0 else None


def crown_replay(tables_path: str, overrides: dict[str, Any], seed: int, index: int,
                 side_skill: tuple[int, int]) -> str:
    """The Python call that plays match `index` again (Crown has no `sim match` yet)."""
    return (f"sim.engine.crown.play_crown_match(sim.rules.crown.load_crown_tables("
            f"{tables_path!r}, {overrides!r}), {seed}, {index}, {tuple(side_skill)!r})")


def match_row(tables: CrownTables, seed: int, index: int, side_skill: tuple[int, int],
              ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One match's `matches` row (without match_id and replay) and its `rounds` rows."""
    out = play_crown_match(tables, seed, index, side_skill)
    sizes = tables.model.match.team_sizes
    first_a, first_b = (int(x) for x in out.first_counts)
    row: dict[str, Any] = {
        "match_index": index, "seed": seed, "tables_hash": tables.hash,
        "team_a": int(sizes[0]), "team_b": int(sizes[1]),
        "skill_a": int(side_skill[0]), "skill_b": int(side_skill[1]),
        "winner": "draw" if out.winner == NO_WINNER else SIDES[out.winner],
        "decided_by": RESULTS[out.decided_by],
        "total_a": int(out.totals[0]), "total_b": int(out.totals[1]),
        "zones_a": int(out.zones[0]), "zones_b": int(out.zones[1]),
        "majorities_a": int(out.majorities[0]), "majorities_b": int(out.majorities[1]),
        "fault_leader": _side(out.fault_leader),
        "first_a": first_a, "first_b": first_b,
        "first_side": None if first_a == first_b else SIDES[0 if first_a > first_b else 1],
    }
    for k, term in enumerate(SCORE_TERMS):
        for s, side in enumerate(SIDES):
            row[term_column(term, side)] = int(out.terms[s, k])
    leads = out.lead_counts.sum(axis=0)
    attacks = out.attack_counts.sum(axis=0)
    for w, widget in enumerate(WIDGETS):
        row[f"leads_{widget}"] = int(leads[w])
        for c, count in enumerate(ATTACK_COUNTS):
            row[f"{count}_{widget}"] = int(attacks[w, c])
    rounds = [{"match_index": index, "round": r + 1,
               **{name: int(out.rounds[r, f]) for f, name in enumerate(ROUND_FIELDS)}}
              for r in range(out.rounds.shape[0])]
    return row, rounds


def play_crown_chunk(settings: Any, spec: Any, tables: CrownTables,
                     ) -> tuple[dict[str, dict[str, list]], dict[str, Any]]:
    """Play matches [spec.start, spec.stop) of variant spec.variant (root seed
    settings.root_seed, side skills settings.side_skill_by_variant, default (0, 0)):
    (columns of matches, rounds and errors, the chunk's summary)."""
    t0 = time.perf_counter()
    skills = tuple(settings.side_skill_by_variant.get(spec.variant, (0, 0)))
    overrides = settings.overrides_by_variant[spec.variant]
    matches: dict[str, list] = {}
    rounds: dict[str, list] = {}
    errors: dict[str, list] = {k: [] for k in ("match_id", "match_index", "seed", "message",
                                                "replay")}
    failed = 0
    for i in range(spec.start, spec.stop):
        match_id = f"{spec.variant}:{i}"
        replay = crown_replay(settings.tables_path, overrides, settings.root_seed, i, skills)
        try:
            row, per_round = match_row(tables, settings.root_seed, i, skills)
        except Exception as exc:  # a failing match is a row, not the end of the sweep
            failed += 1
            for key, value in (("match_id", match_id), ("match_index", i),
                               ("seed", settings.root_seed), ("replay", replay),
                               ("message", "".join(traceback.format_exception_only(
                                   type(exc), exc)).strip())):
                errors[key].append(value)
            continue
        for key, value in (("match_id", match_id), ("replay", replay), *row.items()):
            matches.setdefault(key, []).append(value)
        for r in per_round:
            for key, value in (("match_id", match_id), *r.items()):
                rounds.setdefault(key, []).append(value)
    summary = {"variant": spec.variant, "chunk": spec.chunk, "start": spec.start,
               "stop": spec.stop, "matches": spec.stop - spec.start - failed,
               "errors": failed, "seconds": round(time.perf_counter() - t0, 3),
               "tables_hash": tables.hash}
    return {"matches": matches, "rounds": rounds, "errors": errors}, summary
