"""``python -m fastir trec_eval ...``"""

from fastir.cli.main import program

program()
