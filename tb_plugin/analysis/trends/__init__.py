"""Trends across the runs of a logdir, a comparison above the views: per-run summaries, the
change detector, the view, and its endpoint (`endpoint.py`)."""
