"""The command line for people: ``fastir eval``, ``compare`` (``eval --compare``), ``stats``,
``agree``, ``plot``, ``fuse`` and ``pool``. Exit status 0 on success, 1 on bad input (the
message names the file and line and what to do) or output that cannot be written whole
(:mod:`fastir.output.writing`), 2 on bad usage."""

import argparse
import csv
import glob
import io
import json
import os
import sys
import warnings

from fastir.output.tables import FORMATS, cell, format_rows, plain
from fastir.output.writing import OutputError, write_stdout

DEFAULT_MEASURES = ["nDCG@10", "AP", "RR@10", "R@1000", "P@10"]
INPUT_STATUS = 1


class _Parser(argparse.ArgumentParser):
    def __init__(self, prog, description, example):
        super().__init__(prog=f"fastir {prog}", description=description,
                         epilog=f"example:\n  {example}\n",
                         formatter_class=argparse.RawDescriptionHelpFormatter)


def _fail(command, message):
    print(f"fastir {command}: error: {message}", file=sys.stderr)
    return INPUT_STATUS


def _guarded(command, function, argv):
    """Run a command: input errors become one line on stderr and exit status 1; warnings
    print as one line each."""
    from fastir.measures.registry import UnknownMeasureError
    from fastir.model.data import InputError

    def show(message, category, filename, lineno, file=None, line=None):
        print(f"fastir {command}: warning: {message}", file=sys.stderr)

    with warnings.catch_warnings():
        warnings.showwarning = show
        try:
            return function(argv)
        except (InputError, UnknownMeasureError, ValueError, ImportError) as exc:
            _not_by_ctrl_c(exc)
            return _fail(command, str(exc))
        except (BrokenPipeError, OutputError):  # the reader left (fastir fuse ... | head), a
            raise  # full disk, a closed stream: main's to handle
        except OSError as exc:
            _not_by_ctrl_c(exc)
            return _fail(command, f"{exc.filename or ''}: {exc.strerror or exc}")


def _not_by_ctrl_c(exc):
    """An error a Ctrl-C caused is the Ctrl-C (:func:`fastir.cli.main.dispatch` says so)."""
    from fastir.cli.interrupt import by_ctrl_c

    if by_ctrl_c(exc):
        raise KeyboardInterrupt from None


# -- fastir eval --------------------------------------------------------------------------
def _add_evaluation_options(parser):
    parser.add_argument("-m", "--measure", action="append", metavar="MEASURE",
                        help="a measure, any dialect (nDCG@10, ndcg_cut_10, ndcg@10); "
                        f"repeat for more; default {', '.join(DEFAULT_MEASURES)}")
    parser.add_argument("--define", action="append", metavar="MODULE:FUNCTION",
                        help="define a measure by a per-query function (fastir."
                        "define_measure; a module importable from here, or path.py); -m "
                        "names it (without -m: the defaults and it); repeat for more")
    parser.add_argument("--rel-level", type=_level, default=1, metavar="N",
                        help="relevant means label >= N (default 1; a real number with "
                        "--labels float)")
    parser.add_argument("--labels", choices=("int", "float", "probability"), default="int",
                        help="qrels labels are integers, as trec_eval's (int, the default), "
                        "real numbers >= 0 (float: 0.7; the measures that need integers "
                        "are refused by name), or probabilities of relevance in [0, 1] "
                        "(probability: each value expected over the labels)")
    parser.add_argument("--samples", type=int, default=1000, metavar="N",
                        help="--labels probability: the label assignments drawn for a query "
                        "that has more than 1,024 (default 1000)")
    parser.add_argument("--label-seed", type=int, default=0, metavar="N",
                        help="--labels probability: the seed they are drawn with (default 0)")
    parser.add_argument("--missing", choices=("zero", "skip"), default="zero",
                        help="judged queries absent from a run score 0 (default) or are "
                        "skipped")
    parser.add_argument("--max-docs", type=int, metavar="N",
                        help="evaluate only the top N documents of each query")
    parser.add_argument("--judged-only", action="store_true",
                        help="drop unjudged documents first")
    parser.add_argument("--num-docs", type=int, default=0, metavar="N",
                        help="collection size (Utility, Accuracy)")
    parser.add_argument("--ties", choices=("trec_eval", "input", "expected"),
                        default="trec_eval",
                        help="equal scores ordered by doc id descending (trec_eval, the "
                        "default), in the run's order (input), or every order, the value "
                        "being their mean (expected)")
    parser.add_argument("--unjudged", type=_unjudged, default="nonrelevant",
                        metavar="{nonrelevant,relevant,relevant:LABEL}",
                        help="retrieved documents absent from the qrels count as "
                        "non-relevant (the default) or as judged at LABEL (relevant: 1)")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="a progress bar on stderr (default: when it is a terminal)")


def _evaluation_options(args):
    return {"relevance_level": args.rel_level, "missing": args.missing,
            "max_docs": args.max_docs, "judged_only": args.judged_only,
            "num_docs": args.num_docs, "ties": args.ties, "unjudged": args.unjudged,
            "labels": args.labels, "samples": args.samples, "label_seed": args.label_seed}


