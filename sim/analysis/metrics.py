"""Every per-variant metric in one namespace: a facade over the modules that hold
them by subject, so `from sim.analysis import metrics; metrics.victory_frequencies(...)`
works in the report, the notebooks and `sim.metrics`.

* victory: victory_frequencies, end_turn_distribution, near_misses, counters_to_win
  (V01, V16–V19)
* paired: paired_victory_tests, victory_mix_tests, paired_metric_tests,
  metric_observations, significance (variant against baseline on common random
  numbers)
* gold: gold_share, gold_share_over_turns, score_decomposition, share_rows (T13, T14)
* cascades: capital_falls_per_match, cascade_depth, cascade_links,
  transfers_per_fall, eliminations_by_fall, fall_to_elimination,
  revolting_taken_by_third (V08–V13)
* seats: win_rate_by_seat, win_rate_by_personality, seat_fairness (D1)
* errors: error_rates (matches that raised)
* content: content_usage, item_lists (which units, buildings, techs and mechanics
  matches use at all; dead content)

The definitions are listed in sim.analysis's docstring; sorting and null
conventions in sim.analysis._frames.
"""

from __future__ import annotations

from sim.analysis import anomalies as _anomalies
from sim.analysis import cascades as _cascades
from sim.analysis import paired as _paired
from sim.analysis import victory as _victory
from sim.analysis._frames import HUMAN_OUT, TERMS, VICTORIES, finished
from sim.analysis.cascades import (
    CASCADE_WITHIN,
    capital_falls_per_match,
    cascade_depth,
    cascade_links,
    eliminations_by_fall,
    fall_to_elimination,
    revolting_counts,
    revolting_taken_by_third,
    transfers_per_fall,
)
from sim.analysis.content import (
    DEAD_SHARE,
    MECHANICS,
    content_usage,
    item_lists,
    usage_counts,
    usage_intervals,
)
from sim.analysis.dose import DEFAULT_BANDS, dose_response
from sim.analysis.errors import error_rates
from sim.analysis.gold import (
    GROUPS,
    gold_share,
    gold_share_over_turns,
    score_decomposition,
    share_rows,
    standing_turns,
)
from sim.analysis.paired import (
    PAIRED_METRICS,
    ResolutionWarning,
    metric_observations,
    paired_metric_tests,
    paired_victory_tests,
    significance,
    victory_mix_tests,
)
from sim.analysis.seats import (
    FAIR_ALPHA,
    seat_fairness,
    win_rate_by_personality,
    win_rate_by_seat,
)
from sim.analysis.victory import (
    COUNTER_TO_WIN,
    counters_to_win,
    end_turn_distribution,
    near_misses,
    victory_frequencies,
)

# Every event kind the metrics that take an `events` DataFrame read (content_usage and
# importance.baseline_use read every kind, from the lazy scan): the report passes them
# sim.analysis.load.event_rows(scan, EVENT_KINDS) instead of the whole table, a few
# percent of its rows, and gets the same numbers (tests/test_report.py checks it).
EVENT_KINDS = tuple(sorted({*_cascades.EVENT_KINDS, *_anomalies.EVENT_KINDS,
                            *_paired.EVENT_KINDS, *_victory.EVENT_KINDS}))

# What the report reads of the events, a slice of the matches at a time
# (load.match_ranges), so that what it holds does not grow with the run (issue 46): the
# kinds of EVENT_KINDS but those only revolting_taken_by_third reads (it counts them from
# the scan: revolting_counts), and only the columns the other metrics read. Of those
# rows it keeps only the kinds the metrics after the cascades read (KEPT_EVENT_KINDS);
# the cascades keep their units (cascades.deepest_cascades, fall_transfers, …).
SLICED_EVENT_KINDS = ("capture", "revolt_end", "revolt_start")
HELD_EVENT_COLUMNS = ("match_id", "match_index", "event", "turn", "kind", "seat", "by",
                      "city", "cause", "value")
KEPT_EVENT_KINDS = ("capital_fall", "observatory_lost", "truce")


def held_event_kinds(quiet_written: bool) -> tuple[str, ...]:
    """The kinds of EVENT_KINDS the report reads as rows: all but SLICED_EVENT_KINDS,
    and the captures too when the run has no quiet table (the stalls then read them,
    sim.analysis.anomalies.stalls)."""
    return tuple(k for k in EVENT_KINDS if k not in SLICED_EVENT_KINDS
                 or (k == "capture" and not quiet_written))


def kept_event_kinds(quiet_written: bool) -> tuple[str, ...]:
    """The kinds the report keeps as rows for the metrics that read event rows after
    the cascades (capital falls per match, the paired tests, near misses, anomalies):
    KEPT_EVENT_KINDS, and the captures when the run has no quiet table."""
    return (*KEPT_EVENT_KINDS, *(() if quiet_written else ("capture",)))


__all__ = [
    "CASCADE_WITHIN",
    "COUNTER_TO_WIN",
    "DEAD_SHARE",
    "DEFAULT_BANDS",
    "EVENT_KINDS",
    "FAIR_ALPHA",
    "GROUPS",
    "HELD_EVENT_COLUMNS",
    "HUMAN_OUT",
    "KEPT_EVENT_KINDS",
    "MECHANICS",
    "PAIRED_METRICS",
    "SLICED_EVENT_KINDS",
    "TERMS",
    "VICTORIES",
    "ResolutionWarning",
    "capital_falls_per_match",
    "cascade_depth",
    "cascade_links",
    "content_usage",
    "counters_to_win",
    "dose_response",
    "eliminations_by_fall",
    "end_turn_distribution",
    "error_rates",
    "fall_to_elimination",
    "finished",
    "gold_share",
    "gold_share_over_turns",
    "held_event_kinds",
    "item_lists",
    "kept_event_kinds",
    "metric_observations",
    "near_misses",
    "paired_metric_tests",
    "paired_victory_tests",
    "revolting_counts",
    "revolting_taken_by_third",
    "score_decomposition",
    "seat_fairness",
    "share_rows",
    "significance",
    "standing_turns",
    "transfers_per_fall",
    "usage_counts",
    "usage_intervals",
    "victory_frequencies",
    "victory_mix_tests",
    "win_rate_by_personality",
    "win_rate_by_seat",
]
