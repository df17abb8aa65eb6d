"""The optional dependencies: which extra of ``pyproject.toml`` installs each module, and
:func:`require`, which imports one where a feature needs it (never when fastir is imported)
or says in one line what needed it and how to install it."""

import importlib

#: The extra that installs each optional module (by its top-level name).
EXTRAS = {"pandas": "pandas", "matplotlib": "plot", "pyarrow": "arrow", "dask": "dask",
          "distributed": "dask", "ir_measures": "peers", "tabulate": "peers", "torch": "torch",
          "pyspark": "spark"}


def require(module, needed_by):
    """The module ``module`` (``"matplotlib.pyplot"``), imported; when it (or a module it
    imports) is not installed, a ModuleNotFoundError saying that ``needed_by`` needs it and
    ``pip install 'fastir[EXTRA]'`` (an ImportError of the module's own, as
    ``dask.dataframe`` raises without its requirements, says so too, with its first
    line)."""
    top = module.partition(".")[0]
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        absent = (exc.name or top).partition(".")[0]
        what = top if absent == top else f"{top} ({absent} is not installed)"
        raise ModuleNotFoundError(f"{needed_by} needs {what}: pip install "
                                  f"'fastir[{EXTRAS[top]}]'", name=absent) from None
    except ImportError as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ImportError(f"{needed_by} needs {module}, which cannot be imported ({reason}): "
                          f"pip install 'fastir[{EXTRAS[top]}]'", name=top) from None