def _level(text):
    """``--rel-level``'s value: an integer, else a real number (the options check it)."""
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None


def _unjudged(text):
    """``--unjudged``'s value as ``unjudged=`` takes it."""
    if text in ("nonrelevant", "relevant"):
        return text
    name, _, label = text.partition(":")
    if name == "relevant" and label.isdigit():
        return ("relevant", int(label))
    raise argparse.ArgumentTypeError(f"{text!r}: give nonrelevant, relevant or relevant:LABEL "
                                     "(a whole number, such as relevant:2)")


def _run_paths(patterns):
    """Run files: each argument, or the files its glob pattern matches (sorted)."""
    paths = []
    for pattern in patterns:
        if pattern == "-" or os.path.exists(pattern) or not glob.has_magic(pattern):
            paths.append(pattern)
            continue
        matched = sorted(glob.glob(pattern))
        if not matched:
            raise ValueError(f"no file matches {pattern!r}")
        paths += matched
    if paths.count("-") > 1:
        raise ValueError("standard input (-) can be only one of the runs")
    return paths


def _run_names(paths, names):
    if names:
        if len(names) != len(paths):
            raise ValueError(f"--name given {len(names)} times for {len(paths)} runs")
        chosen = names
    else:
        chosen = ["stdin" if p == "-" else os.path.basename(p) for p in paths]
    repeated = sorted({n for n in chosen if chosen.count(n) > 1})
    if repeated:
        raise ValueError(f"two runs are named {repeated[0]!r}: name them with --name")
    return chosen


def _evaluate_runs(args, paths, names, measures, check_ties=True):
    """``{name: Results}`` with one progress bar over the files' bytes; with
    ``check_ties``, a warning for each run whose ties move a printed summary (runs read
    whole only). The judged queries a run lacks are :func:`_note_queries`' to say (the
    library's :class:`~fastir.model.errors.MissingQueriesWarning` is left unsaid)."""
    from fastir.model.errors import MissingQueriesWarning

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=MissingQueriesWarning)
        return _evaluated_runs(args, paths, names, measures, check_ties)


def _evaluated_runs(args, paths, names, measures, check_ties):
    from fastir.io.trec import read_qrels, read_run
    from fastir.loops.evaluator import Evaluator
    from fastir.progress import Progress, wanted

    sizes = [os.path.getsize(p) if p != "-" and os.path.isfile(p) else 0
             for p in [args.qrels] + paths]
    enabled = wanted("auto" if args.progress is None else args.progress)
    # (the files' bytes, each read once; a run's evaluation is a stage of its own, named)
    with Progress(sum(sizes), "reading", enabled, unit="B") as bar:
        qrels = read_qrels(args.qrels, progress=bar, labels=args.labels)
        evaluator = Evaluator(qrels, measures, **_evaluation_options(args))
        results = {}
        for path, name, size in zip(paths, names, sizes[1:]):
            if size > _stream_above():
                results[name] = _streamed(qrels, path, measures, args, bar)
                if results[name] is not None:
                    continue  # (its evaluation went along with the reads)
            run = read_run(path, progress=bar,
                           third_column=getattr(args, "third_column", "auto"))
            with bar.stage(f"evaluating {name}", 0):
                results[name] = _evaluated(name, evaluator, run, args.digits) \
                    if check_ties else evaluator.evaluate(run)
    return results


def _evaluated(name, evaluator, run, digits):
    """The run's Results, and a warning when the orders of its tied documents move a
    printed summary by more than its last digit
    (:func:`fastir.analysis.ties.evaluate_with_range`)."""
    from fastir import _jit
    from fastir.analysis.ties import evaluate_with_range
    from fastir.io.inputs import as_run

    options = evaluator.options
    if options.ties == "expected" or (options.unjudged_label is not None
                                      and options.max_docs is not None):
        return evaluator.evaluate(run)  # (nothing moves; or the retrieved set would)
    with _jit.tier(len(run) + len(evaluator.qrels)):
        results, low, high, n_tied = evaluate_with_range(
            evaluator.plan, evaluator.qrels, as_run(run, options.compat), options)
    values, lows, highs = results.mean, low.mean, high.mean
    moved = [k for k, m in zip(results.measures, results.parsed)  # (text has no mean)
             if k in lows and not m.spec.integer and highs[k] - lows[k] > 10.0 ** -digits]
    if moved:
        ranges = ", ".join(f"{k} {cell(values[k], digits)} could be {cell(lows[k], digits)} "
                           f"to {cell(highs[k], digits)}" for k in moved)
        warnings.warn(f"run {name}: the order of its tied documents ({n_tied} queries have "
                      f"ties) decides its printed values: {ranges}; --ties expected gives "
                      "the mean over every order", stacklevel=2)
    return results


def _stream_above():
    """Run files larger than this many bytes are evaluated in query-complete chunks
    (:func:`fastir.evaluate_file`, the same values): 2 GiB, or ``FASTIR_STREAM_BYTES``."""
    value = os.environ.get("FASTIR_STREAM_BYTES", "")
    if not value:
        return 2 << 30
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"FASTIR_STREAM_BYTES (the run size above which a run is evaluated "
                         f"in chunks) must be a whole number of bytes, got {value!r}; unset "
                         "it for the default (2 GiB)") from None


