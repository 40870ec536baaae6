"""The regression gate (issues 14, 44): is tonight's balance equivalent to last night's?

A sequential test with three verdicts. For every variant both runs hold and every
victory type, the difference of shares (tonight − before) is followed with an
anytime-valid confidence sequence (sim.analysis.sequential.confidence_sequence, at
1 − 2·alpha two-sided, so each side errs at most alpha, as in Schuirmann's TOST) on
the per-match differences d_i = [match i of tonight ended with the type] − [match i
of before did]. When the two runs played the same matches (same root seed, seats,
length and personalities: each match index is the same map and streams) d_i pairs
match i with match i (paired); otherwise the runs are independent samples and d_i
pairs tonight's i-th finished match with before's i-th (unpaired: the d_i are still
independent and identically distributed, only with the larger variance of two
independent draws). The sequence holds at every number of matches at once, so the
gate may look after every block of matches it adds and stop at the first look that
decides, without inflating its error rates.

Verdicts of one share, read from the sequence's bounds (lo, hi) at the matches held:
- PASS: −margin < lo and hi < margin: the share is within ±margin (equivalent);
- FAIL changed: lo > margin or hi < −margin: the share moved by more than the margin;
- INCONCLUSIVE: neither yet: more matches decide it (`needed` says about how many).
A variant whose paired matches all ended alike in both runs (same winner, victory and
end turn) passes as "PASS identical" (its interval is printed all the same); FAIL
missing: the earlier run has the variant and this one finished none of its matches;
"none": a variant only this run has, on its first night (nothing to gate against: it
neither passes nor fails).

Variants are matched by name, and across a rename by what they are (renamed_variants):
a variant of the earlier run whose name is gone, and a variant of this run whose
name is new, that set the same table values and play with the same seats' AI (and
side skills) are one variant renamed, as an experiment's `skills = [0, 1]` renames
NAME to NAME.skill-0 and adds NAME.skill-1; it is gated under its new name against
its earlier matches, and the gate's notes name every rename. A variant gone under
every name still fails (FAIL missing): dropping a variant is a decision the nightly
shows once.

The whole gate: FAIL when any share fails (exit 3), else INCONCLUSIVE when any share
is undecided (exit 4), else PASS (exit 0). PASS needs every share shown within its
margin (an intersection-union test: each share at level alpha, the whole at alpha);
a PASS or a FAIL changed, once reached, never reverts as matches are added (the
bounds only narrow). The calibration of these rates on simulated victory mixes:
tools/calibrate_gate.py (docs/statistics.md).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from sim.analysis._frames import finished, victory_categories
from sim.analysis.load import read_table
from sim.analysis.outcomes import outcome_categories, outcome_rows
from sim.analysis.sequential import confidence_sequence
from sim.outputs.games import game_of_run
from sim.outputs.settings import report_settings
from sim.outputs.store import read_provenance, require_complete
from sim.rules.codes import SKILL_GREEDY

PAIRING_KEYS = ("root_seed", "seats", "length", "personalities", "rotate_personalities")
SCHEMA = {"variant": pl.Utf8, "victory": pl.Utf8, "before": pl.Float64, "now": pl.Float64,
          "difference": pl.Float64, "lo": pl.Float64, "hi": pl.Float64,
          "margin": pl.Float64, "paired": pl.Boolean, "n_now": pl.Int64,
          "n_before": pl.Int64, "needed": pl.Int64, "verdict": pl.Utf8}
# the whole gate's verdict -> the exit status of `sim report --against`
EXIT = {"PASS": 0, "FAIL": 3, "INCONCLUSIVE": 4}
INCONCLUSIVE = "INCONCLUSIVE"
# the most matches `needed` ever names (beyond it: the share sits on its margin)
_FAR = 10_000_000
# a variant only this run has: its first night, nothing to gate it against
NEW = "none (first night)"
MISSING = "FAIL missing"
# a seat's AI settings that are its defaults (sim.engine.seat_ai: `{}` keeps them)
_SEAT_DEFAULTS = (("skill", SKILL_GREEDY), ("forbid", []))


def same_matches(now: dict[str, Any], before: dict[str, Any]) -> bool:
    """Two runs' match i are the same map and streams (their provenance agrees)."""
    return all(now.get(k) == before.get(k) for k in PAIRING_KEYS)


