"""Wall time and peak memory of one large run evaluated in memory, streamed, and through dask.

    python scripts/generate.py msmarco --queries 60000 --depth 1000 --out /tmp/bench
    python scripts/bench_streaming.py /tmp/bench.qrels /tmp/bench.run

Each way runs in a fresh process (after a warm-up process compiled the kernels), timed by
``/usr/bin/time`` when present, else by the process's own clock and ``getrusage``; every
way's means are checked equal to the in-memory ones.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

MEASURES = ["RR@10", "nDCG@10", "AP", "R@1000", "NumRet"]

CODE = {
    "memory": "fastir.evaluate(qrels, run, M).mean",
    "streamed": "fastir.evaluate_file(qrels, run, M, chunk_bytes={chunk}).mean",
    "dask": ("__import__('fastir.scale.dask').dask.evaluate("
             "__import__('dask.dataframe').dataframe.read_csv(run, sep=' ', header=None, "
             "names=['query_id', 'q0', 'doc_id', 'rank', 'score', 'tag'], "
             "dtype={{'query_id': str, 'doc_id': str}}, float_precision='round_trip', "
             "blocksize={chunk}), qrels, M)"),
}


def script(way, qrels, run, chunk, out):
    setup = "" if way != "dask" else ("import dask; dask.config.set(scheduler='processes', "
                                      "num_workers=os.cpu_count())\n")
    return (f"import json, os, resource, time\nimport fastir\n{setup}"
            f"qrels, run, M = {qrels!r}, {run!r}, {MEASURES!r}\n"
            "t = time.perf_counter()\n"
            f"mean = {CODE[way].format(chunk=chunk)}\n"
            "seconds = time.perf_counter() - t\n"
            "own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
            "kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
            f"json.dump({{'mean': mean, 'seconds': seconds, 'rss_kb': own, "
            f"'children_rss_kb': kids}}, open({out!r}, 'w'))\n")


def run_way(way, args, folder):
    out = os.path.join(folder, f"{way}.json")
    code = script(way, args.qrels, args.run, args.chunk_bytes, out)
    timer = "/usr/bin/time" if os.path.exists("/usr/bin/time") else None
    command = [sys.executable, "-c", code]
    if timer:
        command = [timer, "-f", "%e s %M KB"] + command
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode:
        sys.exit(f"{way} failed:\n{done.stderr}")
    result = json.load(open(out))
    result["process_seconds"] = wall
    if timer:
        result["time"] = done.stderr.strip().splitlines()[-1]
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("qrels")
    parser.add_argument("run")
    parser.add_argument("--chunk-bytes", type=int, default=64 << 20)
    parser.add_argument("--ways", default="memory,streamed,dask")
    args = parser.parse_args()
    size = os.path.getsize(args.run)
    print(f"run: {args.run}, {size / 1e9:.2f} GB; measures {MEASURES}; chunk "
          f"{args.chunk_bytes >> 20} MB; {os.cpu_count()} cores")
    subprocess.run([sys.executable, "-m", "fastir", "warmup"], check=True,
                   capture_output=True)
    reference = None
    with tempfile.TemporaryDirectory() as folder:
        for way in args.ways.split(","):
            r = run_way(way, args, folder)
            reference = reference or r["mean"]
            same = "equal" if r["mean"] == reference else "DIFFERENT"
            rss = max(r["rss_kb"], r["children_rss_kb"]) / 1024
            print(f"{way:9s} {r['seconds']:7.1f} s in the call, {r['process_seconds']:6.1f} s "
                  f"the process, peak RSS {rss:7.0f} MB (time: {r.get('time', '-')}); "
                  f"means {same}")


if __name__ == "__main__":
    main()
