"""Command line: the commands (``fastir -h``) and their dispatch, ``fastir measures``,
``example``, ``warmup`` and ``worker``; ``fastir trec_eval ...`` (a drop-in for trec_eval)
is :mod:`fastir.cli.trec_eval`'s, the commands for people :mod:`fastir.cli.commands`'.

Start-up: run as a program, :func:`main` first offers the command to the user's warm worker
(:mod:`fastir.worker`), importing nothing but the standard library; only when no worker
takes it does it import the command's modules (numpy first) and run it here.
"""

import os
import sys

from fastir.cli.interrupt import INTERRUPTED_STATUS, by_ctrl_c, interrupted, note_ctrl_c


def _positive_int(text):
    """argparse's type for a count of at least 1."""
    import argparse

    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def example_main(argv):
    """Evaluate the bundled deterministic example and print a table."""
    from fastir.cli.example import main

    return main(argv)


def warmup_main(argv):
    """Compile every numba kernel not in the cache now (cached on disk for later processes;
    the cached ones are loaded): ``--jobs N``
    processes (default: the idle cores, at most 4), each step's progress on stderr."""
    import argparse

    from fastir.cli.warmup import default_jobs, estimate, plan, warmup

    parser = argparse.ArgumentParser(prog="fastir warmup", description=warmup_main.__doc__)
    parser.add_argument("--jobs", type=_positive_int, default=default_jobs(),
                        help="processes to compile in (default: the idle cores, at most 4)")
    parser.add_argument("--only", help=argparse.SUPPRESS)  # a helper process's steps
    args = parser.parse_args(argv)
    if args.only:  # a helper of a warmup: on Ctrl-C, the warmup says so, not each helper
        try:
            warmup(jobs=args.jobs, only=args.only.split(","))
        except BaseException as exc:
            if by_ctrl_c(exc):
                return INTERRUPTED_STATUS
            raise
        return 0
    groups = plan(args.jobs)
    print(f"fastir warmup: loading the numba kernels from the cache, compiling those not in "
          f"it, in {len(groups)} process{'es' if len(groups) > 1 else ''}: a second when "
          f"cached; on a fresh cache (once per install) {estimate(groups)}",
          file=sys.stderr, flush=True)
    seconds = warmup(jobs=args.jobs)
    print(f"fastir warmup: done in {seconds:.1f} s", file=sys.stderr)
    return 0


def measures_main(argv):
    """List the measure families: name, an example, other names, cutoff, parameters,
    description, formula (after the formulas' notation); those installed packages define
    (entry-point group ``fastir.measures``) and ``--define`` defines too."""
    import argparse

    from fastir.cli.commands import _guarded
    from fastir.measures.registry import FORMULA_NOTATION, families, load_installed
    from fastir.measures.user import load_definition
    from fastir.output.tables import markdown_row
    from fastir.output.writing import write_stdout

    parser = argparse.ArgumentParser(prog="fastir measures",
                                     description=OTHER_COMMANDS["measures"])
    parser.add_argument("--define", action="append", metavar="MODULE:FUNCTION",
                        help="define a measure by a per-query function first (as fastir "
                        "eval --define)")
    args = parser.parse_args(argv)

    def define(_):
        load_installed()
        for text in args.define or ():
            load_definition(text)
        return 0

    status = _guarded("measures", define, argv)
    if status:
        return status
    lines = [f"Formulas: {FORMULA_NOTATION}\n",
             markdown_row(["family", "example", "trec_eval", "cutoff", "parameters",
                           "description", "formula"]),
             "|---|---|---|---|---|---|---|"]
    for f in families().values():
        trec = ", ".join(t.name for t in f.trec)
        cutoff = "" if f.cutoff is None else f.cutoff.kind + (" (required)" if
                                                              f.cutoff_required else "")
        params = ", ".join(p.name if p.default is None else f"{p.name}={p.text(p.default)}"
                           for p in f.params.values())
        lines.append(markdown_row([f.name, f"`{f.examples[-1]}`", trec, cutoff, params, f.doc,
                                   f.formula]))
    write_stdout("".join(line + "\n" for line in lines))
    return 0


def trec_eval_main(argv):
    """``fastir trec_eval``: trec_eval's command line."""
    from fastir.cli.trec_eval import trec_eval_main as run

    return run(argv)


def worker_main(argv):
    """``fastir worker start|stop|status``: the warm worker (:mod:`fastir.cli.worker`)."""
    from fastir.cli.worker import worker_main as run

    return run(argv, dispatch)


def call_main(argv):
    """The hidden ``fastir _call``: a library call a warm worker runs for a process that has
    not loaded numba (:mod:`fastir.worker.library`)."""
    from fastir.worker import library

    return library.answer(argv, _library_function)


def _library_function(name):
    """The function a library call names (:data:`fastir.worker.library.FUNCTIONS`)."""
    if name == "evaluate":
        from fastir.api import evaluate

        return evaluate
    if name == "evaluate_file":
        from fastir.scale.streaming import evaluate_file

        return evaluate_file
    raise ValueError(f"no library function {name!r}")


def _friendly(name):
    def run(argv):
        from fastir.cli import commands

        return commands.COMMANDS[name][0](argv)
    return run


COMMANDS = {"eval": _friendly("eval"), "stats": _friendly("stats"),
            "agree": _friendly("agree"), "judges": _friendly("judges"),
            "plot": _friendly("plot"), "fuse": _friendly("fuse"), "pool": _friendly("pool"),
            "trec_eval": trec_eval_main, "measures": measures_main, "example": example_main,
            "warmup": warmup_main, "worker": worker_main, "_call": call_main}
