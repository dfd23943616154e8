"""`panel serve apps/explorer.py` entry point (placeholder until the app lands)."""

import panel as pn

import explorer

pn.extension()
pn.Column(
    "# Feature Selection Explorer",
    f"Methods: {', '.join(sorted(explorer.REGISTRY))}",
    f"Datasets: {', '.join(explorer.catalogue())}",
).servable(title="Feature Selection Explorer")
