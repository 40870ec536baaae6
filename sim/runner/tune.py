"""`sim tune`: search table values that put the victory mix inside designers' bands
(issue 13), as a sequence of ordinary sweeps driven by Optuna.

A tune file (`experiments/tune/*.toml`) names the match settings of an experiment,
the `matches` every trial plays, the budget (`trials`), the sampler (`tpe`, the
default, or `cmaes`), `confirm_matches`, the bands (target ranges of victory
shares and of the median end turn, sim.analysis.tune) and the keys to tune, each
with a range `[low, high]` (an integer table value is tuned over integers).

Trial k (1, 2, …) is one ordinary sweep: its experiment file goes to
`OUT/trials/NNNN/trial.toml` and the sweep runs in `OUT/trials/NNNN/sweep/`
(resumable, the same Parquet tables and provenance as any). Every trial plays
match indices 0 … matches − 1 under the same root seed, so every proposal is
measured on the same maps and draws (common random numbers) and two proposals
differ by their values, not by their luck. The caller's scorer turns a trial's
run folder into outcomes and a distance to the bands (the runner plays; the
analysis layer scores: sim.analysis.tune.scorer). The best trial (smallest
distance, the earlier trial on a tie) is then confirmed on fresh matches: a
sweep in `OUT/confirm/sweep/` of the baseline (no override) and the tuned
values under another root seed derived from root_seed, `confirm_matches` each,
so the before/after is paired too.

Resuming. The study lives in `OUT/study.db` (SQLite through Optuna's RDBStorage,
loaded if it exists), and the tune file's fingerprint (all but its name,
description, `trials` and `confirm_matches`) is stored in it: a folder holding
another tune is refused. On a rerun every trial already told is kept; a trial
killed while its sweep ran is finished with its stored values (its sweep resumes,
replaying only missing chunks); a trial killed before its values were stored
(SIGKILL between Optuna's ask and the first write: SIGTERM and SIGINT wait
until the values are written) is marked failed and asked again. Raising
`trials` continues a study where it stopped.

What holds: trial k's values come from a sampler seeded with (root_seed, k)
freshly for that trial, and the sampler reads only the told trials; so with TPE
a resumed tune proposes exactly what an uninterrupted one would, and ends with
the same best trial and confirmation, however often it was stopped. With
CMA-ES the same holds unless a trial was asked again (Optuna's CMA-ES also seeds
by the study's trial number, which the failed attempt used up).
"""

from __future__ import annotations

import contextlib
import difflib
import json
import math
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sim.outputs.folders import SWEEP_DIR
from sim.outputs.games import HEX, Game, game_of
from sim.outputs.lock import RunLocked, run_lock
from sim.outputs.storage import absolute, is_remote, local_copy, run_path
from sim.rules.tables import REPO_ROOT, TablesError
from sim.rules.tomlpos import key_lines, line_of, read_toml, validation_problems
from sim.runner.experiments import ExperimentError, load_experiment
from sim.runner.pool import shared_pool
from sim.runner.sensitivity import numeric_values
from sim.runner.sweep import run_sweep, stop_on_signals

STUDY_DB = "study.db"
STUDY_NAME = "tune"
TRIALS_DIR = "trials"
CONFIRM_DIR = "confirm"
TRIAL_FILE = "trial.toml"
CONFIRM_FILE = "confirm.toml"
TRIAL_VARIANT = "trial"
BASELINE = "baseline"
TUNED = "tuned"
SAMPLERS = ("tpe", "cmaes")
# what a band may be set on: the four victory types of V01 and the median end turn
BANDED = HEX.metrics   # written once in sim.outputs.games
SHARE_OUTCOMES = BANDED[:-1]
# tags that separate the tune's derived seeds from each other and from the matches'
_SAMPLER_TAG = 0x74756E65   # "tune"
_CONFIRM_TAG = 0x636F6E66   # "conf"

# (sweep folder of a finished trial) -> (outcomes by name, distance; None: cannot score)
Scorer = Callable[[Path], tuple[dict[str, float | None], float | None]]

_Pair = Annotated[list[float], Field(min_length=2, max_length=2)]
_Range = Annotated[list[int | float], Field(min_length=2, max_length=2)]


class TuneSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)

    name: str
    description: str = ""
    # the game (sim.outputs.games; None: the hex game) and its tables (None: its default)
    game: str | None = None
    tables: str | None = None
    root_seed: Annotated[int, Field(ge=0, lt=2**63)]
    seats: Annotated[int, Field(ge=2, le=6)] | None = None
    length: str | None = None
    personalities: list[str] | None = None
    # a game with sides (Crown): each side's AI skill in every trial
    side_skill: list[int] | None = None
    matches: Annotated[int, Field(ge=2, le=10_000_000)]
    chunk_size: Annotated[int, Field(ge=1, le=100_000)] = 100
    trials: Annotated[int, Field(ge=1, le=100_000)]
    sampler: str = "tpe"
    # random trials before the sampler's model takes over (default: the sampler's own,
    # TPE 10, CMA-ES 1); part of the fingerprint, so a resumed study keeps it
    startup_trials: Annotated[int, Field(ge=1, le=100_000)] | None = None
    confirm_matches: Annotated[int, Field(ge=2, le=10_000_000)] = 1000
    bands: Annotated[dict[str, _Pair], Field(min_length=1)]
    keys: Annotated[dict[str, _Range], Field(min_length=1)]
    # overrides every trial and the confirmation's baseline play with (a tune around a
    # variant: Crown's 2 v 3 as `set = { "match.team_sizes" = [2, 3] }`)
    base_set: dict[str, Any] = Field(default={}, alias="set")


class TuneError(Exception):
    """A malformed tune file or a folder that cannot hold this tune: one message
    naming file, line and key (or the folder)."""


@dataclass(frozen=True)
class Key:
    """One tuned table value: its range and its base value (its type decides
    whether the range is searched over integers)."""

    name: str
    low: int | float
    high: int | float
    integer: bool
    base: int | float


@dataclass(frozen=True)
class Tune:
    path: str
    spec: TuneSpec
    tables_path: str
    tables_hash: str
    keys: tuple[Key, ...]
    bands: dict[str, tuple[float, float]]

    @property
    def game(self) -> Game:
        """The game the tune plays (sim.outputs.games)."""
        return game_of(self.spec.game)

    @property
    def outcomes(self) -> tuple[str, ...]:
        """The outcomes a band may be set on and each trial records: the game's metrics
        (BANDED for the hex game)."""
        return self.game.metrics

    def fingerprint(self) -> dict[str, Any]:
        """What must match for a rerun to continue a study: everything that changes a
        trial's proposal or score (not the name, description, budget or confirmation)."""
        s = self.spec
        return {"tables_hash": self.tables_hash, "root_seed": s.root_seed, "seats": s.seats,
                "length": s.length, "personalities": s.personalities, "matches": s.matches,
                "chunk_size": s.chunk_size, "sampler": s.sampler,
                "startup_trials": s.startup_trials,
                "keys": [[k.name, k.low, k.high, k.integer] for k in self.keys],
                "bands": {k: list(v) for k, v in self.bands.items()},
                # a hex tune's fingerprint as before the games, so its study resumes
                **({"game": s.game, "side_skill": s.side_skill} if s.game is not None
                   else {}), **({"set": s.base_set} if s.base_set else {})}

    @property
    def confirm_seed(self) -> int:
        """The confirmation's root seed: derived from root_seed, so its matches are
        fresh (no map or draw of the tuning matches) yet the same on every rerun."""
        return derived_seed(self.spec.root_seed, _CONFIRM_TAG) >> 1   # < 2**63


def derived_seed(root_seed: int, *tags: int) -> int:
    """A 64-bit seed from (root_seed, tags) by NumPy's SeedSequence (never root + i)."""
    return int(np.random.SeedSequence([root_seed, *tags]).generate_state(1, np.uint64)[0])


def sampler_seed(root_seed: int, trial: int) -> int:
    """The seed of trial `trial`'s sampler (32 bits, what Optuna's samplers take)."""
    return derived_seed(root_seed, _SAMPLER_TAG, trial) & 0xFFFF_FFFF


# ---------------------------------------------------------------------------- the file


