"""Altair charts of the metrics in sim.analysis.metrics.

Every function takes an already aggregated polars frame (aggregate in polars
first: altair embeds every row it is given) and returns a chart; none writes
files — only the report does. Encodings are channel objects (alt.X("lo:Q"), not
x="lo:Q"): altair turns each shorthand string into one with a from_dict that
rebuilds its table of every schema class, 8 ms a string and 0.4 s of a report.
"""

from __future__ import annotations

import polars as pl

from sim.analysis._altair import alt
from sim.rules.codes import SCORE_TERMS, VICTORY_NAMES

VICTORY_ORDER = list(VICTORY_NAMES)
WIDTH = 520


def _data(frame: pl.DataFrame) -> alt.Data:
    # the rows as a tuple: altair deep-copies every list and dict of a chart at each
    # layer, `properties` and `to_dict`, and a tuple it hands on as it is (its spec
    # and its validation read it as the same JSON array)
    return alt.Data(values=tuple(frame.to_dicts()))


def _tips(frame: pl.DataFrame) -> list[alt.Tooltip]:
    """A tooltip per column, typed from the frame (altair cannot infer from plain values)."""
    return [alt.Tooltip(f"{c}:{'Q' if frame.schema[c].is_numeric() else 'N'}")
            for c in frame.columns]


def victory_mix(freq: pl.DataFrame) -> alt.Chart:
    """Share of matches won by each victory type, per variant, with Wilson intervals
    (V01). `freq`: victory_frequencies()."""
    # the colour is the bars' alone: a whisker coloured as its bar is invisible inside it
    base = alt.Chart(_data(freq)).encode(
        x=alt.X("victory:N", sort=VICTORY_ORDER, title=None),
        xOffset=alt.XOffset("variant:N"))
    bars = base.mark_bar().encode(
        y=alt.Y("share:Q", title="share of matches", axis=alt.Axis(format="%")),
        color=alt.Color("variant:N", title="variant"),
        tooltip=[alt.Tooltip("variant:N"), alt.Tooltip("victory:N"), alt.Tooltip("wins:Q"),
                 alt.Tooltip("matches:Q"),
                 alt.Tooltip("share:Q", format=".1%"), alt.Tooltip("lo:Q", format=".1%"),
                 alt.Tooltip("hi:Q", format=".1%")])
    errors = base.mark_rule(color="black").encode(y=alt.Y("lo:Q"), y2=alt.Y2("hi:Q"))
    return (bars + errors).properties(width=WIDTH, height=240,
                                      title="Victory types (95% Wilson intervals)")


def interval_points(frame: pl.DataFrame, value: str, category: str, title: str,
                    percent: bool = True, facet: str | None = None) -> alt.Chart:
    """A point with its interval (lo, hi) per variant, coloured by `category`."""
    fmt = "%" if percent else ""
    base = alt.Chart(_data(frame)).encode(
        y=alt.Y("variant:N", title=None),
        color=alt.Color(f"{category}:N"),
        yOffset=alt.YOffset(f"{category}:N"))
    points = base.mark_point(filled=True, size=60).encode(
        x=alt.X(f"{value}:Q", title=title, axis=alt.Axis(format=fmt)),
        tooltip=_tips(frame))
    rules = base.mark_rule().encode(x=alt.X("lo:Q"), x2=alt.X2("hi:Q"))
    return (rules + points).properties(width=WIDTH, height=alt.Step(18), title=title)


def gold_share(frame: pl.DataFrame) -> alt.Chart:
    """The gold term's share of score at the end (T13), winners and standing seats,
    with intervals clustered by match. `frame`: gold_share()."""
    return interval_points(frame, "mean", "group", "Gold term's share of score at the end")


