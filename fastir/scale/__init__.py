"""Bigger than memory: runs read in query-complete chunks (``streaming``) and dask
DataFrames (``dask``, also importable as ``fastir.dask``)."""
