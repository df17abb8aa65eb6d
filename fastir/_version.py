"""fastir's version, in a module of its own: the warm worker's identity and ``--version``
read it without ``fastir/__init__`` (which a folder named ``fastir`` in the working folder
can shadow: see ``fastir/__main__``)."""

__version__ = "0.1.0"
