"""ranx's ``Report`` (what :func:`fastir.ranx.compare` returns): the same attributes, table
text (``print(report)``: ranx's, through ``tabulate``, which ranx installs), LaTeX, dict,
DataFrame and JSON file; and the report of :func:`fastir.ranx.optimize_fusion`."""

import json

from fastir._optional import require
from fastir.output.writing import atomic_write

LETTERS = "abcdefghijklmnopqrstuvwxyz"
SUPERSCRIPTS = "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖ۹ʳˢᵗᵘᵛʷˣʸᶻ"  # (ranx's, its 'q' included)
LABELS = {"hits": "Hits", "hit_rate": "Hit Rate", "precision": "P", "recall": "Recall",
          "f1": "F1", "r-precision": "R-Prec", "mrr": "MRR", "map": "MAP", "dcg": "DCG",
          "dcg_burges": "DCG Burges", "ndcg": "NDCG", "ndcg_burges": "NDCG Burges",
          "bpref": "BPref", **{f"rbp.{i}": f"RBP.{i}" for i in range(1, 100)}}
TESTS = {"fisher": "Fisher's randomization test", "student": "paired Student's t-test",
         "tukey": "Tukey's HSD test"}


class Pairs(dict):
    """``{frozenset({a, b}): value}`` read with any pair of the two names (ranx's
    ``FrozensetDict``)."""

    def __getitem__(self, key):
        return super().__getitem__(frozenset(key))

    def __setitem__(self, key, value):
        super().__setitem__(frozenset(key), value)


