"""Checks a scenario report against the `[expect]` table of its file.

`[expect]` maps dotted paths into the JSON report to expected values:
    "seats.0.capital" = 2            # list index, then key
    "cities.1.revolt" = 3
    "commands.1.error" = "truce with seat 1: cannot enter its cities"
    "events.kinds" = ["capture", "capital_fall", ...]   # the event kinds in order
    "commands.0.error~" = "cannot enter"   # ~ : substring match
    "units.len" = 2                  # .len : the length of a list
"""

from __future__ import annotations

from typing import Any

_MISSING = object()


def lookup(report: dict[str, Any], path: str) -> Any:
    if path == "events.kinds":
        return [e["kind"] for e in report["events"]]
    if path.endswith(".len"):
        node = lookup(report, path[: -len(".len")])
        return len(node) if isinstance(node, list) else _MISSING
    node: Any = report
    for part in path.split("."):
        if isinstance(node, list):
            try:
                node = node[int(part)]
            except (ValueError, IndexError):
                return _MISSING
        elif isinstance(node, dict):
            if part not in node:
                return _MISSING
            node = node[part]
        else:
            return _MISSING
    return node


def mismatches(report: dict[str, Any], expect: dict[str, Any]) -> list[str]:
    out = []
    for key, want in expect.items():
        substring = key.endswith("~")
        path = key[:-1] if substring else key
        got = lookup(report, path)
        if got is _MISSING:
            out.append(f"{path}: not in the report")
        elif substring:
            if not isinstance(got, str) or str(want) not in got:
                out.append(f"{path}: {got!r} does not contain {want!r}")
        elif got != want:
            out.append(f"{path}: got {got!r}, want {want!r}")
    return out
