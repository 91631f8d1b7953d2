"""Exit codes and errors of the CLI's commands (`report`, `diff`, `check`, `trend`)."""

from __future__ import annotations

from typing import Any

EXIT_USAGE, EXIT_LOAD = 2, 3
EXIT_REGRESSION = 1  # `kinetoscope trend --fail-on-regression` found one


class ReportError(Exception):
    pass


class RunFailed(ReportError):
    """A run's trace could not be read; `result` is what the JSON says of it."""

    def __init__(self, message: str, result: dict[str, Any]) -> None:
        super().__init__(message)
        self.result = result
