"""A sweep's run folder before any chunk is played: its fingerprint (what must match
for a resumed run to continue the folder), its provenance, the refusals of a folder
that holds another run or someone else's files, and the plan of the chunks left to
play (pending, damaged, and on request those whose matches failed).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from sim.outputs.games import game_of
from sim.outputs.lock import LOCK_NAME
from sim.outputs.provenance import code_version, now, package_versions
from sim.outputs.schemas import WRITTEN
from sim.outputs.storage import is_remote, remove_tree
from sim.outputs.store import atomic_write_text, clear_tmp, marker_path, remove_chunk, verify_run
from sim.runner.experiments import ChunkSpec, Experiment, Variant


class SweepError(Exception):
    """The sweep cannot start or go on: one line naming the folder or option."""


class RunFolderMismatch(SweepError):
    """The output folder holds a run of another experiment, tables, code or chunking."""



def fingerprint(experiment: Experiment, chunk_size: int) -> dict[str, Any]:
    """What must match for a resumed run to continue an existing folder."""
    return {"experiment_hash": experiment.text_hash, "chunk_size": chunk_size,
            "code": {k: v for k, v in code_version().items() if k != "dirty"},
            "tables_hashes": {v.id: v.tables_hash for v in experiment.variants}}


def item_order(variant: Variant) -> dict[str, list[str]]:
    """The variant's units, buildings and techs in code order: the order of the `units`
    list column of `turns` and of the item codes in events (docs/outcomes.md)."""
    t = variant.tables
    if t is not None and not hasattr(t, "unit_names"):
        return {}  # a game without units, buildings or techs (Crown)
    if t is not None:
        return {"units": t.unit_names, "buildings": t.building_names, "techs": t.tech_names}
    return {k: sorted(variant.resolved.get(k, {})) for k in ("units", "buildings", "techs")}


def provenance(experiment: Experiment, chunk_size: int, jobs: int, backend: str,
               started: str) -> dict[str, Any]:
    spec = experiment.spec
    return {
        # a new id per run folder: workers compare it to tell the run's folder from
        # another folder at the same path on a machine that does not share the storage
        "run_id": uuid.uuid4().hex,
        "fingerprint": fingerprint(experiment, chunk_size),
        "code_version": code_version(),
        "packages": package_versions(),
        "experiment": {"path": experiment.path, "name": spec.name,
                       "description": spec.description,
                       "text": Path(experiment.path).read_text(encoding="utf-8")},
        "game": spec.game,  # sim.outputs.games: whose tables the folder holds
        "tables_path": experiment.tables_path,
        "root_seed": spec.root_seed, "matches_per_variant": spec.matches,
        "seats": experiment.seats, "length": spec.length,
        "personalities": list(experiment.personalities),
        "rotate_personalities": spec.rotate_personalities,
        "streams": "SeedSequence(root_seed, spawn_key=(match_index, purpose)); purposes "
                   "map=0, ai=1 and random_play=4 (per seat), events=2, crown=3; never the variant",
        "baseline": experiment.baseline,
        "variants": [{"id": v.id, "overrides": v.overrides, "tables_hash": v.tables_hash,
                      "items": item_order(v), "tables": v.resolved,
                      "seat_ai": list(v.seat_ai),
                      # a game with sides (sim.outputs.games) seats its AI by side
                      **({"side_skill": list(v.side_skill)} if game_of(spec.game).sides
                         else {})}
                     for v in experiment.variants],
        "chunk_size": chunk_size, "jobs": jobs, "backend": backend,
        "tables_out": list(spec.written),
        "started": started, "finished": None,
    }


def _old_fingerprint(out: Path) -> dict[str, Any] | None:
    """The fingerprint of the run in `out`, {} when unreadable, None when there is none."""
    path = out / "provenance.json"
    if not path.exists():
        return None
    try:
        fp = json.loads(path.read_text(encoding="utf-8")).get("fingerprint")
    except (OSError, ValueError, AttributeError):
        return {}
    return fp if isinstance(fp, dict) else {}


def fingerprint_matches(experiment: Experiment, out: Path, chunk_size: int) -> bool:
    """True when `out` has no provenance yet or was made by this experiment, tables, code
    and chunking."""
    old = _old_fingerprint(out)
    return old is None or old == fingerprint(experiment, chunk_size)


def _mismatch(experiment: Experiment, out: Path, old: dict[str, Any],
              fp: dict[str, Any]) -> str:
    fix = "--replace-stale starts afresh (or choose another --out)"
    differs = [k for k in fp if old.get(k) != fp[k]]
    if differs == ["tables_hashes"]:
        was, now_ = old.get("tables_hashes") or {}, fp["tables_hashes"]
        variant = next((v for v in now_ if was.get(v) != now_[v]), next(iter(now_)))
        return (f"{out}: the tables changed since this run started ({experiment.tables_path}: "
                f"variant {variant} had tables hash {was.get(variant, '?')}, now "
                f"{now_[variant]}); restore them to resume, or {fix}")
    if not old:
        return f"{out}: its provenance.json is unreadable or has no fingerprint; {fix}"
    names = {"experiment_hash": "experiment file", "chunk_size": "chunk size",
             "code": "code version", "tables_hashes": "tables"}
    return f"{out}: holds a run with a different {', '.join(names[k] for k in differs)}; {fix}"


def prepare_folder(experiment: Experiment, out: Path, chunk_size: int, jobs: int,
                   backend: str) -> dict[str, Any]:
    """Create or reopen the run folder's provenance; refuses a folder made by something
    else (call with the folder's lock held)."""
    fp = fingerprint(experiment, chunk_size)
    old = _old_fingerprint(out)
    if old is not None:
        if old != fp:
            raise RunFolderMismatch(_mismatch(experiment, out, old, fp))
        prov = json.loads((out / "provenance.json").read_text(encoding="utf-8"))
        prov.update(jobs=jobs, backend=backend)
        if experiment.spec.sequential and prov["matches_per_variant"] != \
                experiment.spec.matches:
            # a sequential sweep's next look: the plan grows before any of its chunks
            # is written, so an interrupted look resumes on the grown plan
            prov["matches_per_variant"] = experiment.spec.matches
            atomic_write_text(out, out / "provenance.json",
                              json.dumps(prov, indent=1, sort_keys=True))
        return prov
    prov = provenance(experiment, chunk_size, jobs, backend, now())
    atomic_write_text(out, out / "provenance.json", json.dumps(prov, indent=1, sort_keys=True))
    return prov


# what a sweep writes in its run folder; anything else there is someone else's
_RUN_ENTRIES = frozenset({*WRITTEN, "_done", ".tmp", "provenance.json", LOCK_NAME})


def _not_ours(out: Path) -> list[str]:
    """The names in `out` a sweep never writes, sorted."""
    return sorted(p.name for p in _entries(out) if p.name not in _RUN_ENTRIES)


def _entries(out: Path) -> list[Path]:
    """What `out` holds (nothing for a prefix of an object store with no object yet)."""
    if is_remote(out) and not out.exists():
        return []
    return list(out.iterdir())


def _clear_folder(out: Path, keep: str) -> None:
    """Remove the run in `out` (everything a sweep writes there but `keep`); what a
    sweep never writes stays (it would not be in `out` unless the run was started
    there by hand beside it: refuse_foreign_folder)."""
    for path in _entries(out):
        if path.name == keep or path.name not in _RUN_ENTRIES:
            continue
        remove_tree(path)


def refuse_foreign_folder(out: Path) -> None:
    """SweepError when `out` holds no run but other files: a sweep writes its tables
    only into an empty folder or its own, never among a user's files (whose folder a
    later --replace-stale would then clear)."""
    if (out / "provenance.json").exists():
        return
    others = _not_ours(out)
    if others:
        shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3
                                          else "")
        raise SweepError(f"{out}: holds files that are not a sweep's ({shown}); give --out "
                         "an empty or new folder")


