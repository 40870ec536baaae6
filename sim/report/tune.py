"""The outputs of a tune (issue 13): `tuned.toml`, `tune.parquet`, `tune.json` and the
self-contained page `tune.html` (the before/after table of every banded outcome on
the confirmation's fresh matches, whether each lies in its band, and the
optimiser's history chart)."""

from __future__ import annotations

import html
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

from sim.analysis.load import read_table, write_frame
from sim.analysis.tune import (
    MEDIAN_END_TURN,
    TURN_SCALE,
    distance,
    history_chart,
    scorer,
    with_best_so_far,
)
from sim.outputs.storage import run_path
from sim.report.html import CSS, _svg, _table
from sim.runner.tune import BASELINE, TUNED, Tune, run_tune

TUNED_FILE = "tuned.toml"
HISTORY_FILE = "tune.parquet"
SUMMARY_FILE = "tune.json"
PAGE_FILE = "tune.html"


def history_frame(tune: Tune, rows: list[dict[str, Any]]) -> pl.DataFrame:
    """tune.parquet: one row per trial told, by trial. Columns: trial, state (complete
    | refused), one column per tuned key (its dotted name; Int64 for an integer
    value), each banded outcome's value on the trial's matches (conquest, science,
    dominance, turn_limit shares; median_end_turn), matches (finished), errors,
    distance (null when refused), best_so_far, seconds, refused (the reason)."""
    schema: dict[str, Any] = {"trial": pl.Int64, "state": pl.Utf8}
    schema |= {k.name: pl.Int64 if k.integer else pl.Float64 for k in tune.keys}
    schema |= {o: pl.Float64 for o in tune.outcomes}
    schema |= {"matches": pl.Int64, "errors": pl.Int64, "distance": pl.Float64,
               "seconds": pl.Float64, "refused": pl.Utf8}
    frame = pl.DataFrame(rows, schema=schema, orient="row")
    out = with_best_so_far(frame)
    return out.select(*[c for c in out.columns if c not in ("seconds", "refused")],
                      "seconds", "refused")


def _toml_value(value: Any) -> str:
    return repr(float(value)) if isinstance(value, float) else json.dumps(value)


def tuned_text(tune: Tune, summary: dict[str, Any], verdict: dict[str, Any]) -> str:
    """tuned.toml: the best trial's overrides as `"dotted.key" = value` lines (valid
    TOML; paste them into an experiment's `set` or give each as `--set key=value`),
    under comments saying where they come from and how they fared."""
    best = summary["best"]
    lines = [f"# sim tune {tune.path}: trial {best['trial']} of {summary['trials']} "
             f"({tune.spec.sampler}), distance {best['distance']:.4f} on the "
             f"{tune.spec.matches} tuning matches",
             f"# confirmed on {summary['confirm']['matches']} fresh matches (root seed "
             f"{summary['confirm']['root_seed']}): distance {_num(verdict['distance_tuned'])} "
             f"(baseline {_num(verdict['distance_baseline'])}); inside every band: "
             f"{'yes' if verdict['inside'] else 'no'}",
             "# as --set: " + " ".join(f"--set {k}={_toml_value(v)}"
                                       for k, v in best["params"].items())]
    lines += [f"{json.dumps(k)} = {_toml_value(v)}" for k, v in best["params"].items()]
    return "\n".join(lines) + "\n"


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.4f}"


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def write_tune_outputs(tune: Tune, summary: dict[str, Any], out: Path) -> dict[str, Any]:
    """Analyse the confirmation of `summary` (sim.runner.tune.run_tune's result) and
    write the four outputs into `out`; returns tune.json's content, whose `inside`
    says whether every banded outcome of the tuned values lies in its band on the
    confirmation's matches (the point estimates)."""
    out = run_path(out)  # a path or a URL
    matches = read_table(summary["confirm"]["folder"], "matches")
    hooks = tune.game.hooks("analysis")  # the game's outcomes (sim.outputs.games)
    table = hooks.confirm_table(matches, tune.bands, BASELINE, TUNED)
    before = hooks.outcome_values(matches, BASELINE)
    after = hooks.outcome_values(matches, TUNED)
    d_before, d_after = distance(before, tune.bands), distance(after, tune.bands)
    inside = bool(table.height) and all(v is True for v in table.get_column("after_in_band"))
    verdict = {"inside": inside, "distance_tuned": d_after, "distance_baseline": d_before}
    history = history_frame(tune, summary["history"])
    write_frame(history, out / HISTORY_FILE)
    (out / TUNED_FILE).write_text(tuned_text(tune, summary, verdict), encoding="utf-8")
    result = {
        "name": tune.spec.name, "file": tune.path, "tables": tune.tables_path,
        "tables_hash": tune.tables_hash, "sampler": tune.spec.sampler,
        "root_seed": tune.spec.root_seed, "matches_per_trial": tune.spec.matches,
        "trials": summary["trials"], "trials_told": history.height,
        "trials_refused": history.filter(pl.col("state") == "refused").height,
        "bands": {k: list(v) for k, v in tune.bands.items()},
        "keys": {k.name: {"low": k.low, "high": k.high, "integer": k.integer, "base": k.base}
                 for k in tune.keys},
        "score": f"sum over the banded outcomes of the distance outside the band: shares in "
                 f"share units, the median end turn in units of {TURN_SCALE:g} turns; the "
                 "point estimates on the trial's matches",
        "best": summary["best"],
        "confirm": {"root_seed": summary["confirm"]["root_seed"],
                    "matches": summary["confirm"]["matches"],
                    "baseline": before, "tuned": after,
                    "table": table.to_dicts(), **verdict},
        "inside": inside,
    }
    result = _clean(result)
    (out / SUMMARY_FILE).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    (out / PAGE_FILE).write_text(build_tune_report(tune, result, table, history),
                                 encoding="utf-8")
    return result


