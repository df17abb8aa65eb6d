"""Adapter: runs pytrec_eval's own test file or one of its examples with `import pytrec_eval`
answered by pytrec_eval itself (peer) or by fastir.pytrec_eval (fastir).

    python pytrec_eval_run.py {peer|fastir} tests path/to/pytrec_eval_tests.py
    python pytrec_eval_run.py {peer|fastir} example path/to/example.py [args...]

`tests` runs the file as its README does (python tests/pytrec_eval_tests.py), as __main__,
where it adds its comparisons with trec_eval's outputs and calls unittest.main(), and prints
one `PASSED|FAILED|ERROR|SKIPPED <test id>` line per test, the form scripts/peer_suites.py
reads from pytest's -rA summary. `example` runs the script as __main__.
"""

import runpy
import sys
import unittest

which, mode, path = sys.argv[1], sys.argv[2], sys.argv[3]
if which == "fastir":
    import fastir.pytrec_eval

    sys.modules["pytrec_eval"] = fastir.pytrec_eval
elif which != "peer":
    sys.exit(f"unknown module {which!r}: peer or fastir")

if mode == "example":
    sys.argv = sys.argv[3:]
    runpy.run_path(path, run_name="__main__")
    sys.exit(0)


class Result(unittest.TextTestResult):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.outcomes = []

    def addSuccess(self, test):
        super().addSuccess(test)
        self.outcomes.append(("PASSED", test))

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.outcomes.append(("FAILED", test))

    def addError(self, test, err):
        super().addError(test, err)
        self.outcomes.append(("ERROR", test))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self.outcomes.append(("SKIPPED", test))


def main(*args, **kwargs):
    """Stands in for the file's closing unittest.main(): the same tests (the file adds its
    trec_eval comparisons in its __main__ block), with one outcome line per test."""
    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules["__main__"])
    result = unittest.TextTestRunner(resultclass=Result, verbosity=2, stream=sys.stderr).run(suite)
    for outcome, test in result.outcomes:
        print(outcome, test.id().replace("__main__.", "", 1))


unittest.main = main
sys.argv = [path]
runpy.run_path(path, run_name="__main__")
