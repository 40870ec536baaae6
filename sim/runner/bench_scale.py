"""`sim bench scale`: how a sweep scales past one machine (docs/scale-out.md).

In one run: the same sweep with 1 and 2 local workers writing to this machine's
disk, and on a local Dask cluster of 2 workers writing to an S3 store (a moto server
started here on 127.0.0.1, or the store `--s3` names); each one's matches/s and
parallel efficiency against the one-worker sweep. Then what one chunk costs
besides its matches, timed on a chunk played here: writing its parts to disk, its
encoding to Parquet, its upload (the worker's PUTs), and the parent's bookkeeping on
an object store (reading every part back, hashing it, writing the marker), the
marker alone among it, and the same per chunk when the parent checks many at once as
a sweep does. From those, a projection for `machines` × `cores`: the workers' rate,
the parent's ceiling and which of the two bounds the sweep.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any
from unittest import mock

from sim.outputs.schemas import WRITTEN
from sim.outputs.storage import run_path
from sim.outputs.store import (
    _atomic_write,
    commit_chunk,
    marker_path,
    parquet_bytes,
    part_path,
    write_chunk,
)
from sim.outputs.summaries import summaries
from sim.runner.bench import _SWEEP_EXPERIMENT
from sim.runner.chunk import play_chunk, settings_for
from sim.runner.dispatch import _Commits
from sim.runner.experiments import load_experiment
from sim.runner.pool import SWEEP_MODULES, LocalPool
from sim.runner.sweep import run_sweep

# the sweep of `sim bench sweep`, at this bench's size
_EXPERIMENT = _SWEEP_EXPERIMENT


@contextlib.contextmanager
def s3_store(url: str | None):
    """The S3 prefix to sweep into: `url`, or a bucket on a moto server run for the
    length of the block on 127.0.0.1 (its AWS variables set for this process and the
    workers it starts). The server is a process of its own, as a store is: in this
    process its request handling would take turns with the parent's own work."""
    if url:
        yield url.rstrip("/")
        return
    import socket
    import subprocess
    import sys

    with socket.socket() as probe:  # a free port (the server binds it a moment later)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p",
                               str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    settings = {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
                "AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench",
                "AWS_DEFAULT_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true"}
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port),
                                                                        timeout=1):
                break
            if time.monotonic() > deadline or server.poll() is not None:
                raise RuntimeError("the moto S3 server did not start (pip install "
                                   "'moto[server]')")
            time.sleep(0.1)
        with mock.patch.dict(os.environ, settings):
            import fsspec

            fsspec.filesystem("s3", skip_instance_cache=True).mkdir("bench")
            yield "s3://bench"
    finally:
        server.terminate()
        server.wait(10)


def _sweep(experiment, out, jobs: int, backend: str) -> dict[str, Any]:
    """One sweep; its result with `wall_s`. A local sweep plays on a pool started
    before the timing, one worker included (as bench_sweep's one worker)."""
    t0 = time.perf_counter()
    if backend == "local":
        with contextlib.closing(LocalPool(jobs, preload=SWEEP_MODULES).start()) as pool:
            result = run_sweep(experiment, out, jobs=jobs, progress=False, pool=pool)
    else:
        result = run_sweep(experiment, out, jobs=jobs, backend="dask", progress=False)
    result["wall_s"] = time.perf_counter() - t0
    return result


