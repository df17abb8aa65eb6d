"""BENCHMARKS.md is rewritten case by case (scripts/bench_page.py): a case's run replaces its
own section and keeps the others; every row says its spread, the date and the load; the
page in the repository is made of the cases ``./dev bench`` knows, each row with its
command."""

import os
import re
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import bench_page  # noqa: E402

pytestmark = pytest.mark.one_engine
CASES = ["tiny", "trec", "msmarco", "dicts", "loops", "fusion", "streaming", "dask", "probability",
         "spark"]


def test_a_case_rewrites_its_section_only_and_keeps_the_others(tmp_path):
    page = tmp_path / "page.md"
    old = {case: bench_page.section(case, f"old {case}", "measured then", "| a |\n|---|\n| 1 |")
           for case in ("trec", "fusion")}
    bench_page.update(page, old, CASES)
    new = bench_page.section("trec", "new trec", "measured now", "| a |\n|---|\n| 2 |")
    bench_page.update(page, {"trec": new}, CASES)
    text = page.read_text()
    assert text.startswith(bench_page.HEAD)
    assert "new trec" in text and "old trec" not in text and "old fusion" in text
    bench_page.update(page, {"tiny": bench_page.section("tiny", "tiny", "t", "| b |")}, CASES)
    assert list(bench_page.sections(page.read_text())) == ["tiny", "trec", "fusion"]
    assert bench_page.sections(page.read_text())["fusion"] == old["fusion"]


def test_a_figure_is_its_median_with_its_fastest_and_slowest():
    assert bench_page.spread([0.3, 0.1, 0.2]) == "0.200 (0.100-0.300)"
    assert bench_page.spread([0.0123], scale=1e3, digits=1) == "12.3"
    assert bench_page.spread([]) == ""


def test_runs_alternate_and_the_load_is_seen_between_them():
    order = []
    loads = bench_page.Loads()
    times = bench_page.alternated({"a": lambda: order.append("a") or 1.0,
                                   "b": lambda: order.append("b") or 2.0}, 2, loads)
    assert order == ["a", "b"] * 3 and times == {"a": [1.0, 1.0], "b": [2.0, 2.0]}
    assert len(loads.seen) == 7
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d, load \d+\.\d(-\d+\.\d)?", loads.text())


def test_the_page_has_a_section_per_case_and_each_row_its_command_date_and_load():
    import bench

    assert list(bench.CASES) == CASES
    with open(os.path.join(ROOT, "BENCHMARKS.md")) as f:
        text = f.read()
    assert text.startswith(bench_page.HEAD)
    found = bench_page.sections(text)
    assert list(found) == CASES + list(bench_page.ONE_OFF)
    for case, section in found.items():
        rows = [line for line in section.splitlines() if line.startswith("| ")
                and not line.startswith(("| system", "| run dict", "| scenario", "| method",
                                         "| way", "| what", "| labels"))]
        assert rows, case
        for row in rows:
            assert "`" in row, (case, row)  # (its command or call)
            assert re.search(r"\d{4}-\d\d-\d\d.*load (\d|not recorded, \*carried over)",
                             row), (case, row)
