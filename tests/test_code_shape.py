"""Limits on the shape of fastir's code (issue 41): a kernel takes at most
:data:`MOST_KERNEL_ARGS` arguments (those that belong together come as a namedtuple: the
measure kernels' ``Spec``, ``Work``, ``Rankings``; the join's ``RunRows``, ``JoinOutput``),
and no function's cyclomatic complexity is above :data:`MOST_COMPLEXITY` (radon's: the test
extra has it). Read from the sources: nothing is imported or compiled."""

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.one_engine

PACKAGE = Path(__file__).resolve().parent.parent / "fastir"
MOST_KERNEL_ARGS = 12
MOST_COMPLEXITY = 25
#: fastir._jit's decorators that make a function a kernel (or a kernel's Python variant).
KERNEL_DECORATORS = {"jit", "pjit", "helper", "python_variant", "_register"}


def _sources():
    return sorted(PACKAGE.rglob("*.py"))


def _decorator_name(node):
    node = node.func if isinstance(node, ast.Call) else node
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)


def _kernels(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and any(
                _decorator_name(d) in KERNEL_DECORATORS for d in node.decorator_list):
            yield node


def _n_args(function):
    args = function.args
    return len(args.posonlyargs) + len(args.args) + len(args.kwonlyargs) + \
        (args.vararg is not None) + (args.kwarg is not None)


def test_the_kernels_are_found():
    found = {f.name for path in _sources() for f in _kernels(ast.parse(path.read_text()))}
    assert {"_join_kernel", "_pair_rows", "_combine", "_ktu_kernel", "evaluate_queries",
            "table_size"} <= found


def test_no_kernel_takes_more_than_twelve_arguments():
    over = [f"{path.relative_to(PACKAGE.parent)}:{f.lineno} {f.name} ({_n_args(f)})"
            for path in _sources() for f in _kernels(ast.parse(path.read_text()))
            if _n_args(f) > MOST_KERNEL_ARGS]
    assert not over, f"bundle the arguments that belong together into namedtuples: {over}"


def test_no_function_is_more_complex_than_25():
    from radon import complexity
    over = [f"{path.relative_to(PACKAGE.parent)}:{block.lineno} {block.name} "
            f"({block.complexity})" for path in _sources()
            for block in complexity.cc_visit(path.read_text())
            if block.complexity > MOST_COMPLEXITY]
    assert not over, f"split these into smaller functions: {over}"