def gold_share_over_turns(frame: pl.DataFrame) -> alt.Chart:
    """Mean gold-term share of score by turn over the seats standing at that turn, per
    variant. `frame`: gold_share_over_turns()."""
    return alt.Chart(_data(frame)).mark_line().encode(
        x=alt.X("turn:Q"), y=alt.Y("mean_share:Q", title="gold share of score",
                                   axis=alt.Axis(format="%")),
        color=alt.Color("variant:N"), tooltip=[alt.Tooltip("variant:N"), alt.Tooltip("turn:Q"),
                                    alt.Tooltip("mean_share:Q", format=".1%")],
    ).properties(width=WIDTH, height=220, title="Gold term's share of score over turns")


def score_decomposition(frame: pl.DataFrame) -> alt.Chart:
    """Mean points of each score term (T13), winners and standing seats, per variant.
    `frame`: score_decomposition()."""
    return alt.Chart(_data(frame)).mark_bar().encode(
        y=alt.Y("variant:N", title=None), yOffset=alt.YOffset("group:N"),
        x=alt.X("mean_points:Q", stack="zero", title="mean points"),
        color=alt.Color("term:N", sort=list(SCORE_TERMS)),
        tooltip=[alt.Tooltip("variant:N"), alt.Tooltip("group:N"), alt.Tooltip("term:N"),
                 alt.Tooltip("mean_points:Q", format=".1f"),
                 alt.Tooltip("share:Q", format=".1%")],
    ).properties(width=WIDTH, height=alt.Step(16), title="Score by term (winners / standing)")


def capital_falls(frame: pl.DataFrame) -> alt.Chart:
    """Capital falls per match with intervals (V08). `frame`: capital_falls_per_match()."""
    return interval_points(frame.with_columns(pl.lit("falls").alias("kind")), "mean", "kind",
                           "Capital falls per match", percent=False)


def cascade_depth(frame: pl.DataFrame) -> alt.Chart:
    """The deepest cascade of capital falls of each seat in each match (V08 then V10;
    0: its capital never fell). `frame`: cascade_depth()."""
    return alt.Chart(_data(frame)).mark_bar().encode(
        x=alt.X("depth:O", title="capitals lost in one cascade (deepest per seat and match)"),
        xOffset=alt.XOffset("variant:N"), y=alt.Y("seats:Q", title="seats"),
        color=alt.Color("variant:N"),
        tooltip=[alt.Tooltip("variant:N"), alt.Tooltip("depth:O"), alt.Tooltip("seats:Q")],
    ).properties(width=WIDTH, height=200, title="Capital-fall cascade depth")


def end_turns(frame: pl.DataFrame) -> alt.Chart:
    """End-turn distribution per victory type (p10–p90 rule, p25–p75 bar, median tick)."""
    base = alt.Chart(_data(frame)).encode(
        y=alt.Y("victory:N", sort=VICTORY_ORDER, title=None), yOffset=alt.YOffset("variant:N"),
        color=alt.Color("variant:N"))
    whisker = base.mark_rule().encode(x=alt.X("p10:Q", title="end turn"), x2=alt.X2("p90:Q"))
    box = base.mark_bar(size=8, opacity=0.6).encode(x=alt.X("p25:Q"), x2=alt.X2("p75:Q"),
                                                   tooltip=_tips(frame))
    median = base.mark_tick(color="black", size=12).encode(x=alt.X("median:Q"))
    return (whisker + box + median).properties(width=WIDTH, height=alt.Step(14),
                                               title="End turn by victory type")


def win_rates(frame: pl.DataFrame, by: str) -> alt.Chart:
    """Win rate by seat position or personality with Wilson intervals."""
    base = alt.Chart(_data(frame)).encode(
        x=alt.X(f"{by}:N", title=by), xOffset=alt.XOffset("variant:N"))
    bars = base.mark_bar().encode(
        y=alt.Y("rate:Q", title="win rate", axis=alt.Axis(format="%")),
        color=alt.Color("variant:N"),
        tooltip=_tips(frame))
    rules = base.mark_rule(color="black").encode(y=alt.Y("lo:Q"), y2=alt.Y2("hi:Q"))
    return (bars + rules).properties(
        width=WIDTH, height=200, title=f"Win rate by {by}")


