"""Fit skill 1's learned value of a position ([ai.value], D11) on skill-0 matches.

    .venv/bin/python tools/fit_value.py FIT_RUN TEST_RUN [--tables FILE] [--window A B]

FIT_RUN and TEST_RUN are sweeps of skill-0 matches that wrote the turns table
(experiments/lookahead/value_fit.toml and value_test.toml: different seeds). Each row
is a seat alive (cities held > 0) at the end of a turn; its features are
sim.rules.codes.VALUE_FEATURES, the numbers sim.kernels.lookahead.value_features reads
from a play-out's end (own minus the best alive rival's), and its label whether the
seat won the match. A logistic regression (statsmodels) of the label on the features
is fitted on FIT_RUN; on TEST_RUN the script prints the held-out log-loss and AUC of
the fitted value against a logistic of the score margin alone (the value skill 1 had),
over every turn and over the turns a play-out ends on (--window, % of the match), and
the `[ai.value]` block to paste into the AI table (weights in 1/VALUE_UNIT of a logit).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import polars as pl
import statsmodels.api as sm

from sim.analysis.load import load_run
from sim.rules.codes import (
    F_ARMY,
    F_BIAS,
    F_CITIES,
    F_DOMINANCE,
    F_GOLD,
    F_LATE_SCORE,
    F_PROGRESS,
    F_SCIENCE,
    F_SCORE,
    N_VALUE_FEATURES,
    PERCENT,
    VALUE_FEATURES,
    VALUE_UNIT,
)
from sim.rules.tables import DEFAULT_TABLES, load_tables

# the rival-relative features and the turns-table number each is read from
LEADS = (F_SCORE, F_CITIES, F_SCIENCE, F_ARMY, F_GOLD, F_DOMINANCE)


def army_weights(tables_path: str | None) -> np.ndarray:
    """(U,) int64: each unit type's cost if it can attack, else 0 (the army feature),
    in the tables' unit order (the turns table's `units` lists)."""
    tables = load_tables(tables_path) if tables_path else load_tables()
    arrays = tables.arrays()
    return np.where(arrays.unit_attack > 0, arrays.unit_cost, 0).astype(np.int64)


def features(run_dir: str, army: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x, won, progress) of every seat alive at the end of a turn of the run's matches:
    x (R, F) int64 VALUE_FEATURES, won (R,) bool, progress (R,) % of the match played."""
    run = load_run(run_dir)
    matches = run.matches.select("match_id", "winner", "length", "seats")
    turns = (run.turns.join(matches, on="match_id")
             .sort("match_id", "turn", "seat")
             .with_columns(pl.col("science_gained").cum_sum().over("match_id", "seat")
                           .alias("science")))
    n_seats = int(matches.get_column("seats").max())
    if int(matches.get_column("seats").min()) != n_seats:
        raise SystemExit(f"{run_dir}: matches of several seat counts; fit one at a time")
    units = np.asarray(turns.get_column("units").to_list(), dtype=np.int64)
    own = np.zeros((turns.height, N_VALUE_FEATURES), dtype=np.int64)
    own[:, F_SCORE] = turns.get_column("score").to_numpy()
    own[:, F_CITIES] = turns.get_column("cities_held").to_numpy()
    own[:, F_SCIENCE] = turns.get_column("science").to_numpy()
    own[:, F_ARMY] = units @ army
    own[:, F_GOLD] = turns.get_column("gold_stock").to_numpy()
    own[:, F_DOMINANCE] = turns.get_column("dominance").to_numpy()
    g = turns.height // n_seats  # one group of n_seats rows per match and turn
    own = own.reshape(g, n_seats, N_VALUE_FEATURES)
    alive = own[:, :, F_CITIES] > 0
    x = np.zeros_like(own)
    for s in range(n_seats):
        rivals = alive.copy()
        rivals[:, s] = False
        for f in LEADS:
            masked = np.where(rivals, own[:, :, f], np.iinfo(np.int64).min)
            best = masked.max(axis=1)
            x[:, s, f] = own[:, s, f] - np.where(rivals.any(axis=1), best, 0)
    turn = turns.get_column("turn").to_numpy().reshape(g, n_seats)
    length = turns.get_column("length").to_numpy().reshape(g, n_seats)
    x[:, :, F_BIAS] = 1
    x[:, :, F_PROGRESS] = turn * PERCENT // length
    x[:, :, F_LATE_SCORE] = x[:, :, F_SCORE] * x[:, :, F_PROGRESS] // PERCENT
    won = (turns.get_column("winner").to_numpy() == turns.get_column("seat").to_numpy())
    keep = alive.reshape(-1)
    return (x.reshape(-1, N_VALUE_FEATURES)[keep], won.reshape(-1)[keep],
            x.reshape(-1, N_VALUE_FEATURES)[keep, F_PROGRESS])


