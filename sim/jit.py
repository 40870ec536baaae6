"""The one place that sets numba's options for every kernel.

`cache=True` keeps compiled kernels on disk, but numba only checks the mtime of
the file that defines a function, not of the files it calls into. To make a
stale cache impossible the cache directory is keyed (sim.jitcache) by a hash of
every source file compiled code can reach: this module, the codes and tables (`sim/rules`),
the world (`sim/world`) and the kernels (`sim/kernels`). The architecture test
keeps those layers from importing anything above them, so an edit elsewhere
(engine, runner, analysis, report) cannot change compiled code and keeps the cache.

`fastmath` stays off and `error_model` is fixed so outcomes are bit-stable.
"""

from __future__ import annotations

import os
import re
import sys
import threading

# the cache folder's helpers live where a process that never plays can reach them
# without numba; sim.jit keeps them as its own API
from sim.jitcache import cache_dir, prune_caches, source_hash, writable_cache_dir  # noqa: F401

writable_cache_dir()
# Set before numba reads its config; numba re-reads NUMBA_* variables at every
# compile, so the environment variable is what keeps the choice in force.
os.environ["NUMBA_CACHE_DIR"] = str(cache_dir())

import numba  # noqa: E402

numba.config.CACHE_DIR = os.environ["NUMBA_CACHE_DIR"]


class _NoScipyLinalg:
    """An import finder that refuses `scipy.linalg` (see _load_registries_without_blas)."""

    @staticmethod
    def find_spec(name: str, path=None, target=None):
        if name == "scipy.linalg":
            raise ImportError("sim.jit: no kernel uses BLAS")
        return None


def _load_registries_without_blas() -> None:
    """Load numba's CPU registries now, telling its BLAS probe there is none.

    Numba's first compile or cache load imports numba.np.arraymath, whose probe for
    np.dot's BLAS imports scipy.linalg: 0.3-0.4 s, a third of a warm start
    (`sim bench match`'s warm_start_s), for functions no kernel calls (no np.dot,
    np.linalg or @; tests/test_architecture.py keeps it so). A kernel that called
    one would fail to compile, naming it. The finder is gone once the registries are
    in, so scipy.linalg imports as usual afterwards; a process that already had it
    keeps its BLAS."""
    if "scipy.linalg" in sys.modules:
        return
    from numba.core.registry import cpu_target

    sys.meta_path.insert(0, _NoScipyLinalg)
    try:
        cpu_target.target_context.refresh()
    finally:
        sys.meta_path.remove(_NoScipyLinalg)

# no_cfunc_wrapper: no kernel is handed to C as a function pointer, so none needs the
# C-callable wrapper numba otherwise lowers and compiles for every function (a cold first
# match 61 s against 76 s without it, each beside a stock-numba compile of 100-103 s)
JIT_OPTIONS = {"cache": True, "fastmath": False, "error_model": "numpy", "nogil": True,
               "no_cfunc_wrapper": True}


def njit(fn=None, **overrides):
    """`numba.njit` with the workbench's options; usable as `@njit` or `@njit(...)`.

    Cold start: stock numba finalizes each compiled function as a module of its own
    with every function it calls linked in, and optimizes and compiles that whole
    module again, so each level of the call tree pays for everything below it. Two
    answers, in order: the levels between the match loop and the AI's phases
    (run_match, play_one_turn, the lookahead's look_ahead, choose_plan and
    play_greedy_turn, ai_take_turn) have small bodies and one or two callers and are
    `inline='always'` (94 s against 115 s for a cold first match with stock numba);
    then _defer_machine_code compiles the tree once, for the functions Python calls,
    which makes the levels cost little either way (un-inlining them again: 66 s
    against 64 s, so they stay inlined). Inlining the large AI kernels (ai_units,
    unit_orders) made it slower: numba's typing over one very long function costs
    more than the level it saves. setup_match was inlined too; since a helper process
    shares the cold compile (sim.engine.warmup) it is not: inlined, it was half of the
    match loop's own typing, which the helper cannot take (1.8 s against 3.2-3.6 s),
    and it runs once a match; its tree is in the helper's share of the loop's machine
    code (sim.jit._split_off). ai_take_turn stays inlined: not inlined,
    matches ran about 3 % slower (ten rounds run at once on the two cores, median
    ratio 0.97)."""
    options = {**JIT_OPTIONS, **overrides}
    if fn is None:
        return lambda f: numba.njit(**options)(f)
    return numba.njit(**options)(fn)


