"""``fastir.dask``: see :mod:`fastir.scale.dask` (kept here, where users import it)."""

from fastir.scale.dask import *  # noqa: F401,F403
from fastir.scale.dask import __all__  # noqa: F401
