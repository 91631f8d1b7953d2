"""A TCP proxy in front of a real server (the moto S3 server of the cloud tests) that can be
made to fail the way networks do, switched while it runs:

- "pass": every byte forwarded both ways;
- "cut": a response whose body is longer than `cut_at` bytes is cut there and the
  connection closed (a dropped connection mid-download: aiohttp's ClientPayloadError);
  shorter responses (listings, HEAD) pass whole;
- "hang": connections are accepted and requests read, nothing is ever answered;
- "hang_reads": like "hang" for the responses "cut" would cut (reads of an object's
  content), listings and HEAD requests answered.

`cuts_left`: how many responses "cut" cuts before passing the rest (None: all). Responses
are framed by their Content-Length (what moto sends; a HEAD answer has no body)."""

from __future__ import annotations

import re
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress

_LENGTH = re.compile(rb"\r\ncontent-length:\s*(\d+)", re.IGNORECASE)
_REQUEST = re.compile(rb"(?:^|\n)([A-Z]+) \S+ HTTP/1\.[01]\r\n")


class FaultProxy:
    def __init__(self, upstream: str, cut_at: int = 2048) -> None:
        host, port = upstream.rsplit("//", 1)[-1].split(":")
        self.upstream = (host, int(port))
        self.mode = "pass"
        self.cut_at = cut_at
        self.cuts = 0  # responses cut so far
        self.cuts_left: int | None = None
        self._server = socket.socket()
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(64)
        self._stop = threading.Event()
        self._conns: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.getsockname()[1]}"

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        for conn in list(self._conns):
            _close(conn)
        self._server.close()

    def _accept(self) -> None:
        self._server.settimeout(0.2)
        while not self._stop.is_set():
            try:
                client, _ = self._server.accept()
            except OSError:
                continue
            self._conns.append(client)
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        if self.mode == "hang":  # new connections: not even forwarded
            while not self._stop.is_set() and client.recv(65536):
                pass  # read every request, answer none
            return
        try:
            upstream = socket.create_connection(self.upstream, timeout=30)
        except OSError:
            _close(client)
            return
        self._conns.append(upstream)
        methods: list[bytes] = []
        threading.Thread(target=_pump, args=(client, upstream, methods), daemon=True).start()
        self._responses(upstream, client, methods)

    def _responses(
        self, upstream: socket.socket, client: socket.socket, methods: list[bytes]
    ) -> None:
        """Forward responses one by one, cutting long bodies in "cut" mode."""
        buffer = b""
        try:
            while True:
                while b"\r\n\r\n" not in buffer:
                    data = upstream.recv(65536)
                    if not data:
                        return
                    buffer += data
                head, _, buffer = buffer.partition(b"\r\n\r\n")
                m = _LENGTH.search(head)
                head_only = bool(methods) and methods.pop(0) == b"HEAD"
                length = int(m.group(1)) if m and not head_only else 0
                while len(buffer) < length:
                    data = upstream.recv(65536)
                    if not data:
                        break
                    buffer += data
                body, buffer = buffer[:length], buffer[length:]
                long = length > self.cut_at
                if self.mode == "hang" or (self.mode == "hang_reads" and long):
                    self._stop.wait()  # a store that stops answering mid-connection
                    return
                if self.mode == "cut" and long and self.cuts_left != 0:
                    self.cuts += 1
                    if self.cuts_left is not None:
                        self.cuts_left -= 1
                    client.sendall(head + b"\r\n\r\n" + body[: self.cut_at])
                    return  # the connection drops mid-body
                client.sendall(head + b"\r\n\r\n" + body)
        except OSError:
            return
        finally:
            _close(client)
            _close(upstream)


def _pump(source: socket.socket, sink: socket.socket, methods: list[bytes]) -> None:
    try:
        while data := source.recv(65536):
            methods.extend(_REQUEST.findall(data))
            sink.sendall(data)
    except OSError:
        pass
    finally:
        _close(sink)


def _close(conn: socket.socket) -> None:
    with suppress(OSError):
        conn.shutdown(socket.SHUT_RDWR)
    conn.close()


@contextmanager
def fault_proxy(upstream: str, cut_at: int = 2048) -> Iterator[FaultProxy]:
    proxy = FaultProxy(upstream, cut_at)
    try:
        yield proxy
    finally:
        proxy.close()