def variant_definitions(provenance: Mapping[str, Any]) -> dict[str, str]:
    """Each variant of a run (its provenance's `variants`) -> what it is, whatever its
    name: the table values it sets (`overrides`), its seats' AI settings (`seat_ai`,
    each seat's defaults left out, so `[]` and four `{skill = 0}` are one) and a
    two-sided game's side skills, as canonical JSON text (compared by value)."""
    out = {}
    for v in provenance.get("variants") or []:
        seats = [{k: x for k, x in dict(entry).items() if (k, x) not in _SEAT_DEFAULTS}
                 for entry in v.get("seat_ai") or []]
        while seats and not seats[-1]:
            seats.pop()
        out[v["id"]] = json.dumps({"set": v.get("overrides") or {}, "seat_ai": seats,
                                   "side_skill": v.get("side_skill")}, sort_keys=True)
    return out


def renamed_variants(now: Mapping[str, Any], before: Mapping[str, Any]) -> dict[str, str]:
    """The variants renamed between two runs (their provenances): earlier name -> this
    run's, for each variant whose earlier name this run lacks and whose definition
    (variant_definitions) exactly one variant of this run has, under a name the
    earlier run lacks, and no other earlier variant gone by name shares. A definition
    two gone or two new variants share is no rename (which one would be a guess):
    those stay missing and new."""
    defs_now, defs_before = variant_definitions(now), variant_definitions(before)
    new, gone = defaultdict(list), defaultdict(list)
    for name, definition in defs_now.items():
        if name not in defs_before:
            new[definition].append(name)
    for name, definition in defs_before.items():
        if name not in defs_now:
            gone[definition].append(name)
    return {olds[0]: new[d][0] for d, olds in gone.items()
            if len(olds) == 1 and len(new.get(d, ())) == 1}


