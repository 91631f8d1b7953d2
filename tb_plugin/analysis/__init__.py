"""Views as pure functions of a TraceModel, on three levels (pyproject's `views` contract):

- `core/`: the shared floor (op tree, host ranges, launches, device kinds, trusted rows,
  kernel taxonomy, work formulas, steps, health checks, what an endpoint is). It imports
  no view.
- The views, one folder each, above core and beside each other: `overview`, `gpu_idle`,
  `health`, `memory`, `operators`, `kernels`, `modules`, `flamegraph`, `distributed`
  (run-level). A view imports core (and the floors below analysis), never another view.
  Each exports its endpoints in its `endpoint.py`; `api/view_folders.py` lists the folders.
- The comparisons, above the views: `diff` (two traces) and `trends` (a logdir's runs)
  are views of views: they compare what other views compute, so they read those views
  (by the names a view's `__init__` exports, or for the run-level Distributed view, its
  `summary`/`view` modules, kept out of its `__init__` so a report does not import them),
  and no view reads them.
"""
