"""``python -m fastir trec_eval ...``

Run from a folder that holds a folder named ``fastir`` without an ``__init__.py`` (the
parent of a checkout named ``fastir``) with an editable install whose import hook comes
after the module path (setuptools' default), ``import fastir`` finds that folder first and
makes it a namespace package: ``fastir.evaluate`` and ``__version__`` are missing, though
this file, found through the hook, is the package's. So ``fastir`` is made the package this
file belongs to before anything reads it (a script run from that folder still gets the
namespace package: docs/guides/command-line.md, "The warm worker")."""

import sys


def _this_package():
    """Replace a namespace package ``fastir`` by the regular package of this file."""
    import importlib.util
    import os

    folder = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location(
        "fastir", os.path.join(folder, "__init__.py"), submodule_search_locations=[folder])
    package = importlib.util.module_from_spec(spec)
    sys.modules["fastir"] = package
    spec.loader.exec_module(package)


if getattr(sys.modules.get("fastir"), "__file__", None) is None:
    _this_package()

from fastir.cli.main import program  # noqa: E402

program()
