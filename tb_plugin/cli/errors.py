"""Exit codes and errors of the CLI's commands (`report`, `diff`, `check`, `trend`): 0 done,
1 a regression found (`trend --fail-on-regression`), 2 a usage error (a bad argument, a
`--param` a view refuses or none takes), 3 a trace (or a Dask scheduler) that cannot be read,
or a view past one of its caps (`too_large`, the route's 413)."""

from __future__ import annotations

from typing import Any

EXIT_USAGE, EXIT_LOAD = 2, 3
EXIT_REGRESSION = 1  # `kinetoscope trend --fail-on-regression` found one


class ReportError(Exception):
    pass


class ParamRefused(ReportError):
    """A `--param` that no view asked takes, or that a view refused: a usage error
    (EXIT_USAGE), as the route's 400."""


class RunFailed(ReportError):
    """A run's trace could not be read; `result` is what the JSON says of it."""

    def __init__(self, message: str, result: dict[str, Any]) -> None:
        super().__init__(message)
        self.result = result