def _median_s(fn, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def chunk_costs(experiment, disk: Path, url: str, run_id_disk: str, run_id_s3: str,
                rounds: int = 5) -> dict[str, Any]:
    """Seconds one chunk costs besides its matches (medians of `rounds`), on the first
    chunk of the runs in `disk` and `url` (rewritten with the same bytes)."""
    spec = experiment.chunks(experiment.spec.chunk_size)[0]
    tables = next(v.tables for v in experiment.variants if v.id == spec.variant)
    frames, summary = play_chunk(settings_for(experiment, disk, run_id_disk), spec, tables)
    frames = {**summaries(frames), **frames}
    blobs = {t: parquet_bytes(frames[t]) for t in WRITTEN}
    store = run_path(url)
    keys = {part_path(store, t, spec.variant, spec.chunk).path: blobs[t] for t in WRITTEN}
    marker = write_chunk(store, spec.variant, spec.chunk, frames, summary, run_id_s3)
    text = json.dumps(marker, sort_keys=True).encode()
    return {
        "disk_write_s": _median_s(lambda: write_chunk(disk, spec.variant, spec.chunk, frames,
                                                      summary, run_id_disk), rounds),
        "encode_s": _median_s(lambda: [hashlib.sha256(parquet_bytes(frames[t])).digest()
                                       for t in WRITTEN], rounds),
        "upload_s": _median_s(lambda: store.fs.pipe(keys), rounds),  # type: ignore
        "parent_bookkeeping_s": _median_s(lambda: commit_chunk(store, marker), rounds),
        # per chunk when the parent checks _Commits.THREADS chunks at once, as it does
        "parent_bookkeeping_concurrent_s": _concurrent_commit_s(store, spec, marker),
        "marker_s": _median_s(lambda: _atomic_write(
            store, marker_path(store, spec.variant, spec.chunk), text), rounds),
        "chunk_bytes": sum(len(b) for b in blobs.values()),
        # what share of a chunk's bytes each table is (what tables_out saves)
        "table_shares": {t: round(len(b) / sum(map(len, blobs.values())), 3)
                         for t, b in blobs.items()},
        "chunk_matches": spec.stop - spec.start,
    }


def _concurrent_commit_s(store: Path, spec, marker: dict[str, Any], n: int = 64) -> float:
    """Seconds a chunk when the parent commits `n` chunks (this one, again and again)
    as a sweep does, several at once."""
    commits = _Commits(store)
    t0 = time.perf_counter()
    try:
        for _ in range(n):
            commits.submit(spec, marker)
        while commits.pending:
            for outcome in commits.done(timeout=1.0):
                if outcome.kind != "committed":
                    raise RuntimeError(f"a commit failed: {outcome.value}")
    finally:
        commits.close()
    return (time.perf_counter() - t0) / n


def projection(rate_one: float, efficiency: float, costs: dict[str, float],
               machines: int, cores: int, chunk: int) -> dict[str, Any]:
    """A sweep on `machines` × `cores` workers: the workers' rate (one worker's rate ×
    workers × the measured efficiency), the parent's ceiling (its bookkeeping a chunk,
    checking several at once) and the store's traffic at the rate that results."""
    workers_rate = rate_one * machines * cores * efficiency
    parent_ceiling = chunk / costs["parent_bookkeeping_concurrent_s"]
    rate = min(workers_rate, parent_ceiling)
    per_match = costs["chunk_bytes"] / costs["chunk_matches"]
    return {"workers": machines * cores,
            "workers_matches_per_s": round(workers_rate),
            "parent_ceiling_matches_per_s": round(parent_ceiling),
            "projected_matches_per_s": round(rate),
            "bound_by": "the parent's bookkeeping" if parent_ceiling < workers_rate
            else "the workers",
            # the chunk size at which the parent keeps up with every worker
            "chunk_size_for_parent_to_keep_up": int(
                workers_rate * costs["parent_bookkeeping_concurrent_s"]) + 1,
            "store_writes_mb_per_s": round(rate * per_match / 1e6, 1),
            "store_reads_back_mb_per_s": round(rate * per_match / 1e6, 1)}


def bench_scale(matches_per_variant: int = 200, chunk: int = 25, s3: str | None = None,
                machines: int = 100, cores: int = 32) -> dict[str, Any]:
    """See the module: the three sweeps, the chunk's costs and the projection."""
    with tempfile.TemporaryDirectory() as tmp, s3_store(s3) as url:
        root = Path(tmp)
        path = root / "bench-scale.toml"
        path.write_text(_EXPERIMENT.format(matches=matches_per_variant, chunk=chunk))
        experiment = load_experiment(path)
        _sweep(experiment, root / "warm", 1, "local")  # the engine compiled or loaded
        one = _sweep(experiment, root / "one", 1, "local")
        two = _sweep(experiment, root / "two", 2, "local")
        prefix = f"{url}/bench-scale-{os.getpid()}-{time.time_ns()}"
        dask = _sweep(experiment, prefix, 2, "dask")
        run_ids = [json.loads((run_path(p) / "provenance.json").read_text())["run_id"]
                   for p in (root / "one", prefix)]
        costs = chunk_costs(experiment, root / "one", prefix, *run_ids)
    rate_one = one["matches_per_s"]
    out: dict[str, Any] = {"matches": one["played_now"], "chunk_size": chunk,
                           "store": s3 or "a moto S3 server process on 127.0.0.1 (this machine)"}
    # the sweeps' own rates: from their first chunk handed out to their last marker
    # (a Dask cluster's start is not play; the workers' engine load is in it)
    for name, result, jobs in (("local_1", one, 1), ("local_2", two, 2), ("dask_s3_2", dask, 2)):
        out[f"{name}_matches_per_s"] = result["matches_per_s"]
        out[f"{name}_efficiency"] = round(result["matches_per_s"] / (jobs * rate_one), 3)
        out[f"{name}_wall_s"] = round(result["wall_s"], 2)
        out[f"{name}_errors"] = result["errors"]
    out.update({f"chunk_{k}": round(v, 4) if isinstance(v, float) else v
                for k, v in costs.items()})
    out[f"projection_{machines}x{cores}"] = projection(
        rate_one, out["dask_s3_2_efficiency"], costs, machines, cores, chunk)
    return out
