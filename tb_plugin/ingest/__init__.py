"""Ingest: a trace file's name, discovery in a logdir, bounded reading, decoding, and
building the columnar model."""