#: Commands a warm worker runs for the command line (the rest are cheap, or about it).
WORKER_COMMANDS = ("eval", "stats", "agree", "judges", "plot", "fuse", "pool", "trec_eval",
                   "measures", "example")

OTHER_COMMANDS = {
    "trec_eval": "a drop-in for trec_eval: same options, byte-identical output, same exit "
                 "status",
    "measures": "every measure, its names in each dialect and its parameters",
    "example": "evaluate the bundled example",
    "warmup": "compile the numba kernels ahead (once per install)",
    "worker": "start, stop or ask about the warm worker that runs commands without "
              "numba's start-up (start: on first use; FASTIR_WORKER=off: never)",
}

EXAMPLES = """examples:
  fastir eval qrels.txt bm25.run dense.run.gz -m nDCG@10 -m AP
  fastir eval qrels.txt runs/*.run --compare --baseline bm25.run --format markdown
  fastir plot pr qrels.txt bm25.run dense.run -o pr.png
  fastir trec_eval -m official -q qrels.txt bm25.run
"""


def help_text():
    import textwrap

    from fastir.cli.commands import COMMANDS as FRIENDLY

    described = {name: text for name, (_, text) in FRIENDLY.items()} | OTHER_COMMANDS
    lines = ["usage: fastir COMMAND ...   (fastir COMMAND -h: its options and an example)",
             "       fastir --version", "",
             "commands:"]
    for name, text in described.items():
        wrapped = textwrap.wrap(text, 76)
        lines.append(f"  {name:<10} {wrapped[0]}")
        lines += [f"  {'':<10} {more}" for more in wrapped[1:]]
    return "\n".join(lines) + "\n\n" + EXAMPLES


def main(argv=None):
    """The command line. Run as a program (``argv`` None), a command goes to the warm
    worker when one takes it; given ``argv`` (from Python), it runs here."""
    status = _in_worker() if argv is None else None
    return dispatch(sys.argv[1:] if argv is None else argv) if status is None else status


def program():
    """The ``fastir`` program (and ``python -m fastir``): :func:`main`, then, when the
    worker ran the command, leave at once: this process has nothing to tidy up, and
    Python's own shutdown would cost it about 3 ms."""
    try:
        status = _in_worker()
        if status is not None:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(status)
        status = dispatch(sys.argv[1:])
    except KeyboardInterrupt:  # (before or after the command: starting, or leaving)
        status = interrupted(sys.argv[1] if len(sys.argv) > 1 else None)
    # The command is done (its output written): a Ctrl-C now, during Python's shutdown,
    # would kill the process by the signal (or worse, inside a library's finaliser).
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.exit(status)


def _defines(argv):
    """Whether the command defines measures (``--define``): it runs here, where the user's
    module is imported afresh, not in a worker that may hold an older import of it."""
    return any(arg == "--define" or arg.startswith("--define=") for arg in argv)


def _in_worker():
    """The exit status of the command of ``sys.argv`` run by a warm worker, or None: it runs
    here, its library calls too (it was offered to the worker already)."""
    from fastir.worker import library

    status = None
    if len(sys.argv) > 1 and sys.argv[1] in WORKER_COMMANDS and not _defines(sys.argv):
        from fastir.worker import client

        status = client.run(sys.argv[1:])
    if status is None:
        library.stay_in_process()
    return status


#: The exit status of a command whose output cannot be written whole (a full disk, a
#: closed standard output): its line says where to.
OUTPUT_STATUS = 1


def dispatch(argv, ready=None):
    """Run the command ``argv`` in this process: its exit status. Its output is all there or
    it says it is not (:mod:`fastir.output.writing`): one line naming where to, status 1; a
    reader that leaves early (``fastir measures | head``) is no error (0, nothing said).
    ``ready()`` is called first, where a Ctrl-C it raises ends the command as one during it
    does (a worker's command process lets the signals it held through)."""
    from fastir.output.writing import whole_stdout

    with whole_stdout():
        return _settled(argv, ready)


def _settled(argv, ready):
    """:func:`dispatch`'s outcome, its output settled."""
    from fastir.output.writing import OutputError, settle_stdout

    command = argv[0] if argv and argv[0] in COMMANDS else None
    try:
        if ready is not None:
            ready()
        return _run(argv)
    except BrokenPipeError:
        return 0
    except OutputError as exc:
        print(f"fastir{' ' + command if command else ''}: error: {exc}", file=sys.stderr)
        return OUTPUT_STATUS
    except KeyboardInterrupt:  # Ctrl-C: the shell's status for it, one line, no traceback
        return interrupted(command)
    except Exception as exc:
        if by_ctrl_c(exc):  # (numba wraps one raised inside it: a SystemError, say)
            return interrupted(command)
        raise
    finally:  # (stdout that failed is dropped: Python's own flush at exit cannot fail again)
        settle_stdout()


def _run(argv):
    """The exit status of the command ``argv``, what it printed flushed (argparse's help
    and exits too)."""
    from fastir.output.writing import flush_stdout, write_stdout

    if argv and argv[0] in ("-h", "--help", "help"):
        write_stdout(help_text())
        return 0
    if argv and argv[0] == "--version":
        from fastir._version import __version__

        write_stdout(f"fastir {__version__}\n")
        return 0
    if not argv or argv[0] not in COMMANDS:
        unknown = f"fastir: unknown command {argv[0]!r}\n" if argv else ""
        print(unknown + help_text(), end="", file=sys.stderr)
        return 2
    note_ctrl_c()
    try:
        status = COMMANDS[argv[0]](argv[1:])
    except SystemExit:
        flush_stdout()
        raise
    flush_stdout()
    return status


if __name__ == "__main__":
    program()