def _cell(outcome: str, value: float | None, lo: float | None = None,
          hi: float | None = None) -> str:
    if value is None:
        return "–"
    if outcome == MEDIAN_END_TURN:
        text = f"{value:.1f}"
        return text if lo is None or hi is None else f"{text} [{lo:.0f}, {hi:.0f}]"
    text = f"{value:.1%}"
    return text if lo is None or hi is None else f"{text} [{lo:.1%}, {hi:.1%}]"


def _diff_cell(outcome: str, value: float | None, lo: float | None, hi: float | None) -> str:
    if value is None:
        return "–"
    if outcome == MEDIAN_END_TURN:
        return f"{value:+.1f}"
    points = f"{value * 100:+.1f} points"
    return points if lo is None or hi is None else \
        f"{points} [{lo * 100:+.1f}, {hi * 100:+.1f}]"


def _verdict(in_band: bool | None, interval: bool | None = None) -> str:
    if in_band is None:
        return "–"
    if not in_band:
        return "no"
    return "yes (its interval too)" if interval else "yes"


def before_after_frame(table: pl.DataFrame) -> pl.DataFrame:
    """The page's before/after table: formatted cells of confirm_table, one row per
    banded outcome, `outside` marking the rows whose tuned value misses its band."""
    rows = []
    for r in table.iter_rows(named=True):
        o = r["outcome"]
        band = (f"{r['band_lo']:.0f}–{r['band_hi']:.0f} turns" if o == MEDIAN_END_TURN
                else f"{r['band_lo']:.0%}–{r['band_hi']:.0%}")
        rows.append({"outcome": o, "band": band,
                     "baseline [95 %]": _cell(o, r["before"], r["before_lo"], r["before_hi"]),
                     "in band before": _verdict(r["before_in_band"]),
                     "tuned [95 %]": _cell(o, r["after"], r["after_lo"], r["after_hi"]),
                     "in band after": _verdict(r["after_in_band"], r["after_interval_in_band"]),
                     "tuned − baseline [paired 95 %]": _diff_cell(
                         o, r["difference"], r["difference_lo"], r["difference_hi"]),
                     "p": r["p_value"], "outside": r["after_in_band"] is not True})
    schema = {"outcome": pl.Utf8, "band": pl.Utf8, "baseline [95 %]": pl.Utf8,
              "in band before": pl.Utf8, "tuned [95 %]": pl.Utf8, "in band after": pl.Utf8,
              "tuned − baseline [paired 95 %]": pl.Utf8, "p": pl.Float64,
              "outside": pl.Boolean}
    return pl.DataFrame(rows, schema=schema, orient="row")


