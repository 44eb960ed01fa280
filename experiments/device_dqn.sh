#!/usr/bin/env bash
# The DQN on a lent GPU machine (experiments/configs/dqn-gpu.toml: the shipped `cpu` config
# with 4,096 games at once), for a fixed wall-clock budget: first `train_speed.py`
# (collection, updates, whole rounds; the same code as on a CPU), then a training run whose
# length (`--steps`, which also sizes the schedules) is what the measured rate fits into
# the budget left. The playing checkpoint, metrics and config land in $OUT. Run from the
# repository root, with the wheels the GPU image lacks in .whl/ (as device_teacher.sh):
#
#   OUT=/tmp/out BUDGET=540 bash experiments/device_dqn.sh
#
# CONFIG=cpu INSTALL=0 BUDGET=120 SECONDS_EACH=2 rehearses it on a CPU.
set -u
t0=$(date +%s)
OUT=${OUT:-/tmp/out}
BUDGET=${BUDGET:-540}
CONFIG=${CONFIG:-experiments/configs/dqn-gpu.toml}
SECONDS_EACH=${SECONDS_EACH:-5}
mkdir -p "$OUT"
if [ "${INSTALL:-1}" = 1 ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl || exit 1
fi
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
timeout -k 10 240 python3 benchmarks/train_speed.py --config "$CONFIG" \
    --seconds "$SECONDS_EACH" --opponents random,greedy | tee "$OUT/speed.txt"
rate=$(sed -n 's/^training rounds (collection and updates): \([0-9,]*\) decisions\/s$/\1/p' \
    "$OUT/speed.txt" | tr -d ,)
left=$((BUDGET - ($(date +%s) - t0)))
# 60 s for start-up, compilation and the last checkpoint; whole chunks of 1/8 of the run
steps=$(python3 -c "print(max(0, int(${rate:-0} * ($left - 60) * 0.9) // 131072 * 131072))")
echo "rate ${rate:-?} decisions/s, $left s left: --steps $steps"
if [ "$steps" -gt 0 ]; then
    chunk=$(( (steps / 8 + 16383) / 16384 * 16384 ))
    rm -rf /dev/shm/dqn
    start=$(date +%s)
    timeout -k 15 "$left" python3 -c "from jungle_cli import main; main()" train dqn \
        --config "$CONFIG" --steps "$steps" --seed 0 --out /dev/shm/dqn --chunk "$chunk" \
        --eval-every "$chunk" --eval-games 0 2>&1 | tee "$OUT/train.log"
    echo "wall $(( $(date +%s) - start )) s"
    cp /dev/shm/dqn/agent.npz /dev/shm/dqn/metrics.jsonl /dev/shm/dqn/config.json "$OUT"/ \
        2>/dev/null
fi
ls -la "$OUT"
