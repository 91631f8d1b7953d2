"""Trends across the runs of a logdir: per-run summaries, the change detector, the view."""
