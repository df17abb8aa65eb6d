"""What is done with evaluations: significance (``stats``), assessor agreement
(``agreement``) and how judgments move a ranking of systems (``meta``), reproducibility
(``reproducibility``), precision-recall and cutoff curves (``curves``) and rank fusion
(``fusion``)."""
