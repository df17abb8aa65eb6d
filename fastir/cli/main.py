"""Command line: the commands (``fastir -h``) and their dispatch, ``fastir measures``,
``example`` and ``warmup``; ``fastir trec_eval ...`` (a drop-in for trec_eval) is
:mod:`fastir.cli.trec_eval`'s, the commands for people :mod:`fastir.cli.commands`'."""

import os
import sys

from fastir.cli.trec_eval import trec_eval_main, version_line


def _no_options(name, argv):
    """Read the options of a command that takes none but ``-h`` (argparse's help and exit
    statuses: 0 for help, 2 for a flag it does not know); its help is its OTHER_COMMANDS
    line."""
    import argparse

    parser = argparse.ArgumentParser(prog=f"fastir {name}", description=OTHER_COMMANDS[name])
    parser.parse_args(argv)


def example_main(argv):
    """Evaluate the bundled deterministic example and print a table."""
    from fastir.cli.example import main

    return main(argv)


def warmup_main(argv):
    """Compile every numba kernel now (cached on disk for later processes)."""
    from fastir.cli.warmup import warmup

    _no_options("warmup", argv)
    print("fastir warmup: compiling numba kernels (cached on disk; once per install)",
          file=sys.stderr, flush=True)
    seconds = warmup()
    print(f"fastir warmup: done in {seconds:.1f} s", file=sys.stderr)
    return 0


def measures_main(argv):
    """List the measure families: name, an example, other names, cutoff, parameters,
    description."""
    from fastir.measures.registry import FAMILIES

    _no_options("measures", argv)
    print("| family | example | trec_eval | cutoff | parameters | description |")
    print("|---|---|---|---|---|---|")
    for f in FAMILIES.values():
        trec = ", ".join(t.name for t in f.trec)
        cutoff = "" if f.cutoff is None else f.cutoff.kind + (" (required)" if
                                                              f.cutoff_required else "")
        params = ", ".join(p.name if p.default is None else f"{p.name}={p.text(p.default)}"
                           for p in f.params.values())
        print(f"| {f.name} | `{f.examples[-1]}` | {trec} | {cutoff} | {params} | {f.doc} |")
    return 0


def _friendly(name):
    def run(argv):
        from fastir.cli import commands

        return commands.COMMANDS[name][0](argv)
    return run


COMMANDS = {"eval": _friendly("eval"), "stats": _friendly("stats"),
            "agree": _friendly("agree"), "plot": _friendly("plot"), "fuse": _friendly("fuse"),
            "trec_eval": trec_eval_main, "measures": measures_main, "example": example_main,
            "warmup": warmup_main}

OTHER_COMMANDS = {
    "trec_eval": "a drop-in for trec_eval: same options, byte-identical output, same exit "
                 "status",
    "measures": "every measure, its names in each dialect and its parameters",
    "example": "evaluate the bundled example",
    "warmup": "compile the numba kernels ahead (once per install)",
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
    from fastir import _jit

    _jit.lean_start = True
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("-h", "--help", "help"):
        print(help_text(), end="")
        return 0
    if argv and argv[0] == "--version":
        print(version_line())
        return 0
    if not argv or argv[0] not in COMMANDS:
        unknown = f"fastir: unknown command {argv[0]!r}\n" if argv else ""
        print(unknown + help_text(), end="", file=sys.stderr)
        return 2
    try:
        return COMMANDS[argv[0]](argv[1:])
    except BrokenPipeError:  # the reader left (fastir measures | head): not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
