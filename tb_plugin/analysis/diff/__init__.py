"""The diff of two traces: `view.diff` (types in `types.py`)."""
