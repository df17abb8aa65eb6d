"""What is done with evaluations: significance (``stats``), assessor agreement
(``agreement``), precision-recall and cutoff curves (``curves``) and rank fusion
(``fusion``)."""
