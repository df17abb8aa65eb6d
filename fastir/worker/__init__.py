"""The warm worker: a resident process that keeps numba and fastir's kernels loaded and
runs the command line's requests in forked children, so that a command pays Python's start
and not numba's. ``common`` (where it lives, who it is, how a message is framed) and
``client`` import only the standard library; ``server`` is given the command line's dispatch
by :mod:`fastir.cli.main`, so nothing here imports the rest of fastir."""