class Report:
    """A comparison of runs, as ranx reports it: ``model_names``, ``results`` (``{model:
    {metric: mean}}``), ``comparisons`` (``{pair: {metric: {"p_value", "significant"}}}``),
    ``win_tie_loss`` (``{(model, other): {metric: {"W", "T", "L"}}}``), ``metrics``,
    ``max_p``, ``stat_test``; ``str(report)`` is ranx's table: each mean with a superscript
    letter per model it is significantly better than."""

    def __init__(self, model_names, results, comparisons, metrics, max_p, win_tie_loss,
                 rounding_digits=3, show_percentages=False, stat_test="student"):
        self.model_names, self.results, self.comparisons = model_names, results, comparisons
        self.metrics, self.max_p, self.win_tie_loss = metrics, max_p, win_tie_loss
        self.rounding_digits, self.show_percentages = rounding_digits, show_percentages
        self.stat_test = stat_test

    def format_score(self, score):
        if self.show_percentages:
            digits = self.rounding_digits - 2
            return f"{round(score * 100, max(0, digits)):.{digits}f}"
        return f"{round(score, self.rounding_digits):.{self.rounding_digits}f}"

    def _beaten(self, model, metric):
        """The indexes of the models ``model`` is significantly better than on ``metric``."""
        return [j for j, other in enumerate(self.model_names)
                if other != model and self.comparisons[model, other][metric]["significant"]
                and self.results[model][metric] > self.results[other][metric]]

    def get_superscript_for_table(self, model, metric):
        return "".join(SUPERSCRIPTS[j] for j in self._beaten(model, metric))

    def get_metric_label(self, metric):
        """ranx's column label (``NDCG@10``, ``MAP-l2``); a name ranx lacks, as given."""
        name, _, level = metric.partition("-l")
        base, at, cutoff = name.partition("@")
        label = LABELS.get(base, base) + at + cutoff
        return f"{label}-l{level}" if level else label

    def get_stat_test_label(self, stat_test):
        return TESTS[stat_test]

    def to_table(self):
        """ranx's table text (``tabulate``'s simple format)."""
        tabulate = require("tabulate", "ranx's report table (fastir.ranx)").tabulate

        rows = [[LETTERS[i], model] + [self.format_score(score)
                                       + self.get_superscript_for_table(model, metric)
                                       for metric, score in scores.items()]
                for i, (model, scores) in enumerate(self.results.items())]
        headers = ["#", "Model"] + [self.get_metric_label(m) for m in self.metrics]
        return tabulate(tabular_data=rows, headers=headers)

    def to_latex(self):
        """ranx's LaTeX table (booktabs): the best mean of each metric in bold."""
        best = {}
        for metric in self.metrics:
            top = 0.0
            for model in self.model_names:
                if top < round(self.results[model][metric], self.rounding_digits):
                    top, best[metric] = round(self.results[model][metric],
                                              self.rounding_digits), model
        head = "".join(f"\n& \\textbf{{{self.get_metric_label(m)}}}" for m in self.metrics)
        prefix = (
            "% To change the table size, act on the resizebox argument `0.8`.\n"
            "\\begin{table*}[ht]\n\\centering\n\\caption{\nOverall effectiveness of the "
            "models.\nThe best results are highlighted in boldface.\nSuperscripts denote "
            f"significant differences in {TESTS[self.stat_test]} with $p \\le {self.max_p}$."
            "\n}\n\\resizebox{0.8\\textwidth}{!}{\n\\begin{tabular}{c|l"
            + "|c" * len(self.metrics) + "}\n\\toprule\n\\textbf{\\#}\n& \\textbf{Model}"
            + head + " \\\\ \n\\midrule")
        rows = [self._latex_row(i, model, best) for i, model in enumerate(self.model_names)]
        body = "\n".join(rows).replace("_", "\\_").replace("$^{}$", "")
        preamble = ("========================\n% Add in preamble\n\\usepackage{graphicx}\n"
                    "\\usepackage{booktabs}\n========================\n\n")
        suffix = ("\\bottomrule\n\\end{tabular}\n}\n\\label{tab:results}\n\\end{table*}")
        return preamble + "\n" + prefix + "\n" + body + "\n" + suffix

    def _latex_row(self, i, model, best):
        cells = []
        for metric in self.metrics:
            score = self.format_score(self.results[model][metric])
            score = f"\\textbf{{{score}}}" if best.get(metric) == model else score
            beaten = self._beaten(model, metric)
            marks = "".join(LETTERS[j] for j in beaten)
            phantoms = "".join(LETTERS[j] for j, other in enumerate(self.model_names)
                               if other != model and j not in beaten)
            cells.append(f"{score}$^{{{marks}}}$\\hphantom{{$^{{{phantoms}}}$}} &")
        cells[-1] = cells[-1][:-1]
        return f"{LETTERS[i]} &\n{model} &\n" + "\n".join(cells) + "\\\\"

    def to_dict(self):
        """``{"stat_test", "metrics", "model_names", model: {"scores", "comparisons"
        (p-values), "win_tie_loss"}}``, as ranx's."""
        out = {"stat_test": self.stat_test, "metrics": self.metrics,
               "model_names": self.model_names}
        for model in self.model_names:
            others = [m for m in self.model_names if m != model]
            out[model] = {
                "scores": self.results[model],
                "comparisons": {o: {m: self.comparisons[model, o][m]["p_value"]
                                    for m in self.metrics} for o in others},
                "win_tie_loss": {o: {m: self.win_tie_loss[(model, o)][m]
                                     for m in self.metrics} for o in others}}
        return out

    def to_dataframe(self):
        pd = require("pandas", "Report.to_dataframe (fastir.ranx)")

        frame = pd.DataFrame.from_dict(self.results, orient="index")
        return frame.reset_index().rename(columns={"index": "model_names"})

    def save(self, path):
        """Write as JSON (ranx's), whole or not at all."""
        with atomic_write(path) as f:
            f.write(json.dumps(self.to_dict(), indent=4))

    def print_results(self):
        print(json.dumps(self.results, indent=4))

    def __str__(self):
        return self.to_table()

    __repr__ = __str__


class OptimizationReport:
    """What :func:`fastir.ranx.optimize_fusion` tried: ``configs`` (the hyperparameters, in
    order) and ``results`` (the metric's value for each); printed as a plain table."""

    def __init__(self, method, configs, results, metric):
        self.method, self.configs, self.results, self.metric = method, configs, results, metric

    def __str__(self):
        width = max(len(str(c)) for c in self.configs)
        lines = [f"{self.method}: {self.metric}"]
        lines += [f"{str(c):<{width}}  {r:.4f}" for c, r in zip(self.configs, self.results)]
        return "\n".join(lines)

    __repr__ = __str__