def log_loss(p: np.ndarray, y: np.ndarray) -> float:
    """Mean negative log-likelihood of labels y (R,) under chances p (R,)."""
    p = np.clip(p, 1e-12, 1 - 1e-12)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def auc(score: np.ndarray, y: np.ndarray) -> float:
    """The chance a random winner's row scores above a random loser's (ties half)."""
    order = np.argsort(score, kind="mergesort")
    ranks = np.empty(len(score), dtype=np.float64)
    sorted_score = score[order]
    # average ranks over ties
    _, first, counts = np.unique(sorted_score, return_index=True, return_counts=True)
    avg = first + (counts - 1) / 2.0 + 1
    ranks[order] = np.repeat(avg, counts)
    n_pos = int(y.sum())
    n_neg = len(y) - n_pos
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def fit(x: np.ndarray, y: np.ndarray, cols: list[int]) -> np.ndarray:
    """Logistic coefficients (F,) of y on the columns `cols` of x (others 0)."""
    z = x[:, cols].astype(np.float64)
    scale = np.maximum(np.abs(z).max(axis=0), 1.0)  # conditioning only; undone below
    model = sm.Logit(y.astype(np.float64), z / scale).fit(disp=0, maxiter=200)
    beta = np.zeros(x.shape[1])
    beta[cols] = np.asarray(model.params) / scale
    return beta


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fit_run")
    parser.add_argument("test_run")
    parser.add_argument("--tables", default=None,
                        help=f"unit costs from (default {DEFAULT_TABLES})")
    parser.add_argument("--window", nargs=2, type=int, default=[10, 50],
                        help="%% of the match where play-outs end (default 10 50)")
    args = parser.parse_args()
    army = army_weights(args.tables)
    x_fit, y_fit, _ = features(args.fit_run, army)
    x_test, y_test, progress = features(args.test_run, army)
    print(f"fit rows {len(y_fit)} ({args.fit_run}), "
          f"held-out rows {len(y_test)} ({args.test_run})")
    models = {"score margin": [F_BIAS, F_PROGRESS, F_SCORE],
              "learned value": list(range(N_VALUE_FEATURES))}
    lo, hi = args.window
    window = (progress >= lo) & (progress <= hi)
    betas = {}
    for name, cols in models.items():
        beta = fit(x_fit, y_fit, cols)
        betas[name] = beta
        logit = x_test @ beta
        p = 1 / (1 + np.exp(-logit))
        print(f"{name:<14} held-out log-loss {log_loss(p, y_test):.4f} AUC "
              f"{auc(logit, y_test):.4f}; turns {lo}-{hi} %: log-loss "
              f"{log_loss(p[window], y_test[window]):.4f} AUC "
              f"{auc(logit[window], y_test[window]):.4f}")
    beta = betas["learned value"]
    print("\n[ai.value.weights]   # tools/fit_value.py: 1/VALUE_UNIT logit per unit")
    for f, name in enumerate(VALUE_FEATURES):
        print(f"{name} = {round(beta[f] * VALUE_UNIT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
