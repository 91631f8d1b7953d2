"""The `compile` view, run-level: what a run's TORCH_TRACE compile logs say (compiles,
recompiles and why, graph breaks, failures, cache hits, CUDA-graph notes: `records`,
`entries`, `reasons`), placed on its traces' clocks and steps (`align`, `steps`), with
advice (`advice`), and its endpoint (`endpoint.py`). The logs are read by
`ingest/compile_log` and listed by discovery (`ingest/compile_log_files`)."""