def _streamed(qrels, path, measures, args, bar):
    """The run evaluated in chunks, or None when its queries are not together (then it is
    read whole, as trec_eval reads it)."""
    from fastir.scale.streaming import QueriesNotTogether, evaluate_file

    try:
        return evaluate_file(qrels, path, measures, progress=bar,
                             third_column=getattr(args, "third_column", "auto"),
                             **_evaluation_options(args))
    except QueriesNotTogether as exc:
        print(f"fastir eval: note: {exc}; reading it whole instead", file=sys.stderr)
        return None


def eval_main(argv):
    parser = _Parser("eval", "Evaluate one or more runs: one row per run (the mean), or per "
                     "query with -q.", "fastir eval qrels.txt bm25.run dense.run.gz -m nDCG@10 "
                     "-m AP --format markdown")
    parser.add_argument("qrels", help="qrels file (qid iter docno label), - for stdin")
    parser.add_argument("runs", nargs="+", metavar="run",
                        help="run files (TREC 6 fields or MS MARCO 3), .gz, globs, - for stdin")
    parser.add_argument("--name", action="append", help="a run's name (once per run)")
    parser.add_argument("--format", choices=FORMATS, default="table",
                        help="output format (default: an aligned table)")
    parser.add_argument("-q", "--per-query", action="store_true", help="a row per query too")
    parser.add_argument("--third-column", choices=("auto", "rank", "score"), default="auto",
                        help="in runs of 3 columns, the third: a rank or a score (default: "
                        "guessed from the values)")
    parser.add_argument("--digits", type=int, default=4, help="decimals (default 4)")
    parser.add_argument("--residuals", action="store_true",
                        help="beside each value, its residual: the value with every "
                        "unjudged retrieved document judged relevant (--unjudged's label, "
                        "else 1) minus the value with them non-relevant")
    _add_evaluation_options(parser)
    group = _add_significance_options(parser)
    group.add_argument("--compare", action="store_true",
                       help="test the differences between the runs")
    group.add_argument("--baseline", help="compare every run with this one (default: all "
                       "pairs)")
    parser.add_argument("--compile-only", help=argparse.SUPPRESS)  # a first run's helper
    parser.add_argument("--compile-inputs", help=argparse.SUPPRESS)  # (fastir.cli.first_run)
    args = parser.parse_args(argv)
    return _guarded("eval", lambda _: _eval(args, argv), argv)


def _add_significance_options(parser):
    """The options of fastir.compare's test, in a group of ``parser`` (returned)."""
    group = parser.add_argument_group("significance (fastir.compare)")
    group.add_argument("--test", default="randomization",
                       choices=("randomization", "t", "bootstrap", "wilcoxon", "tukey"),
                       help="the test (default randomization: paired, sign flips)")
    group.add_argument("--correction", default="holm",
                       choices=("holm", "bonferroni", "bh", "none"),
                       help="multiple-comparison correction (default holm)")
    group.add_argument("--resamples", type=int, default=10_000,
                       help="resamples of randomization and bootstrap (default 10000)")
    group.add_argument("--alpha", type=float, default=0.05,
                       help="significance level (default 0.05)")
    group.add_argument("--seed", type=int, default=0,
                       help="seed of the resampling: same seed, same p-values (default 0)")
    return group


def _measures(args):
    """The measures asked for: ``-m``'s, else the defaults and those ``--define`` defines
    (defined first)."""
    from fastir.measures.user import load_definition

    defined = [load_definition(text) for text in args.define or ()]
    return args.measure or [*DEFAULT_MEASURES, *defined]


def _eval(args, argv):
    from fastir.cli import first_run
    from fastir.progress import wanted

    measures = _measures(args)
    if args.compile_only is not None:
        return first_run.compile_share(
            args, lambda paths, names: _evaluate_runs(args, paths, names, measures))
    paths = _run_paths(args.runs)
    if args.qrels == "-" and "-" in paths:
        raise ValueError("the qrels and a run are both standard input (-), which holds one "
                         "file: give one of them as a file")
    names = _run_names(paths, args.name)
    streamed = any(os.path.isfile(p) and os.path.getsize(p) > _stream_above() for p in paths)
    with first_run.helped(argv, [] if streamed else [args.qrels, *paths],
                          wanted("auto" if args.progress is None else args.progress)):
        results = _evaluate_runs(args, paths, names, measures)
    for name, path in zip(names, paths):
        _note_queries(name, results[name], args.missing)
        _warn_if_unjudged(name, path, results[name], args)
    if args.compare:
        from fastir.analysis.stats import compare

        if len(results) < 2:
            raise ValueError("--compare needs at least two runs")
        comparison = compare(None, results, measures, baseline=args.baseline,
                             test=args.test, n_resamples=args.resamples,
                             correction=args.correction, alpha=args.alpha,
                             seed=args.seed,
                             progress="auto" if args.progress is None else args.progress)
        write_stdout(_comparison_text(comparison, args.format, args.digits) + "\n")
        return 0
    first = next(iter(results.values()))
    keys = first.measures
    integers = [m.spec.integer for m in first.parsed]
    rows = []
    for name, res in results.items():
        if args.per_query:
            for qid, values in res.to_dict().items():
                rows.append((name, str(qid), [values[k] for k in keys]))
        means = res.mean
        rows.append((name, "all" if args.per_query else None, [means.get(k, "") for k in keys]))
    if args.residuals:
        keys, integers, rows = _with_residuals(args, paths, names, measures, results, keys,
                                               integers, rows)
    write_stdout(format_rows(rows, keys, integers, args.format, args.digits, args.per_query))
    return 0


