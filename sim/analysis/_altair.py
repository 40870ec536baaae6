"""altair, imported without jsonschema's 1.6 s IRI grammar.

altair validates its specs with jsonschema. jsonschema's format module imports
`rfc3987_syntax` (installed here by JupyterLab's `jsonschema[format-nongpl]`) when
it is first imported, and that package builds some 35 Lark parsers at import:
1.6 s of the report's 2.6 s of imports on this machine (python-jsonschema/jsonschema
issues 1428 and 1392; its maintained fork `rfc3987-syntax2` loads them lazily).
No chart of ours has an IRI-formatted field, and altair validates without a format
checker, so the grammar is never used by the report. `alt` here is altair itself;
the only difference is when the grammar loads: on the first IRI check, if one ever
runs in this process, and not at import.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types


def _defer_iri_grammar() -> None:
    """Put a stand-in for `rfc3987_syntax` in sys.modules when jsonschema's format
    checkers are not loaded yet: `is_valid_syntax` (the one name jsonschema takes)
    and any other attribute import the real package on first use and forward to it."""
    name = "rfc3987_syntax"
    if name in sys.modules or "jsonschema._format" in sys.modules \
            or importlib.util.find_spec(name) is None:
        return

    def real() -> types.ModuleType:
        if isinstance(sys.modules.get(name), _Deferred):
            del sys.modules[name]
        return importlib.import_module(name)

    class _Deferred(types.ModuleType):
        def __getattr__(self, attr: str):
            # the import system asks a module for __path__ and the like: not a use
            if attr.startswith("__"):
                raise AttributeError(attr)
            return getattr(real(), attr)

    def is_valid_syntax(*args, **kwargs):
        return real().is_valid_syntax(*args, **kwargs)

    stand_in = _Deferred(name, "stand-in until first use (sim.analysis._altair)")
    stand_in.is_valid_syntax = is_valid_syntax
    sys.modules[name] = stand_in


_defer_iri_grammar()

import altair as alt  # noqa: E402  (after the stand-in: altair imports jsonschema)

__all__ = ["alt"]