# the panels of paired_differences: (title, scale applied to the differences, which
# metrics); a metric no panel claims gets a panel of its own, unscaled
EFFECT_UNITS = (
    ("Victory and gold shares (percentage points)", 100.0,
     pl.col("metric").str.starts_with("victory=") | pl.col("metric").str.ends_with("_share")),
    ("End turn (turns)", 1.0, pl.col("metric") == "end_turn"),
    ("Capital falls per match", 1.0, pl.col("metric") == "capital_falls"),
)


def effect_panels(tests: pl.DataFrame) -> pl.DataFrame:
    """paired_differences' rows by unit: `tests` (variant, metric, difference, changed,
    lo/hi where available) plus unit (the panel title, EFFECT_UNITS; the metric's own
    name for one no panel claims) and difference, lo, hi in that unit (shares × 100:
    percentage points). A row without lo/hi gets its difference as both (drawn as a
    point). Rows keep their order; units in EFFECT_UNITS order."""
    frame = tests
    if "lo" not in frame.columns:
        frame = frame.with_columns(pl.col("difference").alias("lo"),
                                   pl.col("difference").alias("hi"))
    frame = frame.with_columns(pl.col("lo").fill_null(pl.col("difference")),
                               pl.col("hi").fill_null(pl.col("difference")))
    unit: pl.Expr = pl.col("metric")
    scale: pl.Expr = pl.lit(1.0)
    for title, factor, claims in reversed(EFFECT_UNITS):
        unit = pl.when(claims).then(pl.lit(title)).otherwise(unit)
        scale = pl.when(claims).then(pl.lit(factor)).otherwise(scale)
    frame = frame.with_columns(unit.alias("unit"), scale.alias("_scale"))
    return frame.with_columns(pl.col(c) * pl.col("_scale") for c in ("difference", "lo", "hi")
                              ).drop("_scale")


def paired_differences(tests: pl.DataFrame) -> alt.VConcatChart:
    """Variant minus baseline per metric with its paired interval and the corrected
    verdict, one panel per unit (effect_panels: shares in percentage points, end turn
    in turns, capital falls per match), each with its own axis so every effect can be
    read. `tests` needs variant, metric, difference, changed; lo/hi where available (a
    row without them is drawn as a point)."""
    frame = effect_panels(tests)
    order = [t for t, _f, _c in EFFECT_UNITS]
    units = sorted(frame.get_column("unit").unique().to_list(),
                   key=lambda u: (order.index(u) if u in order else len(order), u))
    colour = alt.Color("changed:N", scale=alt.Scale(domain=[True, False],
                                                    range=["#d62728", "#7f7f7f"]))
    panels = []
    for unit in units:
        part = frame.filter(pl.col("unit") == unit)
        base = alt.Chart(_data(part)).encode(y=alt.Y("metric:N", title=None),
                                             yOffset=alt.YOffset("variant:N"), color=colour)
        points = base.mark_point(filled=True, size=50).encode(
            x=alt.X("difference:Q", title="variant − baseline"),
            shape=alt.Shape("variant:N"), tooltip=_tips(part))
        zero = alt.Chart(alt.Data(values=[{"x": 0}])).mark_rule(strokeDash=[4, 4]).encode(
            x=alt.X("x:Q"))
        panels.append((zero + base.mark_rule().encode(x=alt.X("lo:Q"), x2=alt.X2("hi:Q")) + points)
                      .properties(width=WIDTH, height=alt.Step(14), title=unit))
    return alt.vconcat(*panels).properties(
        title="Changed vs baseline (red: significant after correction)")


