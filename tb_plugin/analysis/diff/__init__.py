"""The diff of two traces, a comparison above the views: `view.diff` (types in `types.py`),
and its endpoint (`endpoint.py`)."""
