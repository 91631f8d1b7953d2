"""`kinetoscope` and `python -m kinetoscope`: the command picks the door (the CLI's
`report` and `diff`, or the MCP server), so the doors need not import each other."""

from __future__ import annotations

import atexit
import gc
import os
import sys
import threading
from collections.abc import Callable

# Set before anything imports numpy, whose import starts OpenBLAS's threads, one per core
# (~0.03 s of a 1 MB trace's 0.3 s report on 2 cores, more with more cores): no command
# does linear algebra. A value the user set is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def main(argv: list[str] | None = None) -> int:
    door_main, door_args = door(sys.argv[1:] if argv is None else argv)
    return door_main(door_args)


def door(args: list[str]) -> tuple[Callable[[list[str]], int], list[str]]:
    """The main function of the door `args` pick (imported), and its arguments."""
    if args[:1] == ["mcp"]:
        from .mcp.server import main as mcp_main

        return mcp_main, args[1:]
    from .cli.main import main as cli_main

    return cli_main, args


def run() -> None:
    """The process's entry (the `kinetoscope` script, `python -m kinetoscope`): `main`,
    then the exit without the interpreter's teardown when nothing is left to finish.
    The door's modules import without the cyclic garbage collector, and what they made
    is then frozen (kept out of every later collection): they live as long as the
    process, and the collections that walked them were ~7 ms of a 36 MB trace's 0.25 s
    cold report."""
    gc.disable()
    try:
        if sys.argv[1:2] != ["mcp"]:  # a server's threads keep arenas of their own
            from .ingest.heap import one_heap_for_big_arrays

            one_heap_for_big_arrays()  # before any thread starts
        door_main, door_args = door(sys.argv[1:])
    finally:
        gc.freeze()
        gc.enable()
    exit_now(door_main(door_args))


def exit_now(code: int) -> None:
    """Exit with `code`, past the interpreter's teardown (freeing every module and
    object: ~0.04 s, a sixth of a small trace's report) once the output is written:
    stdout and stderr flushed, the exit handlers run (logging's, multiprocessing's).
    A thread still running that is not a daemon, a child process still running (a
    pool's worker), or output that cannot be flushed (a closed pipe), takes the
    ordinary exit, which waits for it or says so."""
    main_thread = threading.main_thread()
    if any(t is not main_thread and not t.daemon for t in threading.enumerate()):
        sys.exit(code)
    # A process pool's workers still up (a run's rank summaries) are shut down by the
    # interpreter's own exit; multiprocessing's exit handler alone would join them while
    # they wait for work, for ever.
    multiprocessing = sys.modules.get("multiprocessing")
    if multiprocessing is not None and multiprocessing.active_children():
        sys.exit(code)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(code)
    atexit._run_exitfuncs()
    os._exit(code)


if __name__ == "__main__":  # decoding workers (spawn) import this module again
    run()
