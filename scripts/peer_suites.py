"""The peers' own test suites, run on the peer and through fastir's switch modules.

    python scripts/peer_suites.py [--cache DIR] [--only pytrec_eval,ir_measures,ranx] [-v]

Downloads each peer's test suite at a pinned version, runs it unchanged twice -- once on the
installed peer, once with the peer's `import` answered by fastir's module -- and prints the
README's table (section "The peers' own test suites through the switch"): suite, tests, pass
on the peer, pass through fastir, then the ids of the tests that do not pass. fastir is
imported from this checkout (PYTHONPATH), the peers from the environment.

Sources. First the PyPI source distribution (`pip download --no-deps --no-binary :all:`); if
it lacks the files the suite needs, or pip cannot fetch it, the GitHub tarball of the release
tag (https://github.com/OWNER/REPO/archive/REF.tar.gz, through urllib). At these versions:

- pytrec_eval 0.5.9 (terrierteam's pytrec_eval-terrier; v0.5.9 is its last tag with tests,
  the installed module may be newer): the sdist has no tests (and pip download fails without
  GitHub: preparing it runs its setup.py, which downloads trec_eval from there), so the tests
  and examples come from the tag v0.5.9 of terrierteam/pytrec_eval; cvangysel's original test
  file from the tag 0.5 of cvangysel/pytrec_eval. The tests read trec_eval's test files
  (`trec_eval/test`, a git submodule): from the tag v9.0.8 of usnistgov/trec_eval, the
  trec_eval pytrec_eval 0.5.9's setup.py builds. The file runs with unittest, as its README
  says; the examples `simple.py`, `simple_cut.py`, `trec_eval.py` and
  `statistical_significance.py` (on trec_eval's qrels.test and results.test, and, for the
  last, `--measure map` and a second run made from results.test with seeded random scores)
  must print the same bytes both ways.
- ir_measures 0.4.3: the sdist has the test modules but not `tests/base.py`,
  `tests/__init__.py` or their qrels and run files, so the tag v0.4.3 of
  terrierteam/ir_measures. Run with pytest three times: on ir_measures; with
  `import fastir.ir_measures` (fastir first in the default pipeline); and with every named
  provider routed to fastir for the measures that provider claims.
- ranx 0.3.21: the sdist has no tests, so the tag v0.3.21 of AmenRa/ranx, else (if that tag
  is not there) the commit 2cae52f0 (master, 2025-06-25: the last commit before 0.3.21's
  release that we could see). Run with pytest twice, reported in four parts (`evaluate`; the
  data structures; fusion; the metric and normalisation kernels).

Archives are kept in the cache (default ~/.cache/fastir/peer_suites) and reused without the
network: put a file there under the name this script prints to run where PyPI or GitHub is out
of reach. Only `tests/` (and pytrec_eval's `examples/`, trec_eval's `test/`) are unpacked, so
the peer's own package in the archive never shadows the installed one. The adapters are in
scripts/peer_suites/: ir_measures_conftest.py and ranx_conftest.py are copied as
conftest.py next to the suite, pytrec_eval_run.py runs pytrec_eval's file or an example.
"""

import argparse
import importlib.metadata
import os
import random
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ADAPTERS = Path(__file__).resolve().parent / "peer_suites"
OUTCOME = re.compile(r"^(PASSED|FAILED|ERROR|XFAIL|XPASS) (\S+)")


@dataclass
class Source:
    label: str
    github: str  # owner/repo
    refs: list  # tags or commits, tried in order
    needs: list  # files the suite needs, relative to the archive's top directory
    unpack: list  # directories to unpack
    pypi: str | None = None
    version: str | None = None
    notes: list = field(default_factory=list)