def load_tune(path: str | Path) -> Tune:
    """Parse and validate a tune file; TuneError names file, line, key and reason."""
    path = Path(path)
    text, raw = read_toml(path, TuneError)
    lines = key_lines(text)

    def fail(loc: tuple, reason: str) -> None:
        line = line_of(lines, loc)
        where = f"{path}:{line}" if line else str(path)
        raise TuneError(f"{where}: {'.'.join(map(str, loc))}: {reason}")

    try:
        spec = TuneSpec.model_validate(raw)
    except ValidationError as exc:
        # a line per key at fault; a misspelt key is also a missing one: the
        # misspelling, the cause, comes first
        errors = sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")
        raise TuneError("\n".join(validation_problems(errors, path, lines))) from None
    try:
        game = game_of(spec.game)
    except KeyError as exc:
        fail(("game",), exc.args[0])
    hooks = game.hooks("runner")
    candidate = Path(spec.tables or game.default_tables)
    if not candidate.is_absolute():
        beside = (path.parent / candidate).absolute()
        candidate = beside if beside.exists() else REPO_ROOT / candidate
    try:
        base = game.load(candidate, {})
    except TablesError as exc:
        fail(("tables",), exc.errors[0])
    if spec.sampler not in SAMPLERS:
        fail(("sampler",), f"unknown sampler {spec.sampler!r}; choose {' or '.join(SAMPLERS)}")
    if spec.sampler == "cmaes" and len(spec.keys) < 2:
        fail(("sampler",), "CMA-ES needs at least 2 keys (Optuna samples one key "
             "independently); use sampler = \"tpe\"")
    if spec.sampler == "cmaes" and not _has_cmaes():
        fail(("sampler",), "CMA-ES needs the `cmaes` package (pip install cmaes)")
    for loc, reason in hooks.spec_problems(spec, base)[:1]:
        fail(loc, reason)
    if spec.base_set:
        with_set, why = hooks.overrides_at(base, spec.base_set, spec.seats, spec.length)
        if with_set is None:
            fail(("set",), f"the tables refuse it: {why}")
        base = with_set
    bands = _bands(spec, game, fail)
    values = numeric_values(base.data)
    keys = []
    for name, (lo, hi) in spec.keys.items():
        loc = ("keys", name)
        if name not in values:
            close = difflib.get_close_matches(name, list(values), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            fail(loc, f"not a numeric value of the tables{hint}")
        base_value = values[name]
        integer = isinstance(base_value, int)
        if integer and not (isinstance(lo, int) and isinstance(hi, int)):
            fail(loc, f"[{lo}, {hi}]: an integer table value (base {base_value}) is tuned "
                 "over integers: give integer bounds")
        if not integer:
            lo, hi = float(lo), float(hi)
        if not (math.isfinite(lo) and math.isfinite(hi)) or lo >= hi:
            fail(loc, f"[{lo}, {hi}]: need low < high")
        for bound in (lo, hi):
            # the board at the seats and length the tune plays, not the tables' default
            _tables, why = hooks.overrides_at(base, {name: bound}, spec.seats, spec.length)
            if why is not None:
                fail(loc, f"{bound!r}: the tables refuse it: {why}")
        keys.append(Key(name, lo, hi, integer, base_value))
    return Tune(str(path), spec, str(candidate), base.hash, tuple(keys), bands)


def _bands(spec: TuneSpec, game: Game, fail: Callable[[tuple, str], None]
           ) -> dict[str, tuple[float, float]]:
    """The file's bands, each on one of the game's outcomes (Game.metrics) with
    low <= high; `fail` (loc, reason) on the first that is not."""
    bands: dict[str, tuple[float, float]] = {}
    for outcome, (lo, hi) in spec.bands.items():
        loc = ("bands", outcome)
        if outcome not in game.metrics:
            fail(loc, f"no such outcome; bands may be set on {', '.join(game.metrics)}")
        if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
            fail(loc, f"[{lo:g}, {hi:g}]: need low <= high")
        # every outcome but the hex game's median end turn is a share
        if outcome != "median_end_turn" and not 0.0 <= lo <= hi <= 1.0:
            fail(loc, f"[{lo:g}, {hi:g}]: a share's band lies within [0, 1] "
                 "(0.25 is 25 %)")
        if outcome == "median_end_turn" and lo < 0:
            fail(loc, f"[{lo:g}, {hi:g}]: a turn is never negative")
        bands[outcome] = (float(lo), float(hi))
    return bands


def _has_cmaes() -> bool:
    import importlib.util

    return importlib.util.find_spec("cmaes") is not None


# ------------------------------------------------------------------ experiment files


def _toml_value(value: Any) -> str:
    return repr(float(value)) if isinstance(value, float) else json.dumps(value)


def _inline(overrides: dict[str, Any]) -> str:
    return "{ " + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}"
                            for k, v in overrides.items()) + " }"


