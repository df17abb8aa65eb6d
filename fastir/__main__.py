"""``python -m fastir trec_eval ...``"""

import sys

from fastir.cli.main import main

sys.exit(main())
