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
from typing import Any

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
        # a header's closing bracket may be missing: the file is then refused by the
        # parser, but a nesting error found first still asks for the lines
        if line.startswith("[["):
            path = _parts(line[2:line.find("]]") % (len(line) + 1)])
            n = array_counts.get(path, 0)
            array_counts[path] = n + 1
            prefix = (*path, n)
            lines.setdefault(path, lineno)
            lines[prefix] = lineno
            continue
        if line.startswith("["):
            path = _parts(line[1:line.find("]") % (len(line) + 1)])
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


def shown(value: object, most: int = 60) -> str:
    """`value` as one short line for an error message: repr (so a newline, a NUL or a
    quote in a name cannot break the line), cut at `most` characters."""
    text = repr(value)
    return text if len(text) <= most else text[: most - 1] + "…"


def key_text(path: tuple) -> str:
    """A key path as `a.b.0.c` for an error message; a part that is not a plain word
    (a name from the file holding a newline, markup, 10,000 characters) is shown quoted
    and cut short (`shown`), so the message stays one line."""
    return ".".join(str(p) if isinstance(p, int) or (str(p).isprintable() and len(str(p))
                                                     <= 60 and str(p).isascii())
                    else shown(p, 40) for p in path)


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


# Limits on every input file (tables, experiment, sensitivity, tune, scenario), checked
# before it is parsed: tomllib reads nested arrays and inline tables recursively, so a
# value nested a few thousand levels deep ends in a RecursionError, and a file of
# gigabytes (or /dev/zero) would be read whole. tables/default.toml is 28 kB and its
# deepest key 5 levels (ai.personalities.NAME.PART.KEY); an experiment's deepest is 4.
MAX_INPUT_BYTES = 2_000_000
MAX_NESTING = 32


class InputLimit(ValueError):
    """An input file over a limit: `where(path)` gives `file:line: key: reason`."""

    def __init__(self, reason: str, line: int | None = None, key: str = ""):
        super().__init__(reason)
        self.reason, self.line, self.key = reason, line, key

    def where(self, path: Path | str) -> str:
        at = f"{path}:{self.line}" if self.line else str(path)
        return f"{at}: {self.key or '<file>'}: {self.reason}"


def read_input(path: Path | str) -> str:
    """The text of the input file `path`, read as UTF-8 up to MAX_INPUT_BYTES (a longer
    file, a device or a pipe that never ends is refused after that many bytes).
    Raises OSError, UnicodeDecodeError or InputLimit."""
    with open(path, "rb") as f:
        data = f.read(MAX_INPUT_BYTES + 1)
    if len(data) > MAX_INPUT_BYTES:
        raise InputLimit(f"larger than {MAX_INPUT_BYTES:,} bytes; an input file of "
                         "hexsim is a few kB")
    return data.decode("utf-8")


def _nesting_line(text: str) -> tuple[int, int] | None:
    """(line, column) where [ and { outside strings and comments first nest deeper than
    MAX_NESTING, or None. A scan, not a parse: a malformed file may be miscounted, which
    the parser then refuses (and parse_input catches a RecursionError still)."""
    depth, line, i, n = 0, 1, 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\n":
            line += 1
        elif ch == "#":
            while i + 1 < n and text[i + 1] != "\n":
                i += 1
        elif ch in "\"'":
            triple = text.startswith(ch * 3, i)
            end = ch * 3 if triple else ch
            j = i + len(end)
            while j < n and not text.startswith(end, j) and (triple or text[j] != "\n"):
                j += 2 if ch == '"' and text[j] == "\\" else 1
            line += text.count("\n", i, j)
            # past the closing quote; an unclosed one-line string ends before its newline
            i = j + len(end) - 1 if text.startswith(end, j) else j - 1
        elif ch in "[{":
            depth += 1
            if depth > MAX_NESTING:
                return line, i - text.rfind("\n", 0, i)
        elif ch in "]}":
            depth = max(0, depth - 1)
        i += 1
    return None


def _deepest(raw: dict) -> tuple[int, tuple]:
    """(depth, path) of the deepest value of a parsed document, without recursion
    (dotted keys nest tables without any bracket)."""
    best: tuple[int, tuple] = (0, ())
    stack: list[tuple[Any, tuple]] = [(raw, ())]
    while stack:
        node, path = stack.pop()
        if len(path) > best[0]:
            best = (len(path), path)
        if len(path) > MAX_NESTING:
            break
        items = node.items() if isinstance(node, dict) else \
            enumerate(node) if isinstance(node, list) else ()
        stack.extend((v, (*path, k)) for k, v in items)
    return best


def parse_input(text: str) -> dict:
    """tomllib.loads within MAX_NESTING levels of nesting: InputLimit (with the line)
    for deeper arrays, inline tables or dotted keys; TOMLDecodeError as tomllib raises
    it."""
    import tomllib

    if (at := _nesting_line(text)) is not None:
        keys = [k for k, line in key_lines(text).items() if line == at[0]]
        raise InputLimit(f"nested more than {MAX_NESTING} levels deep ([ and {{ at column "
                         f"{at[1]})", at[0], ".".join(map(str, keys[-1][:4])) if keys
                         else "<value>")
    try:
        raw = tomllib.loads(text)
    except RecursionError:  # the scan miscounted a malformed file
        raise InputLimit(f"nested more than {MAX_NESTING} levels deep") from None
    depth, path = _deepest(raw)
    if depth > MAX_NESTING:
        key = ".".join(map(str, path[:3])) + "…"
        lines = key_lines(text)
        line = min((n for k, n in lines.items() if k[:len(path)] == path), default=None)
        raise InputLimit(f"nested more than {MAX_NESTING} levels deep",
                         line or line_of(lines, path), key)
    return raw


def read_toml(path: Path, error: type[Exception]) -> tuple[str, dict]:
    """(text, parsed table) of the TOML file `path`; `error` (an exception class taking
    one message) names the file and why it cannot be read, decoded or parsed, or is over
    a limit (MAX_INPUT_BYTES, MAX_NESTING), so every input file (experiment,
    sensitivity, tune) is refused in the same words."""
    import tomllib

    try:
        text = read_input(path)
    except OSError as exc:
        raise error(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise error(f"{path}: {utf8_problem(path, exc)}") from None
    except InputLimit as exc:
        raise error(exc.where(path)) from None
    try:
        return text, parse_input(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path}: not valid TOML: {exc}") from None
    except InputLimit as exc:
        raise error(exc.where(path)) from None


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
        problems[key] = f"{where}: {key_text(loc)}: {reason}"
    return list(problems.values())
