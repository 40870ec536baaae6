"""Every per-variant metric in one namespace: a facade over the modules that hold
them by subject, so `from sim.analysis import metrics; metrics.victory_frequencies(...)`
works in the report, the notebooks and `sim.metrics`.

* victory: victory_frequencies, end_turn_distribution, near_misses (V01, V16–V19)
* paired: paired_victory_tests, paired_metric_tests, per_match_metrics,
  significance (variant against baseline on common random numbers)
* gold: gold_share, gold_share_over_turns, score_decomposition (T13, T14)
* cascades: capital_falls_per_match, cascade_depth, transfers_per_fall,
  eliminations_by_fall, fall_to_elimination, revolting_taken_by_third (V08–V13)
* seats: win_rate_by_seat, win_rate_by_personality

Sorting and null conventions are described in sim.analysis._frames.
"""

from __future__ import annotations

from sim.analysis._frames import GROUPS, HUMAN_OUT, TERMS, VICTORIES
from sim.analysis.cascades import (
    capital_falls_per_match,
    cascade_depth,
    eliminations_by_fall,
    fall_to_elimination,
    revolting_taken_by_third,
    transfers_per_fall,
)
from sim.analysis.gold import gold_share, gold_share_over_turns, score_decomposition
from sim.analysis.paired import (
    PAIRED_METRICS,
    paired_metric_tests,
    paired_victory_tests,
    per_match_metrics,
    significance,
)
from sim.analysis.seats import win_rate_by_personality, win_rate_by_seat
from sim.analysis.victory import end_turn_distribution, near_misses, victory_frequencies

__all__ = [
    "GROUPS",
    "HUMAN_OUT",
    "PAIRED_METRICS",
    "TERMS",
    "VICTORIES",
    "capital_falls_per_match",
    "cascade_depth",
    "eliminations_by_fall",
    "end_turn_distribution",
    "fall_to_elimination",
    "gold_share",
    "gold_share_over_turns",
    "near_misses",
    "paired_metric_tests",
    "paired_victory_tests",
    "per_match_metrics",
    "revolting_taken_by_third",
    "score_decomposition",
    "significance",
    "transfers_per_fall",
    "victory_frequencies",
    "win_rate_by_personality",
    "win_rate_by_seat",
]
