"""Results as text: aligned tables, tsv, csv, json, jsonl, markdown and LaTeX (for
``fastir eval`` and :class:`fastir.results.ResultsByRun`)."""

import csv
import io
import json
import math
import re

FORMATS = ("table", "tsv", "csv", "json", "jsonl", "markdown", "latex")


def cell(value, digits, integer=False):
    """A value as a table prints it: text as it is, a count as an integer, a number with
    ``digits`` decimals."""
    if isinstance(value, str):
        return value
    return str(int(value)) if integer else f"{value:.{digits}f}"


def format_rows(rows, keys, integers, fmt, digits, per_query, label="run"):
    """The rows ``(run, query or None, values)`` as text in a format (``FORMATS``; counts
    as integers); ``label`` heads the first column."""
    head = [label] + (["query"] if per_query else []) + list(keys)
    cells = [[name] + ([qid] if per_query else []) +
             [cell(v, digits, i) for v, i in zip(values, integers)]
             for name, qid, values in rows]
    if fmt in ("tsv", "csv"):
        out = io.StringIO()
        writer = csv.writer(out, delimiter="\t" if fmt == "tsv" else ",", lineterminator="\n")
        writer.writerows([head] + cells)
        return out.getvalue()
    if fmt in ("json", "jsonl"):
        records = []
        for name, qid, values in rows:
            record = {label: name} | ({"query": qid} if per_query else {})
            records.append(record | {k: _json_value(v) for k, v in zip(keys, values)})
        if fmt == "jsonl":
            return "".join(json.dumps(r) + "\n" for r in records)
        return json.dumps(records, indent=2) + "\n"
    if fmt == "markdown":
        lines = [markdown_row(head), "|" + "---|" * len(head)]
        lines += [markdown_row(row) for row in cells]
        return "\n".join(lines) + "\n"
    if fmt == "latex":
        return _latex_table(head, cells, rows, per_query, digits)
    return aligned([head] + cells, 2 if per_query else 1) + "\n"


def markdown_row(cells):
    """A markdown table row of ``cells`` (text), each ``|`` in them escaped (``\\|``) so
    that a query id or run name holding one stays one cell."""
    return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"


def markdown_cells(line):
    """The cells of a markdown table row (the inverse of :func:`markdown_row`)."""
    cells = re.split(r"(?<!\\)\|", line.strip()[1:-1])
    return [c.strip().replace("\\|", "|") for c in cells]


def aligned(rows, left):
    """Rows of cells as aligned text: the first ``left`` columns to the left, the others to
    the right."""
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(str(v).ljust(w) if i < left else str(v).rjust(w)
                               for i, (v, w) in enumerate(zip(row, widths))).rstrip()
                     for row in rows)


def plain(markdown):
    """Markdown's tables as aligned text (the rest as it is): the table format of text a
    report writes as markdown. Columns of numbers are aligned to the right."""
    out, table = [], []
    for line in markdown.split("\n") + [""]:
        if line.startswith("|"):
            cells = markdown_cells(line)
            if not all(set(c) <= set("-:") for c in cells):  # (the separator row)
                table.append(cells)
            continue
        if table:
            numeric = [all(_is_number(row[i]) for row in table[1:]) for i in range(len(table[0]))]
            left = numeric.index(True) if True in numeric else len(numeric)
            out.append(aligned(table, left))
            table = []
        out.append(line)
    return "\n".join(out[:-1])


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def _json_value(value):
    if isinstance(value, str) or value is None:
        return value
    return None if math.isnan(value) else value


def _latex_table(head, cells, rows, per_query, digits):
    first = 2 if per_query else 1
    best = {}
    for i in range(first, len(head)):
        numbers = [r[2][i - first] for r in rows if not isinstance(r[2][i - first], str)]
        best[i] = max(numbers) if numbers else None
    body = []
    for (_, _, values), row in zip(rows, cells):
        out = [latex_escape(v) for v in row[:first]]
        for i, text in enumerate(row[first:], first):
            value = values[i - first]
            out.append(rf"\textbf{{{text}}}" if value == best[i] and not per_query else
                       latex_escape(text))
        body.append(" & ".join(out) + r" \\")
    return "\n".join([r"\begin{tabular}{" + "l" * first + "r" * (len(head) - first) + "}",
                      r"\toprule", " & ".join(latex_escape(h) for h in head) + r" \\",
                      r"\midrule", *body, r"\bottomrule", r"\end{tabular}"]) + "\n"


def latex_escape(text):
    """``text`` with LaTeX's special characters escaped."""
    for char, escaped in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"),
                          ("$", r"\$"), ("#", r"\#"), ("_", r"\_"), ("{", r"\{"),
                          ("}", r"\}"), ("~", r"\textasciitilde{}"), ("^", r"\^{}")):
        text = text.replace(char, escaped)
    return text