def tornado(rows: pl.DataFrame, metric: str, title: str | None = None) -> alt.Chart:
    """The parameters of `rows` (rows of sim.analysis.sensitivity.effects for `metric`,
    strongest first: sim.analysis.sensitivity.strongest), as bars of their effect per
    +10 % of the base value (high − low when the base is 0) with the paired interval
    scaled alike; red where significant after correction."""
    scale = pl.when(pl.col("effect_per_10pct").is_not_null() & (pl.col("effect") != 0)) \
        .then(pl.col("effect_per_10pct") / pl.col("effect")).otherwise(1.0)
    rows = rows.with_columns(
        pl.coalesce("effect_per_10pct", "effect").alias("slope"),
        (pl.col("lo") * scale).alias("slope_lo"), (pl.col("hi") * scale).alias("slope_hi"))
    base = alt.Chart(_data(rows)).encode(
        y=alt.Y("parameter:N", sort=rows.get_column("parameter").to_list(), title=None))
    bars = base.mark_bar().encode(
        x=alt.X("slope:Q", title=f"{metric}: effect per +10 % of the value"),
        color=alt.Color("changed:N", scale=alt.Scale(domain=[True, False],
                                                     range=["#d62728", "#9e9e9e"]),
                        title="significant"),
        tooltip=_tips(rows))
    rules = base.mark_rule(color="black").encode(x=alt.X("slope_lo:Q"), x2=alt.X2("slope_hi:Q"))
    return (bars + rules).properties(width=WIDTH, height=alt.Step(16),
                                     title=title or f"What moves {metric}")


