"""Machine code for what runs: numba optimises and emits the code of fastir's compiles once,
in the library of the kernel that runs it.

numba finishes each function it compiles into a library of its own, with LLVM's module
passes and machine code, whether or not anything will call it there. A caller's library
links in a copy of its callees' code and does it all again, so a helper's code was
optimised and emitted once by itself and again in each library above it; a parallel loop
adds three libraries above its body (its gufunc, the gufunc's wrapper and the parallel
wrapper), each finished in turn. LLVM's share of a fresh install's first run was about
45%, most of it for machine code nothing ran: Python calls the kernels' libraries only.

Here a library created while numba compiles one of fastir's registered functions
(:func:`follow`) is finished lazily: its callees are linked in when numba finalizes it (a
caller links it as before), and its module passes and machine code wait until something
asks for the machine code (a function's address, its object code for numba's cache, its
assembly, whether it has dynamic globals). A kernel asks for its Python entry's address
as its compile ends, so its library is optimised and emitted once, its callees' code in
it; a helper's (which has no Python entry) and a parallel loop's libraries never are.
LLVM's share of a first run is then about a fifth. The kernel's module gets the same
passes over the same code, linked before it is optimised rather than after: LLVM may
inline differently, but no pass may change a value (fastir never allows fastmath).

A function compiled as part of a followed compile is finished lazily too, whoever wrote
it (numba's own implementations, a user's measure function); one with a Python entry gets
its machine code as its compile ends, as a kernel does. Other compiles
(a user's own numba functions called from Python, kernels loaded from the cache) are
finished as numba does. :func:`install` leaves numba as it is when its internals are not
laid out as this expects.
"""

import threading

#: The prefix numba names a parallel loop's body function with (numba.parfors): it makes
#: a Python entry for it, which nothing calls (the loop's wrapper calls its native entry).
_GUFUNC_PREFIX = "__numba_parfor_gufunc_"
#: How a Python entry's symbol starts (numba's mangled namespace ``cpython``).
_PYTHON_ENTRY = "_ZN7cpython"

_installed = False
_compiling = threading.local()  # .depth: the followed compiles under way on this thread


def install(numba_codegen, listener_base, register):
    """Patch numba's JIT code libraries (``numba.core.codegen``'s ``JITCodeLibrary``) to
    finish lazily the libraries of the followed compiles, which ``register`` (numba's
    event registration) lets a listener of ``listener_base`` see. Returns whether
    installed."""
    global _installed
    library = getattr(numba_codegen, "JITCodeLibrary", None)
    codegen = getattr(numba_codegen, "JITCPUCodegen", None)
    needed = [(library, name) for name in (
        "finalize", "_get_module_for_linking", "_optimize_final_module",
        "_finalize_final_module", "_raise_if_finalized", "_ensure_finalized",
        "_get_compiled_object", "serialize_using_object_code", "get_pointer_to_function",
        "has_dynamic_globals")] + [(codegen, name) for name in (
            "create_library", "set_env", "_check_llvm_bugs")]
    try:
        from numba.core.environment import lookup_environment  # noqa: F401
    except ImportError:
        return False
    if not (all(hasattr(owner, name) for owner, name in needed)
            and hasattr(numba_codegen, "ll")
            and hasattr(getattr(numba_codegen, "RuntimeLinker", None), "PREFIX")):
        return False
    if not _installed:
        _patch_library(library, numba_codegen.ll.Linkage)
        _patch_codegen(codegen)
        register("numba:compile", _follower(listener_base))
        _installed = True
    return True


def follow(dispatcher):
    """Finish lazily what compiling ``dispatcher`` (one of fastir's) compiles."""
    dispatcher._fastir_lazy_emit = True


def has_machine_code(library):
    """Whether numba made ``library``'s machine code (false for a lazy library only
    linked so far)."""
    return library._finalized and not library.__dict__.get("_fastir_pending", False)


