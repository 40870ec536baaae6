"""What an experiment file says about reading its run: the regression gate's margins
and the anomaly triage's thresholds (issue 14).

They are written in the experiment file (`[gate]`, `[anomalies]`), validated with
it (sim.runner.experiments) and travel in the run's provenance with the file's
text, so `sim report` reads the same values the designer wrote, whichever machine
renders the report. Absent sections take the defaults below.
"""

from __future__ import annotations

import tomllib
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

Share = Annotated[float, Field(gt=0.0, lt=1.0)]


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class GateSettings(_M):
    """The regression gate (sim.analysis.gate): `margin` on every victory share,
    `margins` per victory type where a designer wants another (e.g. a looser
    turn-limit margin); `budget`, the most matches per variant the gate may grow each
    of the two runs to while a share is undecided, by `block` matches at a time
    (None: the run's own size, so the first block doubles it)."""

    margin: Share = 0.02
    margins: dict[str, Share] = {}
    # tools/calibrate_gate.py: at ±0.02 an A/A comparison passes and a 1.5x-margin
    # move fails within 64,000 matches (docs/statistics.md)
    budget: Annotated[int, Field(ge=1, le=10_000_000)] = 64_000
    block: Annotated[int, Field(ge=1, le=10_000_000)] | None = None

    def margin_of(self, victory: str) -> float:
        return self.margins.get(victory, self.margin)


class AnomalySettings(_M):
    """Thresholds of the per-match anomaly flags (sim.analysis.anomalies)."""

    # a stall: this many turns in a row with no capture and no seat's score changing
    stall_turns: Annotated[int, Field(ge=2)] = 15
    # truce cycling: the same two seats sign this many truces in one match
    truce_cycles: Annotated[int, Field(ge=2)] = 3
    # a blowout: a turn-limit win with the winner's score at least this times the
    # runner-up's (on the default tables a third of turn-limit wins are 2x ones)
    blowout_ratio: Annotated[float, Field(gt=1.0)] = 3.0
    # an early elimination: a seat out before this % of the match's turns (half the
    # seats of a default 4-seat match are eliminated, a quarter of them before turn
    # 23 of 100), or before early_elimination_turn when that is given
    early_elimination_pct: Annotated[int, Field(ge=1, le=100)] = 12
    early_elimination_turn: Annotated[int, Field(ge=1)] | None = None
    # an end-turn outlier: outside [Q1 - k*IQR, Q3 + k*IQR] of its variant and victory
    # type (Tukey's far-out fences at k = 3)
    outlier_iqr: Annotated[float, Field(gt=0.0)] = 3.0


class ReportSettings(_M):
    gate: GateSettings = GateSettings()
    anomalies: AnomalySettings = AnomalySettings()


def report_settings(provenance: dict[str, Any]) -> ReportSettings:
    """The `[gate]` and `[anomalies]` sections of the experiment file a run was made
    from (its text in the provenance); the defaults where it has none, or where the
    text cannot be read (a run from before these sections existed)."""
    text = (provenance.get("experiment") or {}).get("text") or ""
    try:
        raw = tomllib.loads(text)
        return ReportSettings.model_validate({k: raw[k] for k in ("gate", "anomalies")
                                              if k in raw})
    except (tomllib.TOMLDecodeError, ValidationError, TypeError, RecursionError):
        return ReportSettings()


__all__ = ["AnomalySettings", "GateSettings", "ReportSettings", "report_settings"]
