"""What is done with evaluations: significance (``stats``), assessor agreement
(``agreement``), how judgments move a ranking of systems (``meta``), a mean from few human
and many machine judgments (``ppi``), reproducibility
(``reproducibility``), precision-recall and cutoff curves (``curves``) and rank fusion
(``fusion``)."""
