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
# # The gold term's share of score (T13)
#
# Gold converts to score by division (every `gold_per_point` gold is one point,
# rounded down). This notebook shows how much of the final score the gold term
# carries, for winners and for all seats, at the end and turn by turn, per variant.
# Set `SIM_RUN_DIR` to a sweep's run folder, relative to the project root (default
# `runs/demo`, made by `make demo`).

# %%
import os

import altair as alt

from sim.analysis import charts, metrics
from sim.analysis.load import load_run, missing_table_notes
from sim.outputs.store import locate_run

# charts as inline SVG drawn by vl-convert: nothing is fetched from a CDN, so they
# render offline (and in the saved notebook)
alt.renderers.enable("svg")
# SIM_RUN_DIR relative to the project root, not to notebooks/ where the kernel runs;
# a missing, unfinished or damaged run stops here with one line saying why
run = load_run(locate_run(os.environ.get("SIM_RUN_DIR", "runs/demo")))
# a run that chose not to write some tables (tables_out) reads them as empty: what
# that costs this notebook
for note in missing_table_notes(run.provenance):
    print(note)

# %%
gold = metrics.gold_share(run.seats)
gold

# %%
charts.gold_share(gold)

# %%
charts.gold_share_over_turns(metrics.gold_share_over_turns(run.turns))

# %%
charts.score_decomposition(metrics.score_decomposition(run.seats))
