"""Sphinx configuration of fastir's documentation (``./dev docs`` builds it offline)."""

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))
sys.path.insert(0, str(DOCS.parent))
os.environ.setdefault("FASTIR_WORKER", "off")
os.environ.setdefault("MPLBACKEND", "Agg")

from fastir._version import __version__  # noqa: E402

project = "fastir"
author = "fastir's authors"
copyright = "fastir's authors, MIT licence"
version = release = __version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "myst_parser",
    "fastir_docs",  # docs/_ext: the measure catalogue and the pictures, generated
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "README.md", "Thumbs.db", ".DS_Store"]
templates_path = ["_templates"]
root_doc = "index"

myst_enable_extensions = ["colon_fence"]
myst_heading_anchors = 3

autosummary_generate = True
autosummary_imported_members = False
autosummary_ignore_module_all = False  # a module's __all__ is its public names
autodoc_default_options = {"members": True, "undoc-members": False}
autodoc_member_order = "bysource"
# The peers' modules import their peer at import; the site documents them without it.
autodoc_mock_imports = ["torch", "ir_measures", "dask", "distributed", "pyarrow", "pandas"]

numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks = set()
numpydoc_xref_param_type = False

html_theme = "furo"
html_title = f"fastir {release}"
html_static_path = []
html_copy_source = False
suppress_warnings = ["myst.header"]
