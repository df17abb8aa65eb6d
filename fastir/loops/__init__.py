"""Evaluation in loops: one qrels, many runs or score vectors (``evaluator``: ``Evaluator``,
bound candidates, ``evaluate_matrix``) and training steps (``training``:
``MetricAccumulator``, ``evaluate_flat``)."""
