"""The routes' JSON compressed for a client that accepts gzip (a browser does): by isal's
igzip at level 1 (zlib's level 1 where isal is missing), and a body answered again (the
same bytes object) compressed once.

TensorBoard's `http_util.Respond` compresses each textual answer at zlib's level 3 for
such a client. Measured on a 4 GB trace's trace-view answers (~140 KB of JSON each):
level 3 takes ~1.0 ms of the server's CPU a body, more than computing most of them;
zlib's level 1 ~0.67 ms for a body ~4 % larger. isal's level 1 (CPU best of 5 over the
bench load's 400 first bodies, 126 KB on average): 0.17 ms a body against zlib level 1's
0.58, and 6 % smaller (19.5 % of the JSON against 20.8 %); both let the GIL go while
they compress. The bodies a page asks again are the same object each time (the track
list at every pan, a window asked again: `KeptAnswers`; a view's cached JSON: the
store's), so the last few bodies' gzip is kept, found by identity: no body is hashed (a
fresh window's would cost a tenth of its compression)."""

from __future__ import annotations

import gzip
import re
import threading
from collections import OrderedDict
from collections.abc import Callable

_compress: Callable[..., bytes]  # one gzip member; mtime=0: the same bytes each time
try:
    from isal.igzip import compress as _compress
except ImportError:  # pragma: no cover - isal is a declared dependency
    _compress = gzip.compress

# TensorBoard's own rule (http_util): gzip, x-gzip or *, unless with q=0. Where the two
# disagreed, Respond would unpack the gzip again for the client: the same answer.
_ACCEPTS_GZIP = re.compile(r"(?:^|,|\s)(?:(?:x-)?gzip|\*)(?!;q=0)(?:\s|,|$)")
LEVEL = 1
KEPT_BODIES = 32
KEPT_BYTES = 32 << 20  # bodies and their gzip kept, at most (a bigger body is not kept)


def accepts_gzip(accept_encoding: str | None) -> bool:
    """Whether a request's Accept-Encoding header takes gzip (TensorBoard's rule)."""
    return bool(_ACCEPTS_GZIP.search(accept_encoding or ""))


class GzipMemo:
    """The gzip of the last `size` bodies compressed, by the body object's identity (each
    entry holds its body, so no other object can take its id while it is kept)."""

    def __init__(self, size: int = KEPT_BODIES, max_bytes: int = KEPT_BYTES) -> None:
        self.size = size
        self.max_bytes = max_bytes
        self._kept: OrderedDict[int, tuple[bytes, bytes]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def compressed(self, body: bytes) -> bytes:
        """`body` as one gzip member (level 1, no time stamp: the same bytes each time)."""
        with self._lock:
            found = self._kept.get(id(body))
            if found is not None and found[0] is body:
                self._kept.move_to_end(id(body))
                return found[1]
        packed = _compress(body, compresslevel=LEVEL, mtime=0)
        self._keep(body, packed)
        return packed

    def _keep(self, body: bytes, packed: bytes) -> None:
        cost = len(body) + len(packed)
        if cost > self.max_bytes:
            return
        with self._lock:
            old = self._kept.pop(id(body), None)
            if old is not None:
                self._bytes -= len(old[0]) + len(old[1])
            self._kept[id(body)] = (body, packed)
            self._bytes += cost
            while len(self._kept) > self.size or self._bytes > self.max_bytes:
                _, (gone, gone_packed) = self._kept.popitem(last=False)
                self._bytes -= len(gone) + len(gone_packed)
