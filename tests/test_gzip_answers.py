"""The routes' JSON for a client that accepts gzip: compressed by the plugin (level 1),
the same answer once unpacked; a body answered again compressed once (`GzipMemo`)."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path

from builders import TraceBuilder
from conftest import PluginClient
from kinetoscope.serve.gzip_answers import GzipMemo, accepts_gzip

GZIP = {"Accept-Encoding": "gzip, deflate, br"}


def test_accepts_gzip_as_tensorboard_does() -> None:
    assert accepts_gzip("gzip, deflate, br")
    assert accepts_gzip("x-gzip")
    assert accepts_gzip("*")
    assert not accepts_gzip("gzip;q=0")
    assert not accepts_gzip("identity")
    assert not accepts_gzip(None)


def test_a_body_is_compressed_once_while_kept() -> None:
    memo = GzipMemo(size=2)
    body = b'{"rows": [' + b",".join(b"%d" % i for i in range(5000)) + b"]}"
    packed = memo.compressed(body)
    assert gzip.decompress(packed) == body
    assert memo.compressed(body) is packed  # the same body: its gzip kept
    equal = bytes(bytearray(body))  # equal bytes, another object: compressed anew
    again = memo.compressed(equal)
    assert again is not packed and again == packed  # no time stamp: the same bytes
    memo.compressed(b"[1]")
    memo.compressed(b"[2]")  # two newer bodies: the first left the memo
    assert memo.compressed(body) is not packed


def test_a_body_over_the_bound_is_not_kept() -> None:
    memo = GzipMemo(size=4, max_bytes=100)
    body = bytes(range(256)) * 4
    packed = memo.compressed(body)
    assert gzip.decompress(packed) == body
    assert memo.compressed(body) is not packed


def test_routes_answer_gzip_to_a_client_that_accepts_it(
    plugin_client: Callable[[Path], PluginClient], tmp_path: Path
) -> None:
    t = TraceBuilder()
    for i in range(3):
        t.step(i + 1, i * 100, 100)
        op = t.op("aten::mm", i * 100 + 10, 50)
        t.launch(i * 100 + 20, 5, op, gpu_ts=i * 100 + 30, gpu_dur=40)
    (tmp_path / "logs" / "job").mkdir(parents=True)
    t.write(tmp_path / "logs" / "job" / "worker0.100.pt.trace.json")
    client = plugin_client(tmp_path / "logs")
    client.wait_ready("job", "worker0")
    names = {"run": "job", "worker": "worker0", "span": "1"}
    for route in ("overview", "tracks", "runs"):
        plain = client.built(route, **names)
        assert plain.status_code == 200 and "Content-Encoding" not in plain.headers
        url = f"/data/plugin/kinetoscope/{route}"
        packed = client.client.get(url, query_string=names, headers=GZIP)
        assert packed.status_code == 200
        assert packed.headers["Content-Encoding"] == "gzip"
        assert gzip.decompress(packed.get_data()) == plain.get_data()
        # The track list is kept (the same bytes each time): its gzip is too.
        again = client.client.get(url, query_string=names, headers=GZIP)
        assert again.get_data() == packed.get_data()


def test_bodies_are_compressed_by_isal() -> None:
    """isal's level 1 (a declared dependency): ~3.5x less CPU than zlib's level 1 on the
    trace view's answers, and a smaller body; a browser reads either gzip."""
    from isal import igzip
    from kinetoscope.serve import gzip_answers

    body = b'{"names": [' + b",".join(b'"kernel_%d"' % (i % 97) for i in range(20000)) + b"]}"
    packed = GzipMemo().compressed(body)
    assert gzip_answers._compress is igzip.compress
    assert packed == igzip.compress(body, compresslevel=1, mtime=0)
    assert gzip.decompress(packed) == body
    assert len(packed) <= len(gzip.compress(body, compresslevel=1, mtime=0))
