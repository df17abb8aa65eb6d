"""The data model: exact id columns, CSR qrels and runs (with subtopic judgments), the one
ranking order, and the qrels-run join."""
