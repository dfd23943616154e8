"""Sphinx configuration of the Feature Selection Explorer documentation (``make docs``).

The site builds offline: no intersphinx inventories, no remote assets.
"""

from __future__ import annotations

import re

import explorer

project = "Feature Selection Explorer"
author = "Feature Selection Explorer team"
copyright = "2026, Feature Selection Explorer team"
version = release = explorer.__version__

extensions = [
    "myst_parser",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx_copybutton",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
templates_path = ["_templates"]
root_doc = "index"

myst_enable_extensions = ["colon_fence", "dollarmath"]
myst_heading_anchors = 3

autosummary_generate = True
autosummary_ignore_module_all = False
autodoc_default_options = {"members": False}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

copybutton_prompt_text = r">>> |\.\.\. |\$ "
copybutton_prompt_is_regexp = True

html_theme = "pydata_sphinx_theme"
html_title = "Feature Selection Explorer"
html_static_path = ["_static"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 4,
    "secondary_sidebar_items": ["page-toc"],
}
html_sidebars = {"**": ["sidebar-nav-bs"]}
html_show_sourcelink = False


_CODE = re.compile(r"(``.*?``|`[^`]*`)")


def _plain_bars(app, what, name, obj, options, lines):
    """Docstrings write math in plain Unicode: ``|w_j|`` is an absolute value, never a
    reStructuredText substitution, so bars outside code spans are escaped."""
    for i, line in enumerate(lines):
        parts = _CODE.split(line)
        lines[i] = "".join(p if j % 2 else p.replace("|", r"\|") for j, p in enumerate(parts))


def setup(app):
    app.connect("autodoc-process-docstring", _plain_bars)
