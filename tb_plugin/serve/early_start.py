"""The plugin's session begun while TensorBoard is still starting: at its `fix_flags`
(the logdir is known then), before it builds its data provider and its plugins, not when
it builds ours.

What a user waits for first is the load of the span the page opens first
(`Session.load_first_span`). TensorBoard builds the plugins after its data provider; with
`--load_fast=auto` (its default) that starts its data server and, when the server has
not written its port 10 ms later (a busy machine), sleeps 0.5 s before looking again: a
load begun when our plugin is built waits that out too. Begun here, it runs meanwhile.

Its own thread imports the session's modules and begins the load; the plugin, when
TensorBoard builds it, takes that session (`session_for`) after the thread is over, so
our modules are never imported by two threads at once."""

from __future__ import annotations

import logging
import os
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..api.session import Session

log = logging.getLogger(__name__)


def flags_logdir(flags: Any) -> str:
    """The logdir TensorBoard's flags name, as the plugin reads it from its context."""
    logdir = getattr(flags, "logdir", "") or getattr(flags, "logdir_spec", "")
    return os.path.expanduser(logdir or "")


def serves(flags: Any) -> bool:
    """Whether TensorBoard will serve a logdir with these flags (not `--inspect` or
    `--version_tb`, which end before any plugin is built)."""
    quits = getattr(flags, "inspect", False) or getattr(flags, "version_tb", False)
    return bool(flags_logdir(flags)) and not quits


def begin_session(logdir: str) -> Session:
    """The server's session for `logdir`, the first span's load begun. The listing is
    watched in the background; its first one runs off the request thread: a store that
    never answers must not hold TensorBoard's plugins_listing (every plugin's page)."""
    from ..api.session import Session
    from .startup_freeze import freeze_startup_objects

    session = Session.for_server(logdir)
    # Before any trace loads: the process's objects so far, out of the GC's walks.
    freeze_startup_objects()
    if logdir:
        session.load_first_span()  # the page opens it first: its load starts now
    return session


class EarlyStart:
    """`begin_session(logdir)` in a thread of its own, before the plugin is built."""

    def __init__(self, logdir: str) -> None:
        self.logdir = logdir
        self._session: Session | None = None
        self._thread = threading.Thread(
            target=self._begin, name="kinetoscope-early-start", daemon=True
        )
        self._thread.start()

    def _begin(self) -> None:
        try:
            self._session = begin_session(self.logdir)
        except Exception:  # noqa: BLE001 - the plugin makes its own session, and says why
            log.warning("kinetoscope: early start failed", exc_info=True)

    def wait(self) -> None:
        """Until the thread is over (its imports done, the load begun)."""
        self._thread.join()

    def session_for(self, logdir: str) -> Session | None:
        """The session begun, when it is for `logdir`; else None (one for another logdir
        is closed: the plugin makes its own)."""
        self.wait()
        session, self._session = self._session, None
        if session is not None and logdir != self.logdir:
            stop = getattr(session.listing, "stop", None)  # its watcher's thread too
            if stop is not None:
                stop()
            session.close()
            return None
        return session
