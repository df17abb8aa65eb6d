"""Time estimates come from measurements and scale with the load (fastir._estimate), and
every step that takes a while says its estimate before it starts: ``./dev``'s steps,
``fastir warmup`` and its steps, a first compile."""

import os
import re
import subprocess
import sys
import types

import pytest

from fastir._estimate import COMPILE_SECONDS, Measured, about, compiling, seconds
from fastir.cli.warmup import STEPS, estimate, plan

pytestmark = pytest.mark.one_engine
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEV = os.path.join(ROOT, "dev")


def test_an_estimate_at_the_measured_load_is_the_measurement():
    measured = Measured(100, load=3.0)
    assert seconds(measured, loads=(2.0,), cores=2) == (100, 100)  # (2 others + itself)
    assert seconds(measured, processes=2, loads=(1.0,), cores=2) == (100, 100)


def test_an_estimate_grows_with_the_load_and_never_goes_below_an_idle_machine():
    measured = Measured(100, load=2.0)  # (its slowdown then: 1, an idle machine's)
    low, high = seconds(measured, loads=(0.0, 3.0, 9.0), cores=2)
    assert (low, high) == (100, 500)  # (idle: a core of its own; load 9: 10 / 2 cores)
    assert seconds(Measured(100, load=6.0), loads=(5.0,), cores=2) == (100, 100)
    assert seconds(measured, loads=(0.0,), cores=8) == (100, 100)


def test_more_cores_share_the_load():
    measured = Measured(120, load=4.0)  # (slowdown 2 on 2 cores)
    assert seconds(measured, loads=(3.0,), cores=4) == (60, 60)


def test_about_says_a_range_when_the_load_averages_differ_and_the_load_now():
    measured = Measured(40, load=2.0)
    assert about(measured, loads=(1.0, 1.0, 1.0), cores=2) == (
        "about 40 s at this machine's load (1.0 on 2 cores)")
    assert about(measured, loads=(5.0, 3.0, 1.0), cores=2) == (
        "about 40-120 s at this machine's load (5.0 on 2 cores)")
    assert about(Measured(955, 3.0), 2, loads=(4.0, 2.0, 0.5), cores=2) == (
        "about 13-32 minutes at this machine's load (4.0 on 2 cores)")


def test_the_warmup_plan_and_its_estimate_come_from_the_measured_steps():
    assert sorted(key for group in plan(3) for key in group) == sorted(STEPS)
    idle = compiling(*STEPS).seconds  # (one process compiles every step)
    assert estimate(plan(1), loads=(0.0,)).startswith(f"about {idle} s at this machine's")
    two = plan(2)
    longest = max(sum(COMPILE_SECONDS[key] for key in group) for group in two)
    assert estimate(two, loads=(0.0,), cores=2).startswith(  # (a core each, idle)
        f"about {COMPILE_SECONDS['shared'] + longest} s")


def test_every_step_of_dev_says_its_estimate():
    """Each pip extra ./dev installs has a measurement; the venv, pip and the suite say an
    estimate (what `say` prints) before they start."""
    with open(DEV) as f:
        text = f.read().replace("\\\n", " ")  # (a command's lines joined)
    extras = set(re.findall(r'ensure_env "?(\w*)"?', text)) - {""}
    took = set(re.findall(r"\[(\w+)\]=", text)) | set(re.findall(r"PIP_TOOK\[(\w+)\]=", text))
    assert extras and extras | {"core"} <= took, (extras, took)
    for step in ("VENV_TOOK", "PIP_TOOK[", "SUITE_TOOK"):
        assert re.search(r"\n\s*say .*" + re.escape(step), text), step


def test_dev_s_estimates_run_without_an_environment():
    """./dev says its first estimate before any environment exists: python3 -m
    fastir._estimate with the standard library only."""
    code = ("import sys, runpy; sys.argv = ['x', '9', '2.2']; "
            "runpy.run_module('fastir._estimate', run_name='__main__'); "
            "print(sorted(m.split('.')[0] for m in sys.modules if m.startswith(('numpy', "
            "'numba'))))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, check=True)
    said, imported = done.stdout.splitlines()
    assert re.fullmatch(r"about \d+(-\d+)? s at this machine's load \(\d+\.\d on \d+ cores\)",
                        said), said
    assert imported == "[]"


def test_a_first_compile_says_its_estimate_once(capsys):
    from fastir import _jit

    note = _jit._compile_note(object)  # (numba's listener base: any class)
    kernel = types.SimpleNamespace(py_func=types.SimpleNamespace(__module__="fastir.x"))
    event = types.SimpleNamespace(data={"dispatcher": kernel})
    note.on_start(event)
    note.on_start(event)
    said = capsys.readouterr().err
    assert said.count("fastir: compiling numba kernels") == 1, said
    assert re.search(r"once \(cached on disk\): about \d+(-\d+)? (s|minutes) at this "
                     r"machine's load \(\d+\.\d on \d+ cores\)\. `fastir warmup`", said), said
