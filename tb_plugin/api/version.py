"""The installed package's version, for the doors' `--version` and the MCP server's
`serverInfo` (from the distribution's metadata, read when asked: importing the top-level
package would pull in the notebook door; a test keeps it equal to
`kinetoscope.__version__`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, NoReturn


def package_version() -> str:
    from importlib import metadata  # ~50 ms to import: not on every command's start

    try:
        return metadata.version("kinetoscope")
    except metadata.PackageNotFoundError:  # a source tree that was never installed
        return "unknown"


class VersionAction(argparse.Action):
    """`--version`: prints "kinetoscope X.Y.Z" and exits."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> NoReturn:
        print(f"kinetoscope {package_version()}")
        parser.exit()
