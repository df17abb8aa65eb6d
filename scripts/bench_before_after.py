"""Before and after a change, in one alternated run: scripts/bench_calls.py run from two
checkouts in ABBA order (on this machine the second of two back-to-back processes runs
slower), then the medians of each call's medians as a Markdown table.

    python scripts/bench_before_after.py BEFORE_TREE [--after .] [--rounds 12]

Make BEFORE_TREE with ``git worktree add /tmp/before COMMIT`` and warm it up once (its
kernels compile into its own tree); both trees need data/trec50.* (``python -m fastir
example`` writes them).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from datetime import date
from pathlib import Path

SCRIPT = Path(__file__).resolve().with_name("bench_calls.py")


def one(tree, out):
    """bench_calls.py's timings from ``tree`` (its fastir, its data)."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    subprocess.run([sys.executable, str(SCRIPT), out], cwd=tree, env=env, check=True,
                   stderr=subprocess.DEVNULL)
    return json.loads(Path(out).read_text())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("--after", type=Path, default=Path("."))
    parser.add_argument("--rounds", type=int, default=12)
    args = parser.parse_args(argv)
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    found = {"before": [], "after": []}
    loads = []
    with tempfile.TemporaryDirectory() as folder:
        out = str(Path(folder) / "out.json")
        for i in range(args.rounds):
            for side in ("before", "after") if i % 2 == 0 else ("after", "before"):
                found[side].append(one(trees[side], out))
            loads.append(os.getloadavg()[0])
    when = f"{date.today()}, load {min(loads):.1f}-{max(loads):.1f}"
    print("| what | before | after | after / before | when |\n|---|---:|---:|---:|---|")
    for name in found["before"][0]:
        before, after = (statistics.median(t[name] for t in found[side])
                         for side in ("before", "after"))
        print(f"| `{name}` | {before * 1e3:.3f} ms | {after * 1e3:.3f} ms "
              f"| {after / before:.2f} | {when} |")


if __name__ == "__main__":
    main()