def _orphans(out: Path) -> list[str]:
    """What a run wrote in `out` (chunks, markers) when its provenance.json is gone:
    nothing then says which experiment, tables and code made them."""
    if (out / "provenance.json").exists():
        return []
    return sorted(p.name for p in _entries(out)
                  if p.name in _RUN_ENTRIES and p.name not in (LOCK_NAME, ".tmp"))



def open_run_folder(experiment: Experiment, out: Path, chunk_size: int, jobs: int,
                    backend: str, replace_stale: bool, retry_errors: bool, say,
                    ) -> tuple[dict[str, Any], list[ChunkSpec], list[ChunkSpec]]:
    """Make `out` this run's folder (cleared first, with replace_stale, when it holds
    another run) and plan what is left to play; returns the provenance, every chunk of
    the run and the chunks to play: those not written, those written damaged (removed
    here) and, with retry_errors, those whose matches failed. Refuses a folder made by
    something else (call with the folder's lock held)."""
    if replace_stale and (_orphans(out) or
                          not fingerprint_matches(experiment, out, chunk_size)):
        say(f"{out}: holds another run; starting afresh")
        _clear_folder(out, keep=LOCK_NAME)
    if orphans := _orphans(out):
        # resumed, they would count as this experiment's, whatever wrote them
        raise RunFolderMismatch(
            f"{out}: holds a run's {', '.join(orphans)} but no provenance.json, so nothing "
            "says which experiment, tables and code wrote them; --replace-stale starts "
            "afresh (or choose another --out)")
    prov = prepare_folder(experiment, out, chunk_size, jobs, backend)
    clear_tmp(out)
    check = verify_run(out, prov)
    if check.foreign:
        raise SweepError(f"{out}: {check.foreign[0].relative_to(out)} belongs to no chunk of "
                         "this run; remove it (or use --replace-stale to start afresh)")
    for c, why in check.damaged:
        say(f"{out}: {c.label}: {why}; playing it again")
        remove_chunk(out, c.variant, c.chunk)
    redo = {(c.variant, c.chunk) for c in check.pending} | \
        {(c.variant, c.chunk) for c, _ in check.damaged}
    if retry_errors:
        failed = {k: m for k, m in check.done.items() if m["parts"]["errors"]["rows"]}
        if failed:
            say(f"{out}: retrying {sum(m['parts']['errors']['rows'] for m in failed.values())} "
                f"failed matches in {len(failed)} chunk{'s' if len(failed) != 1 else ''}")
        for variant, chunk in failed:  # pending now: an interrupted retry is redone again
            marker_path(out, variant, chunk).unlink()
        redo |= set(failed)
    all_chunks = experiment.chunks(chunk_size)
    return prov, all_chunks, [c for c in all_chunks if (c.variant, c.chunk) in redo]
