"""Command line: ``fastir trec_eval ...`` (a drop-in for trec_eval) and ``fastir example``."""

import argparse
import sys

from fastir.data import InputError
from fastir.measures import UnknownMeasureError

USAGE = ("fastir trec_eval [-q] [-c] [-n] [-l N] [-M N] [-N N] [-J] [-Z FILE] "
         "[--compat 9.0.8] [-m MEASURE]... QRELS RUN")


def trec_eval_parser():
    p = argparse.ArgumentParser(
        prog="fastir trec_eval", usage=USAGE,
        description="Evaluate RUN against QRELS; output byte-identical to trec_eval 10.0.")
    p.add_argument("-q", action="store_true", help="print per-query values too")
    p.add_argument("-c", action="store_true",
                   help="average over every qrels query (missing ones score 0)")
    p.add_argument("-l", type=int, default=1, metavar="N",
                   help="relevance level: relevant means label >= N (default 1)")
    p.add_argument("-M", type=int, default=None, metavar="N",
                   help="evaluate only the top N documents per query")
    p.add_argument("-J", action="store_true", help="drop unjudged documents first")
    p.add_argument("-n", action="store_true", help="no summary ('all') lines")
    p.add_argument("-N", type=int, default=0, metavar="N",
                   help="number of documents in the collection (for utility)")
    p.add_argument("-Z", metavar="FILE", default=None,
                   help="print z-scores against the per-query means/stddevs in FILE")
    p.add_argument("--compat", choices=["10.0", "9.0.8"], default="10.0",
                   help="reproduce this trec_eval version (9.0.8: pytrec_eval's)")
    p.add_argument("-m", action="append", default=[], metavar="MEASURE",
                   help="measure or nickname (official, all_trec); repeatable")
    p.add_argument("qrels", metavar="QRELS")
    p.add_argument("run", metavar="RUN", help="run file, or - for standard input")
    return p


def trec_eval_main(argv):
    from fastir.trec_format import format_trec_eval, read_zscores, trec_measures

    args = trec_eval_parser().parse_args(argv)
    compat = None if args.compat == "10.0" else args.compat
    try:
        names = trec_measures(args.m or ["official"], compat)
        zscores = read_zscores(args.Z) if args.Z else None
        notes = []
        text = format_trec_eval(args.qrels, args.run, names, per_query=args.q,
                                complete=args.c, relevance_level=args.l, max_docs=args.M,
                                judged_only=args.J, summary=not args.n, num_docs=args.N,
                                zscores=zscores, compat=compat, notes=notes)
    except (InputError, UnknownMeasureError, ValueError) as exc:
        print(f"fastir trec_eval: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write(text)  # byte-identical to trec_eval; notes go to stderr
    for note in notes:
        print(f"fastir trec_eval: note: {note}", file=sys.stderr)
    return 0


def example_main(argv):
    """Evaluate the bundled deterministic example and print a table."""
    from fastir.example import main

    return main(argv)


def measures_main(argv):
    """List the measure families: name, trec_eval name, parameters, description."""
    from fastir.measures import FAMILIES

    print("| family | trec_eval | cutoff | parameters | description |")
    print("|---|---|---|---|---|")
    for f in FAMILIES.values():
        print(f"| {f.name} | {f.trec or ''} | {f.cutoff} | {', '.join(f.params)} | {f.doc} |")
    return 0


COMMANDS = {"trec_eval": trec_eval_main, "example": example_main, "measures": measures_main}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in COMMANDS:
        print(f"usage: fastir {{{','.join(COMMANDS)}}} ...\n  {USAGE}\n  fastir example"
              "\n  fastir measures", file=sys.stderr)
        return 2
    return COMMANDS[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main())