class _Deferred:
    """The entry point of a compiled function not yet turned into machine code (see
    _defer_machine_code): numba keys the function's lowering by this object, and a
    call from Python compiles it, puts the machine code in the dispatcher's table and
    caches it, then calls it."""

    def __init__(self, context, library, fndesc, env) -> None:
        self.context, self.library, self.fndesc, self.env = context, library, fndesc, env
        self.dispatcher = self.args = self.cfunc = None

    def __call__(self, *args, **kws):
        if self.cfunc is None:
            from numba.core.compiler_lock import global_compiler_lock

            with global_compiler_lock:
                if self.cfunc is None:
                    self._materialize()
        return self.cfunc(*args, **kws)

    def _materialize(self) -> None:
        try:
            self.library._final_module.get_function(self.fndesc.llvm_cpython_wrapper_name)
        except NameError:
            # compiled for compiled callers only, without the wrapper Python calls
            # through: compile it again for Python (its callees are compiled)
            cres = self.dispatcher._compiler.compile(self.args, None)
            self.dispatcher.add_overload(cres)
            cres.entry_point._materialize()  # and caches it
            self.cfunc = cres.entry_point.cfunc
            return
        cfunc = _STOCK["get_executable"](self.context, self.library, self.fndesc, self.env)
        if self.dispatcher is not None:
            self.dispatcher._insert([a._code for a in self.args], cfunc, False)
            # the cache entry saved at compile time held the function's code only; the
            # next process loads this machine code instead of compiling it again
            self.dispatcher._cache.save_overload(self.args, self.dispatcher.overloads[self.args])
        self.cfunc = cfunc


_STOCK: dict = {}
_NESTING = threading.local()  # .depth: compiles under way for a compiled caller

# set while another process shares a cold compile (sim.engine.warmup.SharedLevels):
# called with a dispatcher before a compiled caller's call to it is typed, it may wait
# for the other process to finish compiling that function, and returns a callable to
# call once the typing is done, or None
COMPILE_GUARD: list = [None]


def _refcount_module(triple: str, data_layout: str):
    """An LLVM module defining NRT_incref and NRT_decref as numba defines them (its own
    generators: the same null check, atomic add or subtract and destructor call), but
    always inlined instead of never (see _inline_refcounts); None when numba's NRT is
    built for debugging (the functions then take a second argument)."""
    from llvmlite import binding, ir
    from numba.core import config
    from numba.core.runtime import nrtdynmod

    generators = ("_define_atomic_inc_dec", "_define_nrt_incref", "_define_nrt_decref")
    if config.DEBUG_NRT or getattr(nrtdynmod, "print_nrt_stack", False) or \
            not all(hasattr(nrtdynmod, name) for name in generators):
        return None   # counted out of line, as stock numba does
    module = ir.Module(name="inline_refcounts")
    module.triple, module.data_layout = triple, data_layout
    increment = nrtdynmod._define_atomic_inc_dec(module, "add", ordering="monotonic")
    decrement = nrtdynmod._define_atomic_inc_dec(module, "sub", ordering="monotonic")
    nrtdynmod._define_nrt_incref(module, increment)
    nrtdynmod._define_nrt_decref(module, decrement)
    for fn in module.functions:
        if not fn.is_declaration:
            fn.attributes.discard("noinline")
            fn.attributes.add("alwaysinline")
    return binding.parse_assembly(str(module))


_REFCOUNT_FUNCTIONS = ("NRT_incref", "NRT_decref", "nrt_atomic_add", "nrt_atomic_sub")


