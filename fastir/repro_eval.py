"""repro_eval's reproducibility and replicability measures, computed by fastir: ``from
fastir.repro_eval import RpdEvaluator, RplEvaluator`` in place of ``from
repro_eval.Evaluator import ...``; repro_eval's ``util`` and ``measure`` functions come from
here too (see :mod:`fastir.peers.repro_eval`)."""

from fastir.peers.repro_eval import (
    DRI,
    ER,
    ERR_MSG,
    KTU,
    RBO,
    RBO_DEPTH,
    RBO_P,
    RMSE,
    RUN_LENGTH,
    Evaluator,
    RpdEvaluator,
    RplEvaluator,
    arp,
    arp_scores,
    break_ties,
    evaluate_run,
    exclude,
    load_measures,
    load_qrels,
    load_run,
    nRMSE,
    print_base_adv,
    print_simple_line,
    topic_scores,
    trim_run,
    ttest,
)

__all__ = ["DRI", "ER", "ERR_MSG", "KTU", "RBO", "RBO_DEPTH", "RBO_P", "RMSE", "RUN_LENGTH",
           "Evaluator", "RplEvaluator", "RpdEvaluator", "arp", "arp_scores", "break_ties",
           "evaluate_run", "exclude", "load_measures", "load_qrels", "load_run", "nRMSE",
           "print_base_adv", "print_simple_line", "topic_scores", "trim_run", "ttest"]
