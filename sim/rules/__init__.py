"""sim/rules: what the game is, before any state exists.

codes (every code, size and unit of measure, once), schema (the tables' keys and
bounds), tables (load, cross-check, override, hash), record (the one numpy
record kernels receive, generated from the schema), tomlpos (file:line of a key).
"""
