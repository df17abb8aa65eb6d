"""``fastir.spark``: see :mod:`fastir.scale.spark` (kept here, where users import it)."""

from fastir.scale.spark import *  # noqa: F401,F403
from fastir.scale.spark import __all__  # noqa: F401
