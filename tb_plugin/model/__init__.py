"""The bottom floor: the columnar `TraceModel`, its `Kind`/`Phase` categories, and the
error types every layer may raise. Imports nothing of kinetoscope's other floors."""
