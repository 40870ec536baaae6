"""Line numbers for TOML keys, so validation errors can say `file:line: key: reason`.

`tomllib` gives no positions, so this scans the text once and records the line
of every table header and key, as tuple paths: `[units.warrior]` then
`attack = 4` gives ("units", "warrior", "attack"); the third `[[cities]]` entry
is ("cities", 2). A path not recorded (a value in an inline table) resolves to
the line of its longest recorded prefix.
"""

from __future__ import annotations

import re
from pathlib import Path

_ATOM = r'(?:"[^"]*"|\'[^\']*\'|[A-Za-z0-9_\-]+)'
_KEY = re.compile(rf"\s*({_ATOM}(?:\s*\.\s*{_ATOM})*)\s*=")
_PART = re.compile(r'"([^"]*)"|\'([^\']*)\'|([A-Za-z0-9_\-]+)')


def _parts(dotted: str) -> tuple[str, ...]:
    return tuple(a or b or c for a, b, c in _PART.findall(dotted))


def _bracket_depth(line: str) -> int:
    """Net count of [ minus ] outside strings and comments."""
    depth, quote = 0, ""
    for ch in line:
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            break
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
    return depth


def key_lines(text: str) -> dict[tuple, int]:
    """Map each header/key path of a TOML document to its 1-based line number."""
    lines: dict[tuple, int] = {}
    prefix: tuple = ()
    array_counts: dict[tuple, int] = {}
    depth = 0
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if depth > 0:  # inside a multi-line value
            depth += _bracket_depth(line)
            continue
        if not line or line.startswith("#"):
            continue
        if line.startswith("[["):
            path = _parts(line[2:line.index("]]")])
            n = array_counts.get(path, 0)
            array_counts[path] = n + 1
            prefix = (*path, n)
            lines.setdefault(path, lineno)
            lines[prefix] = lineno
            continue
        if line.startswith("["):
            path = _parts(line[1:line.index("]")])
            # a sub-table of the latest array-of-tables entry: [a.b] under [[a]]
            for arr, n in array_counts.items():
                if path[: len(arr)] == arr and len(path) > len(arr):
                    path = (*arr, n - 1, *path[len(arr):])
                    break
            prefix = path
            lines.setdefault(prefix, lineno)
            continue
        m = _KEY.match(line)
        if m:
            lines[(*prefix, *_parts(m.group(1)))] = lineno
            depth = _bracket_depth(line[m.end():])
    return lines


def line_of(lines: dict[tuple, int], path: tuple) -> int | None:
    """Line of `path`, or of its longest recorded prefix; None if nothing matches."""
    for end in range(len(path), 0, -1):
        hit = lines.get(tuple(path[:end]))
        if hit is not None:
            return hit
    return None


def utf8_problem(path: Path, exc: UnicodeDecodeError) -> str:
    """'line N: not UTF-8 text (byte 0x.. at column C)' for a decode error of `path`."""
    data = exc.object if isinstance(exc.object, bytes) else path.read_bytes()
    line = data.count(b"\n", 0, exc.start) + 1
    column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
    return (f"line {line}: not UTF-8 text (byte 0x{data[exc.start]:02x} at column {column});"
            " save the file as UTF-8")


def read_toml(path: Path, error: type[Exception]) -> tuple[str, dict]:
    """(text, parsed table) of the TOML file `path`; `error` (an exception class taking
    one message) names the file and why it cannot be read, decoded or parsed, so every
    input file (experiment, sensitivity, tune) is refused in the same words."""
    import tomllib

    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise error(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise error(f"{path}: {utf8_problem(path, exc)}") from None
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path}: not valid TOML: {exc}") from None


def validation_problems(errors: list[dict], path: Path | str,
                        lines: dict[tuple, int]) -> list[str]:
    """`file:line: key: reason` for each key at fault in pydantic's `errors` (the first
    error of each key: a union's members would each say the same value is wrong; a
    list's element, such as variants.2, is a key of its own)."""
    problems: dict[tuple, str] = {}
    for err in errors:
        loc = tuple(p for p in err["loc"] if isinstance(p, int | str))
        key = loc[:2] if len(loc) > 1 and isinstance(loc[1], int) else loc[:1]
        if key in problems:
            continue
        line = line_of(lines, loc)
        where = f"{path}:{line}" if line else str(path)
        reason = "unknown key" if err["type"] == "extra_forbidden" else err["msg"].lower()
        problems[key] = f"{where}: {'.'.join(map(str, loc))}: {reason}"
    return list(problems.values())
