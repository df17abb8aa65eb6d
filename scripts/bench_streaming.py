"""Wall time, CPU time and peak memory of one large run evaluated in memory, streamed, and
through dask.

    python scripts/generate.py msmarco --queries 60000 --depth 1000 --out /tmp/bench
    python scripts/bench_streaming.py /tmp/bench.qrels /tmp/bench.run

Each way runs in a fresh process (after a warm-up process compiled the kernels; with
``FASTIR_WORKER=off``: the call runs there, not in a warm worker), timed by
``/usr/bin/time`` when present, else by the process's own clock and ``getrusage``; every
way's means are checked equal to the in-memory ones. The CPU seconds of the call (the
process's and its waited-for children's, user and system) give the throughput per core
used: rows per CPU second, and its ratio to the streamed way's.

Ways: ``memory`` (:func:`fastir.evaluate`), ``streamed`` (:func:`fastir.evaluate_file`),
``dask`` (``fastir.dask.read_trec_run`` in ``--chunk-bytes`` blocks, evaluated by
``fastir.dask.evaluate`` with dask's processes scheduler, ``--workers`` processes),
``dask-sync`` and ``dask-threads`` (the same with the synchronous scheduler, one core, or
the threads scheduler) and ``dask-csv`` (the run read by ``dask.dataframe.read_csv``
instead, processes scheduler) and ``dask-cluster`` (a distributed LocalCluster of
``--workers`` one-thread processes, started and warmed by one call before the call timed; its
workers' CPU seconds and peak memory read from ``/proc``).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

MEASURES = ["RR@10", "nDCG@10", "AP", "R@1000", "NumRet"]

DASK_RUN = "__import__('fastir.dask').dask.read_trec_run(run, blocksize={chunk})"
DASK_CSV = ("__import__('dask.dataframe').dataframe.read_csv(run, sep=' ', header=None, "
            "names=['query_id', 'q0', 'doc_id', 'rank', 'score', 'tag'], "
            "dtype={{'query_id': str, 'doc_id': str}}, float_precision='round_trip', "
            "blocksize={chunk})")
DASK = "__import__('fastir.dask').dask.evaluate({frame}, qrels, M)"

CODE = {
    "memory": "fastir.evaluate(qrels, run, M).mean",
    "streamed": "fastir.evaluate_file(qrels, run, M, chunk_bytes={chunk}).mean",
    "dask": DASK.format(frame=DASK_RUN),
    "dask-sync": DASK.format(frame=DASK_RUN),
    "dask-threads": DASK.format(frame=DASK_RUN),
    "dask-csv": DASK.format(frame=DASK_CSV),
    "dask-cluster": DASK.format(frame=DASK_RUN),
}
SCHEDULER = {"dask": "processes", "dask-sync": "synchronous", "dask-threads": "threads",
             "dask-csv": "processes"}


SCRIPT = """import json, os, resource, time
import fastir
{setup}

def ticks(pid, field):
    with open(f"/proc/{{pid}}/{{field}}") as f:
        return f.read()


def cpu(pids):
    own = sum(getattr(resource.getrusage(who), f) for who in (resource.RUSAGE_SELF,
              resource.RUSAGE_CHILDREN) for f in ("ru_utime", "ru_stime"))
    return own + sum(sum(map(int, ticks(pid, "stat").rsplit(")", 1)[1].split()[11:13]))
                     for pid in pids) / os.sysconf("SC_CLK_TCK")


def cluster(workers):
    import distributed

    client = distributed.Client(distributed.LocalCluster(
        n_workers=workers, threads_per_worker=1, dashboard_address=None))
    return list(client.run(os.getpid).values())


if __name__ == "__main__":
    qrels, run, M = {qrels!r}, {run!r}, {measures!r}
    pids = {pids}
    {warm}
    t, c = time.perf_counter(), cpu(pids)
    mean = {call}
    seconds, cpu_seconds = time.perf_counter() - t, cpu(pids) - c
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = max([resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss] + [
        int(line.split()[1]) for pid in pids for line in ticks(pid, "status").splitlines()
        if line.startswith("VmHWM")])
    json.dump({{"mean": mean, "seconds": seconds, "cpu_seconds": cpu_seconds, "rss_kb": own,
               "children_rss_kb": kids}}, open({out!r}, "w"))
"""


def script(way, qrels, run, chunk, workers, out):
    """The code of one way: the call timed, with the CPU seconds of this process, its
    waited-for children and (a cluster) its workers."""
    setup = "" if way not in SCHEDULER else (
        f"import dask\ndask.config.set(scheduler={SCHEDULER[way]!r}, num_workers={workers})")
    call = CODE[way].format(chunk=chunk)
    in_cluster = way == "dask-cluster"
    return SCRIPT.format(setup=setup, qrels=qrels, run=run, measures=MEASURES, out=out,
                         pids=f"cluster({workers})" if in_cluster else "[]",
                         warm=call if in_cluster else "", call=call)


def run_way(way, args, folder):
    out = os.path.join(folder, f"{way}.json")
    code = os.path.join(folder, f"bench_{way}.py")  # (a file: dask workers import it)
    with open(code, "w") as f:
        f.write(script(way, args.qrels, args.run, args.chunk_bytes, args.workers, out))
    timer = "/usr/bin/time" if os.path.exists("/usr/bin/time") else None
    command = [sys.executable, code]
    if timer:
        command = [timer, "-f", "%e s %U user %S sys %M KB"] + command
    start = time.perf_counter()
    # (in this process: a call on files would otherwise go to a warm worker)
    done = subprocess.run(command, capture_output=True, text=True,
                          env={**os.environ, "FASTIR_WORKER": "off"})
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
    parser.add_argument("--workers", type=int, default=os.cpu_count(),
                        help="dask's worker processes (default: the cores)")
    args = parser.parse_args()
    size = os.path.getsize(args.run)
    rows = _lines(args.run)
    print(f"run: {args.run}, {size / 1e9:.2f} GB, {rows:,} lines; measures {MEASURES}; chunk "
          f"{args.chunk_bytes >> 20} MB; {os.cpu_count()} cores, dask workers {args.workers}")
    subprocess.run([sys.executable, "-m", "fastir", "warmup"], check=True,
                   capture_output=True)
    reference, streamed = None, None
    with tempfile.TemporaryDirectory() as folder:
        for way in args.ways.split(","):
            load = os.getloadavg()[0]
            r = run_way(way, args, folder)
            reference = reference or r["mean"]
            same = "equal" if r["mean"] == reference else "DIFFERENT"
            rss = max(r["rss_kb"], r["children_rss_kb"]) / 1024
            per_core = rows / r["cpu_seconds"]
            streamed = per_core if way == "streamed" else streamed
            versus = f" ({streamed / per_core:4.1f}x streamed's)" if streamed else ""
            print(f"{way:12s} {r['seconds']:7.2f} s in the call ({r['cpu_seconds']:6.2f} CPU s: "
                  f"{per_core / 1e6:5.2f} M rows/s per core{versus}), {r['process_seconds']:6.1f} "
                  f"s the process, peak RSS {rss:7.0f} MB (time: {r.get('time', '-')}); "
                  f"load {load:.1f}; means {same}", flush=True)


def _lines(path):
    """The newlines of a (plain) file."""
    count = 0
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 24), b""):
            count += block.count(b"\n")
    return count


if __name__ == "__main__":
    main()
