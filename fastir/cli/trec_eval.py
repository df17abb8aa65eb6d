"""``fastir trec_eval``: trec_eval's command line (its options read as getopt reads them,
its exit statuses), evaluated and printed by :mod:`fastir.cli.trec_output`."""

import functools
import re
import sys
import warnings

from fastir.io.trec import read_zscores
from fastir.measures.registry import UnknownMeasureError
from fastir.model.errors import FastirWarning, InputError
from fastir.options import Options
from fastir.output.writing import write_stdout

USAGE = ("fastir trec_eval [-h] [-v] [-q] [-c] [-n] [-l N] [-M N] [-N N] [-J] [-Z FILE] "
         "[-o] [-D 0] [-R FORMAT] [-T trec_results] [--compat 9.0.8] [-m MEASURE]... "
         "QRELS RUN")

TREC_EVAL_HELP = f"""usage: {USAGE}

Evaluate RUN against QRELS; output byte-identical to trec_eval 10.0. Options are read as
trec_eval reads them (getopt: -mP.5 or -m P.5, options anywhere, long names too).

  -q, --query_eval_wanted        print per-query values too
  -c, --complete_rel_info_wanted average over every qrels query (missing ones score 0)
  -l N, --level_for_rel N        relevance level: relevant means label >= N (default 1)
  -M N, --Max_retrieved_per_topic N  evaluate only the top N documents per query
  -J, --Judged_docs_only         drop unjudged documents first
  -n, --nosummary                no summary ('all') lines
  -N N, --Number_docs_in_coll N  number of documents in the collection (for utility)
  -Z FILE, --Zscore FILE         print z-scores against the per-query means/stddevs in FILE
  -m MEASURE, --measure MEASURE  trec_eval measure (map, P.5,10), nickname (official,
                                 all_trec, set, prefs, all_prefs, qrels_jg) or library
                                 name (nDCG@10, AP), printed under its trec_eval name;
                                 repeatable
  -R FORMAT, --Rel_info_format FORMAT  the judgments: qrels (default), prefs (qid jg jsg
                                 docno level), qrels_prefs (qrels read as preferences),
                                 qrels_jg (qrels whose second column is a judgment group)
  -o, -D 0, -T trec_results      accepted and change nothing, as in trec_eval (-D above
                                 0 or with a query is not supported)
  --compat 9.0.8                 reproduce trec_eval 9.0.8 (pytrec_eval's version)
  -v, --version                  trec_eval's version line, then fastir's (on stderr)
  -h, --help                     this help (`fastir measures` lists the measures)

Either file may be gzip, bz2 or xz (known by its first bytes); RUN may be - (standard
input).
"""

#: trec_eval's options: long name -> (short flag, whether it takes a value). As in
#: trec_eval, --Output_old_results_format takes a value and -o does not.
_OPTIONS = {"help": ("-h", False), "version": ("-v", False), "query_eval_wanted": ("-q", False),
            "measure": ("-m", True), "complete_rel_info_wanted": ("-c", False),
            "level_for_rel": ("-l", True), "nosummary": ("-n", False),
            "Debug_level": ("-D", True), "Judged_docs_only": ("-J", False),
            "Number_docs_in_coll": ("-N", True), "Max_retrieved_per_topic": ("-M", True),
            "Rel_info_format": ("-R", True), "Results_format": ("-T", True),
            "Output_old_results_format": ("-o", True), "Zscore": ("-Z", True),
            "compat": ("--compat", True)}
_SHORT = {"h": False, "v": False, "q": False, "m": True, "c": False, "l": True, "n": False,
          "D": True, "J": False, "N": True, "M": True, "R": True, "T": True, "o": False,
          "Z": True}
#: trec_eval's -R formats (qrels, and those of its preference and judgment-group measures).
REL_FORMATS = ("qrels", "prefs", "qrels_prefs", "qrels_jg")


class UsageError(Exception):
    """Bad command-line usage: the message says what, the usage line follows it."""


def _getopt(argv, positional):
    """Yield trec_eval's ``(flag, value)`` pairs in order as GNU getopt_long reads them
    (options anywhere, ``--`` ends them, unique prefixes of long names, trec_eval's before
    ``--compat``); other arguments go
    to ``positional``. A bad option raises :class:`UsageError` when it is reached."""
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "--":
            positional += argv[i:]
            return
        if arg.startswith("--"):
            flag, value, i = _long_option(arg, argv, i)
            yield flag, value
        elif arg.startswith("-") and arg != "-":
            i = yield from _short_options(arg, argv, i)
        else:
            positional.append(arg)