def _inline_refcounts(final_module) -> None:
    """Define numba's reference counts inside a final module, internal and always
    inlined, once its refcount pruning has run (numba keeps NRT_incref and NRT_decref
    out of line only so that the pruning pass can find their calls).

    The next optimization pass then inlines them: an array whose owner is a constant
    null (a field of the state or tables record, a view sim.jit.unowned made) loses its
    counting altogether, and the rest cost a test and an atomic operation instead of a
    call. Most calls in a match were on such arrays (sampled with gdb at their entry:
    77 % had a null owner), and the two functions held 9-10 % of a match's perf samples.
    Internal, the definitions clash with no symbol of numba's runtime and are dropped
    once every call is inlined. (Numba links its runtime's definitions into each module
    as linkonce_odr copies; the linker prefers the ones linked in here.)"""
    present = {fn.name: fn for fn in final_module.functions
               if fn.name in _REFCOUNT_FUNCTIONS}
    if not present.keys() & set(_REFCOUNT_FUNCTIONS[:2]):
        return
    # a module that defines them for real is numba's NRT library itself (deferred too
    # when numba's runtime starts after this patch, as when scipy.linalg was imported
    # first): its exported definitions stay. A function's module has declarations, or
    # the linkonce_odr copies numba links in, which the definitions below replace
    if any(not fn.is_declaration and not fn.linkage.name.startswith("linkonce")
           for fn in present.values()):
        return
    definitions = _refcount_module(final_module.triple, final_module.data_layout)
    if definitions is None:
        return
    final_module.link_in(definitions)
    for fn in final_module.functions:
        if fn.name in _REFCOUNT_FUNCTIONS and not fn.is_declaration:
            fn.linkage = "internal"


# set while a helper process can take a share of a function's machine code (sim.engine
# .warmup.MachineCodeShare): `roots`, the mangled names of the functions whose call
# trees the helper compiles; `send(bitcode)` hands it its share; `receive()` returns
# the share's object code
SPLIT_BACK_END: list = [None]

_SYMBOL = re.compile(r'@("(?:[^"\\]|\\.)*"|[-a-zA-Z$._][-a-zA-Z$._0-9]*)')


def _call_graph(module) -> dict[str, set[str]]:
    """Each function a module defines -> the defined functions (and other globals) its
    body names, read from the module's text: one call into LLVM, where walking its
    instructions' operands takes one per operand."""
    graph: dict[str, set[str]] = {}
    body: set[str] | None = None
    for line in str(module).splitlines():
        if body is None:
            if line.startswith("define "):
                name = _SYMBOL.search(line).group(1).strip('"')  # the first @ is its own
                body = graph[name] = set()
        elif line.startswith("}"):
            body = None
        else:
            body.update(name.strip('"') for name in _SYMBOL.findall(line))
    return graph


def _reach(graph: dict[str, set[str]], roots, stop=frozenset()) -> set[str]:
    seen, todo = set(), [r for r in roots if r in graph]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(c for c in graph[name] if c in graph and c not in stop)
    return seen


def _drop_functions(module, keep: set[str]) -> None:
    """Mark every function `module` defines outside `keep` as a copy defined elsewhere
    (available_externally), never inlined and never optimized (optnone): the
    optimization passes skip them and then drop their bodies, so their calls stay
    calls, to the definition the linker finds in the other share."""
    for fn in module.functions:
        if not fn.is_declaration and fn.name not in keep:
            fn.linkage = "available_externally"
            fn.add_function_attribute("noinline")
            fn.add_function_attribute("optnone")


def _whole_tree_passes(library) -> None:
    """Optimize a library's final module as a function Python calls is optimized
    (_defer_machine_code): numba's cheap and full passes, the reference counts
    inlined, the full passes again."""
    # twice: stock numba's levels optimize a callee's code again in each caller, and a
    # single pass over the whole tree made matches 8 % slower (two or three: as fast
    # as stock numba, README: benchmarks). numba's cheap pass (inlining for the
    # reference-count pruner) runs before the first only: a second one found nothing
    # left to do and took 0.25-0.35 s of a cold start's 7.5 s loop compile; matches as
    # fast (alternated, same results)
    library._optimize_final_module()
    _inline_refcounts(library._final_module)
    full, builder = library._codegen._module_pass_manager()
    full.run(library._final_module, builder)
    library._final_module.verify()


def compile_share(bitcode: bytes) -> bytes:
    """The object code of a share of a function's call tree (_split_off), optimized as
    the function's own share is: what the helper process runs."""
    from llvmlite import binding
    from numba.core.registry import cpu_target

    codegen_ = cpu_target.target_context.codegen()
    library = codegen_.create_library("share")
    library._final_module = binding.parse_bitcode(bitcode)
    _whole_tree_passes(library)
    return codegen_._tm.emit_object(library._final_module)


