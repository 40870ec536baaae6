"""Statistics and metrics over a sweep's outcome tables (docs/outcomes.md).

`load` reads a run folder into eager polars frames, `stats` holds the small
statistical routines (Wilson intervals, exact McNemar, paired bootstrap,
multiple-testing corrections) and the metrics live by subject: `victory`,
`paired`, `gold`, `cascades`, `seats` (shared helpers in `_frames`), all
re-exported by `metrics`. `charts` draws them. This layer reads Parquet outputs
only: it never imports the engine (tests/test_architecture.py).
"""