SOURCES = {
    "pytrec_eval": Source(
        "pytrec_eval", "terrierteam/pytrec_eval", ["v0.5.9"],
        ["tests/pytrec_eval_tests.py", "examples/simple.py"], ["tests", "examples"],
        pypi="pytrec_eval-terrier", version="0.5.9"),
    "pytrec_eval_cvangysel": Source(
        "pytrec_eval (cvangysel)", "cvangysel/pytrec_eval", ["0.5"],
        ["tests/pytrec_eval_tests.py"], ["tests"], pypi="pytrec_eval", version="0.5"),
    "trec_eval": Source(
        "trec_eval", "usnistgov/trec_eval", ["v9.0.8"], ["test/qrels.test", "test/results.test"],
        ["test"]),
    "ir_measures": Source(
        "ir_measures", "terrierteam/ir_measures", ["v0.4.3"],
        ["tests/__init__.py", "tests/base.py", "tests/compat.qrels", "tests/cwl.run",
         "tests/test_measures.py"], ["tests"], pypi="ir_measures", version="0.4.3"),
    "ranx": Source(
        "ranx", "AmenRa/ranx", ["v0.3.21", "2cae52f00c2c15136a07d573027744109792604d"],
        ["tests/unit/ranx/meta/evaluate_test.py", "tests/unit/ranx/test_data/run.trec"],
        ["tests"], pypi="ranx", version="0.3.21"),
}


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def _members(archive):
    """{path below the archive's top directory: member} of a .tar.gz."""
    with tarfile.open(archive) as tar:
        return {m.name.split("/", 1)[1]: m for m in tar.getmembers() if "/" in m.name}


def _sdist(src, cache):
    """The cached or freshly downloaded sdist of src, or None (with the reason logged)."""
    norm = re.sub(r"[-_.]+", "_", src.pypi).lower()
    tail = f"-{src.version}.tar.gz"

    def cached():
        return next((p for p in sorted((cache / "pypi").glob("*" + tail))
                     if re.sub(r"[-_.]+", "_", p.name[: -len(tail)]).lower() == norm), None)

    if cached() is not None:
        return cached()
    log(f"pip download --no-deps --no-binary :all: {src.pypi}=={src.version}")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
         "--disable-pip-version-check", "-q", "-d", str(cache / "pypi"),
         f"{src.pypi}=={src.version}"], capture_output=True, text=True)
    if done.returncode:
        why = [line.strip() for line in done.stderr.splitlines()
               if line.strip().startswith("ERROR")] or [f"exit {done.returncode}"]
        src.notes.append(f"pip download {src.pypi}=={src.version} failed: {why[-1]}")
    return cached()


def _github(src, ref, cache):
    """The cached or freshly downloaded GitHub tarball of src at ref, or None."""
    path = cache / "github" / f"{src.github.replace('/', '+')}-{ref}.tar.gz"
    if path.exists():
        return path
    url = f"https://github.com/{src.github}/archive/{ref}.tar.gz"
    log(f"urllib {url} -> {path}")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with urllib.request.urlopen(url, timeout=120) as response:
            data = response.read()
    except OSError as e:
        src.notes.append(f"{url}: {e}")
        return None
    part = path.with_suffix(".part")
    part.write_bytes(data)
    part.rename(path)
    return path


def fetch(src, cache, into):
    """Unpacks src's suite into the directory `into`; returns a sentence saying where from."""
    archives = []
    if src.pypi:
        sdist = _sdist(src, cache)
        if sdist is not None:
            archives.append((f"sdist {sdist.name}", sdist))
    for ref in src.refs:
        archives.append((f"github {src.github}@{ref}", None))
    for origin, archive in archives:
        if archive is None:
            archive = _github(src, origin.rsplit("@", 1)[1], cache)
            if archive is None:
                continue
        members = _members(archive)
        missing = [p for p in src.needs if p not in members]
        if missing:
            src.notes.append(f"{origin} lacks {', '.join(missing)}")
            continue
        with tarfile.open(archive) as tar:
            for rel, member in members.items():
                if any(rel == d or rel.startswith(d + "/") for d in src.unpack):
                    member.name = rel
                    tar.extract(member, into, filter="data")
        return origin
    raise LookupError(f"{src.label}: no source has its tests ({'; '.join(src.notes)})")


def run(cmd, cwd, through=None, timeout=3600):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(REPO)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    env.pop("THROUGH", None)
    if through:
        env["THROUGH"] = through
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, timeout=timeout)