def _header(tune: Tune, name: str, description: str, root_seed: int, matches: int,
            baseline: str) -> list[str]:
    s = tune.spec
    lines = [f"# written by `sim tune` from the tune file {s.name!r}: do not edit",
             f"name = {json.dumps(name)}", f"description = {json.dumps(description)}",
             *([f"game = {json.dumps(s.game)}"] if s.game is not None else []),
             f"tables = {json.dumps(tune.tables_path)}", f"root_seed = {root_seed}",
             f"matches = {matches}", f"chunk_size = {s.chunk_size}",
             f"baseline = {json.dumps(baseline)}"]
    if s.seats is not None:
        lines.append(f"seats = {s.seats}")
    if s.length is not None:
        lines.append(f"length = {json.dumps(s.length)}")
    if s.personalities is not None:
        lines.append(f"personalities = {json.dumps(s.personalities)}")
    return lines


def trial_experiment_text(tune: Tune, trial: int, overrides: dict[str, Any]) -> str:
    """The experiment of trial `trial`: one variant with the proposed overrides, on
    match indices 0 … matches − 1 of root_seed (the same for every trial). The text
    names no budget, so raising `trials` leaves it, and its sweep's resume, intact."""
    lines = _header(tune, f"{tune.spec.name}-trial-{trial:04d}",
                    f"trial {trial} of the tune {tune.spec.name}", tune.spec.root_seed,
                    tune.spec.matches, TRIAL_VARIANT)
    lines += ["", "[[variants]]", f"name = {json.dumps(TRIAL_VARIANT)}", *_skills(tune),
              f"set = {_inline({**tune.spec.base_set, **overrides})}"]
    return "\n".join(lines) + "\n"


def confirm_experiment_text(tune: Tune, overrides: dict[str, Any]) -> str:
    """The confirmation: the baseline and the tuned values on confirm_matches fresh
    matches (root seed Tune.confirm_seed), paired by match index."""
    lines = _header(tune, f"{tune.spec.name}-confirm",
                    f"confirmation of the tune {tune.spec.name}: baseline vs tuned",
                    tune.confirm_seed, tune.spec.confirm_matches, BASELINE)
    base = [f"set = {_inline(tune.spec.base_set)}"] if tune.spec.base_set else []
    lines += ["", "[[variants]]", f"name = {json.dumps(BASELINE)}", *_skills(tune), *base,
              "", "[[variants]]", f"name = {json.dumps(TUNED)}", *_skills(tune),
              f"set = {_inline({**tune.spec.base_set, **overrides})}"]
    return "\n".join(lines) + "\n"


def _skills(tune: Tune) -> list[str]:
    """A variant's side_skill line (a game with sides), or none."""
    skills = tune.spec.side_skill
    return [] if skills is None else [f"side_skill = {json.dumps(skills)}"]


def _write(path: Path, text: str) -> Path:
    """Write the experiment file `path` (unless it holds `text` already); returns the
    path to load it from: that file, or for a tune folder at a URL its local_copy (an
    experiment is loaded and recorded from a file here)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    if not is_remote(path):
        return path
    local = local_copy(path)
    local.parent.mkdir(parents=True, exist_ok=True)
    local.write_text(text, encoding="utf-8")
    return local


# ------------------------------------------------------------------------- the study


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """SIGTERM and SIGINT wait until the block is done, then act as they would have
    (the handler in force is called): a trial is never left half-asked by them."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    signals = (signal.SIGTERM, signal.SIGINT)
    pending: list[int] = []
    old = {s: signal.signal(s, lambda signum, _frame: pending.append(signum)) for s in signals}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        if pending:
            handler = old[pending[0]]
            if callable(handler):
                handler(pending[0], None)
            elif handler == signal.SIG_DFL:
                signal.raise_signal(pending[0])


def _sampler(tune: Tune, trial: int):
    """A fresh sampler for trial `trial`, seeded with (root_seed, trial)."""
    import optuna

    seed = sampler_seed(tune.spec.root_seed, trial)
    extra = {} if tune.spec.startup_trials is None else \
        {"n_startup_trials": tune.spec.startup_trials}
    if tune.spec.sampler == "cmaes":
        return optuna.samplers.CmaEsSampler(seed=seed, **extra)
    return optuna.samplers.TPESampler(seed=seed, **extra)


