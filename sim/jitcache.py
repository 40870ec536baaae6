"""Where numba keeps the engine's compiled code, whether that folder can be written and
whether it holds the compiled engine, without importing numba: a sweep's parent asks
(`engine_cached`) before its workers play, and only processes that play load numba
(sim.jit, which points numba's cache at this module's `cache_dir`).
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


# the layers compiled code is built from (see sim.jit's docstring)
_COMPILED_LAYERS = ("jit.py", "rules", "world", "kernels")


def source_hash(layers: tuple[str, ...] = _COMPILED_LAYERS) -> str:
    """sha256 (first 16 hex) over the path and bytes of every .py file of `layers`
    (files and folders of the package; default: the layers compiled code is built
    from; ("",) the whole package)."""
    digest = hashlib.sha256()
    paths = [p for name in layers
             for p in ([_PACKAGE / name] if name.endswith(".py")
                       else (_PACKAGE / name).rglob("*.py"))]
    for path in sorted(paths):
        digest.update(str(path.relative_to(_PACKAGE)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def cache_dir() -> Path:
    base = os.environ.get("SIM_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "hexsim"
    )
    return Path(base) / f"numba-{source_hash()}"


def prune_caches(keep: int = 4) -> tuple[int, int]:
    """Remove the compiled caches of other versions of the compiled code (the sibling
    `numba-<source hash>` folders of cache_dir()), all but the `keep` most recently
    written; the current one always stays. Each edit of a kernel leaves a folder of
    50-100 MB behind, and nothing else removes them. A version whose folder is gone
    compiles again when it next runs. Returns (folders removed, bytes freed)."""
    import shutil

    current = cache_dir()
    if not current.parent.is_dir():
        return 0, 0
    others = sorted((p for p in current.parent.glob("numba-*") if p.is_dir() and p != current),
                    key=lambda p: p.stat().st_mtime, reverse=True)
    removed = freed = 0
    for folder in others[keep:]:
        size = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
        shutil.rmtree(folder, ignore_errors=True)
        if not folder.exists():
            removed, freed = removed + 1, freed + size
    return removed, freed


_CHECKED: set[Path] = set()  # the cache folders writable_cache_dir has looked at


def writable_cache_dir() -> None:
    """Make sure cache_dir() can be written, else point SIM_CACHE_DIR (for this process
    and those it starts) at a folder under the system's temporary folder, and say so
    once. Numba falls back silently to __pycache__ beside the sources when its cache
    folder cannot be written: a cache keyed by each file's own timestamp, which an
    edit of a function it calls does not invalidate, the stale cache this module's
    keyed folder exists to prevent. Each folder is checked once per process (a tune
    asks before every trial's sweep); a fallback that cannot be written either is not
    said again (numba's own error names it)."""
    import tempfile

    wanted = cache_dir()
    if wanted in _CHECKED:
        return
    _CHECKED.add(wanted)
    try:
        wanted.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=wanted):
            return
    except OSError as exc:
        reason = exc.strerror or str(exc)
    import multiprocessing

    uid = os.getuid() if hasattr(os, "getuid") else 0
    base = Path(tempfile.gettempdir()) / f"hexsim-cache-{uid}"
    if wanted.parent == base:  # the fallback itself: said already; numba's error names it
        return
    os.environ["SIM_CACHE_DIR"] = str(base)
    if multiprocessing.parent_process() is None:  # a sweep's workers: their parent says it
        print(f"note: the compiled-code cache {wanted.parent} cannot be written ({reason}); "
              f"using {base} instead (set SIM_CACHE_DIR to a writable folder)",
              file=sys.stderr)


# the cache name of the compiled match loop (sim.kernels.loop.run_match_held, what
# sim.engine.match.play_match calls): `module stem.function`; a test holds it to the
# function
MATCH_LOOP_ENTRY = "loop.run_match_held"
# the same loop with the lookahead and the search, for a match with a skill-1 or skill-2
# seat (sim.kernels.loop.run_match_held_skilled): compiled only when such a match plays
SKILLED_LOOP_ENTRY = "loop.run_match_held_skilled"


def engine_cached(skilled: bool = False) -> bool:
    """Whether numba's cache already holds the compiled match loop (with `skilled`, also
    its entry for matches with a skill-1 or skill-2 seat). The cache folder itself
    proves nothing: importing the engine creates it before anything compiles; only an
    index file of the entry point means a compile has finished."""
    writable_cache_dir()  # the same folder the engine will use, said once if replaced
    entries = (MATCH_LOOP_ENTRY, SKILLED_LOOP_ENTRY) if skilled else (MATCH_LOOP_ENTRY,)
    # "-*": numba's index name is the function's, its line and the Python version
    return all(any(loop_cache_folder().glob(f"{entry}-*.nbi")) for entry in entries)


def loop_cache_folder() -> Path:
    """The folder of cache_dir() where numba keeps the match loop's compiled code for
    this checkout: numba names it after the source folder and a sha1 of its absolute
    path (numba.core.caching's cache locator), so another checkout of the same code on
    this machine has its own folder there, and its index says nothing of this one's."""
    source = str((_PACKAGE / "kernels").resolve())
    return cache_dir() / f"kernels_{hashlib.sha1(source.encode()).hexdigest()}"