def _with_residuals(args, paths, names, measures, results, keys, integers, rows):
    """The table's keys, integer flags and rows with a residual column after each measure:
    the runs evaluated again under the other ``unjudged`` (relevant at ``--unjudged``'s
    label, else 1; or non-relevant), optimistic minus default."""
    import argparse as _argparse

    if "-" in paths:
        raise ValueError("--residuals evaluates each run twice: give the runs as files, "
                         "not standard input (-)")
    optimistic = args.unjudged != "nonrelevant"
    other = _argparse.Namespace(**vars(args))
    other.unjudged = "nonrelevant" if optimistic else "relevant"
    others = _evaluate_runs(other, paths, names, measures, check_ties=False)
    sign = 1.0 if not optimistic else -1.0
    per_query = {name: {str(q): v for q, v in res.to_dict().items()}
                 for name, res in others.items()} if args.per_query else {}
    out_rows = []
    for name, qid, values in rows:
        if qid is None or qid == "all":
            again = [others[name].mean.get(k, "") for k in keys]
        else:
            again = [per_query[name][qid][k] for k in keys]
        row = []
        for v, w in zip(values, again):
            resid = sign * (w - v) if isinstance(v, (int, float)) and isinstance(
                w, (int, float)) else ""
            row += [v, resid]
        out_rows.append((name, qid, row))
    new_keys = [name for k in keys for name in (k, f"{k} resid")]
    return new_keys, [i for i in integers for _ in (0, 1)], out_rows


def _note_queries(name, results, missing):
    """Notes on stderr of the queries a run's values leave out or score 0: those without
    judgments, the judged ones it lacks (unless it has none of them: the library warns)."""
    from fastir.cli.trec_output import listing

    if results.n_queries == len(results.missing_queries) and missing == "zero":
        return
    if results.ignored_queries:
        print(f"fastir eval: note: run {name}: {len(results.ignored_queries)} of its queries "
              f"have no judgments and are left out: {listing(results.ignored_queries)}",
              file=sys.stderr)
    if results.missing_queries:
        how = "score 0 (--missing skip leaves them out)" if missing == "zero" else \
            "are left out (--missing skip)"
        print(f"fastir eval: note: run {name}: {len(results.missing_queries)} judged queries "
              f"are not in it and {how}: {listing(results.missing_queries)}", file=sys.stderr)


def _warn_if_unjudged(name, path, results, args):
    """A warning when a run scores 0 everywhere because no document of its top 10 is judged
    (ids that do not match the qrels': another collection, a different id format)."""
    from fastir.api import evaluate

    if path == "-" or results.values.size == 0 or results.values.any():
        return
    with warnings.catch_warnings():  # (what this second evaluation says was said)
        warnings.simplefilter("ignore")
        judged = evaluate(args.qrels, path, ["Judged@10"], **_evaluation_options(args))
    if judged.values.size and not judged.values.any():
        warnings.warn(f"run {name}: no document of its top 10 is judged, in any query: its "
                      "values are 0 (do its doc ids match the qrels'?)", stacklevel=2)


def _comparison_text(comparison, fmt, digits):
    if fmt == "markdown":
        return comparison.to_markdown(digits)
    if fmt == "table":
        return plain(comparison.to_markdown(digits))
    if fmt == "latex":
        return comparison.to_latex(digits)
    if fmt == "json":
        return comparison.to_json(indent=2)
    pairs = comparison.to_dict()["pairs"]
    if fmt == "jsonl":
        return "\n".join(json.dumps(p) for p in pairs)
    out = io.StringIO()
    writer = csv.writer(out, delimiter="\t" if fmt == "tsv" else ",", lineterminator="\n")
    writer.writerow(["measure", "system", "vs", "difference", "ci_low", "ci_high", "p_value",
                     "p_adjusted", "significant", "effect_size", "wins", "ties", "losses"])
    for p in pairs:
        writer.writerow([p["measure"], p["system"], p["vs"], p["difference"], *p["ci95"],
                         p["p_value"], p["p_adjusted"], p["significant"], p["effect_size"],
                         p["wins"], p["ties"], p["losses"]])
    return out.getvalue().rstrip("\n")