def _distributions(tune: Tune) -> dict[str, Any]:
    import optuna

    return {k.name: optuna.distributions.IntDistribution(int(k.low), int(k.high))
            if k.integer else optuna.distributions.FloatDistribution(k.low, k.high)
            for k in tune.keys}


def study_file(out: Path) -> Path:
    """The SQLite file of the folder's study: OUT/study.db, or for a tune folder at a
    URL its local_copy (SQLite needs a file here), which save_study puts back."""
    path = run_path(out) / STUDY_DB
    return local_copy(path) if is_remote(path) else Path(path).absolute()


def fetch_study(out: Path) -> None:
    """For a tune folder at a URL: its study.db, fetched into study_file (the store's
    copy is the study: a local one left by an earlier run here is replaced, or removed
    when the store has none). Nothing for a folder on this disk."""
    remote = run_path(out) / STUDY_DB
    if not is_remote(remote):
        return
    local = study_file(out)
    local.parent.mkdir(parents=True, exist_ok=True)
    if remote.exists():
        local.write_bytes(remote.read_bytes())
    else:
        local.unlink(missing_ok=True)


def save_study(out: Path) -> None:
    """For a tune folder at a URL: put study_file back as its study.db (one put, whole
    or absent), so that what was told survives this machine. Nothing on this disk."""
    remote = run_path(out) / STUDY_DB
    if is_remote(remote) and study_file(out).exists():
        remote.write_bytes(study_file(out).read_bytes())


def study_storage(out: Path):
    """Optuna's RDBStorage on the folder's SQLite file (study_file; created on first
    use)."""
    import optuna

    return optuna.storages.RDBStorage(f"sqlite:///{study_file(out)}")


def _unreadable_study(out: Path, exc: Exception) -> TuneError:
    """A damaged or foreign study.db, in one line (not SQLAlchemy's page of SQL)."""
    why = str(getattr(exc, "orig", None) or exc).splitlines()[0]
    return TuneError(f"{run_path(out) / STUDY_DB}: not a readable study ({why}); use another "
                     "--out or delete the file to start afresh")


def open_study(tune: Tune, out: Path, storage=None):
    """The folder's study (created on first use); refuses one made by another tune."""
    import optuna
    from sqlalchemy.exc import SQLAlchemyError

    try:
        storage = storage if storage is not None else study_storage(out)
        study = optuna.create_study(storage=storage, study_name=STUDY_NAME,
                                    direction="minimize", load_if_exists=True)
    except SQLAlchemyError as exc:
        raise _unreadable_study(out, exc) from None
    mine = json.loads(json.dumps(tune.fingerprint()))
    theirs = study.user_attrs.get("fingerprint")
    if theirs is None:
        study.set_user_attr("fingerprint", mine)
    elif theirs != mine:
        differs = ", ".join(k for k in mine if mine[k] != theirs.get(k)) or "fingerprint"
        raise TuneError(f"{out}: holds a tune with different {differs}; use another --out "
                        "or delete the folder to start afresh")
    return study


def _overrides(tune: Tune, params: dict[str, Any]) -> dict[str, Any]:
    return {k.name: int(params[k.name]) if k.integer else float(params[k.name])
            for k in tune.keys}


def told_trials(tune: Tune, study) -> dict[int, Any]:
    """Trial index -> Optuna's frozen trial, for every trial that counts: told
    (complete, or refused by the tables) or running with all its values stored.
    Every other trial (a FAIL without `refused`, a running one without an index
    or values) is an abandoned attempt and is left out."""
    from optuna.trial import TrialState

    names = {k.name for k in tune.keys}
    out: dict[int, Any] = {}
    for t in study.get_trials(deepcopy=False):
        index = t.user_attrs.get("tune_index")
        if index is None or index in out:
            continue
        if t.state == TrialState.COMPLETE or \
                (t.state == TrialState.FAIL and "refused" in t.user_attrs) or \
                (t.state == TrialState.RUNNING and names <= set(t.params)):
            out[index] = t
    return out


def _abandon_strays(tune: Tune, study, kept: dict[int, Any]) -> int:
    """Mark failed every running trial that does not count (killed while it was asked)."""
    from optuna.trial import TrialState

    ids = {t.number for t in kept.values()}
    strays = [t for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
              if t.number not in ids]
    for t in strays:
        study.tell(t.number, state=TrialState.FAIL)
    return len(strays)


