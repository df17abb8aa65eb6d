"""Wall time, CPU time and peak memory of one large run evaluated in memory, streamed, and
through dask: BENCHMARKS.md's "streaming" and "dask" sections (``./dev bench --case
streaming,dask``), or a table printed for the files given.

    python scripts/bench_streaming.py data/msmarco-dev.qrels data/msmarco-dev.run \
        --ways streamed,memory --rounds 3

Each way runs in a fresh process (after a warm-up process compiled the kernels; with
``FASTIR_WORKER=off``: the call runs there, not in a warm worker), the ways alternated,
``--rounds`` times after an untimed round, timed by the process's own clock and
``getrusage``; every way's means are checked equal. The CPU seconds of the call (the
process's and its waited-for children's, user and system) give the throughput per core
used: rows per CPU second, and the CPU seconds over the streamed way's.

Ways: ``memory`` (:func:`fastir.evaluate`), ``streamed`` (:func:`fastir.evaluate_file`;
``streamed-16`` in 16 MB chunks),
``dask`` (``fastir.dask.read_trec_run`` in ``--chunk-bytes`` blocks, evaluated by
``fastir.dask.evaluate`` with dask's processes scheduler, ``--workers`` processes),
``dask-sync`` and ``dask-threads`` (the same with the synchronous scheduler, one core, or
the threads scheduler) and ``dask-csv`` (the run read by ``dask.dataframe.read_csv``
instead, processes scheduler) and ``dask-cluster`` (a distributed LocalCluster of
``--workers`` one-thread processes, started and warmed by one call before the call timed; its
workers' CPU seconds and peak memory read from ``/proc``).
"""

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile

import bench_page
from bench_page import ROOT, Loads, alternated, spread, table

MEASURES = ["RR@10", "nDCG@10", "AP", "R@1000", "NumRet"]

DASK_MODULE = "__import__('fastir.dask').dask"
DASK_RUN = DASK_MODULE + ".read_trec_run(run, blocksize={chunk})"
DASK_CSV = ("__import__('dask.dataframe').dataframe.read_csv(run, sep=' ', header=None, "
            "names=['query_id', 'q0', 'doc_id', 'rank', 'score', 'tag'], "
            "dtype={{'query_id': str, 'doc_id': str}}, float_precision='round_trip', "
            "blocksize={chunk})")
DASK = DASK_MODULE + ".evaluate({frame}, qrels, M)"

