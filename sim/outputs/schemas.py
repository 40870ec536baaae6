"""The outcome tables a sweep writes: their column schemas, the contract between
the runner that fills them and the analysis that reads them (pure data, no engine).

docs/outcomes.md documents every column; tests check the Parquet files against
it. Each table is written per variant under the hive layout
`TABLE/variant=ID/part-CHUNK.parquet`, so `variant` comes from the path.
Seat and city owners are integers: a seat index, -2 the neutral side, -3 bandits.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from sim.rules.codes import SCORE_TERMS, TURN_LOG_FIELDS

MATCH_KEYS = {"match_id": pl.Utf8, "match_index": pl.Int64}

SCHEMAS: dict[str, dict[str, Any]] = {
    "matches": {
        **MATCH_KEYS, "seed": pl.Int64, "seats": pl.Int64, "length": pl.Int64,
        "personalities": pl.Utf8, "tables_hash": pl.Utf8, "winner": pl.Int64,
        "victory": pl.Utf8, "end_turn": pl.Int64, "events_dropped": pl.Int64,
        "replay": pl.Utf8,
    },
    "seats": {
        **MATCH_KEYS, "seat": pl.Int64, "personality": pl.Utf8, "skill": pl.Int64,
        "forbid": pl.Utf8, "winner": pl.Boolean,
        "alive": pl.Boolean, "rank": pl.Int64, "score": pl.Int64,
        **{f"{term}_points": pl.Int64 for term in SCORE_TERMS},
        "gold_stock": pl.Int64, "cities": pl.Int64,
        "population": pl.Int64, "techs": pl.Int64, "eliminated_turn": pl.Int64,
        "capitals_lost": pl.Int64, "cities_captured": pl.Int64,
        "observatory_queued_turn": pl.Int64, "observatory_lost_turn": pl.Int64,
        "observatory_completed_turn": pl.Int64, "peak_dominance": pl.Int64,
        "science_unspent": pl.Int64,
    },
    "events": {
        **MATCH_KEYS, "event": pl.Int64, "turn": pl.Int64, "kind": pl.Utf8, "seat": pl.Int64,
        "by": pl.Int64, "city": pl.Int64, "cause": pl.Int64, "value": pl.Int64,
        "detail": pl.Utf8, "a": pl.Int64, "b": pl.Int64, "c": pl.Int64,
    },
    "turns": {
        **MATCH_KEYS, "turn": pl.Int64, "seat": pl.Int64,
        **{name: pl.Int64 for name in TURN_LOG_FIELDS},
        # units alive by type, in the variant's unit order (provenance variants[].items)
        "science_gained": pl.Int64, "units": pl.List(pl.Int64),
    },
    "errors": {
        **MATCH_KEYS, "seed": pl.Int64, "message": pl.Utf8, "replay": pl.Utf8,
    },
    # D9: every truce offer, accepted or declined, with what each side held the turn
    # before it and TRUCE_AFTER_TURNS turns after it (or at the match's end, after_turn)
    "truces": {
        **MATCH_KEYS, "offer": pl.Int64, "turn": pl.Int64, "buyer": pl.Int64,
        "seller": pl.Int64, "price": pl.Int64, "turns": pl.Int64, "accepted": pl.Boolean,
        "after_turn": pl.Int64,
        **{f"{side}_{held}_{when}": pl.Int64 for side in ("buyer", "seller")
           for held in ("cities", "score") for when in ("before", "after")},
    },
}
TABLES = tuple(SCHEMAS)
SORT_KEYS = {"matches": ["match_index"], "seats": ["match_index", "seat"],
             "events": ["match_index", "event"], "turns": ["match_index", "turn", "seat"],
             "errors": ["match_index"], "truces": ["match_index", "offer"]}

# Aggregates of the events and turns tables, written by each chunk beside them
# (sim.outputs.summaries, docs/outcomes.md): usage, the events each match had; quiet,
# each match's longest run of quiet turns; dominance_runs, each match's finished runs
# of a dominance counter by peak; gold_turns, each match's gold shares summed per turn.
# A run written before them lacks them, and its readers compute the same rows from
# events and turns.
SUMMARY_SCHEMAS: dict[str, dict[str, Any]] = {
    "usage": {"match_index": pl.Int64, "kind": pl.Utf8, "side": pl.Int64, "item": pl.Utf8},
    "quiet": {"match_id": pl.Utf8, "match_index": pl.Int64, "quiet": pl.Int64,
              "turn": pl.Int64},
    "dominance_runs": {"match_id": pl.Utf8, "match_index": pl.Int64, "peak": pl.Int64,
                       "runs": pl.Int64},
    "gold_turns": {"match_index": pl.Int64, "turn": pl.Int64, "share_sum": pl.Float64,
                   "n": pl.Int64},
}
SUMMARIES = tuple(SUMMARY_SCHEMAS)
SUMMARY_SORT_KEYS = {"usage": ["match_index", "kind", "side", "item"],
                     "quiet": ["match_index"], "dominance_runs": ["match_index", "peak"],
                     "gold_turns": ["match_index", "turn"]}
WRITTEN = (*TABLES, *SUMMARIES)   # every table a chunk writes
