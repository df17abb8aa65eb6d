"""I/O layer: files and frames into the CSR containers of :mod:`fastir.model.data`."""