CODE = {
    "memory": "fastir.evaluate(qrels, run, M).mean",
    "streamed": "fastir.evaluate_file(qrels, run, M, chunk_bytes={chunk}).mean",
    "streamed-16": "fastir.evaluate_file(qrels, run, M, chunk_bytes={chunk}).mean",
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
    call = CODE[way].format(chunk=_chunk(way, chunk))
    in_cluster = way == "dask-cluster"
    return SCRIPT.format(setup=setup, qrels=qrels, run=run, measures=MEASURES, out=out,
                         pids=f"cluster({workers})" if in_cluster else "[]",
                         warm=call if in_cluster else "", call=call)


def run_way(way, args, folder):
    """One fresh process of ``way``: its call's mean, seconds, CPU seconds and peak RSS."""
    out = os.path.join(folder, f"{way}.json")
    code = os.path.join(folder, f"bench_{way}.py")  # (a file: dask workers import it)
    with open(code, "w") as f:
        f.write(script(way, args.qrels, args.run, args.chunk_bytes, args.workers, out))
    # (in this process: a call on files would otherwise go to a warm worker)
    done = subprocess.run([sys.executable, code], capture_output=True, text=True,
                          env={**os.environ, "FASTIR_WORKER": "off"})
    if done.returncode:
        sys.exit(f"{way} failed:\n{done.stderr}")
    with open(out) as f:
        return json.load(f)


def ways_rows(qrels, run, ways, rounds, chunk_bytes=64 << 20, workers=None):
    """Each way in fresh processes, alternated way by way, ``rounds`` times after one
    untimed round; the table's rows (every way's means checked equal)."""
    args = argparse.Namespace(qrels=qrels, run=run, chunk_bytes=chunk_bytes,
                              workers=workers or os.cpu_count())
    rows, loads = _lines(run), Loads()
    results = {way: [] for way in ways}
    with tempfile.TemporaryDirectory() as folder:
        def call(way):
            def timed_call():
                results[way].append(run_way(way, args, folder))
                return results[way][-1]["seconds"]
            return timed_call
        seconds = alternated({way: call(way) for way in ways}, rounds, loads)
    reference = results[ways[0]][0]["mean"]
    cpu = {way: statistics.median(r["cpu_seconds"] for r in results[way][1:]) for way in ways}
    out = []
    for way in ways:
        if any(r["mean"] != reference for r in results[way]):
            sys.exit(f"{way}: means differ from {ways[0]}'s")
        timed = results[way][1:]
        rss = max(max(r["rss_kb"], r["children_rss_kb"]) for r in timed) / 1024
        versus = f"{cpu[way] / cpu['streamed']:.2f}x" if "streamed" in cpu else ""
        call = CODE[way].format(chunk=_chunk(way, chunk_bytes))
        out.append([way, f"`{call.replace(DASK_MODULE, 'fastir.dask')}`",
                    spread(seconds[way], digits=2), f"{cpu[way]:.2f}",
                    f"{rows / cpu[way] / 1e6:.2f}", versus, f"{rss:.0f}", len(seconds[way]),
                    loads.text()])
    return out


def _chunk(way, chunk_bytes):
    return "16 << 20" if way == "streamed-16" else f"{chunk_bytes >> 20} << 20"


HEADER = [("way", "l"), ("call", "l"), ("in the call (s), median (min-max)", "r"),
          ("CPU (s)", "r"), ("M rows per CPU s", "r"), ("CPU / streamed's", "r"),
          ("peak RSS (MB)", "r"), ("runs", "r"), ("when, load", "l")]
#: The runs: (generate.py's arguments; lines of it kept: its first queries), smoke's.
RUNS = {"2.5 GB": ("msmarco --queries 60000 --depth 1000 --out data/msmarco60k", None),
        "0.21 GB": ("msmarco --queries 60000 --depth 1000 --out data/msmarco60k", 5_000_000),
        "smoke": ("msmarco --queries 200 --depth 100 --out data/smoke-msmarco", None)}


def data(name):
    """The qrels and run files of one of :data:`RUNS`, generated when missing."""
    generate, keep = RUNS[name]
    out = str(ROOT / generate.split("--out ")[1])
    if not os.path.exists(out + ".run"):
        subprocess.run([sys.executable, str(ROOT / "scripts/generate.py"), *generate.split()],
                       check=True, cwd=ROOT)
    if keep is None:
        return out + ".qrels", out + ".run"
    part = f"{out}-{keep}"
    if not os.path.exists(part + ".run"):
        with open(out + ".run", "rb") as f, open(part + ".run", "wb") as g:
            g.writelines(itertools.islice(f, keep))
    return out + ".qrels", part + ".run"


def _section(case, title, text, runs, ways, smoke, repeat):
    tables = []
    for name in ["smoke"] if smoke else runs:
        qrels, run = data(name)
        rows = ways_rows(qrels, run, ways, repeat or (2 if smoke else 3))
        tables.append(f"{name} run, `{os.path.relpath(run, ROOT)}` ({_lines(run):,} lines; "
                      f"`python scripts/generate.py {RUNS[name][0]}`"
                      + (f", its first {RUNS[name][1]:,} lines" if RUNS[name][1] else "")
                      + "):\n\n" + table(HEADER, rows))
    return bench_page.section(case, title, text, "\n\n".join(tables))


def streaming_section(smoke=False, repeat=None):
    """The streaming section of BENCHMARKS.md: a 2.5 GB run in memory and streamed."""
    return _section("streaming", "Streaming a run bigger than memory", (
        "`fastir.evaluate_file` (query-complete chunks) against `fastir.evaluate` (the whole "
        f"run in memory) on a run file, measures M = {MEASURES}: each way in a fresh process "
        "(in-process, `FASTIR_WORKER=off`, after `fastir warmup`), ways alternated; the "
        "call's wall and CPU seconds, the process's peak RSS; means equal."),
        ["2.5 GB"], ["streamed", "memory", "streamed-16"], smoke, repeat)


def dask_section(smoke=False, repeat=None):
    """The dask section of BENCHMARKS.md: fastir.dask against evaluate_file."""
    return _section("dask", "Dask", (
        "`fastir.dask.evaluate` on `fastir.dask.read_trec_run`'s 64 MB blocks, with dask's "
        "processes scheduler (2 workers, started in every call) and on a warm local "
        "`distributed` cluster (2 one-thread workers, warmed by one call first; the "
        "workers' CPU counted), against `fastir.evaluate_file`: each way in a fresh process, "
        f"ways alternated, measures M = {MEASURES}; per-core throughput is rows per CPU "
        "second; means equal."),
        ["0.21 GB", "2.5 GB"], ["streamed", "dask", "dask-cluster"], smoke, repeat)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("qrels")
    parser.add_argument("run")
    parser.add_argument("--chunk-bytes", type=int, default=64 << 20)
    parser.add_argument("--ways", default="streamed,memory,dask")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=os.cpu_count(),
                        help="dask's worker processes (default: the cores)")
    args = parser.parse_args()
    subprocess.run([sys.executable, "-m", "fastir", "warmup"], check=True,
                   capture_output=True)
    print(table(HEADER, ways_rows(args.qrels, args.run, args.ways.split(","), args.rounds,
                                  args.chunk_bytes, args.workers)))


def _lines(path):
    """The newlines of a (plain) file."""
    count = 0
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 24), b""):
            count += block.count(b"\n")
    return count


if __name__ == "__main__":
    main()