def build_tune_report(tune: Tune, result: dict[str, Any], table: pl.DataFrame,
                      history: pl.DataFrame) -> str:
    """HTML text of tune.html. result: tune.json's content; table: confirm_table;
    history: history_frame."""
    confirm = result["confirm"]
    best = result["best"]
    title = f"Tune — {tune.spec.name}"
    verdict = ("<p><strong>Inside every band</strong> on the confirmation's matches.</p>"
               if result["inside"] else
               "<p class='failed'>Outside at least one band on the confirmation's matches "
               "(highlighted): the budget ended before every outcome was inside.</p>")
    intro = (f"<p class='muted'>{result['trials_told']} trials of {result['trials']} "
             f"({html.escape(tune.spec.sampler)}; {result['trials_refused']} refused by the "
             f"tables), each on the same {tune.spec.matches} seeded matches (root seed "
             f"{tune.spec.root_seed}: common random numbers). The best, trial "
             f"{best['trial']} at distance {best['distance']:.4f}, and the baseline (no "
             f"override) then played the same {confirm['matches']} fresh matches (root seed "
             f"{confirm['root_seed']}), so before and after are paired. Shares: Wilson "
             "intervals, the paired difference with Newcombe's interval and an exact McNemar "
             "p; the median end turn: an order-statistic interval. Distance: "
             f"{html.escape(result['score'])}.</p>")
    distances = (f"<p>Distance to the bands on the confirmation's matches: baseline "
                 f"{_num(confirm['distance_baseline'])}, tuned "
                 f"{_num(confirm['distance_tuned'])}.</p>")
    overrides = "\n".join(f"{json.dumps(k)} = {_toml_value(v)}"
                          for k, v in best["params"].items())
    keys = pl.DataFrame([{"key": k.name, "base": float(k.base), "low": float(k.low),
                          "high": float(k.high), "tuned": float(best["params"][k.name])}
                         for k in tune.keys])
    shown = history.select("trial", "state", *[k.name for k in tune.keys], *tune.bands,
                           "distance", "best_so_far").sort("distance", nulls_last=True)
    pct = {o: "pct" for o in ("conquest", "science", "dominance", "turn_limit")}
    parts = [
        "<h2>Before and after</h2>", verdict,
        _table(before_after_frame(table), {"p": "p"}, highlight="outside"), distances,
        f"<h2>Tuned values</h2><pre><code>{html.escape(overrides)}</code></pre>",
        _table(keys),
        "<h2>The optimiser's history</h2>",
        f"<figure class='chart'>{_svg(history_chart(history))}</figure>",
        "<h3>Trials by distance</h3>", _table(shown.head(20), pct),
    ]
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            f"<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; "
            f"style-src 'unsafe-inline'; img-src data:\">"
            f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>"
            f"<h1>{html.escape(title)}</h1>{intro}{''.join(parts)}</body></html>")


def tune_study(tune: Tune, folder: Path, jobs: int, backend: str, scheduler: str | None,
               say: Callable[[str], None], command: str
               ) -> tuple[dict[str, Any], dict[str, Any]]:
    """`sim tune`'s work: run (or resume) the tune's trials and confirmation in `folder`
    (a path or a URL; sim.runner.tune.run_tune, scored by sim.analysis.tune.scorer),
    then write its four outputs (write_tune_outputs). Returns run_tune's summary and
    tune.json's content. Raises TuneError, SweepError or SweepInterrupted as run_tune
    does."""
    summary = run_tune(tune, folder, scorer(tune.bands, tune.game), jobs, backend, scheduler,
                       say=say, command=command)
    return summary, write_tune_outputs(tune, summary, folder)
