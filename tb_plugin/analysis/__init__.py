"""Views as pure functions of a TraceModel."""
