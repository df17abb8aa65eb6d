"""The command line: the dispatch (``main``), trec_eval's mode (``trec_eval``, with its
output in ``trec_output``), the people's commands (``commands``), ``warmup`` and
``example``."""