def share_bounds(d: np.ndarray, margin: float, alpha: float = 0.05
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Anytime-valid bounds of a difference of shares. d: (n,) per-match differences
    in {−1, 0, 1}, in match order. Returns (lo, hi), each (n,): element t bounds the
    mean difference from the first t + 1 matches, all n at once with probability
    1 − 2·alpha (each side alpha). Tuned to half the margin: there a move of 1.5 ×
    the margin is told from the margin, and a share near 0 is inside it long before."""
    return confidence_sequence(d, 2 * alpha, -1.0, 1.0, target=margin / 2)


def share_verdict(lo: float, hi: float, margin: float) -> str:
    """PASS when (lo, hi) lies strictly inside (−margin, margin); FAIL changed when it
    lies strictly beyond one of them; INCONCLUSIVE otherwise."""
    if -margin < lo and hi < margin:
        return "PASS"
    if lo > margin or hi < -margin:
        return "FAIL changed"
    return INCONCLUSIVE


def matches_needed(d: np.ndarray, margin: float, alpha: float = 0.05) -> int | None:
    """About how many matches (per variant and run) share_bounds needs to decide a
    share whose differences so far are `d`: the first n at which the sequence's
    half-width, at the variance and bet seen so far (Waudby-Smith & Ramdas'
    approximation log(1/alpha')/(n·bet) + variance·bet/2), falls below the distance
    from the estimate to the nearer decision (margin − |estimate| to pass,
    |estimate| − margin to fail). None when the estimate sits on the margin (within
    about a quarter of it), where the sequence tuned to half the margin never
    narrows enough: more matches may not decide it."""
    n_held = max(int(d.size), 1)
    y = (np.asarray(d, dtype=np.float64) + 1.0) / 2.0          # as the sequence sees it
    var = (0.25 + float(((y - y.mean()) ** 2).sum())) / (n_held + 1) if d.size else 0.25
    gap = abs(margin - abs(float(d.mean()) if d.size else 0.0)) / 2.0
    bet = min(margin / 4.0 / var, 0.5)
    log_term = math.log(1.0 / alpha)                            # the level 2·alpha of share_bounds
    room = gap - var * bet / 2.0
    need = math.ceil(log_term / (bet * room)) if room > 0 else _FAR
    return max(n_held, need) if need < _FAR else None


def _aligned(x: pl.DataFrame, y: pl.DataFrame, paired: bool) -> tuple[pl.DataFrame,
                                                                       pl.DataFrame]:
    """The two runs' finished matches of one variant, row i of each forming pair i:
    paired, the match indices both finished; unpaired, the i-th finished match of
    each run (as many as the shorter run holds)."""
    cols = x.columns
    if paired:
        pairs = x.join(y, on="match_index", suffix="_before").sort("match_index")
        return pairs.select(cols), pairs.select(
            "match_index", *(pl.col(f"{c}_before").alias(c) for c in cols[1:]))
    n = min(x.height, y.height)
    return x.head(n), y.head(n)


def _share_row(vid: str, cat: str, x: pl.DataFrame, y: pl.DataFrame, margin: float,
               alpha: float, paired: bool, identical: bool) -> dict[str, Any]:
    """The gate's row of one variant × victory type (x, y: the aligned pairs)."""
    xs = (x.get_column("victory") == cat).cast(pl.Float64).to_numpy()
    ys = (y.get_column("victory") == cat).cast(pl.Float64).to_numpy()
    d = xs - ys
    lo, hi = share_bounds(d, margin, alpha)
    verdict = "PASS identical" if identical else share_verdict(lo[-1], hi[-1], margin)
    return {"variant": vid, "victory": cat, "before": float(ys.mean()),
            "now": float(xs.mean()), "difference": float(d.mean()), "lo": float(lo[-1]),
            "hi": float(hi[-1]), "margin": margin, "paired": paired, "n_now": x.height,
            "n_before": y.height, "verdict": verdict,
            "needed": matches_needed(d, margin, alpha) if verdict == INCONCLUSIVE else None}


def gate(now: pl.DataFrame, before: pl.DataFrame, paired: bool, margin: float = 0.02,
         alpha: float = 0.05, margins: dict[str, float] | None = None,
         categories: list[str] | None = None,
         renamed: Mapping[str, str] | None = None) -> pl.DataFrame:
    """One row per variant (of either run) × victory type; see the module docstring.
    `margins` overrides `margin` per victory type (the experiment's `[gate]`).
    `categories`: another game's outcomes in place of the victory types
    (sim.analysis.outcomes: Crown's winner sides). `renamed`: earlier name -> this
    run's (renamed_variants), each such variant's earlier matches gated under its new
    name.

    Columns: variant, victory, before, now (shares over the pairs), difference, lo, hi
    (the anytime-valid 1 − 2·alpha bounds at the pairs held), margin, paired, n_now,
    n_before (the pairs: both are their count), needed (INCONCLUSIVE rows: about how
    many matches per variant and run decide the share, matches_needed), verdict."""
    margins = margins or {}
    for m in (margin, *margins.values()):
        if not 0 < m < 1:
            raise ValueError(f"margin must be in (0, 1), got {m}")
    if renamed:
        before = before.with_columns(pl.col("variant").cast(pl.Utf8).replace(
            list(renamed), list(renamed.values())))
    a, b = finished(now), finished(before)
    cats = categories or victory_categories(pl.concat([a.select("victory"),
                                                       b.select("victory")]))
    rows = []
    in_now = a.get_column("variant").unique(maintain_order=True).to_list()
    in_before = b.get_column("variant").unique(maintain_order=True).to_list()
    cols = ["match_index", "winner", "victory", "end_turn"]
    for vid in (v for v in in_now if v in in_before):
        x, y = _aligned(a.filter(pl.col("variant") == vid).select(cols).sort("match_index"),
                        b.filter(pl.col("variant") == vid).select(cols).sort("match_index"),
                        paired)
        if not x.height:  # not one match finished in both: nothing to compare
            rows += [{"variant": vid, "victory": cat, "margin": margins.get(cat, margin),
                      "paired": paired, "n_now": 0, "n_before": 0,
                      "verdict": MISSING} for cat in cats]
            continue
        identical = paired and x.equals(y)
        rows += [_share_row(vid, cat, x, y, margins.get(cat, margin), alpha, paired,
                            identical) for cat in cats]
    # a variant of one run only: its shares on its own side, nothing to compare
    alone = [("now", v, a, NEW) for v in in_now if v not in in_before] + \
        [("before", v, b, MISSING) for v in in_before if v not in in_now]
    for side, vid, frame, verdict in alone:
        x = frame.filter(pl.col("variant") == vid)
        rows += [{"variant": vid, "victory": cat, "margin": margins.get(cat, margin),
                  side: float((x.get_column("victory") == cat).mean()), "paired": paired,
                  "n_now": 0, "n_before": 0, f"n_{side}": x.height, "verdict": verdict}
                 for cat in cats]
    return pl.DataFrame(rows, schema=SCHEMA)


def overall(table: pl.DataFrame) -> str:
    """The whole gate's verdict: FAIL when any row failed (changed or missing), else
    INCONCLUSIVE when any row is undecided, else PASS when some row passed (a variant
    only the new run has, on its first night, is not gated: alone it neither passes
    nor fails)."""
    verdicts = table.get_column("verdict")
    if verdicts.str.starts_with("FAIL").any():
        return "FAIL"
    if (verdicts == INCONCLUSIVE).any() or not verdicts.str.starts_with("PASS").any():
        return INCONCLUSIVE
    return "PASS"


def passed(table: pl.DataFrame) -> bool:
    """The gate passed: no row failed or is undecided, and some row passed."""
    return overall(table) == "PASS"


def still_needed(table: pl.DataFrame) -> int | None:
    """About how many matches per variant and run the undecided rows with a count
    need in all (the largest `needed`), None when none has one."""
    need = table.filter(pl.col("verdict") == INCONCLUSIVE).get_column("needed").drop_nulls()
    return int(need.max()) if need.len() else None


def summary(table: pl.DataFrame) -> str:
    """The gate's verdict in one line: PASS, FAIL (k of n shares), or INCONCLUSIVE
    (k of n shares undecided; about N matches per variant would decide those with a
    count; how many sit on their margin so far)."""
    verdict = overall(table)
    if verdict == "FAIL":
        return f"FAIL ({failures(table)} of {compared(table)} shares)"
    if verdict == INCONCLUSIVE:
        open_rows = table.filter(pl.col("verdict") == INCONCLUSIVE)
        need, on_margin = still_needed(table), open_rows.get_column("needed").null_count()
        parts = [f"{open_rows.height} of {compared(table)} shares undecided"]
        if need is not None:
            parts.append(f"about {need:,} matches per variant in each run would decide "
                         f"{'them' if not on_margin else 'the others'}")
        if on_margin:
            parts.append(f"{on_margin} on their margin so far, where more matches may "
                         "not decide them")
        return f"INCONCLUSIVE ({'; '.join(parts)})"
    return "PASS"


def simulated_runs(rng: np.random.Generator, before_mix: np.ndarray, now_mix: np.ndarray,
                   matches: int, pairing: float) -> tuple[np.ndarray, np.ndarray]:
    """Victory codes of two simulated runs, for calibrating the gate (tools/
    calibrate_gate.py). before_mix, now_mix: (variants, types) shares of each victory
    type per variant. Returns (now, before), each (variants, matches) of type codes.
    Match i of both runs reads one uniform draw through each run's mix (inverse CDF)
    with probability `pairing`, else the runs draw apart: the marginals are exactly
    the mixes, and on an A/A comparison a match changes victory type with
    probability (1 − pairing)·(1 − Σ share²) (0 pairing: independent runs)."""
    shape = (before_mix.shape[0], matches)
    u_before = rng.random(shape)
    u_now = np.where(rng.random(shape) < pairing, u_before, rng.random(shape))

    def codes(u: np.ndarray, mix: np.ndarray) -> np.ndarray:
        edges = np.cumsum(mix, axis=1)
        edges[:, -1] = 1.0
        return np.stack([np.searchsorted(edges[v], u[v], side="right")
                         for v in range(shape[0])])

    return codes(u_now, now_mix), codes(u_before, before_mix)


def sequence_verdict(now: np.ndarray, before: np.ndarray, margin: float,
                     looks: Sequence[int], alpha: float = 0.05) -> tuple[str, int]:
    """The gate's sequential verdict on victory codes (simulated_runs' arrays, (variants,
    matches), pair i = column i): at each look (matches per variant, ascending, the
    last the budget), every share's share_bounds read there; FAIL at the first look
    where any share is beyond its margin, PASS at the first where every share is
    inside, else INCONCLUSIVE after the last. Returns (verdict, matches at the stop):
    what the gate's sequence of `sim report --against` decides on the same matches."""
    at = np.asarray(looks) - 1
    lows, highs = [], []
    for v in range(now.shape[0]):
        for cat in range(int(max(now.max(), before.max())) + 1):
            lo, hi = share_bounds((now[v] == cat).astype(np.float64) -
                                  (before[v] == cat), margin, alpha)
            lows.append(lo[at])
            highs.append(hi[at])
    lo, hi = np.array(lows), np.array(highs)              # (shares, looks)
    changed = ((lo > margin) | (hi < -margin)).any(axis=0)
    inside = ((-margin < lo) & (hi < margin)).all(axis=0)
    for k, n in enumerate(looks):
        if changed[k]:
            return "FAIL", int(n)
        if inside[k]:
            return "PASS", int(n)
    return INCONCLUSIVE, int(looks[-1])


def failures(table: pl.DataFrame) -> int:
    """The rows of the gate that failed."""
    return table.filter(pl.col("verdict").str.starts_with("FAIL")).height


def compared(table: pl.DataFrame) -> int:
    """The rows of the gate that count towards its verdict (all but a new variant's)."""
    return table.filter(pl.col("verdict") != NEW).height


def gate_notes(run_dir: str | Path, prov: dict[str, Any], against: str | Path,
               before: dict[str, Any], table: pl.DataFrame,
               renamed: Mapping[str, str] | None = None) -> list[str]:
    """What a reader of the gate must not miss, in words: the runs played different
    games (seats, length), paired runs of different sizes (compared on the matches
    both finished), variants renamed since the earlier run (gated under their new
    names), variants only this run has (their first night), and variants missing:
    gone under every name, or here without a finished match."""
    notes = []
    game = [(p.get("seats"), p.get("length") or "the tables' length") for p in (prov, before)]
    if game[0] != game[1]:  # a designer may mean it, but should not miss it
        notes.append(f"{run_dir} played {game[0][0]} seats, {game[0][1]}; {against} "
                     f"{game[1][0]} seats, {game[1][1]}: the gate compares the shares of "
                     "two different games")
    done = table.filter(pl.col("difference").is_not_null())
    sizes = [p.get("matches_per_variant") for p in (prov, before)]
    if done.height and sizes[0] != sizes[1]:
        which = "the matches both finished" if done.item(0, "paired") else \
            "each run's first finished matches, as many as the shorter run holds"
        notes.append(f"{run_dir} played {sizes[0]} matches a variant and {against} "
                     f"{sizes[1]}: the gate pairs {which} "
                     f"({done.get_column('n_now').min()} or more a variant), and every share "
                     "it prints is over those")
    if renamed:
        pairs = ", ".join(f"{old} -> {new}" for old, new in renamed.items())
        notes.append(f"renamed since {against} (the same table values and seats' AI under "
                     f"a new name): {pairs}; each is gated under its new name against its "
                     "earlier matches")
    new = table.filter(pl.col("verdict") == NEW)
    if new.height:
        notes.append(f"first night (not in {against}, nothing to gate against; not a "
                     f"failure): {_names(new)}")
    ours = list(variant_definitions(prov))  # this run's variants, by name
    missing = table.filter(pl.col("verdict") == MISSING)
    gone = missing.filter(~pl.col("variant").is_in(ours))
    if gone.height:
        notes.append(f"gone since {against}, under its name and as a rename (no variant "
                     f"here sets the same table values with the same seats' AI): "
                     f"{_names(gone)} (FAIL missing)")
    idle = missing.filter(pl.col("variant").is_in(ours))
    if idle.height:
        notes.append(f"in {against} but no finished match here: {_names(idle)} "
                     "(FAIL missing)")
    return notes


def _names(rows: pl.DataFrame) -> str:
    """The variants of gate rows, in order, each once."""
    return ", ".join(rows.get_column("variant").unique(maintain_order=True).to_list())


class GateError(ValueError):
    """The two runs cannot be gated (one line naming them)."""


@dataclass(frozen=True)
class RegressionGate:
    """A run gated against an earlier one: the gate table, the notes a reader must not
    miss (gate_notes), whether the runs paired, the margin on every share and the
    margins of single victory types, and the experiment's budget and block (the most
    matches per variant the gate may grow each run to, and by how many at a time;
    block None: the run's size)."""

    table: pl.DataFrame
    notes: list[str]
    paired: bool
    margin: float
    margins: dict[str, float]
    budget: int = 64_000
    block: int | None = None
    renamed: dict[str, str] = field(default_factory=dict)  # earlier name -> this run's

    @property
    def verdict(self) -> str:
        return overall(self.table)

    def pairs_held(self) -> int:
        """The fewest pairs any compared variant holds: where the sequence stands."""
        held = self.table.filter(pl.col("difference").is_not_null()).get_column("n_now")
        return int(held.min()) if held.len() else 0


def regression_gate(run_dir: Path | str, against: Path | str,
                    margin: float | None = None) -> RegressionGate:
    """The regression gate of the run in `run_dir` against the earlier run `against`
    at the matches the two hold now (one look of the sequence `sim report --against`
    runs). Margins: `margin` on every share when given, else the experiment file's
    [gate]. Variants renamed since `against` are gated under their new names
    (renamed_variants). Raises RunError when `against` is incomplete or damaged,
    GateError when the runs share no variant, under any name."""
    require_complete(against)
    prov, before = read_provenance(run_dir), read_provenance(against)
    settings = report_settings(prov).gate
    margins = {} if margin is not None else settings.margins
    margin = settings.margin if margin is None else margin
    paired = same_matches(prov, before)
    game = game_of_run(prov)  # another game: its outcomes' shares (sim.analysis.outcomes)
    if game_of_run(before) is not game:
        raise GateError(f"{against}: a {game_of_run(before).name} run, and {run_dir} a "
                        f"{game.name} run: nothing to compare")
    renamed = renamed_variants(prov, before)
    table = gate(outcome_rows(read_table(run_dir, "matches"), game),
                 outcome_rows(read_table(against, "matches"), game), paired,
                 margin, margins=margins, categories=outcome_categories(game),
                 renamed=renamed)
    if table.get_column("difference").is_null().all():
        listed = [", ".join(v["id"] for v in p.get("variants") or []) for p in (prov, before)]
        raise GateError(f"{against}: shares no variant with {run_dir}, under its name or "
                        f"renamed (the same table values and seats' AI): {run_dir} has "
                        f"{listed[0]}; {against} {listed[1]}")
    return RegressionGate(table, gate_notes(run_dir, prov, against, before, table, renamed),
                          paired, margin, margins, settings.budget, settings.block, renamed)