def history_rows(tune: Tune, study, budget: int | None = None) -> list[dict[str, Any]]:
    """One row per trial told, by index: trial, state (complete | refused), each
    key's value, each outcome (null when refused), matches, errors, distance
    (null when refused), seconds (the sweep's wall time; 0 when resumed whole),
    refused (the tables' reason, or null). Trials beyond `budget` are left out."""
    from optuna.trial import TrialState

    rows = []
    for index, t in sorted(told_trials(tune, study).items()):
        if t.state == TrialState.RUNNING or (budget is not None and index > budget):
            continue
        outcomes = t.user_attrs.get("outcomes") or {}
        row: dict[str, Any] = {"trial": index,
                               "state": "complete" if t.state == TrialState.COMPLETE
                               else "refused"}
        row |= _overrides(tune, t.params)
        row |= {o: outcomes.get(o) for o in tune.outcomes}
        row |= {"matches": int(outcomes.get("matches") or 0),
                "errors": int(t.user_attrs.get("errors", 0)),
                "distance": t.value if t.state == TrialState.COMPLETE else None,
                "seconds": float(t.user_attrs.get("seconds", 0.0)),
                "refused": t.user_attrs.get("refused")}
        rows.append(row)
    return rows


# ----------------------------------------------------------------------- the run


def _eta(timed: list[tuple[float, int]], matches_left: int) -> str:
    """The time `matches_left` more matches take at the rate of the trials played so
    far, `timed` ((seconds, matches) per trial). The first trial also waits for the
    workers to load the engine (as long as the trial itself, at a few hundred matches),
    so it counts only until a second one is timed; alone, it gives an upper bound."""
    if not timed:
        return "–"
    rate = timed[1:] or timed
    seconds = matches_left * sum(s for s, _ in rate) / sum(n for _, n in rate)
    return _clock(seconds) if len(timed) > 1 else f"at most {_clock(seconds)}"