def _split_off(library, share):
    """Split `library`'s linked final module in two before its optimization: the call
    trees of `share.roots` (sim.engine.warmup names them: the match set-up and the AI's
    units, about half of the match loop's code) go to the helper process as a module
    of their own, and this module keeps the rest. A function both trees call is
    compiled in each. The roots are large functions called, not inlined, in the
    whole tree, so both shares optimize to the code the whole tree would.

    Returns a receipt whose call returns the share's object code, or None (no root
    defined here: the whole tree stays)."""
    module = library._final_module
    graph = _call_graph(module)
    roots = set(share.roots) & graph.keys()
    if not roots:
        return None
    own = {fn.name for fn in module.functions
           if not fn.is_declaration and fn.linkage.name == "external"}
    mine = _reach(graph, own, stop=roots)
    theirs = _reach(graph, roots)
    shared = module.clone()
    _drop_functions(shared, theirs)
    for fn in shared.functions:
        if fn.name in roots:
            fn.linkage = "weak_odr"  # defined for this module's calls to link to
    for gv in shared.global_variables:
        # the functions' environments (numba sets each once, by name): the share uses
        # this module's, which keeps them all (a common global is never dropped)
        if gv.linkage.name == "common":
            gv.linkage = "available_externally"
    shared.verify()
    share.send(shared.as_bitcode())
    _drop_functions(module, mine)
    return share.receive


