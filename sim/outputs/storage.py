"""Where a run folder lives: a path on this machine (as always), or any fsspec URL
(`s3://bucket/prefix/run`, `gs://…`, `memory://…`), read and written through fsspec.

`run_path` turns what a user typed into the one object every reader and writer of a
run takes: a `pathlib.Path` for a plain path or a `file://` URL (so the disk path is
byte for byte what it was: atomic renames, fsync, flock), a `upath.UPath` over fsspec
for anything else. Both speak pathlib's language (`/`, `exists`, `read_text`,
`stat`, `rglob`, `unlink`), so the store's code is the same for both but where the
disk's guarantees differ from an object store's (`is_remote`):

- an object store has no rename, but a PUT is whole or absent: a part or a marker is
  written straight to its key, never half-visible;
- it has no flock: the run's lock is a lock object made by a conditional put
  (sim.outputs.lock);
- its listings are not cached here (another machine writes the run while this one
  reads it), and nothing of a URL's endpoint or credentials comes from the
  experiment file: fsspec's own configuration (~/.config/fsspec, FSSPEC_* variables)
  and the standard AWS variables (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID,
  AWS_SECRET_ACCESS_KEY, AWS_PROFILE, AWS_DEFAULT_REGION) decide them, as they do for
  every fsspec and AWS tool.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

# what fsspec must not cache for a run folder: other processes write it meanwhile
_OPTIONS: dict[str, Any] = {"use_listings_cache": False}


def is_url(where: str | os.PathLike) -> bool:
    return "://" in os.fspath(where)


def run_path(where: str | os.PathLike) -> Path:
    """The run folder (or file) `where` names: a Path for a plain path or file:// URL,
    else a UPath over fsspec (typed Path here: it offers the same methods)."""
    if isinstance(where, Path):
        return where
    if not isinstance(where, str) and hasattr(where, "protocol"):  # a UPath already
        return where  # type: ignore[return-value]
    text = os.fspath(where)
    if not is_url(text):
        return Path(text)
    if text.startswith("file://"):
        return Path(text.removeprefix("file://"))
    from upath import UPath  # lazy: fsspec and the protocol's own package

    try:
        return UPath(text, **_OPTIONS)  # type: ignore[return-value]
    except (ImportError, ValueError) as exc:  # no s3fs for s3://, an unknown protocol
        # an OSError naming the URL: the `sim` command prints it as one line
        raise OSError(errno.EPROTONOSUPPORT, f"{exc} (s3:// needs `pip install "
                      "'hexsim[s3]'`)", text) from None


def is_remote(path: Any) -> bool:
    """True for a run folder on an object store or any fsspec file system but this
    machine's disk."""
    return not isinstance(path, Path)


def absolute(path: Path) -> Path:
    """`path` absolute (a relative path means "from where the command was typed",
    never from a worker's directory); a URL is absolute already."""
    return path if is_remote(path) else path.absolute()


def remove_tree(path: Path) -> None:
    """Delete a folder (a prefix of an object store) and everything under it."""
    if is_remote(path):
        if path.exists():
            path.fs.rm(path.path, recursive=True)  # type: ignore[attr-defined]
        return
    import shutil

    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()


def sizes_under(root: Path) -> dict[str, int] | None:
    """Every file under the remote folder `root` with its size, by its path relative
    to `root`, from one listing (a request per file would cost a round trip each);
    None for a folder on this machine's disk, which is asked file by file as always."""
    if not is_remote(root):
        return None
    fs, base = root.fs, root.path.rstrip("/")  # type: ignore[attr-defined]
    try:
        found = fs.find(base, detail=True)
    except FileNotFoundError:
        return {}
    return {name[len(base) + 1:]: int(info.get("size") or 0) for name, info in found.items()
            if info.get("type") != "directory"}



def local_copy(path: Path) -> Path:
    """Where this machine keeps its working copy of the file `path` of a folder at a
    URL: what must be a file here (an experiment that is loaded and recorded from a
    file, a tune's SQLite study) lives in a folder of the system's temporary directory
    named after the URL's folder, the same for every command that names that URL."""
    import hashlib
    import tempfile

    digest = hashlib.sha256(str(path.parent).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / "hexsim-remote" / digest / path.name
