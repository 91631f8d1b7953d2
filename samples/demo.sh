#!/usr/bin/env bash
# The main job: install, build, record sample traces on the CPU, start TensorBoard on them.
#   bash samples/demo.sh [LOGDIR]      (PORT=6006 HOST=127.0.0.1 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/setup.sh

LOGDIR=${1:-samples/logdir}
mkdir -p "$LOGDIR"
# Only the sample's own lines: torch's profiler logs each start and stop (USDT:, STAGE:).
.venv/bin/python samples/train_cpu.py --logdir "$LOGDIR" 2>&1 | { grep -Ev '^(USDT|STAGE):' || true; }
# With the shared corpus beside the clone, add a real GPU run recorded on a V100.
GPU_SAMPLE=../shared/corpus/pytorch-kineto/tb_plugin/samples/resnet50_num_workers_0
if [ -d "$GPU_SAMPLE" ]; then
  mkdir -p "$LOGDIR/resnet50_v100"
  cp "$GPU_SAMPLE"/*.pt.trace.json.gz "$LOGDIR/resnet50_v100/"
fi

PORT=${PORT:-6006}
HOST=${HOST:-127.0.0.1}
# The link is printed last, after TensorBoard's banner: announce.py waits until the server
# answers (it runs in the background; TensorBoard stays in the foreground for Ctrl-C).
.venv/bin/python samples/announce.py "$HOST" "$PORT" &
exec .venv/bin/tensorboard --logdir "$LOGDIR" --host "$HOST" --port "$PORT"