# -- fastir stats -------------------------------------------------------------------------
def stats_main(argv):
    parser = _Parser("stats", "What to check first in qrels and runs: queries, judgments per "
                     "label, relevant per query, run depth; with both, the unjudged share of "
                     "each run's top 10 and the queries only one side has.",
                     "fastir stats qrels.txt bm25.run")
    parser.add_argument("files", nargs="+", metavar="file",
                        help="qrels (4 fields per line) and runs (6 or 3), in any order")
    parser.add_argument("--rel-level", type=_level, default=1, metavar="N",
                        help="relevant means label >= N (default 1; a real number with "
                        "--labels float)")
    parser.add_argument("--labels", choices=("int", "float"), default="int",
                        help="qrels labels are integers, as trec_eval's (int, the default), "
                        "or real numbers >= 0 (float: 0.7; the measures that need integers "
                        "are refused by name)")
    parser.add_argument("--format", choices=("table", "json"), default="table")
    args = parser.parse_args(argv)
    return _guarded("stats", lambda _: _stats(args), argv)


def _fields(path):
    """Fields on the first content line of a file (gzip'd or not)."""
    from fastir.io.trec import read_bytes

    for line in read_bytes(path)[:1 << 16].tobytes().split(b"\n"):
        if line.strip() and not line.lstrip().startswith(b"#"):
            return len(line.split())
    raise ValueError(f"{path}: empty file")


def _stats(args):
    import numpy as np

    from fastir.api import evaluate
    from fastir.io.trec import read_qrels, read_run

    report = {}
    qrels = None
    runs = []
    for path in args.files:
        if _fields(path) == 4:
            if qrels is not None:
                raise ValueError(f"{path}: a second qrels file (give one qrels)")
            qrels = read_qrels(path, labels=args.labels)
            report[path] = _qrels_stats(qrels, args.rel_level, np)
        else:
            run = read_run(path)
            runs.append((path, run))
            depth = run.stops - run.starts
            report[path] = {"kind": "run", "name": run.name, "queries": run.n_queries,
                            "rows": len(run), "depth": _spread(depth, np)}
    if qrels is not None:
        judged = set(qrels.query_ids.tolist())
        for path, run in runs:
            ids = set(run.query_ids.tolist())
            entry = report[path]
            entry["queries only in the run (ignored)"] = len(ids - judged)
            entry["judged queries absent from the run"] = len(judged - ids)
            res = evaluate(qrels, run, ["Judged@10"], missing="skip", labels=args.labels)
            entry["unjudged share of the top 10"] = round(1 - res.mean["Judged@10"], 4) \
                if res.n_queries else None
    if args.format == "json":
        write_stdout(json.dumps(report, indent=2) + "\n")
        return 0
    lines = []
    for path, entry in report.items():
        lines.append(f"{path} ({entry.pop('kind')})")
        for key, value in entry.items():
            if isinstance(value, dict):
                value = ", ".join(f"{k} {v}" for k, v in value.items())
            lines.append(f"  {key}: {value}")
    write_stdout("".join(line + "\n" for line in lines))
    return 0


def _spread(values, np):
    if len(values) == 0:
        return {"min": 0, "median": 0, "max": 0}
    return {"min": int(values.min()), "median": float(np.median(values)),
            "max": int(values.max())}


def _qrels_stats(qrels, level, np):
    real = qrels.label_values is not None  # (--labels float: codes of label_values)
    values = qrels.label_values[qrels.labels] if real else qrels.labels
    labels, counts = np.unique(values, return_counts=True)
    query = np.repeat(np.arange(qrels.n_queries), np.diff(qrels.indptr))
    relevant = np.bincount(query[values >= level], minlength=qrels.n_queries)
    return {"kind": "qrels", "queries": qrels.n_queries, "judgments": len(qrels),
            "judgments per label": {(float(k) if real else int(k)): int(v)
                                    for k, v in zip(labels, counts)},
            f"relevant per query (label >= {level})": _spread(relevant, np),
            "queries with no relevant document": int((relevant == 0).sum())}


# -- fastir agree -------------------------------------------------------------------------
def agree_main(argv):
    parser = _Parser("agree", "How far assessors agree: Cohen's kappa (two qrels), Fleiss' "
                     "and the average pairwise kappa (more), weighted kappas, and with runs "
                     "how far the system ranking moves (Kendall's tau, tau-AP, Spearman, "
                     "Pearson, RBO, swapped and significantly swapped pairs).",
                     "fastir agree nist.qrels llm.qrels --runs runs/*.run -m AP --plot means.png")
    parser.add_argument("qrels", nargs="+", help="two or more qrels files")
    parser.add_argument("--rel-level", type=int, default=1, metavar="N",
                        help="relevant means label >= N (default 1; the kappas count each "
                        "integer label as a category)")
    parser.add_argument("--name", action="append", help="a qrels' name (once per qrels)")
    parser.add_argument("--runs", nargs="+", metavar="RUN",
                        help="runs to rank under each qrels (Kendall's tau)")
    parser.add_argument("-m", "--measure", default="AP", help="the ranking's measure")
    parser.add_argument("--alpha", type=float, default=0.05,
                        help="significance level of the swapped pairs (default 0.05)")
    parser.add_argument("--rbo-p", type=float, default=0.9, metavar="P",
                        help="RBO's persistence between system orders (default 0.9)")
    parser.add_argument("--plot", metavar="FILE",
                        help="with --runs: draw the systems' means under the first two qrels "
                             "(.png, .pdf, .svg)")
    args = parser.parse_args(argv)
    return _guarded("agree", lambda _: _agree(args), argv)


