"""Shared test helpers: data generators and the bridge from fastir measures to the naive
reference."""

import os
import shutil
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st

sys.path.insert(0, os.path.dirname(__file__))
# No command a test runs (nor its subprocesses) uses or starts a warm worker unless it says
# so: the command-line tests compare each call with a worker of the session (tests/cli_calls.py)
# and the worker's tests (tests/worker) start their own; each is stopped by its process id.
os.environ["FASTIR_WORKER"] = "off"

# The default profile draws the same examples on every run, so whether a change lands does
# not depend on luck; HYPOTHESIS_PROFILE=explore draws new ones (run it to hunt for bugs).
settings.register_profile("repeatable", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))

import cli_calls  # noqa: E402
import naive  # noqa: E402

from fastir.measures.registry import FAMILIES  # noqa: E402

DATA = Path(__file__).parent / "data" / "trec_eval"

#: The measures every reference test covers (fastir's names, which the naive reference
#: speaks): every family's examples in the registry (tests/test_registry.py checks that
#: each family has them).
MEASURES = [name for family in FAMILIES.values() for name in family.examples
            if family.path not in ("subtopics", "prefs", "groups")]
#: The diversity measures' examples: they need subtopic qrels (``subtopic_qrels_and_runs``).
SUBTOPIC_MEASURES = [name for family in FAMILIES.values() for name in family.examples
                     if family.path == "subtopics"]
#: The preference and judgment-group measures' examples: they read other judgments
#: (tests/measures/test_prefs_reference.py).
PREFS_MEASURES = [name for family in FAMILIES.values() for name in family.examples
                  if family.path == "prefs"]
GROUP_MEASURES = [name for family in FAMILIES.values() for name in family.examples
                  if family.path == "groups"]


@pytest.fixture(autouse=True)
def _no_user_measure_outlives_its_test():
    """The measures a test defines (its own, a guide's or the README's code run in this
    process) are taken out of the registry after it: the registry's tests see the
    built-ins alone whatever ran before them in the process."""
    from fastir.measures import registry, user

    before = set(registry.user_families())
    yield
    for name in set(registry.user_families()) - before:
        user.undefine_measure(name)


@pytest.fixture(scope="session", autouse=True)
def _session_worker():
    """The command line's tests compare their calls with a worker of the session
    (tests/cli_calls.py), started on first use: stopped here, by its process id."""
    yield
    cli_calls.stop_session_worker()


def sigint_default():
    """``preexec_fn`` of a child a test sends SIGINT: its SIGINT at the default, as a
    terminal's command has it (a test run from a background job inherits SIGINT ignored, and
    Python then never raises KeyboardInterrupt)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def sigint_ignored():
    """``preexec_fn`` of a child started as a background job is: SIGINT ignored."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def naive_values(qrels, run, names, **options):
    """{qid: [value per name]} from the naive reference (options as fastir.evaluate's)."""
    return naive.evaluate(qrels, run, names, **options)


# -- hypothesis strategies ------------------------------------------------------------------
# Small vocabularies make ties, shared docs and unjudged docs common. Doc ids share
# prefixes so that byte-order tie breaking is exercised ("d1" < "d10" < "d2").
DOC_IDS = st.sampled_from(["d1", "d10", "d2", "d20", "d3", "D3", "d4", "e", "é", "d5#x",
                           "d6", "d7", "d8", "d9", "d11", "d12"])
QUERY_IDS = st.sampled_from(["q1", "q2", "q10", "3", "20"])
LABELS = st.integers(min_value=-1, max_value=3)
SCORES = st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0, -1.0, 3.25, 1e-3])


@st.composite
def qrels_and_runs(draw):
    qrels = draw(st.dictionaries(QUERY_IDS, st.dictionaries(DOC_IDS, LABELS, max_size=10),
                                 min_size=1, max_size=4))
    run = draw(st.dictionaries(QUERY_IDS, st.dictionaries(DOC_IDS, SCORES, max_size=12),
                               max_size=4))
    return qrels, run


SUBTOPICS = st.sampled_from(["1", "2", "3", "10"])


@st.composite
def subtopic_qrels_and_runs(draw):
    """Subtopic qrels {qid: {doc: {subtopic: label}}} and a run over the same vocabularies."""
    qrels = draw(st.dictionaries(QUERY_IDS, st.dictionaries(
        DOC_IDS, st.dictionaries(SUBTOPICS, LABELS, min_size=1, max_size=3), min_size=1,
        max_size=10),
        min_size=1, max_size=4))
    run = draw(st.dictionaries(QUERY_IDS, st.dictionaries(DOC_IDS, SCORES, max_size=12),
                               max_size=4))
    return qrels, run


# -- shared conversions -----------------------------------------------------------------
def run_rows(run):
    """A run dict as (query ids, doc ids, scores) rows."""
    qids, docs, scores = [], [], []
    for q, ranked in run.items():
        for d, s in ranked.items():
            qids.append(q)
            docs.append(d)
            scores.append(s)
    return qids, docs, np.array(scores, dtype=np.float64)


