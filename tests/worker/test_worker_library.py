"""Library calls through the worker (fastir/worker/library.py): ``fastir.evaluate`` and
``fastir.evaluate_file`` on files, in a fresh process, run by the warm worker give what
they give in-process: Results equal in every attribute (arrays bit for bit, with their
dtypes and read-only flags), the same exceptions (type, message, cause) and the same
warnings (category, message, file and line) through the caller's filters, on the bundled
pair and on drawn files with drawn measures and options. Each test checks that the worker
ran the calls it should (its count of requests served), and only those: calls that are not
on plain paths, from another thread, with a replaced standard stream, with measures of the
process's own, with FASTIR_WORKER=off or without a worker run in-process. Ctrl-C during a
delegated call raises KeyboardInterrupt in the caller and ends the command's process. Each
process a test starts is ended by its process id."""

import json
import os
import pickle
import random
import signal
import subprocess
import sys
import time
import warnings

import pytest
from cli_calls import PROGRAM, ROOT, gone, session_worker
from conftest import sigint_default

from fastir.worker import common, library

pytestmark = [pytest.mark.one_engine,
              pytest.mark.skipif(not common.supported(), reason="workers are Linux only")]

DATA = ROOT / "tests" / "data" / "trec_eval" / "inputs"
QRELS, RUN = str(DATA / "qrels.test"), str(DATA / "results.test")

#: Runs the calls of a pickled list [(function, args, kwargs, filter)] in a fresh process,
#: each with its warnings recorded (``filter``: the action of the caller's filter, "always"
#: unless said), and pickles [(outcome, warnings)]: outcome ("value", Results) or ("error",
#: type, message, args, cause's type and message); warnings (category, message, file,
#: line) each. Then whether numba was loaded and the calls' stderr.
_CALLS = """
import pickle, sys, warnings
calls = pickle.load(open(sys.argv[1], "rb"))
import fastir
outcomes = []
for function, args, kwargs, action in calls:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter(action)
        try:
            outcome = ("value", getattr(fastir, function)(*args, **kwargs))
        except Exception as error:
            cause = error.__cause__
            outcome = ("error", type(error), str(error), error.args,
                       None if cause is None else (type(cause), str(cause)))
    outcomes.append((outcome, [(w.category, str(w.message), w.filename, w.lineno)
                               for w in caught]))
with open(sys.argv[2], "wb") as out:
    pickle.dump((outcomes, "numba" in sys.modules), out)
"""


@pytest.fixture(scope="module")
def worker():
    """The session's worker for this environment (tests/cli_calls.py stops it)."""
    return session_worker(os.environ)


