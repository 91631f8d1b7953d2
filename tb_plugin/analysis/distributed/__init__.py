"""The Distributed view, run-level: every rank of a job, communication, waits and
stragglers, and its endpoint (`endpoint.py`). Kept light: the comparisons import its
`summary` and `view` modules, so a report of one trace does not load them."""
