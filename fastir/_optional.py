"""The optional dependencies: which extra of ``pyproject.toml`` installs each module, and
:func:`require`, which imports one where a feature needs it (never when fastir is imported)
or says in one line what needed it and how to install it."""

import importlib

#: The extra that installs each optional module (by its top-level name).
EXTRAS = {"pandas": "pandas", "matplotlib": "plot", "pyarrow": "arrow", "dask": "dask",
          "distributed": "dask", "ir_measures": "peers", "tabulate": "peers", "torch": "torch"}


def require(module, needed_by):
    """The module ``module`` (``"matplotlib.pyplot"``), imported; when it (or a module it
    imports) is not installed, a ModuleNotFoundError saying that ``needed_by`` needs it and
    ``pip install 'fastir[EXTRA]'``."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        top = module.partition(".")[0]
        absent = (exc.name or top).partition(".")[0]
        what = top if absent == top else f"{top} ({absent} is not installed)"
        raise ModuleNotFoundError(f"{needed_by} needs {what}: pip install "
                                  f"'fastir[{EXTRAS[top]}]'", name=absent) from None
