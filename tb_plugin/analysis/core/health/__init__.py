"""Trace health: what in a trace cannot be trusted (`checks`), and the `health` view that
reports it (`view`). In core because the Overview reads it too (its caveats); the view's
endpoint is in `analysis/health/`. The rows left out of time-based sums: `core/trusted_rows`."""
