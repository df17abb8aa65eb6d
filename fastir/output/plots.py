"""Pictures with matplotlib (the ``plot`` extra, imported when a picture is drawn):
precision-recall curves, per-query differences of two runs, measures by cutoff, systems'
means under two qrels, runs' values with their tie and residual ranges."""

import os
from collections import namedtuple

import numpy as np

from fastir._optional import require
from fastir.output.writing import atomic_write

#: The textbooks' (and trec_eval's 11pt_avg) recall levels.
ELEVEN_POINTS = tuple(i / 10 for i in range(11))

#: A mean precision-recall curve as :func:`plot_pr` draws it (``recall``, ``mean``: arrays
#: of the levels; :class:`fastir.analysis.curves.PRCurve` is one too).
Curve = namedtuple("Curve", "name recall mean")


def pyplot():
    """matplotlib's pyplot, or a ModuleNotFoundError that says how to install it."""
    return require("matplotlib.pyplot", "pictures")


def to_files():
    """Draw into files, with no screen (matplotlib's Agg backend); a ModuleNotFoundError
    that says how to install matplotlib when it is missing."""
    require("matplotlib", "pictures").use("Agg")


def _axes(ax):
    if ax is not None:
        return ax
    return pyplot().subplots(figsize=(6, 4.5))[1]


def eleven_points(recall, mean):
    """``{recall: mean}`` at 0.0, 0.1, ..., 1.0 (those among the curve's levels)."""
    return {r: float(p) for r, p in zip(np.asarray(recall).tolist(),
                                        np.asarray(mean).tolist()) if r in ELEVEN_POINTS}


def plot_pr(curves, ax=None, eleven=True):
    """The mean interpolated precision-recall curve of each :data:`Curve` (name, recall,
    mean), the eleven standard points as markers; returns the axes."""
    ax = _axes(ax)
    for curve in curves:
        (line,) = ax.plot(curve.recall, curve.mean, label=curve.name, drawstyle="default")
        points = eleven_points(curve.recall, curve.mean) if eleven else {}
        if points:
            ax.plot(list(points), list(points.values()), "o", color=line.get_color(),
                    markersize=4)
    ax.set_xlabel("recall")
    ax.set_ylabel("interpolated precision")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xticks(ELEVEN_POINTS)
    ax.grid(alpha=0.3)
    ax.set_title("Interpolated precision-recall (mean over queries)")
    ax.legend()
    return ax


def plot_delta(differences, measure, label, ax=None):
    """Per-query differences of two runs on one measure, sorted (above 0: the first run
    wins); returns the axes."""
    ax = _axes(ax)
    d = np.sort(np.asarray(differences, dtype=np.float64))[::-1]
    x = np.arange(len(d))
    ax.bar(x, d, width=1.0, color=np.where(d > 0, "tab:green", "tab:red"), linewidth=0)
    ax.axhline(0, color="black", linewidth=0.8)
    wins, losses = int((d > 0).sum()), int((d < 0).sum())
    ax.set_xlabel(f"queries, sorted ({wins} better, {len(d) - wins - losses} equal, "
                  f"{losses} worse)")
    ax.set_ylabel(f"difference in {measure}")
    ax.set_title(label)
    ax.set_xlim(-0.5, max(len(d), 1) - 0.5)
    return ax


def plot_cutoffs(curves, ax=None):
    """Mean measures by cutoff (each with ``name``, ``cutoffs`` and ``means``: ``{family:
    array}``, as :class:`~fastir.analysis.curves.CutoffCurve`): one line per run and family;
    returns the axes."""
    ax = _axes(ax)
    styles = ["-", "--", ":", "-."]
    for i, curve in enumerate(curves):
        for j, (family, means) in enumerate(curve.means.items()):
            label = f"{curve.name}: {family}@k" if len(curves) > 1 else f"{family}@k"
            ax.plot(curve.cutoffs, means, styles[j % len(styles)], label=label,
                    color=f"C{i if len(curves) > 1 else j}")
    ax.set_xlabel("cutoff k")
    ax.set_ylabel("mean over queries")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend()
    return ax