def _follower(listener_base):
    """A listener counting the followed compiles under way on its thread."""

    def followed(event):
        return getattr(event.data.get("dispatcher"), "_fastir_lazy_emit", False)

    class Follower(listener_base):
        def on_start(self, event):
            if followed(event):
                _compiling.depth = getattr(_compiling, "depth", 0) + 1

        def on_end(self, event):
            # (at least 0: numba sends the end even when a listener's start raised first)
            if followed(event):
                _compiling.depth = max(0, getattr(_compiling, "depth", 0) - 1)

    return Follower()


def _patch_codegen(codegen):
    create_library, set_env = codegen.create_library, codegen.set_env

    def create_library_lazy_when_followed(self, name, **kwargs):
        created = create_library(self, name, **kwargs)
        if getattr(_compiling, "depth", 0) > 0:
            created._fastir_lazy = True
        return created

    def set_env_where_emitted(self, env_name, env):
        # (a function of a library without machine code: its environment is set when the
        # library of the kernel that links it is emitted)
        if self._engine.get_global_value_address(env_name):
            set_env(self, env_name, env)

    codegen.create_library = create_library_lazy_when_followed
    codegen.set_env = set_env_where_emitted


def _patch_library(library, linkage):
    from numba.core.codegen import RuntimeLinker
    from numba.core.compiler_lock import global_compiler_lock, require_global_compiler_lock
    from numba.core.environment import lookup_environment

    unresolved = RuntimeLinker.PREFIX

    finalize, for_linking = library.finalize, library._get_module_for_linking
    address = library.get_pointer_to_function

    def pending(self):
        return self.__dict__.get("_fastir_pending", False)

    def emit(self):
        """Finish a pending library as numba's finalize would have, then give each
        function's environment in it (its callees' too) its address, as numba does for a
        library loaded from its cache."""
        with global_compiler_lock:
            if pending(self):
                self._shared_module = None
                self._optimize_final_module()
                self._final_module.verify()
                self._finalize_final_module()
                self._fastir_pending = False
                for variable in self._final_module.global_variables:
                    env = lookup_environment(variable.name)
                    if env is not None:
                        self._codegen.set_env(variable.name, env)

    def finalize_lazily(self):
        if not self.__dict__.get("_fastir_lazy"):
            return finalize(self)
        require_global_compiler_lock()
        self._codegen._check_llvm_bugs()
        self._raise_if_finalized()
        seen = set()
        for linked in self._linking_libraries:
            if linked not in seen:
                seen.add(linked)
                self._reload_init.update(linked._reload_init)
                self._final_module.link_in(linked._get_module_for_linking(), preserve=True)
        self._finalized = True
        self._fastir_pending = True
        if any(v.name.startswith(unresolved) for v in self._final_module.global_variables):
            emit(self)  # (a recursive call numba resolves when this library is added)

    def module_for_linking(self):
        self._ensure_finalized()
        if not pending(self):
            return for_linking(self)
        if self._shared_module is None:  # (numba's, on a copy: emit changes the module)
            module = self._final_module.clone()
            for function in module.functions:
                if not function.is_declaration and function.linkage == linkage.external:
                    function.linkage = "linkonce_odr"
            self._shared_module = module
        return self._shared_module

    def pointer_to_function(self, name):
        self._ensure_finalized()
        if pending(self):
            if not _defines(self._final_module, name) or (
                    self.name.startswith(_GUFUNC_PREFIX) and name.startswith(_PYTHON_ENTRY)):
                return 0
            emit(self)
        return address(self, name)

    def emitted_first(method):
        def emitted(self, *args, **kwargs):
            self._ensure_finalized()
            emit(self)
            return method(self, *args, **kwargs)

        return emitted

    library.finalize = finalize_lazily
    library._get_module_for_linking = module_for_linking
    library.get_pointer_to_function = pointer_to_function
    for name in ("_get_compiled_object", "serialize_using_object_code",
                 "serialize_using_bitcode", "get_asm_str", "get_llvm_str",
                 "get_function_cfg", "get_disasm_cfg"):
        if hasattr(library, name):
            setattr(library, name, emitted_first(getattr(library, name)))
    library.has_dynamic_globals = property(emitted_first(library.has_dynamic_globals.fget))


def _defines(module, name):
    """Whether the LLVM ``module`` defines the function ``name``."""
    try:
        return not module.get_function(name).is_declaration
    except NameError:
        return False
