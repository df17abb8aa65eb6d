"""``python -m naive`` (from tests/): the reference's self-check."""

from .check import _self_check

_self_check()