def _clock(seconds: float) -> str:
    seconds = max(0, round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


@contextlib.contextmanager
def _quiet_optuna() -> Iterator[None]:
    """Optuna logs every trial at INFO; the tune prints its own line per trial."""
    import optuna

    before = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    try:
        yield
    finally:
        optuna.logging.set_verbosity(before)


def run_tune(tune: Tune, out: Path, score: Scorer, jobs: int = 1, backend: str = "local",
             scheduler: str | None = None, say: Callable[[str], None] | None = None,
             command: str = "") -> dict[str, Any]:
    """Run (or resume) every trial of the budget, then the confirmation sweep.

    `score` turns a finished trial's sweep folder into (outcomes, distance)
    (sim.analysis.tune.scorer). Prints one line per trial through `say` (trial k
    of N, its distance, the best so far, the ETA). Returns: out, trials (the
    budget), played (trials played now), resumed (trials kept from before),
    history (history_rows), best {trial, params, distance, outcomes}, confirm
    {folder (the run folder of its sweep), root_seed, matches, result (run_sweep's
    summary)}, sampler.

    Raises TuneError (the folder cannot hold this tune, no trial could be scored,
    matches are missing), SweepError, SweepInterrupted (SIGTERM/SIGINT: what was
    told is kept; the same call resumes).
    """
    say = say or (lambda line: print(line, file=sys.stderr, flush=True))
    out = absolute(run_path(out))  # a path or a URL
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TuneError(f"{out}: cannot create the tune folder ({exc.strerror})") from None
    # the run's lock: a flock on this disk, a lock object with a lease at a URL
    lock = run_lock(out, command)
    try:
        lock.acquire()
    except RunLocked as exc:
        raise TuneError(str(exc)) from None
    try:
        with stop_on_signals(), _quiet_optuna():
            if lock.took_over:
                say(lock.took_over)
            return _run_locked(tune, out, score, jobs, backend, scheduler, say, command)
    finally:
        lock.release()


def _run_locked(tune, out, score, jobs, backend, scheduler, say, command) -> dict[str, Any]:
    from sqlalchemy.exc import SQLAlchemyError

    fetch_study(out)  # a folder at a URL: its study, to a file here
    try:
        storage = study_storage(out)  # optuna reads the file's schema here
    except SQLAlchemyError as exc:
        raise _unreadable_study(out, exc) from None
    try:
        # one set of workers for every trial and the confirmation: a trial of 300 matches
        # plays in about 0.6 s on two workers, and starting them took 0.75 s more each time
        with shared_pool(jobs, backend, scheduler) as pool:
            return _run_study(tune, out, open_study(tune, out, storage), score, jobs,
                              backend, scheduler, say, command, pool)
    finally:
        storage.engine.dispose()   # close SQLite now, not whenever the storage is collected
        save_study(out)  # a folder at a URL: what was told, back in the store


@dataclass
class _StudyRun:
    """One run (or resumption) of a tune's study: what each sweep it plays needs, and
    the trials played now (their times give the ETA)."""

    tune: Tune
    out: Path
    study: Any                       # optuna.Study
    score: Scorer
    jobs: int
    backend: str
    scheduler: str | None
    say: Callable[[str], None]
    command: str
    pool: Any = None
    # (seconds, matches) of each trial played now: the ETA's rate
    timed: list[tuple[float, int]] = field(default_factory=list)
    played: int = 0                  # trials whose sweep played matches now

    def sweep(self, experiment: Any, folder: Path, **options: Any) -> dict[str, Any]:
        """run_sweep on the run's workers, without a progress bar (one line per trial)."""
        return run_sweep(experiment, folder, self.jobs, self.backend, self.scheduler,
                         progress=False, say=self.say, command=self.command, pool=self.pool,
                         **options)


def _run_study(tune, out, study, score, jobs, backend, scheduler, say, command, pool=None
               ) -> dict[str, Any]:
    """Every trial of the budget not told before, then the best one's confirmation;
    returns run_tune's summary."""
    from optuna.trial import TrialState

    run = _StudyRun(tune, out, study, score, jobs, backend, scheduler, say, command, pool)
    budget = tune.spec.trials
    told = told_trials(tune, study)
    if _abandon_strays(tune, study, told):
        say(f"{out}: a trial stopped before its values were stored is asked again")
    done_before = sum(1 for i, t in told.items() if i <= budget and t.state != TrialState.RUNNING)
    if done_before:
        say(f"{out}: resuming: {done_before} of {budget} trials told before")
    distributions = _distributions(tune)
    for k in range(1, budget + 1):
        frozen = told.get(k)
        if frozen is not None and frozen.state != TrialState.RUNNING:
            continue
        _play_trial(run, k, _trial(tune, study, k, frozen, distributions))
        save_study(out)  # at a URL: each trial told is in the store before the next
    history, best_row, best_params = _best_trial(tune, study, budget, out)
    confirm_dir, result = _confirm(run, best_row, best_params)
    return {"out": str(out), "trials": budget, "played": run.played, "resumed": done_before,
            "history": history,
            "best": {"trial": best_row["trial"], "params": best_params,
                     "distance": best_row["distance"],
                     "outcomes": {o: best_row[o] for o in tune.outcomes}},
            "confirm": {"folder": str(confirm_dir / SWEEP_DIR), "root_seed": tune.confirm_seed,
                        "matches": tune.spec.confirm_matches, "result": result},
            "sampler": tune.spec.sampler}


def _trial(tune: Tune, study, k: int, frozen, distributions: dict[str, Any]):
    """Trial k as an Optuna Trial: asked now of a sampler seeded for k (with SIGTERM
    and SIGINT held until its index is stored), or, for `frozen` (a trial killed while
    its sweep ran), that trial again with the values it has."""
    from optuna.trial import Trial

    if frozen is not None:
        # Optuna's public Trial takes the storage id, which FrozenTrial keeps private
        return Trial(study, frozen._trial_id)
    with _signals_held():
        study.sampler = _sampler(tune, k)
        trial = study.ask(distributions)
        trial.set_user_attr("tune_index", k)
    return trial


def _play_trial(run: _StudyRun, k: int, trial) -> None:
    """Trial k's sweep in trials/NNNN/, scored and told: failed when the tables refuse
    its values or no match finished. Raises TuneError when matches are missing."""
    from optuna.trial import TrialState

    tune, budget, say = run.tune, run.tune.spec.trials, run.say
    overrides = _overrides(tune, trial.params)
    folder = run.out / TRIALS_DIR / f"{k:04d}"
    path = _write(folder / TRIAL_FILE, trial_experiment_text(tune, k, overrides))
    try:
        experiment = load_experiment(path)
    except ExperimentError as exc:
        reason = str(exc).split(".set: ", 1)[-1]
        trial.set_user_attr("refused", reason)
        run.study.tell(trial, state=TrialState.FAIL)
        say(f"trial {k} of {budget}: refused by the tables ({reason})")
        return
    result = run.sweep(experiment, folder / SWEEP_DIR)
    if result["missing"] or result["problems"]:
        raise TuneError(f"{folder / SWEEP_DIR}: {result['missing']} of "
                        f"{result['planned']} matches of trial {k} are not written; "
                        f"run the same command again: {run.command}")
    outcomes, dist = run.score(folder / SWEEP_DIR)
    seconds = result["seconds"] - (result["compile_s"] or 0.0)
    if result["played_now"]:
        run.timed.append((seconds, result["played_now"]))
        run.played += 1
    trial.set_user_attr("outcomes", outcomes)
    trial.set_user_attr("errors", result["errors"])
    trial.set_user_attr("seconds", round(result["seconds"], 3))
    if result["errors"]:
        say(f"trial {k}: {result['errors']} of {result['planned']} matches failed; its "
            "outcomes are over the finished ones (see its errors table)")
    if dist is None:
        trial.set_user_attr("refused", "no finished match to score")
        run.study.tell(trial, state=TrialState.FAIL)
        say(f"trial {k} of {budget}: no finished match to score")
        return
    run.study.tell(trial, dist)
    _say_progress(run, k, dist, result["seconds"])


def _say_progress(run: _StudyRun, k: int, dist: float, seconds: float) -> None:
    """Trial k's line: its distance, the best so far, its time and the ETA of the
    trials left and the confirmation."""
    tune, budget = run.tune, run.tune.spec.trials
    rows = [r for r in history_rows(tune, run.study, budget) if r["distance"] is not None]
    best = min(rows, key=lambda r: (r["distance"], r["trial"]))
    left = (budget - k) * tune.spec.matches + 2 * tune.spec.confirm_matches
    eta = _eta(run.timed, left)
    run.say(f"trial {k} of {budget}: distance {dist:.4f} (best {best['distance']:.4f}, "
            f"trial {best['trial']}), {seconds:.1f} s; ETA {eta} "
            "(with the confirmation)")


def _best_trial(tune: Tune, study, budget: int, out: Path
                ) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
    """(history_rows, the best trial's row, its values by key): the smallest distance,
    the earlier trial on a tie. Raises TuneError when no trial could be scored."""
    history = history_rows(tune, study, budget)
    scored = [r for r in history if r["distance"] is not None]
    if not scored:
        raise TuneError(f"{out}: none of the {budget} trials could be scored (every one was "
                        "refused by the tables); narrow the keys' ranges")
    best_row = min(scored, key=lambda r: (r["distance"], r["trial"]))
    best_params = {k.name: best_row[k.name] for k in tune.keys}
    return history, best_row, best_params


def _confirm(run: _StudyRun, best_row: dict[str, Any], best_params: dict[str, Any]
             ) -> tuple[Path, dict[str, Any]]:
    """The confirmation sweep in confirm/: the baseline and the best values on fresh
    matches (tune.confirm_seed). Returns its folder and run_sweep's summary."""
    tune, say = run.tune, run.say
    confirm_dir = run.out / CONFIRM_DIR
    path = _write(confirm_dir / CONFIRM_FILE, confirm_experiment_text(tune, best_params))
    try:
        experiment = load_experiment(path)
    except ExperimentError as exc:  # pragma: no cover - the trial passed the same check
        raise TuneError(str(exc)) from None
    say(f"confirming trial {best_row['trial']} (distance {best_row['distance']:.4f}) against "
        f"the baseline on {tune.spec.confirm_matches} fresh matches (root seed "
        f"{tune.confirm_seed})")
    result = run.sweep(experiment, confirm_dir / SWEEP_DIR, replace_stale=True)
    if result["missing"] or result["problems"]:
        raise TuneError(f"{confirm_dir / SWEEP_DIR}: {result['missing']} of "
                        f"{result['planned']} confirmation matches are not written; run the "
                        f"same command again: {run.command}")
    return confirm_dir, result


__all__ = ["BANDED", "BASELINE", "TUNED", "Key", "Scorer", "Tune", "TuneError", "TuneSpec",
           "history_rows", "load_tune", "open_study", "run_tune", "study_storage", "told_trials"]