def _long_option(arg, argv, i):
    """The ``(flag, value, next i)`` of the long option ``arg`` (its value, if it takes one
    and has no ``=``, is ``argv[i]``)."""
    name, eq, value = arg[2:].partition("=")
    found = [n for n in _OPTIONS if n.startswith(name)]
    if len(found) > 1:  # an exact name, else trec_eval's own names come first
        found = [n for n in found if n == name] or [n for n in found if n != "compat"]
    if len(found) != 1:
        what = "not recognized" if not found else "not a unique prefix"
        raise UsageError(f"option --{name} {what}")
    flag, takes = _OPTIONS[found[0]]
    if takes and not eq:
        if i == len(argv):
            raise UsageError(f"option --{found[0]} requires argument")
        value, i = argv[i], i + 1
    elif eq and not takes:
        raise UsageError(f"option --{found[0]} must not have an argument")
    return flag, value, i


def _short_options(arg, argv, i):
    """Yield the ``(flag, value)`` pairs of the short options grouped in ``arg`` (the value
    of the last, if it takes one and has none attached, is ``argv[i]``); return the next i."""
    for k, letter in enumerate(arg[1:], 2):
        if letter not in _SHORT:
            raise UsageError(f"option -{letter} not recognized")
        if not _SHORT[letter]:
            yield f"-{letter}", ""
            continue
        value = arg[k:]
        if not value:
            if i == len(argv):
                raise UsageError(f"option -{letter} requires argument")
            value, i = argv[i], i + 1
        yield f"-{letter}", value
        break
    return i


def parse_trec_eval_args(argv):
    """trec_eval's options, read as trec_eval reads them, as a dict. As in trec_eval, ``-v``
    ends the reading: what follows it is not looked at."""
    args = {"q": False, "c": False, "l": 1, "M": None, "J": False, "n": False, "N": 0,
            "Z": None, "compat": "10.0", "m": [], "help": False, "version": False,
            "D": "0", "R": "qrels", "T": "trec_results"}
    positional = []
    for flag, value in _getopt(argv, positional):
        if flag == "-v":
            args["version"] = True
            return args
        if flag == "-h":
            args["help"] = True
        elif flag in ("-q", "-c", "-J", "-n"):
            args[flag[1]] = True
        elif flag in ("-l", "-M", "-N"):
            args[flag[1]] = _integer_option(flag, value)
        elif flag == "-m":
            args["m"].append(value)
        elif flag in ("-Z", "-D", "-R", "-T"):
            args[flag[1]] = value
        elif flag == "--compat":
            if value not in ("10.0", "9.0.8"):
                raise UsageError(f"--compat must be 10.0 or 9.0.8, got {value!r}")
            args["compat"] = value
    if not args["help"]:
        if len(positional) != 2:
            raise UsageError(f"expected QRELS and RUN, got {len(positional)} argument(s)")
        args["qrels"], args["run"] = positional
    return args


def _integer_option(flag, value):
    """An integer option; beyond 64 bits it saturates, as trec_eval's atol does (-M and -l
    beyond any ranking or label mean no limit and nothing relevant)."""
    try:
        number = int(value)
    except ValueError:
        raise UsageError(f"option {flag} needs an integer, got {value!r}") from None
    if flag == "-M" and number < 0:  # (trec_eval crashes on it)
        raise UsageError(f"option -M needs a number of documents (0 or more), got {value}")
    if flag == "-N" and not -(2**53) <= number <= 2**53:  # (exact in a double; trec_eval
        # takes a negative size too: utility's d coefficient then counts negative documents)
        raise UsageError(f"option -N needs a collection size from -2**53 to 2**53, got "
                         f"{value}")
    return max(-(2**63), min(number, 2**63 - 1))


#: trec_eval's exit statuses, which `fastir trec_eval` keeps.
USAGE_STATUS = 1  # bad options or measures
INPUT_STATUS = 2  # a file that cannot be read or parsed
ZSCORE_STATUS = 255  # a -Z file that cannot be read (trec_eval returns -1 from main)


#: What each trec_eval binary's -v prints (9.0.8's build still calls itself 9.0.7).
TREC_EVAL_VERSIONS = {"10.0": "10.0-rc3", "9.0.8": "9.0.7"}


class _Stop(Exception):
    """The command stops: ``message`` on stderr, exit ``status``."""

    def __init__(self, message, status):
        super().__init__(message)
        self.message, self.status = message, status