def _agree(args):
    from fastir.analysis.agreement import agreement

    if len(args.qrels) < 2:
        raise ValueError("give two or more qrels files")
    runs = None
    if args.runs:
        paths = _run_paths(args.runs)
        runs = _read_runs(paths, None)
    if args.plot and not runs:
        raise ValueError("--plot draws the systems' means: give the systems' --runs")
    names = args.name or [os.path.basename(p) for p in args.qrels]
    result = agreement(*args.qrels, relevance_level=args.rel_level, names=names,
                       runs=runs, measure=args.measure, alpha=args.alpha, rbo_p=args.rbo_p)
    write_stdout(result.to_markdown() + "\n")
    if args.plot:
        _save_plot(result.rankings.plot, args.plot)
    return 0


def _read_runs(paths, names):
    """``{name: Run}`` of run files (names: ``--name``'s, else :func:`_run_names`')."""
    from fastir.io.trec import read_run

    return {name: read_run(p) for p, name in zip(paths, _run_names(paths, names))}


def _save_plot(draw, path):
    """Draw (``draw()``: the axes) into the file ``path``, saying so on stderr."""
    from fastir.output import plots

    plots.to_files()
    print(f"wrote {plots.save(draw(), path)}", file=sys.stderr)


# -- fastir judges ------------------------------------------------------------------------
def judges_main(argv):
    parser = _Parser("judges", "What a second judge (a machine's labels, say) changes of the "
                     "first's conclusions: the labels' agreement and confusion matrix, per "
                     "measure the systems' order (Kendall's tau, tau-AP, RBO, top-k "
                     "overlap), the significance conclusions under each (fastir.compare) and "
                     "each system's bias with its interval.",
                     "fastir judges people.qrels llm.qrels runs/*.run -m nDCG@10 -m AP "
                     "--plot judges.png")
    parser.add_argument("qrels_a", help="the first judge's qrels (the reference)")
    parser.add_argument("qrels_b", help="the second judge's qrels")
    parser.add_argument("runs", nargs="+", metavar="run",
                        help="two or more run files (.gz, globs)")
    parser.add_argument("--name", action="append", help="a run's name (once per run)")
    parser.add_argument("--judge", action="append", metavar="NAME",
                        help="a judge's name (twice: the first's, then the second's; "
                        "default: the qrels files' names)")
    _add_evaluation_options(parser)
    _add_significance_options(parser)
    parser.add_argument("--top-k", type=int, default=5, metavar="K",
                        help="the top-k overlap of the system orders (default 5)")
    parser.add_argument("--rbo-p", type=float, default=0.9, metavar="P",
                        help="RBO's persistence between system orders (default 0.9)")
    parser.add_argument("--format", choices=("markdown", "latex", "json"),
                        default="markdown")
    parser.add_argument("--plot", metavar="FILE",
                        help="draw each system under both judges, the first measure "
                        "(.png, .pdf, .svg)")
    args = parser.parse_args(argv)
    return _guarded("judges", lambda _: _judges(args), argv)


def _judges(args):
    from fastir.analysis.judges import compare_judges

    if args.judge is not None and len(args.judge) != 2:
        raise ValueError(f"--judge names the two judges: give it twice, got "
                         f"{len(args.judge)}")
    paths = _run_paths(args.runs)
    if len(paths) < 2:
        raise ValueError(f"give two or more runs, got {len(paths)}")
    runs = _read_runs(paths, args.name)
    names = args.judge or [os.path.basename(args.qrels_a), os.path.basename(args.qrels_b)]
    result = compare_judges(args.qrels_a, args.qrels_b, runs, _measures(args), names=names,
                            test=args.test, correction=args.correction,
                            n_resamples=args.resamples, alpha=args.alpha, seed=args.seed,
                            top_k=args.top_k, rbo_p=args.rbo_p,
                            progress="auto" if args.progress is None else args.progress,
                            **_evaluation_options(args))
    text = {"markdown": result.to_markdown, "latex": result.to_latex,
            "json": lambda: result.to_json(indent=2)}[args.format]()
    write_stdout(text + "\n")
    if args.plot:
        _save_plot(result.plot, args.plot)
    return 0


