"""The critical path of each step, per rank and across ranks, and what-if re-timing: a
trace's dependency graph (`build`, from `host`, `device` and `host_links`), evaluated by
longest path (`graph`, `retime`), ranks joined at their collectives (`joint`), steps and
paths (`anchors`, `outcome`, `path`), changes (`changes`), runs too large to hold whole
(`reduce`, `summaries`), the views (`view`, `span`, `run`) and their endpoints
(`endpoint`). A comparison: it matches collectives by the Distributed view's rules. The
method: docs/critical_path.md."""