def _defer_machine_code() -> bool:
    """Make numba turn a function into machine code only when Python calls it.

    Stock numba finalizes every function it compiles: it links in the code of every
    function it calls, optimizes that whole module and generates its machine code, so
    each level of the match's call tree optimizes and compiles everything below it
    once more (46 s of a cold first match's 58 s of LLVM time, numba's own steps
    timed). Here a function compiled for a compiled caller keeps its linked,
    function-optimized code, which is all its callers need, and gets no CPython
    wrapper; a function called from Python (the match loop, a kernel a test calls) is
    optimized as one module and compiled at its first call. Its cache entry then holds
    the machine code, as with stock numba; an entry of a function only ever called
    from compiled code holds its LLVM bitcode. A function first compiled for a
    compiled caller and later called from Python is compiled again, with its wrapper.
    The results are the same (LLVM runs its passes over the same code, and the
    goldens and reference tests pass); a cold first match took 64 s against 113 s for
    stock numba, the two compiled side by side, one per core.

    Three smaller changes ride along (each commented where it is made): a compiled
    caller's constant arguments make no specialization of their own, a record type's
    repr is made once (a cold first match 50 s against 71 s for the deferral alone),
    and the compile's flags hash and compare without reading every option (36.3 s
    against 39.1 s, and 41.2 against 43.6, side by side). Between the two optimization
    passes of a function Python calls, the reference counts are inlined
    (_inline_refcounts: matches about 9 % faster).

    Returns False, leaving numba as it is, when numba's internals are not the ones
    this was written against (tests/test_jit_cache.py checks it is in force)."""
    from numba.core import codegen, cpu, dispatcher, environment, lowering, targetconfig, types

    lib = codegen.JITCodeLibrary
    needed = [(lib, "finalize"), (lib, "get_pointer_to_function"),
              (lib, "serialize_using_object_code"), (lib, "_unserialize"),
              (lib, "_optimize_final_module"), (lib, "_finalize_final_module"),
              (lib, "_get_module_for_linking"), (lib, "_set_compiled_object"),
              (cpu.CPUContext, "get_executable"),
              (codegen.JITCPUCodegen, "_module_pass_manager"),
              (dispatcher.Dispatcher, "add_overload"), (codegen.JITCPUCodegen, "set_env"),
              (dispatcher.Dispatcher, "get_call_template"),
              (lowering.BaseLower, "create_cpython_wrapper"), (types, "Record"),
              (targetconfig.TargetConfig, "options")]
    if not all(hasattr(owner, name) for owner, name in needed):
        return False
    _STOCK.update(get_executable=cpu.CPUContext.get_executable,
                  get_pointer=lib.get_pointer_to_function,
                  serialize=lib.serialize_using_object_code,
                  unserialize=lib._unserialize.__func__,
                  add_overload=dispatcher.Dispatcher.add_overload,
                  set_env=codegen.JITCPUCodegen.set_env,
                  get_call_template=dispatcher.Dispatcher.get_call_template,
                  create_cpython_wrapper=lowering.BaseLower.create_cpython_wrapper)

    def finalize(self) -> None:
        # numba's finalize up to its module optimization: link the callees' code in
        codegen.require_global_compiler_lock()
        self._codegen._check_llvm_bugs()
        self._raise_if_finalized()
        seen = set()
        for library in self._linking_libraries:
            if library not in seen:
                self._reload_init.update(library._reload_init)
                seen.add(library)
                self._final_module.link_in(library._get_module_for_linking(),
                                           preserve=True)
        self._final_module.verify()
        self._finalize_dynamic_globals()
        self._verify_declare_only_symbols()
        self._deferred = True
        self._finalized = True

    def materialize(self) -> None:
        if getattr(self, "_deferred", False):
            self._deferred = False
            share, receive = SPLIT_BACK_END[0], None
            if share is not None:
                try:
                    receive = _split_off(self, share)
                except Exception:
                    receive = None  # the whole tree here, as without a helper
            _whole_tree_passes(self)
            if receive is not None:
                SPLIT_BACK_END[0] = None  # one function's tree: the match loop's
                # this share's machine code while the helper still works on its own;
                # the engine then loads it instead of compiling the module again
                own = self._codegen._tm.emit_object(self._final_module)
                self._share_objects = [receive()]
                for data in self._share_objects:  # first: this module's calls link to it
                    self._codegen._engine._ee.add_object_file(
                        codegen.ll.ObjectFileRef.from_data(data))
                self._set_compiled_object(own)
            self._finalize_final_module()
            if receive is not None:
                self._compiled_object = own  # taken by the engine; kept for the cache
            # the environments of the functions linked in live in this module only
            for gv in self._final_module.global_variables:
                if gv.name.startswith("_ZN08NumbaEnv"):
                    env = environment.lookup_environment(gv.name)
                    if env is not None:
                        _STOCK["set_env"](self._codegen, gv.name, env)

    def get_pointer_to_function(self, name):
        self._ensure_finalized()
        materialize(self)
        return _STOCK["get_pointer"](self, name)

    def serialize_using_object_code(self):
        self._ensure_finalized()
        if getattr(self, "_deferred", False):
            return (self.name, "deferred", self._final_module.as_bitcode())
        state = _STOCK["serialize"](self)
        shares = getattr(self, "_share_objects", None)
        if shares:  # a helper compiled part of the tree: its object code goes along
            name, _kind, data = state
            return (name, "split", (data, shares))
        return state

    def _unserialize(cls, codegen_, state):
        name, kind, data = state
        if kind == "split":
            data, shares = data
            for share in shares:  # loaded first: the function's own code links to it
                codegen_._engine._ee.add_object_file(codegen.ll.ObjectFileRef.from_data(share))
            self = _STOCK["unserialize"](cls, codegen_, (name, "object", data))
            self._share_objects = shares
            return self
        if kind != "deferred":
            return _STOCK["unserialize"](cls, codegen_, state)
        self = codegen_.create_library(name)
        self.enable_object_caching()
        self._final_module = codegen.ll.parse_bitcode(data)
        self._deferred = True
        self._finalized = True
        return self

    def get_executable(self, library, fndesc, env):
        library._ensure_finalized()
        if getattr(library, "_deferred", False):
            return _Deferred(self, library, fndesc, env)
        return _STOCK["get_executable"](self, library, fndesc, env)

    def add_overload(self, cres):
        entry = cres.entry_point
        if not isinstance(entry, _Deferred):
            return _STOCK["add_overload"](self, cres)
        args = tuple(cres.signature.args)
        # not in the C dispatcher's table: a call from Python finds no match and asks
        # compile(), which returns the deferred entry point, which compiles and calls
        entry.dispatcher, entry.args = self, args
        self.overloads[args] = cres
        return None

    def set_env(self, env_name, env):
        # a function not yet compiled has its environment set when it is (materialize)
        if self._engine.get_global_value_address(env_name):
            _STOCK["set_env"](self, env_name, env)

    def get_call_template(self, args, kws):
        # a compile from here is for a compiled caller (typing its call)
        _NESTING.depth = getattr(_NESTING, "depth", 0) + 1
        # a constant argument makes no specialization of its own (numba compiled
        # resolve_attack_at four times, choose_item three times, for -1, 0 or 1
        # passed as literals): a kernel is compiled once, for int64, whatever its
        # callers pass; a kernel meant to see a constant is inline='always'
        args = tuple(types.unliteral(a) for a in args)
        kws = {k: types.unliteral(v) for k, v in kws.items()}
        guard = COMPILE_GUARD[0]
        done = guard(self) if guard is not None else None
        try:
            return _STOCK["get_call_template"](self, args, kws)
        finally:
            _NESTING.depth -= 1
            if done is not None:
                done()

    def create_cpython_wrapper(self, release_gil=False):
        if not getattr(_NESTING, "depth", 0):
            _STOCK["create_cpython_wrapper"](self, release_gil)

    record_repr = types.Record.__repr__

    def memo_record_repr(self) -> str:
        # a record type never changes, and numba writes the state record's repr (its
        # hundreds of fields) into every compiler pass's event (5 % of a cold start)
        text = self.__dict__.get("_sim_repr")
        if text is None:
            text = self.__dict__["_sim_repr"] = record_repr(self)
        return text

    config_eq = targetconfig.TargetConfig.__eq__

    def flags_hash(self) -> int:
        # numba's hash is over the option names alone (sorted() of a dict of the
        # values gives its keys), yet it reads every option first; the typing of each
        # overload lookup hashes and compares the compile's flags (11 of a cold start's
        # 92 s under cProfile)
        cls = type(self)
        value = cls.__dict__.get("_sim_hash")
        if value is None:
            value = hash(tuple(sorted(cls.options)))
            cls._sim_hash = value
        return value

    def flags_eq(self, other):
        # the same flags, or flags of one kind with the same options set alike, are equal
        # without reading every option (the same answer: an unset option has its default)
        if self is other or (type(self) is type(other) and self._values == other._values):
            return True
        return config_eq(self, other)

    targetconfig.TargetConfig.__hash__ = flags_hash
    targetconfig.TargetConfig.__eq__ = flags_eq
    lib.finalize = finalize
    types.Record.__repr__ = memo_record_repr
    dispatcher.Dispatcher.get_call_template = get_call_template
    lowering.BaseLower.create_cpython_wrapper = create_cpython_wrapper
    lib.get_pointer_to_function = get_pointer_to_function
    lib.serialize_using_object_code = serialize_using_object_code
    lib._unserialize = classmethod(_unserialize)
    cpu.CPUContext.get_executable = get_executable
    dispatcher.Dispatcher.add_overload = add_overload
    codegen.JITCPUCodegen.set_env = set_env
    return True


