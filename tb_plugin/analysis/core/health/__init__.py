"""Trace health: what in a trace cannot be trusted (`checks`, `clocks`), the rows left out
of time-based sums (`trusted`), and the `health` view that reports both (`view`)."""
