"""The environments the examples of the README and the documentation say they run in: what
``./dev example`` installs (fastir, its dependencies and the extras the script names), plus
the extras a page names; every other installed distribution is refused to the examples'
processes by a ``sitecustomize``, as if it were not installed."""

import functools
import os
import re
import sys
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: What a fresh virtual environment holds besides what is installed in it.
FRESH_VENV = {"pip", "setuptools", "wheel"}


def normalised(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def example_extras():
    """The extras ``./dev example`` installs (its ``ensure_env`` calls)."""
    case = re.search(r"\n  example\)(.*?);;", (ROOT / "dev").read_text(), re.DOTALL).group(1)
    return {extra for extra in re.findall(r'ensure_env "?(\w*)"?', case) if extra}


def installed_with(extras=()):
    """The distributions ``./dev example`` installs with ``extras`` added: fastir, its
    dependencies and those of the extras, with theirs (normalised names)."""
    from packaging.requirements import Requirement

    wanted, seen = [("fastir", example_extras() | set(extras))], {}
    while wanted:
        name, with_extras = wanted.pop()
        key = normalised(name)
        if key in seen and with_extras <= seen[key]:
            continue  # (asked again with more extras, as dask[dataframe]: read again)
        seen[key] = seen.get(key, set()) | with_extras
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for text in requires:
            req = Requirement(text)
            if req.marker is None or any(req.marker.evaluate({"extra": e})
                                         for e in with_extras | {""}):
                wanted.append((req.name, set(req.extras)))
    return set(seen)


@functools.cache
def refused_modules(extras=frozenset()):
    """The top-level modules of every installed distribution that ``./dev example`` with
    ``extras`` would not install."""
    allowed = installed_with(extras) | FRESH_VENV
    return sorted(module for module, dists in metadata.packages_distributions().items()
                  if not any(normalised(d) in allowed for d in dists))


def example_environment(folder, extras=()):
    """``os.environ`` for a command of the examples: this interpreter's folder first on
    PATH, temporary files in ``folder``, and a ``sitecustomize`` (written in ``folder``)
    first on PYTHONPATH that refuses to import the modules of every installed distribution
    that ``./dev example`` with ``extras`` would not install."""
    refused = refused_modules(frozenset(extras))
    named = f" with fastir[{','.join(sorted(extras))}]" if extras else ""
    (folder / "sitecustomize.py").write_text(
        "import sys\n\n"
        f"REFUSED = {set(refused)!r}\n\n\n"
        "class NotInstalled:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.partition('.')[0] in REFUSED:\n"
        "            raise ModuleNotFoundError(f'No module named {name!r} (./dev example"
        f"{named} does not install it)', name=name)\n\n\n"
        "sys.meta_path.insert(0, NotInstalled())\n")
    paths = [str(folder)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(paths), TMPDIR=str(folder),
                PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