numba_types = numba.types  # numba's type objects, for code naming a kernel's signature


def argument_types(values: tuple) -> tuple:
    """numba's types of `values`, as a call from Python types them."""
    return tuple(numba.typeof(v) for v in values)


def compile_for_compiled_callers(dispatcher, argtypes: tuple) -> None:
    """Compile `dispatcher` for `argtypes` (numba types) as a compiled caller's call to
    it is compiled: its code only, no machine code or CPython wrapper
    (_defer_machine_code), constants unliteral; the cache then holds it for the next
    caller here or in another process (sim.engine.warmup)."""
    from numba.core import types

    _NESTING.depth = getattr(_NESTING, "depth", 0) + 1
    try:
        dispatcher.compile(tuple(types.unliteral(t) for t in argtypes))
    finally:
        _NESTING.depth -= 1


def compile_machine_code(dispatcher, argtypes: tuple) -> None:
    """Compile `dispatcher` for a call from Python with `argtypes` (numba types), its
    machine code included, as its first such call would, and cache it."""
    from numba.core.compiler_lock import global_compiler_lock

    dispatcher.compile(tuple(argtypes))
    entry = dispatcher.overloads[tuple(argtypes)].entry_point
    if isinstance(entry, _Deferred):
        with global_compiler_lock:
            if entry.cfunc is None:
                entry._materialize()


