"""The Memory view: memory events prepared once, then levels, peaks and per-operator statistics."""
