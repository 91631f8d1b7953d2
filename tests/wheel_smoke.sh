#!/usr/bin/env bash
# The wheel, installed alone in a fresh venv, carries the built frontend and registers the
# plugin: a real TensorBoard from that venv lists it and serves its ES module.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
tb_pid=""
cleanup() { [ -n "$tb_pid" ] && kill "$tb_pid" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$work"; }
trap cleanup EXIT

.venv/bin/pip wheel --quiet --no-deps --no-build-isolation -w "$work/dist" .
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet "$work"/dist/kinetoscope-*.whl
"$work/venv/bin/python" - <<'PY'
import importlib.resources as r
import kinetoscope
assert "site-packages" in kinetoscope.__file__, kinetoscope.__file__
dist = r.files("kinetoscope").joinpath("static", "dist")
assert dist.joinpath("index.js").is_file() and dist.joinpath("old_links.js").is_file()
# The compiled scanner is in the wheel (built with it) and reads events.
from kinetoscope.ingest import native_chunk
assert native_chunk.scanner_enabled(), "the wheel has no compiled scanner"
assert native_chunk.chunk_from_text(b'{"ph": "X", "name": "a", "ts": 1}').events == 1
# So is the compiled Perfetto reader, without the protobuf runtime.
import sys, tempfile
from kinetoscope.ingest.build import build_model
from kinetoscope.ingest.perfetto import native
assert native.available(), "the wheel has no compiled Perfetto reader"
thread = b"\x0a\x0b\xe2\x03\x08\x08\x01\x22\x04\x08\x0a\x10\x0b"  # track 1: pid 10, tid 11
begin = b"\x0a\x0e\x40\x05\x50\x01\x5a\x08\x48\x01\x58\x01\xba\x01\x01a"
end = b"\x0a\x0a\x40\x09\x50\x01\x5a\x04\x48\x02\x58\x01"
with tempfile.NamedTemporaryFile(suffix=".pftrace") as f:
    f.write(thread + begin + end)
    f.flush()
    model = build_model(f.name)
assert len(model) == 1 and model.names == ["a"], (len(model), model.names)
assert "google.protobuf" not in sys.modules
PY

mkdir -p "$work/logs/run"
cp tests/data/tiny.pt.trace.json "$work/logs/run/worker0.1.pt.trace.json"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
KINETOSCOPE_CACHE_DIR="$work/cache" "$work/venv/bin/tensorboard" --logdir "$work/logs" \
  --host 127.0.0.1 --port "$port" >"$work/tb.log" 2>&1 &
tb_pid=$!
for _ in $(seq 1 120); do
  curl -sf "http://127.0.0.1:$port/data/plugins_listing" >"$work/listing.json" && break
  sleep 0.5
done
python3 -c "import json,sys; d=json.load(open(sys.argv[1]))['kinetoscope']; assert d['enabled'], d" "$work/listing.json" \
  || { tail -20 "$work/tb.log"; exit 1; }
# Into a file first: grep -q closing a pipe early would fail curl (exit 23) under pipefail.
curl -sf "http://127.0.0.1:$port/data/plugin/kinetoscope/static/index.js" -o "$work/index.js"
grep -q "render" "$work/index.js"
# Old #pytorch_profiler links: the second entry point registers that name.
python3 -c "import json,sys; d=json.load(open(sys.argv[1]))['pytorch_profiler']; assert not d['enabled'], d" "$work/listing.json"
echo "wheel smoke test: 1 passed, 0 failed"