def is_cached(dispatcher, argtypes: tuple) -> bool:
    """Whether numba's cache holds `dispatcher` compiled for `argtypes`, read from its
    index without loading the code. True when numba's cache internals are not the ones
    this reads (the caller then compiles as usual)."""
    try:
        cache = dispatcher._cache
        key = cache._index_key(tuple(argtypes), dispatcher.targetctx.codegen())
        return key in cache._cache_file._load_index()
    except (AttributeError, TypeError):
        return True


DEFERRED_MACHINE_CODE = False
if not numba.config.DISABLE_JIT:
    _load_registries_without_blas()
    DEFERRED_MACHINE_CODE = _defer_machine_code()

if numba.config.DISABLE_JIT:  # the plain-Python run of the kernels: no LLVM to ask
    def cycles() -> int:
        """Nanoseconds of the performance counter (the compiled build reads cycles)."""
        import time

        return time.perf_counter_ns()
else:
    from llvmlite import ir
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic

    @intrinsic
    def _read_cycle_counter(typingctx):
        def codegen(context, builder, signature, args):
            fn = cgutils.get_or_insert_function(builder.module,
                                                ir.FunctionType(ir.IntType(64), []),
                                                "llvm.readcyclecounter")
            return builder.call(fn, [])

        return types.int64(), codegen

    @njit
    def cycles() -> int:
        """The CPU's cycle counter (LLVM's readcyclecounter: the time-stamp counter, a
        few cycles a read), for sim.kernels.phases' timing of a match's parts."""
        return _read_cycle_counter()


if numba.config.DISABLE_JIT:
    def unowned(array):
        """The array itself (the plain-Python run counts no references)."""
        return array
else:
    @intrinsic
    def _unowned_view(typingctx, array):
        if not isinstance(array, types.Array):
            return None

        def codegen(context, builder, signature, args):
            view = cgutils.create_struct_proxy(signature.return_type)(context, builder,
                                                                       value=args[0])
            view.meminfo = cgutils.get_null_value(view.meminfo.type)
            view.parent = cgutils.get_null_value(view.parent.type)
            return view._getvalue()

        return array(array), codegen

    @njit(inline="always")
    def unowned(array):
        """The same array (data, shape, strides) with no owner record. Numba counts the
        references of an array handed to a kernel that is not inlined, two atomic
        operations per array and call (NRT_incref and NRT_decref: 20-23 % of a match's
        perf samples, mostly on the board's arrays and the path table); for an array
        without an owner, as for the fields of the state record, each is a call that
        does nothing (a match about 5 % faster, README: benchmarks). Only for an array
        whose owner outlives every use of the view: the arrays a whole match is handed."""
        return _unowned_view(array)


if numba.config.DISABLE_JIT:
    def local_empty(n):
        """A new (n,) int64 array (the plain-Python run has no stack to put it on)."""
        import numpy as np

        return np.empty(n, dtype=np.int64)
else:
    @intrinsic
    def local_empty(typingctx, n):
        """An uninitialised (n,) int64 array on the stack of the function that calls
        this, gone when that function returns: no allocation, no owner record, nothing
        to count or free. A match made some 6,000 small arrays, about 100 ns each with
        the allocation, its zeroing, reference counts and free (README: benchmarks).

        Only for scratch that never leaves the calling function (not returned, not
        stored), in a function numba does not inline (no inline='always': numba's
        inlining would put the stack space in the caller, once per call in a loop;
        LLVM's own inlining brackets it with stacksave/stackrestore), and outside any
        loop of it (each pass would take more stack). tests/test_fast_paths.py checks
        both for every kernel that calls it. `n` must be a size the kernel knows to be
        small and not negative (a board's tiles, a match's cities or units: at most a
        few tens of KB); nothing checks it, and the stack has no guard page probe."""
        if not isinstance(n, types.Integer):
            return None
        array_type = types.Array(types.int64, 1, "C")

        def codegen(context, builder, signature, args):
            from numba.np.arrayobj import make_array, populate_array

            count = context.cast(builder, args[0], signature.args[0], types.intp)
            data = builder.alloca(context.get_data_type(types.int64), size=count)
            array = make_array(array_type)(context, builder)
            itemsize = context.get_constant(types.intp, 8)
            populate_array(array, data=data, shape=[count], strides=[itemsize],
                           itemsize=itemsize, meminfo=None)
            return array._getvalue()

        return array_type(n), codegen
