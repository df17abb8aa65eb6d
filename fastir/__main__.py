"""``python -m fastir trec_eval ...``"""

import sys

from fastir.cli import main

sys.exit(main())