# -- fastir plot --------------------------------------------------------------------------
def plot_main(argv):
    parser = _Parser("plot", "Pictures: interpolated precision-recall curves (pr), sorted "
                     "per-query differences of two runs (delta), measures by cutoff (cutoff).",
                     "fastir plot pr qrels.txt bm25.run dense.run -o pr.png")
    kinds = parser.add_subparsers(dest="kind", required=True,
                                  parser_class=argparse.ArgumentParser)

    def kind(name, summary, example):
        return kinds.add_parser(name, help=summary, description=summary + ".",
                                epilog=f"example:\n  fastir plot {name} {example}\n",
                                formatter_class=argparse.RawDescriptionHelpFormatter)

    pr = kind("pr", "interpolated precision-recall curves of one or more runs, the 11 "
              "points as markers", "qrels.txt bm25.run dense.run -o pr.png")
    delta = kind("delta", "per-query differences of two runs on a measure, sorted (the "
                 "second run minus the first)",
                 "qrels.txt bm25.run dense.run -m nDCG@10 -o delta.png")
    cutoff = kind("cutoff", "P@k, R@k, nDCG@k (or -m families) for k = 1..K",
                  "qrels.txt bm25.run -m P -m nDCG -k 50 -o cutoffs.png")
    for sub in (pr, delta, cutoff):
        sub.add_argument("qrels", help="qrels file")
        sub.add_argument("runs", nargs="+", metavar="run", help="run files (.gz, globs)")
        sub.add_argument("-o", "--output", required=True, help="image file (.png, .pdf, .svg)")
        sub.add_argument("--name", action="append", help="a run's name (once per run)")
        sub.add_argument("--rel-level", type=int, default=1, metavar="N",
                         help="relevant means label >= N (default 1)")
    pr.add_argument("--levels", type=int, default=101, help="recall levels (default 101)")
    delta.add_argument("-m", "--measure", default="AP", help="the measure (default AP)")
    cutoff.add_argument("-m", "--measure", action="append", metavar="FAMILY",
                        help="a measure family with a rank cutoff (default P, R, nDCG)")
    cutoff.add_argument("-k", type=int, default=100, help="the largest cutoff (default 100)")
    args = parser.parse_args(argv)
    return _guarded("plot", lambda _: _plot(args), argv)


def _plot(args):
    from fastir.analysis.curves import cutoff_curve, pr_curve
    from fastir.analysis.stats import compare
    from fastir.api import evaluate
    from fastir.io.trec import read_qrels
    from fastir.output import plots

    plots.to_files()

    paths = _run_paths(args.runs)
    names = _run_names(paths, args.name)
    qrels = read_qrels(args.qrels)
    level = {"relevance_level": args.rel_level}
    if args.kind == "pr":
        curves = [pr_curve(qrels, p, levels=args.levels, name=n, **level)
                  for p, n in zip(paths, names)]
        ax = plots.plot_pr(curves)
    elif args.kind == "cutoff":
        families = args.measure or ["P", "R", "nDCG"]
        curves = [cutoff_curve(qrels, p, measures=families, k=args.k, name=n, **level)
                  for p, n in zip(paths, names)]
        ax = plots.plot_cutoffs(curves)
    else:
        if len(paths) != 2:
            raise ValueError(f"delta compares two runs, got {len(paths)}")
        results = {n: evaluate(qrels, p, [args.measure], **level)
                   for p, n in zip(paths, names)}
        ax = compare(None, results, [args.measure], baseline=names[0]).plot_delta()
    print(f"wrote {plots.save(ax, args.output)}", file=sys.stderr)
    return 0


# -- fastir fuse -------------------------------------------------------------------------
def fuse_main(argv):
    from fastir.analysis.fusion import METHODS, NORMS

    parser = _Parser("fuse", "Fuse runs into one (ranx's 25 methods: RRF, CombSUM/MNZ/..., "
                     "weighted sums, Borda, Condorcet, ISR, RBC, the trained ProbFuse, "
                     "SlideFuse, BayesFuse...), after an optional score normalisation; "
                     "writes a TREC run.",
                     "fastir fuse bm25.run dense.run --method wsum --weights 0.3 0.7 "
                     "--norm min-max -o fused.run")
    parser.add_argument("runs", nargs="+", metavar="run", help="two or more run files (.gz, "
                        "globs)")
    parser.add_argument("--method", default="rrf", choices=sorted(set(METHODS.values())),
                        help="the fusion method (default rrf)")
    parser.add_argument("--weights", nargs="+", type=float, metavar="W",
                        help="one weight per run (wsum, wrrf, mixed, wmnz, w_bordafuse, "
                        "w_condorcet)")
    parser.add_argument("--gamma", type=float, help="gmnz's exponent")
    parser.add_argument("--sigma", type=float, help="logn_isr's sigma (default 0.01)")
    parser.add_argument("--phi", type=float, help="rbc's persistence")
    parser.add_argument("--window", type=int, metavar="W", help="slidefuse's half-width")
    parser.add_argument("--qrels", help="trained methods (mapfuse, posfuse, probfuse, "
                        "segfuse, slidefuse, bayesfuse): learn from these judgments of the "
                        "runs' queries")
    parser.add_argument("--n-segments", type=int, metavar="N", help="probfuse's segments")
    parser.add_argument("--norm", choices=sorted(set(NORMS.values())),
                        help="normalise each run's scores per query first (default: none)")
    parser.add_argument("-k", type=float, default=60, help="RRF's k (default 60)")
    parser.add_argument("--depth", type=int, metavar="N", help="fuse each run's top N docs")
    parser.add_argument("--tag", help="the fused run's tag (default: the method)")
    parser.add_argument("-o", "--output", default="-", help="output file (default stdout)")
    args = parser.parse_args(argv)
    return _guarded("fuse", lambda _: _fuse(args), argv)


