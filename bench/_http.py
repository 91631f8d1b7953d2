"""Tiny HTTP helpers for loopback servers (standard library only)."""

from __future__ import annotations

import http.client
import json
import socket
import time
from typing import Any, Optional
from urllib.parse import urlencode

HOST = "127.0.0.1"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def path_with(path: str, params: Optional[dict[str, str]] = None) -> str:
    return path + ("?" + urlencode(params) if params else "")


def get(
    port: int, path: str, timeout: float = 30.0, headers: Optional[dict[str, str]] = None
) -> tuple[Optional[int], bytes, float]:
    """GET http://127.0.0.1:port/path: (status or None on a connection error, body as sent,
    seconds)."""
    started = time.perf_counter()
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        conn.request("GET", path, headers=headers or {})
        resp = conn.getresponse()
        body = resp.read()
        return resp.status, body, time.perf_counter() - started
    except (OSError, http.client.HTTPException) as e:
        return None, str(e).encode(), time.perf_counter() - started
    finally:
        conn.close()


def get_json(port: int, path: str, timeout: float = 30.0) -> tuple[Optional[int], Any]:
    """GET and decode JSON: (status, document or None)."""
    status, body, _ = get(port, path, timeout)
    if status is None:
        return None, None
    try:
        return status, json.loads(body)
    except ValueError:
        return status, None