def outcomes(stdout):
    """{test id: PASSED|FAILED|ERROR|...} from pytest -rA's summary or pytrec_eval_run.py."""
    found = {}
    for line in stdout.decode(errors="replace").splitlines():
        m = OUTCOME.match(line)
        if m:
            found[m.group(2)] = m.group(1)
    return found


def pytest_suite(suite_dir, conftest, through, verbose):
    """Runs pytest in a fresh copy of suite_dir (the tests write files) with the adapter."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "suite"
        shutil.copytree(suite_dir, work)
        shutil.copy(ADAPTERS / conftest, work / "conftest.py")
        done = run([sys.executable, "-m", "pytest", "-rA", "-q", "-p", "no:cacheprovider",
                    "--continue-on-collection-errors", "tests"], work, through)
    if verbose:
        log(done.stdout.decode(errors="replace")[-4000:])
    found = outcomes(done.stdout)
    if not found:
        raise RuntimeError(f"pytest ran nothing (THROUGH={through}):\n"
                           + done.stdout.decode(errors="replace")[-2000:]
                           + done.stderr.decode(errors="replace")[-2000:])
    return found


class Table:
    def __init__(self):
        self.rows, self.failures, self.notes = [], [], []

    def add(self, suite, peer, fastir, ids=None):
        """A row from two {test id: outcome}: tests counted on the peer (a module fastir
        cannot import counts there as one error, not as its tests)."""
        ids = sorted(peer) if ids is None else ids
        peer_pass = sum(peer.get(t) == "PASSED" for t in ids)
        fastir_ids = sorted(fastir)
        fastir_pass = sum(fastir[t] == "PASSED" for t in fastir_ids)
        self.rows.append((suite, len(ids), peer_pass, fastir_pass))
        fails = [f"{t} ({peer.get(t, '-')} on the peer)" for t in ids if peer[t] != "PASSED"]
        fails += [f"{t} (through fastir: {fastir[t]})" for t in fastir_ids
                  if fastir[t] != "PASSED"]
        self.failures.append((suite, fails))

    def print(self):
        print("| suite (version) | tests | pass on the peer | pass through fastir |")
        print("|---|---:|---:|---:|")
        for suite, n, p, f in self.rows:
            print(f"| {suite} | {n} | {p} | {f} |")
        for suite, fails in self.failures:
            if fails:
                print(f"\n{suite}: not passing")
                for line in fails:
                    print(f"  {line}")
        for note in self.notes:
            print(f"\n{note}")


def pytrec_eval_suites(table, cache, tmp, verbose):
    roots = {}
    trec_eval_dir = Path(tmp) / "trec_eval"
    origin = fetch(SOURCES["trec_eval"], cache, trec_eval_dir)
    table.notes.append(f"trec_eval's test files: {origin}")
    for key in ("pytrec_eval", "pytrec_eval_cvangysel"):
        src = SOURCES[key]
        root = roots[key] = Path(tmp) / key
        origin = fetch(src, cache, root)
        table.notes.append(f"{src.label}: {origin}" + "".join(f"\n  ({n})" for n in src.notes))
        shutil.copytree(trec_eval_dir, root / "trec_eval")
        found = {}
        for which in ("peer", "fastir"):
            done = run([sys.executable, str(ADAPTERS / "pytrec_eval_run.py"), which, "tests",
                        str(root / "tests" / "pytrec_eval_tests.py")], root)
            if verbose:
                log(done.stderr.decode(errors="replace")[-4000:])
            found[which] = outcomes(done.stdout)
            if not found[which]:
                raise RuntimeError(done.stderr.decode(errors="replace")[-2000:])
        label = ("pytrec_eval (0.5.9, terrierteam)" if key == "pytrec_eval"
                 else "pytrec_eval (cvangysel's 0.5 tests, on pytrec_eval-terrier)")
        table.add(label, found["peer"], found["fastir"])

    # the examples: the same bytes on stdout both ways
    root, test = roots["pytrec_eval"], trec_eval_dir / "test"
    rng = random.Random(0)
    second = root / "results.second"
    with open(test / "results.test") as f, open(second, "w") as out:
        for line in f:
            q, q0, doc, rank, score, tag = line.split()
            out.write(f"{q} {q0} {doc} {rank} {float(score) * rng.uniform(0.7, 1.3):g} {tag}\n")
    examples = [("simple.py",), ("simple_cut.py",),
                ("trec_eval.py", test / "qrels.test", test / "results.test"),
                ("statistical_significance.py", test / "qrels.test", test / "results.test",
                 second, "--measure", "map")]
    same = []
    for name, *args in examples:
        outs = [run([sys.executable, str(ADAPTERS / "pytrec_eval_run.py"), which, "example",
                     str(root / "examples" / name), *map(str, args)], root)
                for which in ("peer", "fastir")]
        ok = all(o.returncode == 0 for o in outs) and outs[0].stdout == outs[1].stdout
        same.append(f"{name}: {'same bytes' if ok else 'DIFFERENT'}"
                    f" ({len(outs[0].stdout)} bytes on the peer, exit {outs[0].returncode}/"
                    f"{outs[1].returncode})")
    table.notes.append("pytrec_eval's examples, stdout on the peer vs through fastir:\n  "
                       + "\n  ".join(same))


def ir_measures_suite(table, cache, tmp, verbose):
    src = SOURCES["ir_measures"]
    root = Path(tmp) / "ir_measures"
    origin = fetch(src, cache, root)
    table.notes.append(f"{src.label}: {origin}" + "".join(f"\n  ({n})" for n in src.notes))
    found = {t: pytest_suite(root, "ir_measures_conftest.py", t, verbose)
             for t in ("peer", "pipeline", "providers")}
    table.add("ir_measures (0.4.3), default pipeline", found["peer"], found["pipeline"])
    table.add("ir_measures, every provider through fastir", found["peer"], found["providers"])


RANX_PARTS = [
    ("ranx (0.3.21), `evaluate`", ("tests/unit/ranx/meta/",)),
    ("ranx, `Qrels`, `Run`, `compare`'s `Report`", ("tests/unit/ranx/data_structures/",)),
    ("ranx, fusion (each method's function, answered by `fuse`)", ("tests/unit/ranx/fusion/",)),
    ("ranx, its kernels (`ranx.metrics`, `ranx.normalization`)",
     ("tests/unit/ranx/metrics", "tests/unit/ranx/normalization/")),
]


def ranx_suite(table, cache, tmp, verbose):
    src = SOURCES["ranx"]
    root = Path(tmp) / "ranx"
    origin = fetch(src, cache, root)
    table.notes.append(f"{src.label}: {origin}" + "".join(f"\n  ({n})" for n in src.notes))
    found = {t: pytest_suite(root, "ranx_conftest.py", t, verbose) for t in ("peer", "fastir")}
    placed = set()
    for label, prefixes in RANX_PARTS:
        ids = sorted(t for t in found["peer"] if t.startswith(prefixes))
        placed.update(ids)
        fastir = {t: o for t, o in found["fastir"].items() if t.startswith(prefixes)}
        table.add(label, found["peer"], fastir, ids)
    rest = sorted(set(found["peer"]) - placed)
    if rest:
        table.add("ranx, other", found["peer"], {t: found["fastir"].get(t, "-") for t in rest},
                  rest)


def _installed(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "(not installed)"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path,
                        default=Path.home() / ".cache" / "fastir" / "peer_suites")
    parser.add_argument("--only", default="pytrec_eval,ir_measures,ranx")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    table = Table()
    table.notes.append("installed: " + ", ".join(
        f"{d} {_installed(d)}" for d in ("pytrec_eval-terrier", "ir_measures", "ranx")))
    suites = {"pytrec_eval": pytrec_eval_suites, "ir_measures": ir_measures_suite,
              "ranx": ranx_suite}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.only.split(","):
            try:
                suites[name](table, args.cache, tmp, args.verbose)
            except LookupError as e:
                table.notes.append(f"NOT RUN: {name}: {e}")
    table.print()


if __name__ == "__main__":
    main()