def _fuse(args):
    from fastir.analysis.fusion import fuse, train_fusion
    from fastir.io.trec import read_run
    from fastir.io.writers import write_run

    paths = _run_paths(args.runs)
    runs = {name: read_run(p) for p, name in zip(paths, _run_names(paths, None))}
    learnt = {}
    if args.qrels is not None:
        segments = {} if args.n_segments is None else {"n_segments": args.n_segments}
        learnt = train_fusion(args.qrels, runs, args.method, norm=args.norm,
                              depth=args.depth, **segments)
    fused = fuse(runs, args.method, weights=args.weights, norm=args.norm, k=args.k,
                 depth=args.depth, name=args.tag, gamma=args.gamma, sigma=args.sigma,
                 phi=args.phi, w=args.window, **learnt)
    if args.output == "-":
        text = io.StringIO()
        write_run(fused, text)
        write_stdout(text.getvalue())
        return 0
    write_run(fused, args.output)  # (whole or not at all: -o onto a run read is safe)
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


# -- fastir pool -------------------------------------------------------------------------
def pool_main(argv):
    from fastir.analysis.pooling import FORMATS, STRATEGIES

    parser = _Parser("pool", "Build the pool of documents to judge from runs (trectools' "
                     "strategies: each run's top N, or the N docs per query of highest RRF "
                     "or RBP); writes a pool file a judging tool reads, and with --stats "
                     "what each run contributes.",
                     "fastir pool runs/*.run --depth 100 -o pool.txt --stats")
    parser.add_argument("runs", nargs="+", metavar="run", help="run files (.gz, globs)")
    parser.add_argument("--depth", type=int, default=10, metavar="N",
                        help="depth: each run's top N docs; rrf, rbp: N docs per query "
                        "(default 10)")
    parser.add_argument("--strategy", default="depth", choices=sorted(set(
        STRATEGIES.values())), help="depth (Depth@N, default), rrf (RRFTake@N), rbp "
                        "(RBPTake@N)")
    parser.add_argument("-k", type=float, default=60, help="rrf's k (default 60)")
    parser.add_argument("--p", type=float, default=0.8, help="rbp's persistence (default 0.8)")
    parser.add_argument("--merge", choices=("sum", "max"), default="sum",
                        help="how rbp merges the runs' weights (default sum)")
    parser.add_argument("--format", choices=FORMATS, default="trec",
                        help="trec: query Q0 doc 0 0 tag (trectools', Relevation's; "
                        "default); qrels: query 0 doc -1; docs: each doc id once")
    parser.add_argument("--tag", default="fastir", help="the trec format's last column")
    parser.add_argument("--stats", action="store_true",
                        help="print each run's contribution on stdout (needs -o)")
    parser.add_argument("--judged-at", type=int, metavar="K",
                        help="--stats' judged@K: how many of each run's top K docs are "
                        "pooled, per query (default: --depth)")
    parser.add_argument("-o", "--output", default="-", help="output file (default stdout)")
    args = parser.parse_args(argv)
    return _guarded("pool", lambda _: _pool(args), argv)


def _pool(args):
    from fastir.analysis.pooling import pool as build_pool
    from fastir.io.trec import read_run

    if args.stats and args.output == "-":
        raise ValueError("--stats prints the runs' table on stdout: give -o FILE for the "
                         "pool")
    paths = _run_paths(args.runs)
    runs = {name: read_run(p) for p, name in zip(paths, _run_names(paths, None))}
    pool = build_pool(runs, args.depth, args.strategy, k=args.k, p=args.p,
                      merge=args.merge, judged_at=args.judged_at)
    if args.output == "-":
        text = io.StringIO()
        pool.write(text, args.format, args.tag)
        write_stdout(text.getvalue())
        return 0
    pool.write(args.output, args.format, args.tag)  # (whole or not at all)
    print(f"wrote {args.output} ({pool.n_docs} docs)", file=sys.stderr)
    if args.stats:
        write_stdout(pool.to_markdown() + "\n")
    return 0


COMMANDS = {  # name: (entry point, what it does)
    "eval": (eval_main, "evaluate runs: a table of means (or per query), any format; "
             "--compare adds significance tests"),
    "stats": (stats_main, "queries, judgments, depths and overlaps of qrels and runs"),
    "agree": (agree_main, "agreement between assessors (kappa) and what it does to a ranking"),
    "judges": (judges_main, "what a second judge (a machine's labels) changes: labels, system "
               "order, significance, each system's bias"),
    "plot": (plot_main, "precision-recall curves, per-query differences, measures by cutoff"),
    "fuse": (fuse_main, "fuse runs (RRF, CombSUM/MNZ, weighted sum, Borda...) into one run"),
    "pool": (pool_main, "the pool of documents to judge (depth, RRF or RBP take) and what "
             "each run contributes"),
}