def trec_eval_main(argv):
    try:
        args = parse_trec_eval_args(argv)
    except UsageError as exc:
        return _fail(f"{exc}\nusage: {USAGE}", USAGE_STATUS)
    compat = None if args["compat"] == "10.0" else args["compat"]
    try:
        if args["version"]:
            _measures(args["m"], compat)  # trec_eval checks the names before -v as it reads them
            print(f"trec_eval version {TREC_EVAL_VERSIONS[args['compat']]}\n{version_line()}",
                  file=sys.stderr)
            return 0
        if args["help"]:
            _write(TREC_EVAL_HELP)
            return 0
        names = _measures(args["m"] or ["official"], compat)
        formatter, zscores = _set_up(args)
        _evaluate(formatter, args, names, zscores, compat)
    except _Stop as stop:
        return _fail(stop.message, stop.status)
    return 0


def _measures(requests, compat):
    """trec_eval's measure names of the ``-m`` requests."""
    from fastir.cli.trec_output import trec_measures

    try:
        return trec_measures(requests, compat)
    except (UnknownMeasureError, ValueError) as exc:
        raise _Stop(exc, USAGE_STATUS) from None


def _set_up(args):
    """The formatter of the ``-R`` format and the ``-Z`` file's z-scores (or None), after
    checking the options fastir does not support."""
    from fastir.cli.trec_output import format_trec_eval
    from fastir.cli.trec_prefs import format_judgments

    unsupported = _unsupported(args)
    if unsupported:
        raise _Stop(unsupported, USAGE_STATUS)
    if args["R"] not in REL_FORMATS:
        raise _Stop(f"Illegal rel_format {args['R']!r} (-R: trec_eval reads qrels, prefs, "
                    "qrels_prefs, qrels_jg)", INPUT_STATUS)
    formatter = format_trec_eval if args["R"] == "qrels" else \
        functools.partial(format_judgments, rel_format=args["R"])
    if args["qrels"] == args["run"] == "-":
        raise _Stop("QRELS and RUN are both standard input (-), which holds one file: give "
                    "one of them as a file", INPUT_STATUS)
    if args["T"] != "trec_results":
        raise _Stop(f"Illegal retrieval results format {args['T']!r} (-T: trec_eval reads "
                    "only trec_results)", INPUT_STATUS)
    try:
        return formatter, read_zscores(args["Z"]) if args["Z"] else None
    except InputError as exc:
        raise _Stop(exc, ZSCORE_STATUS) from None


def _evaluate(formatter, args, names, zscores, compat):
    """Evaluate and print (notes and warnings on stderr)."""
    from fastir.cli.trec_output import TrecEvalStop

    notes = []
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", FastirWarning)
        try:
            options = _options(args, names, compat)
            text = formatter(args["qrels"], args["run"], names, options, per_query=args["q"],
                             complete=args["c"], summary=not args["n"], zscores=zscores,
                             notes=notes)
        except TrecEvalStop as stop:
            _write(stop.output)  # what trec_eval prints before it stops
            raise _Stop(stop, stop.status) from None
        except InputError as exc:
            raise _Stop(exc, INPUT_STATUS) from None
        except UnknownMeasureError as exc:  # bad parameters: trec_eval's measure set-up fails
            raise _Stop(exc, INPUT_STATUS) from None
        except ValueError as exc:
            raise _Stop(exc, USAGE_STATUS) from None
    _write(text)  # byte-identical to trec_eval; notes go to stderr
    for note in notes + [str(w.message) for w in said if issubclass(w.category, FastirWarning)]:
        print(f"fastir trec_eval: note: {note}", file=sys.stderr)


def _options(args, names, compat):
    """The :class:`~fastir.options.Options` of trec_eval's flags. Printing runid alone from
    qrels reads no relevance level: any -l is taken then, as trec_eval takes it."""
    runid_alone = args["R"] == "qrels" and all(base == "runid" for base, _ in names)
    return Options(relevance_level=1 if runid_alone else args["l"], max_docs=args["M"],
                   judged_only=args["J"], num_docs=args["N"], compat=compat)


def _unsupported(args):
    """What the trec_eval flags fastir does not implement say, or None: debug output or a
    single debug query (-D)."""
    level = re.match(r"\s*([+-]?[0-9]*)", args["D"]).group(1)  # atol, as trec_eval reads it
    if "." in args["D"] or level.lstrip("+-") and int(level):
        return (f"-D {args['D']} is not supported (trec_eval's debug output and debug query); "
                "-D 0 is accepted, and -q prints every query's values")
    return None


def version_line():
    """fastir's version, as ``fastir --version`` (and trec_eval's ``-v``) print it."""
    from fastir._version import __version__

    return f"fastir {__version__}"


def _write(text):
    """Write to stdout as raw bytes: ids that are not UTF-8 come out as they came in."""
    write_stdout(text.encode("utf-8", "surrogateescape"))


def _fail(message, status):
    print(f"fastir trec_eval: {message}", file=sys.stderr)
    return status
