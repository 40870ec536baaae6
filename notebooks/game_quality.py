# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # How the game plays, and why a variant moved
#
# The report's section "How the game plays" for any run folder: per match, from the
# per-turn scores, the decisive turn, the lead changes, comebacks, stability,
# eliminations and the largest lead (definitions and their Ludii counterparts:
# `docs/quality.md`); per variant their means with intervals and their paired
# differences from the baseline; then the mechanisms that moved with each variant.
# Every number comes from `sim.analysis`; this notebook defines no metric of its own.
#
# Set `SIM_RUN_DIR` to a sweep's run folder, relative to the project root (default
# `runs/demo`, made by `make demo`).

# %%
import os

import altair as alt
import polars as pl

from sim.analysis import charts, mechanisms, metrics, quality
from sim.analysis.load import load_run
from sim.outputs.store import locate_run

# charts as inline SVG drawn by vl-convert: nothing is fetched from a CDN, so they
# render offline (and in the saved notebook)
alt.renderers.enable("svg")
# SIM_RUN_DIR relative to the project root, not to notebooks/ where the kernel runs;
# a missing, unfinished or damaged run stops here with one line saying why
run = load_run(locate_run(os.environ.get("SIM_RUN_DIR", "runs/demo")))
print(f"{run.matches.height} matches, variants: {run.variants}, baseline: {run.baseline}")

# %% [markdown]
# ## The quality table: one row per finished match

# %%
table = quality.quality_table(run.turns, run.matches, run.seats, run.variants)
table

# %%
summary = quality.quality_summary(table)
for variant in run.variants:
    print(f"{variant}: {quality.quality_sentences(summary, variant)}")
summary

# %%
charts.quality_distribution(quality.distribution(table, "lead_changes", top=20),
                            "Lead changes per match", "lead changes (20: 20 or more)")

# %%
charts.quality_distribution(quality.distribution(table, "decisive_turn", width=10),
                            "Decisive turn", "decisive turn (bins of 10)")

# %%
charts.comeback_rate(summary)

# %% [markdown]
# ## Paired against the baseline
# Match *i* of every variant is played on the same map with the same draws: paired
# t-tests (McNemar for comebacks), Holm over every metric × variant.

# %%
tests = quality.quality_tests(table, run.baseline) if len(run.variants) > 1 else None
tests

# %% [markdown]
# ## What moved with each variant
# The mechanisms (truces, captures, capital falls, revolts, pacts, bandit fights, each
# building and unit built, each tech researched) counted per match and paired with the
# baseline's, ranked by the standardised size of their change. The report lists only
# the variants whose victory mix moved; here every variant is listed, with those first.
# These are associations, not causes.

# %%
mix = metrics.significance(metrics.victory_mix_tests(run.matches, run.baseline))
victory = metrics.significance(metrics.paired_victory_tests(run.matches, run.baseline))
moved = mechanisms.moved_variants(mix)
others = [v for v in run.variants if v != run.baseline and v not in moved]
counts = mechanisms.mechanism_counts(run.events, run.matches, run.variants, run.root)
changes = mechanisms.mechanism_changes(counts, run.baseline)
print(mechanisms.CAVEAT)
for variant in [*moved, *others]:
    print(f"{variant} ({'victory mix moved' if variant in moved else 'mix not shown to move'}):",
          mechanisms.explanation(victory, changes, variant))
changes.filter(pl.col("rank") <= 8)
