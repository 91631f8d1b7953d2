"""`kinetoscope` and `python -m kinetoscope`: the command picks the door (the CLI's
`report` and `diff`, or the MCP server), so the doors need not import each other."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["mcp"]:
        from .mcp.server import main as mcp_main

        return mcp_main(args[1:])
    from .cli.main import main as cli_main

    return cli_main(args)


if __name__ == "__main__":  # decoding workers (spawn) import this module again
    sys.exit(main())