def plot_system_means(systems, means_a, means_b, name_a, name_b, measure, stats=None,
                      ax=None):
    """Each system's mean under two qrels (``name_a`` across, ``name_b`` up), named, with the
    diagonal where they would agree; ``stats`` (``tau``, ``tau_ap``, ``swaps``...) go in the
    title. Returns the axes."""
    ax = _axes(ax)
    a, b = np.asarray(means_a, dtype=np.float64), np.asarray(means_b, dtype=np.float64)
    low = min(a.min(), b.min()) if len(a) else 0.0
    high = max(a.max(), b.max()) if len(a) else 1.0
    pad = (high - low) * 0.05 or 0.05
    ax.plot([low - pad, high + pad], [low - pad, high + pad], color="grey", linewidth=0.8,
            linestyle="--", label="the same mean")
    ax.scatter(a, b, color="tab:blue", zorder=3)
    for name, x, y in zip(systems, a.tolist(), b.tolist()):
        ax.annotate(name, (x, y), textcoords="offset points", xytext=(4, 3), fontsize=8)
    ax.set_xlim(low - pad, high + pad)
    ax.set_ylim(low - pad, high + pad)
    ax.set_xlabel(f"{measure} under {name_a}")
    ax.set_ylabel(f"{measure} under {name_b}")
    title = f"Systems under two qrels ({len(a)} systems)"
    if stats:
        title += (f"\nKendall's tau {stats['tau']:.3f}, tau-AP {stats['tau_ap']:.3f}, "
                  f"{stats['swaps']} of {stats['n_pairs']} pairs swapped")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    return ax


def plot_judged_systems(systems, means, low, high, names, measure, stats=None, ax=None):
    """Each system's value under two judges (``means[j, s]``, judge ``j``), side by side
    with its interval (``low``, ``high``, the same shape), the systems in the first judge's
    order; ``stats`` (``tau``, ``tau_ap``) go in the title. Returns the axes."""
    ax = _axes(ax)
    order = np.argsort(-np.asarray(means[0], dtype=np.float64), kind="stable")
    x = np.arange(len(order))
    for j, (name, shift, colour) in enumerate(zip(names, (-0.12, 0.12),
                                                  ("tab:blue", "tab:orange"))):
        values = means[j][order]
        below, above = values - low[j][order], high[j][order] - values
        ax.errorbar(x + shift, values, yerr=np.nan_to_num(np.vstack([below, above])),
                    fmt="o", color=colour, capsize=3, label=name)
    ax.set_xticks(x)
    ax.set_xticklabels([systems[i] for i in order], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(measure)
    title = f"Systems under two judges ({len(order)} systems)"
    if stats:
        title += f"\nKendall's tau {stats['tau']:.3f}, tau-AP {stats['tau_ap']:.3f}"
    ax.set_title(title)
    ax.grid(alpha=0.3, axis="y")
    ax.legend(loc="upper right")
    return ax


#: A run's summary with how far its ties and its unjudged documents could move it, as
#: :func:`plot_ranges` draws it: the value, the lowest and highest over the tie orders
#: (:func:`fastir.analysis.ties.tie_report`) and the value with every unjudged retrieved
#: document judged relevant (``unjudged="relevant"``).
Ranged = namedtuple("Ranged", "name value low high optimistic")


def plot_ranges(rows, measure, ax=None):
    """Each run's value (a dot) with its range over tie orders (a wide bar) and, beside it,
    a line up to its optimistic value (its residual), one column per :data:`Ranged` row;
    returns the axes."""
    ax = _axes(ax)
    for i, row in enumerate(rows):
        ax.plot([i, i], [row.low, row.high], color="tab:orange", linewidth=14, alpha=0.7,
                solid_capstyle="butt", label="range over tie orders" if i == 0 else None)
        ax.plot([i + 0.15] * 2, [row.value, row.optimistic], color="tab:gray", linewidth=1.5,
                label="residual: unjudged judged relevant" if i == 0 else None)
        ax.plot(i + 0.15, row.optimistic, "_", color="tab:gray", markersize=12)
        ax.plot(i, row.value, "o", color="black", markersize=5,
                label="value (trec_eval's order)" if i == 0 else None)
    ax.set_xticks(np.arange(len(rows)), [row.name for row in rows])
    ax.set_xlim(-0.6, len(rows) - 0.4)
    low = min([row.low for row in rows], default=0.0)
    high = max([max(row.high, row.optimistic) for row in rows], default=1.0)
    margin = max(0.05 * (high - low), 0.01)
    ax.set_ylim(low - margin, high + margin)
    ax.set_ylabel(f"{measure} (mean over queries)")
    ax.grid(alpha=0.3, axis="y")
    ax.set_title(f"{measure}: the value, its tie range and its residual")
    ax.legend(loc="best")
    return ax


def save(ax, path):
    """Write the axes' figure to ``path``, its format from the extension (none: matplotlib's
    default format, PNG, whose extension is added to the name, as matplotlib does), whole or
    not at all (:func:`~fastir.output.writing.atomic_write`); the path written."""
    figure = ax.figure
    figure.tight_layout()
    path = os.fspath(path)
    fmt = os.path.splitext(path)[1][1:]
    if not fmt:
        fmt = figure.canvas.get_default_filetype()
        path = f"{path.rstrip('.')}.{fmt}"
    with atomic_write(path, binary=True) as file:
        figure.savefig(file, format=fmt, dpi=120)
    pyplot().close(figure)
    return path
