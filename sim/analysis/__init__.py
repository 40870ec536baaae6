"""Statistics and metrics over a sweep's outcome tables (docs/outcomes.md).

`load` reads a run folder into eager polars frames (RunFolderError for a missing
or empty one), `stats` wraps the statsmodels and scipy routines the metrics use
(and decides their edges), and the metrics live by subject: `victory`,
`paired`, `gold`, `cascades`, `seats`, `errors`, `content` (shared helpers in `_frames`),
all re-exported by `metrics`. `charts` draws them. How the game plays
(decisive turn, lead changes, comebacks, from the per-turn scores) is `quality`, and
the mechanisms that moved with a variant are `mechanisms` (docs/quality.md). This
layer reads Parquet outputs only: it never imports the engine (tests/test_architecture.py).

Definitions (each function's docstring says more):

* Finished match: a `matches` row with a victory. A match that raised has an
  `errors` row instead; every count, share and pair is over finished matches,
  and `error_rates` says how many did not finish (a match that failed and then
  finished on a retry counts as finished).
* Victory share: wins / finished matches of the variant, with Wilson intervals
  and Goodman's simultaneous ones; null (not NaN) with no finished match.
* Gold share (T13's gold term / score), one definition per question:
  winners: the winner's share at the end of each match; standing: the share of
  every seat standing at the end, each seat weighing the same; over turns: the
  share of every seat at the end of each turn it was still standing in.
  Eliminated seats are out of all three (their remaining score is all gold), as
  are seats with score 0. gold_share, score_decomposition's gold row and the
  paired tests' winner_gold_share / standing_gold_share are the same numbers.
* Seat-level intervals are clustered by match (cluster-robust variance,
  statsmodels OLS `cov_type="cluster"`, t with matches − 1 df): the seats of one
  match are correlated. Win rates keep Wilson intervals (one winner per match
  makes the seats' indicators negatively correlated, so those are conservative).
* Pair: match i of a variant and match i of the baseline (common random
  numbers), used only when both finished; `n_pairs` counts the pairs a test used.
  Victory types: exact McNemar with Newcombe's paired interval of the
  difference; the whole mix at once: Stuart–Maxwell, with the number of matches
  whose victory type or winner changed. Continuous metrics: cluster-robust paired
  t-test (the paired t-test for one value per match), whose p-value has no
  resampling floor. significance(): Holm or Benjamini–Hochberg over all rows
  given, with `resolution_limited` and a ResolutionWarning where an exact test's
  smallest attainable p-value times the family size exceeds alpha.
* Cascade: falls of one seat's capitals linked through the event log, each the
  fall of the capital the previous fall named (its `value`), at most
  CASCADE_WITHIN turns later; cascade_depth gives each match × seat its deepest
  cascade, 0 when its capital never fell.
* Content used: a unit or building with a `built` event, a tech with a `research`
  event, a mechanic with its event (content.MECHANICS), at least once in a finished
  match; the share of a variant's finished matches, Wilson intervals; under
  DEAD_SHARE (5 %) it is dead content: a lever on it does nothing. Item names come
  from the run's provenance (each variant's tables), never from code.
* Revolting city taken: a city handed over by a capital fall and taken again
  before its revolt ended, by a third seat or retaken by its former owner (two
  separate counts).
"""