def matrix_to_dicts(scores, labels, mask=None, n_relevant=None, level=1):
    """The batch as qrels/run dicts: column j is doc id 'd{999999 - j}', so that trec_eval's
    docno-descending tie order is the column order."""
    qrels, run = {}, {}
    for b in range(scores.shape[0]):
        q = f"q{b:05d}"
        qrels[q] = {}
        run[q] = {}
        for j in range(scores.shape[1]):
            if mask is not None and not mask[b, j]:
                continue
            doc = f"d{999999 - j}"
            qrels[q][doc] = int(labels[b, j])
            run[q][doc] = float(scores[b, j])
        if n_relevant is not None:
            have = sum(1 for v in qrels[q].values() if v >= level)
            for k in range(max(0, int(n_relevant[b]) - have)):
                qrels[q][f"outside{k}"] = level
    return qrels, run


@pytest.fixture(scope="session")
def data_dir():
    return DATA


class Heartbeat:
    """Each minute a test has been running, a line on the terminal's stderr naming it, with
    the tests done and the time since the start: the dots of ``-q`` say nothing then (with
    pytest-xdist, the tests each of its processes runs)."""

    EVERY = 60.0  # seconds

    def __init__(self):
        self.terminal = os.dup(2)  # (pytest's capture redirects fd 2 while a test runs)
        self.start = time.monotonic()
        self.running = {}  # node id: [start, lines said]
        self.done = self.total = 0
        self.stopped = threading.Event()
        threading.Thread(target=self._beat, daemon=True).start()

    def pytest_collection_finish(self, session):
        self.total = len(session.items)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids):
        self.total = len(ids)

    def pytest_runtest_logstart(self, nodeid):
        self.running[nodeid] = [time.monotonic(), 0]

    def pytest_runtest_logfinish(self, nodeid):
        if self.running.pop(nodeid, None) is not None:
            self.done += 1

    def pytest_unconfigure(self):
        self.stopped.set()

    def _beat(self):
        while not self.stopped.wait(5.0):
            now = time.monotonic()
            for nodeid, running in list(self.running.items()):
                since, said = running
                if now - since < self.EVERY * (said + 1):
                    continue
                running[1] = said + 1
                line = (f"\n[{_minutes(now - self.start)}] still running {nodeid} "
                        f"({_minutes(now - since)}); {self.done} of {self.total} tests done\n")
                os.write(self.terminal, line.encode("utf-8", "replace"))


def _minutes(seconds):
    return f"{int(seconds) // 60}:{int(seconds) % 60:02d}"


def pytest_configure(config):
    if not hasattr(config, "workerinput"):  # (pytest-xdist's processes: their controller says it)
        config.pluginmanager.register(Heartbeat(), "fastir-heartbeat")


def pytest_collection_modifyitems(config, items):
    """Tests marked ``one_engine`` do not depend on the engine: they run once. Tests marked
    ``slow`` (a minute or more; ``minutes=`` says how many) run first, the longest first:
    under pytest-xdist one of them started late would run on alone after the others."""
    twice = [item for item in items if item.get_closest_marker("one_engine")
             and item.callspec.params.get("engine") == "python"]
    if twice:
        config.hook.pytest_deselected(items=twice)
        items[:] = [item for item in items if item not in twice]
    items.sort(key=_minutes_first)  # (stable: the rest keep their order)


def _minutes_first(item):
    slow = item.get_closest_marker("slow")
    return -slow.kwargs.get("minutes", 1) if slow else 0


@pytest.fixture(scope="session", params=["python", "numba"], autouse=True)
def engine(request):
    """Every test runs twice: with every kernel as Python and with every kernel compiled
    (also in the subprocesses a test starts), so both forms meet every assertion."""
    from fastir import _jit

    saved = os.environ.get("FASTIR_JIT")
    os.environ["FASTIR_JIT"] = request.param
    with _jit.forced(request.param):
        yield request.param
    if saved is None:
        del os.environ["FASTIR_JIT"]
    else:
        os.environ["FASTIR_JIT"] = saved


@pytest.fixture
def small_disk(tmp_path):
    """A folder on a 256 KiB disk of its own (a tmpfs, unmounted at the end), to fill with
    :func:`fill`; the test is skipped where mounting one is not permitted."""
    import subprocess

    folder = tmp_path / "small_disk"
    folder.mkdir()
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(folder)],
                              capture_output=True, text=True)
    except OSError as exc:
        pytest.skip(f"cannot mount a small disk here: {exc}")
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small disk here: {done.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def fill(folder, leave=0):
    """Fill ``folder``'s disk, leaving ``leave`` bytes free (a multiple of 4096)."""
    path = os.path.join(folder, "filler")
    block = bytes(4096)
    with open(path, "wb", buffering=0) as f:
        try:
            while True:
                f.write(block)
        except OSError:
            pass
    os.truncate(path, os.path.getsize(path) - leave)


@pytest.fixture(scope="session")
def spark():
    """A local Spark session for fastir.spark's tests (2 cores, a task tried up to 3 times,
    4 shuffle partitions, no UI), its Python workers this interpreter; stopped at the end.
    Skipped without pyspark or without java (./dev test installs it when run as root)."""
    pytest.importorskip("pyspark", reason="fastir.spark needs pyspark (the spark extra)")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Spark needs java (Java 17): none on PATH nor JAVA_HOME (./dev test "
                    "installs Debian's openjdk-17-jre-headless when run as root)")
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    session = (SparkSession.builder.master("local[2,3]").appName("fastir-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.sql.adaptive.enabled", "false")
               .config("spark.driver.memory", "1g")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