def morris_scatter(table: pl.DataFrame, metric: str) -> alt.Chart:
    """Morris screen of one outcome: a point per parameter at (mu_star, sigma), a
    horizontal rule of its mu_star interval, labelled by key; red where flagged
    `interacts`, faint where mu_star is within twice the noise of one elementary
    effect (ee_se); the dashed diagonal is sigma = mu_star (above it the effects
    spread more than their mean size). `table`: sim.analysis.morris.morris_indices."""
    rows = table.filter(pl.col("metric") == metric).with_columns(
        (pl.col("mu_star") - pl.col("mu_star_conf")).clip(lower_bound=0).alias("conf_lo"),
        (pl.col("mu_star") + pl.col("mu_star_conf")).alias("conf_hi"),
        pl.when(pl.col("mu_star") > 2 * pl.col("ee_se")).then(pl.lit("above"))
        .otherwise(pl.lit("within")).alias("noise"))
    top = max([*rows.get_column("conf_hi").fill_nan(0).to_list(),
               *rows.get_column("sigma").fill_nan(0).to_list(), 0.0]) * 1.05 or 1.0
    scale = alt.Scale(domain=[0, top])
    diagonal = alt.Chart(alt.Data(values=[{"v": 0.0}, {"v": top}])).mark_line(
        strokeDash=[4, 4], color="#7f7f7f").encode(x=alt.X("v:Q", scale=scale),
                                                   y=alt.Y("v:Q", scale=scale))
    base = alt.Chart(_data(rows)).encode(
        x=alt.X("mu_star:Q", scale=scale,
                title=f"{metric}: mu* (mean |effect| over [low, high])"),
        y=alt.Y("sigma:Q", scale=scale, title="sigma (spread of the effects)"))
    points = base.mark_point(filled=True, size=60).encode(
        color=alt.Color("interacts:N", scale=alt.Scale(domain=[True, False],
                                                       range=["#d62728", "#9e9e9e"]),
                        title="interacts"),
        opacity=alt.Opacity("noise:N", scale=alt.Scale(domain=["above", "within"],
                                                        range=[1.0, 0.35]),
                            title="mu* vs 2 ee_se (noise)"),
        tooltip=_tips(rows))
    intervals = base.mark_rule(color="#9e9e9e").encode(x=alt.X("conf_lo:Q"), x2=alt.X2("conf_hi:Q"))
    labels = base.mark_text(align="left", dx=6, dy=-6, fontSize=10).encode(
        text=alt.Text("parameter:N"))
    return (diagonal + intervals + points + labels).properties(
        width=WIDTH, height=WIDTH * 2 // 3, title=f"Interactions on {metric} (Morris)")


def _share_lines(rows: pl.DataFrame, x: alt.X, title: str, height: int) -> alt.Chart:
    """A line of victory shares per victory type along `x`, with their intervals."""
    base = alt.Chart(_data(rows)).encode(
        x=x, color=alt.Color("victory:N", sort=VICTORY_ORDER, title="victory"))
    line = base.mark_line(point=True).encode(
        y=alt.Y("share:Q", title="share of matches", axis=alt.Axis(format="%")),
        tooltip=_tips(rows))
    rules = base.mark_rule().encode(y=alt.Y("lo:Q"), y2=alt.Y2("hi:Q"))
    return (line + rules).properties(width=WIDTH, height=height, title=title)


def dose_response(points: pl.DataFrame, key: str) -> alt.Chart:
    """Victory shares along one table value (x), a line per victory type with 95 %
    Wilson intervals. `points`: sim.analysis.dose.dose_response's points."""
    return _share_lines(points.filter(pl.col("key") == key),
                        alt.X("value:Q", title=key, scale=alt.Scale(zero=False)),
                        f"Victory mix along {key}", 240)


def history_trend(history: pl.DataFrame, variant: str) -> alt.Chart:
    """Victory shares of one variant over the nights of the history index, with their
    Wilson intervals. `history`: sim.analysis.history.read_history."""
    # a time axis: labels thin out as nights accumulate (a label per night overlapped
    # into a band by 30 nights), nights sit at their dates, and the labels' format
    # follows the span (days for nightly runs, seconds for runs a minute apart)
    return _share_lines(history.filter(pl.col("variant") == variant).sort("finished"),
                        alt.X("finished:T", title="run finished (UTC)",
                              scale=alt.Scale(type="utc"),
                              axis=alt.Axis(labelAngle=-30, labelOverlap=True)),
                        f"{variant}: victory mix night by night", 220)


VERDICT_COLOURS = {"costs": "#d62728", "gains": "#1f77b4", "nothing": "#2ca02c",
                   "undecided": "#9e9e9e"}


def strategy_worth(table: pl.DataFrame) -> alt.Chart:
    """What each strategy is worth: the restricted seat's win-rate change (the "win"
    rows of sim.analysis.importance.strategy_importance), one bar per restricted
    variant × seat, largest loss first, with its paired interval; coloured by
    verdict (costs, gains, nothing, undecided)."""
    rows = table.filter(pl.col("outcome") == "win").with_columns(
        pl.format("{} (seat {}: no {})", "variant", "seat", "forbid").alias("strategy"),
        (pl.col("difference") * 100).alias("points"), (pl.col("lo") * 100).alias("lo_pts"),
        (pl.col("hi") * 100).alias("hi_pts"))
    order = rows.sort("difference").get_column("strategy").to_list()
    base = alt.Chart(_data(rows)).encode(y=alt.Y("strategy:N", sort=order, title=None))
    bars = base.mark_bar().encode(
        x=alt.X("points:Q", title="restricted seat's win rate − unrestricted (points)"),
        color=alt.Color("verdict:N", scale=alt.Scale(domain=list(VERDICT_COLOURS),
                                                     range=list(VERDICT_COLOURS.values()))),
        tooltip=_tips(rows))
    rules = base.mark_rule(color="black").encode(x=alt.X("lo_pts:Q"), x2=alt.X2("hi_pts:Q"))
    return (bars + rules).properties(width=WIDTH, height=alt.Step(20),
                                     title="What each strategy is worth")


def skill_sides(effects: pl.DataFrame) -> alt.Chart:
    """Each change's effect on each victory share at skill 0 and skill 1 side by side
    (sim.analysis.robustness.skill_effects), paired intervals; red where the effect
    is significant at that skill."""
    frame = effects.with_columns(pl.format("skill {}", "skill").alias("level"),
                                 (pl.col("difference") * 100).alias("points"),
                                 (pl.col("lo") * 100).alias("lo_pts"),
                                 (pl.col("hi") * 100).alias("hi_pts"))
    # a faceted layer needs its data at the top: every layer reads the same rows
    base = alt.Chart().encode(
        y=alt.Y("metric:N", title=None), yOffset=alt.YOffset("level:N"),
        color=alt.Color("changed:N", scale=alt.Scale(domain=[True, False],
                                                     range=["#d62728", "#7f7f7f"]),
                        title="significant"))
    points = base.mark_point(filled=True, size=50).encode(
        x=alt.X("points:Q", title="change − baseline at the same skill (points)"),
        shape=alt.Shape("level:N", title="skill"), tooltip=_tips(frame))
    zero = alt.Chart().mark_rule(strokeDash=[4, 4]).encode(x=alt.datum(0))
    rules = base.mark_rule().encode(x=alt.X("lo_pts:Q"), x2=alt.X2("hi_pts:Q"))
    layered = alt.layer(zero, rules, points,
                        data=_data(frame))
    return layered.properties(width=WIDTH, height=alt.Step(14)).facet(
        row=alt.Row("change:N", title=None)).properties(
        title="Effects at skill 0 and skill 1")


def quality_distribution(frame: pl.DataFrame, title: str, axis: str) -> alt.FacetChart:
    """Small multiples, one panel per variant: the share of its matches in each bin of
    a game-quality metric (sim.analysis.quality.distribution)."""
    panels = frame.get_column("variant").n_unique()
    return alt.Chart(_data(frame)).mark_bar().encode(
        x=alt.X("bin:O", title=axis), y=alt.Y("share:Q", title="matches",
                                             axis=alt.Axis(format="%")),
        tooltip=[alt.Tooltip("variant:N"), alt.Tooltip("bin:O"), alt.Tooltip("matches:Q"),
                 alt.Tooltip("share:Q", format=".1%")],
    ).properties(width=WIDTH // min(max(panels, 1), 3) - 30, height=110).facet(
        facet=alt.Facet("variant:N", title=None), columns=3).properties(title=title)


def comeback_rate(summary: pl.DataFrame) -> alt.Chart:
    """The share of matches won by a seat that was behind at half time, per variant,
    with Wilson intervals (sim.analysis.quality.quality_summary's comeback rows)."""
    rows = summary.filter(pl.col("metric") == "comeback").with_columns(
        pl.lit("comeback").alias("kind"))
    return interval_points(rows, "mean", "kind", "Comebacks: the winner was behind at "
                           "half time (95% Wilson intervals)")


def ladder_heatmap(matrix: pl.DataFrame, agents: list[str]) -> alt.Chart:
    """The ladder's win-rate matrix (sim.analysis.ladder.win_matrix) as a heat map: row
    agent's share of its decided matches against the column agent, both seat orders
    pooled; blue above 50 %, red below; the cell's text the share, its tooltip the
    Wilson interval and the counts."""
    frame = matrix.with_columns((pl.col("share") * 100).round(1).alias("percent"),
                                pl.format("{}–{} %", (pl.col("lo") * 100).round(1),
                                          (pl.col("hi") * 100).round(1)).alias("interval"))
    axis = {"sort": agents, "title": None}
    base = alt.Chart(_data(frame)).encode(
        x=alt.X("opponent:N", **axis, axis=alt.Axis(orient="top", labelAngle=0)),
        y=alt.Y("agent:N", **axis))
    cells = base.mark_rect().encode(
        color=alt.Color("share:Q", scale=alt.Scale(scheme="redblue", domain=[0, 1],
                                                   domainMid=0.5),
                        title="row wins", legend=alt.Legend(format="%")),
        tooltip=[alt.Tooltip("agent:N"), alt.Tooltip("opponent:N"),
                 alt.Tooltip("percent:Q", title="wins %"), alt.Tooltip("interval:N"),
                 alt.Tooltip("wins:Q"), alt.Tooltip("losses:Q"), alt.Tooltip("draws:Q")])
    text = base.mark_text(fontSize=12).encode(text=alt.Text("percent:Q", format=".1f"))
    side = 48 * max(len(agents), 2)
    return (cells + text).properties(width=side, height=side,
                                     title="Head to head: the row agent's win share")