def calls_in_a_process(tmp_path, env, calls, script=_CALLS, name="calls"):
    """Run ``calls`` in a fresh process with ``env``: (outcomes, numba loaded, stderr)."""
    spec, out, code = (tmp_path / f"{name}.in", tmp_path / f"{name}.out",
                       tmp_path / f"{name}.py")
    spec.write_bytes(pickle.dumps(calls))
    code.write_text(script)
    done = subprocess.run([sys.executable, str(code), str(spec), str(out)], env=env,
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    outcomes, numba = pickle.loads(out.read_bytes())
    return outcomes, numba, done.stderr


def through_and_alone(tmp_path, worker, calls, delegated=True):
    """``calls`` run in a fresh process through ``worker`` and in another in-process: the
    same outcomes, warnings and stderr; the worker ran each (``delegated``) or none. The
    outcomes."""
    before = worker.served()
    through, numba, err = calls_in_a_process(tmp_path, worker.env, calls, name="through")
    ran = worker.served() - before
    alone, _, alone_err = calls_in_a_process(
        tmp_path, {**worker.env, "FASTIR_WORKER": "off"}, calls, name="alone")
    assert ran == (len(calls) if delegated else 0), f"the worker ran {ran} calls"
    assert not numba or not delegated, "a delegated call loaded numba in the caller"
    assert len(through) == len(alone) == len(calls)
    for call, mine, theirs in zip(calls, alone, through):
        assert_same(mine, theirs, f"{call}")
    assert _without_compiling(err) == alone_err
    return through


def _without_compiling(err):
    """``err`` without the note of kernels compiled (the worker runs compiled kernels,
    compiling those of a kind of input not in the cache yet; in-process, small inputs run
    as Python)."""
    return "".join(line for line in err.splitlines(keepends=True)
                   if not line.startswith("fastir: compiling numba kernels"))


def assert_same(mine, theirs, where):
    """Equal in type and every attribute, arrays bit for bit (dtype, shape, flags)."""
    assert type(mine) is type(theirs), f"{where}: {type(mine)} != {type(theirs)}"
    if type(mine).__module__ == "numpy" and hasattr(mine, "tobytes"):
        assert (mine.dtype, mine.shape, mine.flags.writeable) == \
            (theirs.dtype, theirs.shape, theirs.flags.writeable), where
        assert mine.tobytes() == theirs.tobytes(), f"{where}: values differ"
    elif isinstance(mine, (list, tuple)):
        assert len(mine) == len(theirs), where
        for i, (a, b) in enumerate(zip(mine, theirs)):
            assert_same(a, b, f"{where}[{i}]")
    elif isinstance(mine, dict):
        assert list(mine) == list(theirs), where
        for key in mine:
            assert_same(mine[key], theirs[key], f"{where}[{key!r}]")
    elif hasattr(mine, "__dict__") or hasattr(type(mine), "__slots__"):
        if not isinstance(mine, type):
            for name in _attributes(mine):
                assert_same(getattr(mine, name), getattr(theirs, name), f"{where}.{name}")
        assert mine == theirs or not hasattr(type(mine), "__eq__") or \
            type(mine).__eq__ is object.__eq__, where
    else:
        assert mine == theirs, f"{where}: {mine!r} != {theirs!r}"


def _attributes(value):
    names = list(getattr(value, "__dict__", {}))
    for kind in type(value).__mro__:
        names += [n for n in getattr(kind, "__slots__", ()) if n not in names]
    return [n for n in names if hasattr(value, n)]


MEASURES = ["map", "recip_rank", "ndcg_cut_10", "P_10", "recall_1000"]


def test_the_bundled_pair(tmp_path, worker):
    calls = [("evaluate", (QRELS, RUN, MEASURES), {}, "always"),
             ("evaluate", (QRELS, RUN, "all_trec"), {"missing": "skip", "progress": True},
              "always"),
             ("evaluate_file", (QRELS, RUN, ["nDCG@10", "AP", "P@5"]), {}, "always")]
    outcomes = through_and_alone(tmp_path, worker, calls)
    assert all(outcome[0] == "value" for outcome, _ in outcomes)


#: Measures drawn from, with parameters and cutoffs in every syntax.
DRAWN_MEASURES = ["map", "P.5,10", "ndcg_cut.3,10", "recip_rank", "nDCG@5", "AP(rel=2)",
                  "R@100", "Rprec", "bpref", "RBP(p=0.8)", "Judged@10", "success.1,5",
                  "num_rel_ret", "infAP", "ERR@10", "iprec_at_recall", "gm_map", "NumQ",
                  "relstring", "P(rel=2)@3", "ndcg", "recall.5"]


def _drawn_files(folder, rng, name):
    """A qrels and a run file of drawn queries, documents, labels and scores (ties, judged
    queries absent from the run, run queries without judgments, unjudged documents)."""
    queries = [f"q{rng.randrange(1, 40)}" for _ in range(rng.randrange(3, 12))]
    qrels, run = [], []
    for q in dict.fromkeys(queries):
        docs = [f"d{rng.randrange(500)}" for _ in range(rng.randrange(1, 60))]
        if rng.random() < 0.85:
            qrels += [f"{q} 0 {d} {rng.choice([0, 0, 1, 2, 3])}" for d in dict.fromkeys(docs)]
        if rng.random() < 0.85:
            ranked = list(dict.fromkeys(docs + [f"d{rng.randrange(500)}" for _ in range(20)]))
            rng.shuffle(ranked)
            run += [f"{q} Q0 {d} {r} {round(rng.random(), rng.choice([1, 3, 6]))} drawn"
                    for r, d in enumerate(ranked, 1)]
    if not qrels:
        qrels.append("q999 0 d1 1")
    if not run:
        run.append("q999 Q0 d1 1 0.5 drawn")
    paths = folder / f"{name}.qrels", folder / f"{name}.run"
    paths[0].write_text("\n".join(qrels) + "\n")
    paths[1].write_text("\n".join(run) + "\n")
    return [str(p) for p in paths]


def _drawn_options(rng):
    options = {}
    for key, values in (("missing", ["zero", "skip"]), ("relevance_level", [1, 2, 3]),
                        ("max_docs", [None, 5, 20]), ("judged_only", [False, True]),
                        ("compat", [None, "9.0.8"]), ("ties", ["trec_eval"])):
        if rng.random() < 0.5:
            options[key] = rng.choice(values)
    return options


def test_drawn_files_measures_and_options(tmp_path, worker):
    rng = random.Random(29)
    calls = []
    for i in range(12):
        qrels, run = _drawn_files(tmp_path, rng, f"drawn{i}")
        measures = rng.sample(DRAWN_MEASURES, rng.randrange(1, 7))
        function = "evaluate_file" if i % 4 == 3 else "evaluate"
        calls.append((function, (qrels, run, measures), _drawn_options(rng), "always"))
    through_and_alone(tmp_path, worker, calls)


def _bad_files(folder):
    bad_line = folder / "bad.qrels"
    bad_line.write_text("q1 0 d1 1\nq1 0 d2\n")
    three = folder / "three.run"  # (three fields, the third not a rank: a warning)
    three.write_text("q1 d1 0.5\nq1 d2 0.7\nq2 d1 0.1\n")
    other = folder / "other.run"  # (no query in common with the qrels: a warning)
    other.write_text("zz Q0 d1 1 0.5 r\n")
    return str(bad_line), str(three), str(other)


def test_errors_and_warnings(tmp_path, worker):
    bad_line, three, other = _bad_files(tmp_path)
    calls = [("evaluate", (bad_line, RUN, MEASURES), {}, "always"),
             ("evaluate", (QRELS, RUN, ["nDGC@10"]), {}, "always"),
             ("evaluate", (QRELS, RUN, MEASURES), {"missing": "sometimes"}, "always"),
             ("evaluate", (QRELS, RUN, MEASURES), {"relevance_level": "high"}, "always"),
             ("evaluate", (QRELS, str(tmp_path / "absent.run"), MEASURES), {}, "always"),
             ("evaluate_file", (QRELS, RUN, MEASURES), {"chunk_bytes": 0}, "always"),
             ("evaluate", (QRELS, three, MEASURES), {}, "always"),
             ("evaluate", (QRELS, other, MEASURES), {}, "always"),
             ("evaluate", (QRELS, other, MEASURES), {}, "error"),
             ("evaluate", (QRELS, other, MEASURES), {}, "ignore")]
    outcomes = through_and_alone(tmp_path, worker, calls)
    assert [outcome[0] for outcome, _ in outcomes] == ["error"] * 6 + ["value"] * 2 + \
        ["error", "value"]
    assert [len(warned) for _, warned in outcomes] == [0] * 6 + [2, 1, 0, 0]


def _warns(level):
    warnings.warn(f"stacklevel {level}", UserWarning, stacklevel=level)
    return level


def _public(level):  # (as fastir.evaluate, which the caller calls)
    return _warns(level)


def _through(level, caller):
    """``_public(level)`` as the worker's process runs it, delivered as the client does."""
    reply = pickle.loads(pickle.dumps(library._outcome(_public, (level,), {})))
    return library._deliver(reply, caller)


def _user(level, direct):
    return _public(level) if direct else _through(level, sys._getframe())


@pytest.mark.parametrize("level", [1, 2, 3, 4, 99])
def test_a_warning_names_the_frame_it_names_in_process(level):
    """A warning names the same file and line (its stacklevel counted from where it is
    issued: fastir's own lines, the caller's, those above it, or none: "sys") through the
    worker as in-process, and goes through the same registry of warnings shown."""
    seen = []
    for direct in (True, False):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert (lambda: _user(level, direct))() == level
        seen.append([(w.category, str(w.message), w.filename, w.lineno) for w in caught])
    assert seen[0] == seen[1] and len(seen[0]) == 1


#: A warning shown once per line (the default filter) is shown once, also through the worker.
_TWICE = """
import pickle, sys
import fastir
for _ in range(2):
    fastir.evaluate(sys.argv[1], sys.argv[2], ["map"])
with open(sys.argv[3], "wb") as out:
    pickle.dump(None, out)
"""


def test_a_warning_shown_once_per_line(tmp_path, worker):
    _, _, other = _bad_files(tmp_path)
    code = tmp_path / "twice.py"
    code.write_text(_TWICE)
    errs = []
    for mode in ("use", "off"):
        done = subprocess.run([sys.executable, str(code), QRELS, other, str(tmp_path / "o")],
                              env={**worker.env, "FASTIR_WORKER": mode}, cwd=ROOT,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        errs.append(done.stderr)
    assert errs[0] == errs[1] and errs[0].count("FastirWarning") == 1, errs


#: Calls that stay in-process: (name, code run before the call, qrels, run and options).
_IN_PROCESS = {
    "a dict run": ("", "QRELS", "{'q1': {'d1': 1.0}}"),
    "ties in the run's order": ("", "QRELS", "RUN, ties='input'"),
    "expected values over ties": ("", "QRELS", "RUN, ties='expected'"),
    "unjudged as relevant": ("", "QRELS", "RUN, unjudged=('relevant', 2)"),
    "an open file": ("", "QRELS", "open(RUN)"),
    "stdin": ("", "QRELS", "'-'"),
    "several runs": ("", "QRELS", "{'a': RUN, 'b': RUN}"),
    "replaced stderr": ("import io; sys.stderr = io.StringIO()", "QRELS", "RUN"),
    "numba loaded": ("import numba", "QRELS", "RUN"),
    "a measure of its own": (
        "fastir.define_measure(lambda ranked, judged, n_rel: 1.0, name='one')",
        "QRELS", "RUN"),
}

_STAYS = """
import sys, threading
import fastir
QRELS, RUN = sys.argv[1], sys.argv[2]
{before}
def call():
    global res
    res = fastir.evaluate({qrels}, {run}, measures=["map"])
{how}
print(type(res).__name__, "numba" in sys.modules, file=sys.__stdout__)
"""


@pytest.mark.parametrize("case", [*_IN_PROCESS, "a thread"])
def test_calls_that_stay_in_process(worker, case, tmp_path):
    before, qrels, run = _IN_PROCESS.get(case, ("", "QRELS", "RUN"))
    how = ("t = threading.Thread(target=call); t.start(); t.join()" if case == "a thread"
           else "call()")
    code = _STAYS.format(before=before, qrels=qrels, run=run, how=how)
    served = worker.served()
    with open(RUN) as stdin:
        done = subprocess.run([sys.executable, "-c", code, QRELS, RUN], env=worker.env,
                              cwd=ROOT, capture_output=True, text=True, timeout=300,
                              stdin=stdin)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[0] in ("Results", "ResultsByRun")
    assert worker.served() == served, "the worker ran a call that must stay in-process"


_OWN_CLASS = """
import sys
import fastir

class Level(int):  # (pickled by name: no module of the worker's process has it)
    pass

res = fastir.evaluate(sys.argv[1], sys.argv[2], ["map", "P@5"], relevance_level=Level(2))
print(res.values.tobytes().hex())
"""


def test_an_option_the_worker_cannot_read_runs_in_process(worker):
    """An option of a class of the caller's script: the worker's process cannot unpickle it
    and leaves the call to the caller, which runs it in-process, saying nothing."""
    done = [subprocess.run([sys.executable, "-c", _OWN_CLASS, QRELS, RUN],
                           env={**worker.env, "FASTIR_WORKER": mode}, cwd=ROOT,
                           capture_output=True, text=True, timeout=300)
            for mode in ("use", "off")]
    assert [d.returncode for d in done] == [0, 0] and done[0].stderr == "", done[0].stderr
    assert done[0].stdout == done[1].stdout


def test_off_and_no_worker(tmp_path, worker):
    """FASTIR_WORKER=off: in-process; ``use`` with no worker running: in-process, silently
    (nothing started); then a worker that runs them."""
    calls = [("evaluate", (QRELS, RUN, MEASURES), {}, "always")]
    served = worker.served()
    off, numba, err = calls_in_a_process(tmp_path, {**worker.env, "FASTIR_WORKER": "off"},
                                         calls)
    assert worker.served() == served and err == ""
    empty = tmp_path / "none"
    alone, _, err = calls_in_a_process(
        tmp_path, {**worker.env, "FASTIR_WORKER_DIR": str(empty)}, calls, name="none")
    assert err == "" and not empty.exists(), "a worker was started, or its folder made"
    assert_same(off, alone, "no worker")


def test_a_library_call_starts_no_worker_unless_asked(tmp_path, worker):
    """FASTIR_WORKER unset (nor CI): a call uses a running worker, and with none it runs
    in-process and leaves no process behind (a library starts none its caller did not ask
    for; FASTIR_WORKER=auto asks: test_auto_starts_...)."""
    calls = [("evaluate_file", (QRELS, RUN, MEASURES), {}, "always")]
    env = {k: v for k, v in worker.env.items() if k not in ("FASTIR_WORKER", "CI")}
    served = worker.served()
    used, _, err = calls_in_a_process(tmp_path, env, calls, name="running")
    assert err == "" and worker.served() == served + 1
    empty = tmp_path / "none"
    alone, _, err = calls_in_a_process(tmp_path, {**env, "FASTIR_WORKER_DIR": str(empty)},
                                       calls, name="none")
    assert err == ""
    assert not empty.exists(), "a worker started, or its folder was made"
    assert not _worker_state({**env, "FASTIR_WORKER_DIR": str(empty)})
    assert_same(used, alone, "no worker")


def _worker_state(env):
    """``fastir worker status --json`` in ``env``: its answer ({} when none runs)."""
    done = subprocess.run([*PROGRAM, "worker", "status", "--json"],
                          env=env, cwd=ROOT, capture_output=True, text=True)
    return json.loads(done.stdout) if done.stdout.strip() else {}


def test_auto_starts_a_worker_that_the_next_call_uses(tmp_path):
    """The first call (no worker) runs in-process and starts one, which warms up only once
    that caller has ended (its warm-up would slow the caller down); the next call goes to
    it. The worker is ended by its pid."""
    home = tmp_path / "home"
    env = {**os.environ, "FASTIR_WORKER": "auto", "FASTIR_WORKER_DIR": str(home)}
    calls = [("evaluate", (QRELS, RUN, MEASURES), {}, "always")]
    (tmp_path / "first.in").write_bytes(pickle.dumps(calls))
    (tmp_path / "first.py").write_text(_CALLS + "sys.stdin.read()\n")  # (then waits)
    first = subprocess.Popen([sys.executable, str(tmp_path / "first.py"),
                              str(tmp_path / "first.in"), str(tmp_path / "first.out")],
                             env=env, cwd=ROOT, stdin=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    pid = None
    try:
        while not (tmp_path / "first.out").exists() and first.poll() is None:
            time.sleep(0.05)
        deadline = time.time() + 60
        state = _worker_state(env)
        while not state and time.time() < deadline:  # (until it has taken its lock)
            time.sleep(0.05)
            state = _worker_state(env)
        pid = state.get("pid")
        assert state.get("state") == "starting", state
        assert "serving" not in "".join(p.read_text() for p in home.glob("*.log"))
        _, err = first.communicate("", timeout=60)
        assert first.returncode == 0 and err == "", err
        deadline = time.time() + 600
        while state.get("state") != "serving" and time.time() < deadline:
            time.sleep(0.2)
            state = _worker_state(env)
        assert state.get("state") == "serving", "the worker did not start serving"
        alone, _ = pickle.loads((tmp_path / "first.out").read_bytes())
        second, numba, _ = calls_in_a_process(tmp_path, env, calls, name="second")
        assert not numba
        assert_same(alone, second, "auto")
        assert _worker_state(env)["served"] == 1
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
        if pid is not None:
            os.kill(pid, signal.SIGTERM)
            assert gone(pid, 60)


_INTERRUPTED = """
import sys
import fastir
try:
    fastir.evaluate(sys.argv[1], sys.argv[2], ["map"])
except KeyboardInterrupt:
    print("KeyboardInterrupt", flush=True)
"""


def test_ctrl_c_raises_keyboard_interrupt_and_ends_the_command(tmp_path, worker):
    """The run is a named pipe nobody writes: the command waits in it until the caller's
    Ctrl-C, which raises KeyboardInterrupt in the caller and ends the command."""
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)
    caller = subprocess.Popen([sys.executable, "-c", _INTERRUPTED, QRELS, str(fifo)],
                              env=worker.env, cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, preexec_fn=sigint_default)
    try:
        command = _running_command(worker)
        caller.send_signal(signal.SIGINT)
        out, err = caller.communicate(timeout=60)
    finally:
        if caller.poll() is None:
            caller.kill()
            caller.wait()
    assert caller.returncode == 0 and out == "KeyboardInterrupt\n", err
    assert gone(command), "the command's process runs on"
    assert _running_drops_to_zero(worker), "the worker still counts the ended command"


def _running_drops_to_zero(worker, seconds=20):
    """Whether the worker's count of running commands falls to 0 within ``seconds``: it
    reaps an ended command in its event loop, a moment after the process has ended."""
    deadline = time.time() + seconds
    while worker.status()["running"] != 0:
        if time.time() > deadline:
            return False
        time.sleep(0.05)
    return True


def _running_command(worker, seconds=120):
    """The pid of the process that runs a library call for ``worker`` (it holds the
    reply's anonymous file), once one runs."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        with open(f"/proc/{worker.pid}/task/{worker.pid}/children") as f:
            children = [int(p) for p in f.read().split()]
        running = [pid for pid in children if _holds_a_reply(pid)]
        if running:
            return running[0]
        time.sleep(0.05)
    raise AssertionError("the worker runs no library call")


def _holds_a_reply(pid):
    try:
        names = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
    except OSError:
        return False
    return any(name.startswith("/memfd:fastir-reply") for name in names)


def test_the_hidden_command_is_no_command_of_its_own():
    done = subprocess.run([*PROGRAM, "_call", "x"],
                          env={**os.environ, "FASTIR_WORKER": "off"}, cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == ("fastir _call: not a command (fastir's library calls use it to "
                           "run in a warm worker)\n")
