#!/usr/bin/env bash
# The `teacher-gpu` AlphaZero run (experiments/configs/azero-teacher-gpu.toml) on a lent GPU
# machine, for a fixed wall-clock budget: the student's playing checkpoint and metrics
# land in $OUT. Run from the repository root, with the wheels the GPU image lacks in
# .whl/ (the `train` extra's packages, mctx and flashbax among them, and their needs;
# docs/getting-started.md lists the extras):
#
#   OUT=/tmp/out BUDGET=560 bash experiments/device_teacher.sh
#
# BUDGET is the script's whole wall-clock budget in seconds; the training gets what the
# benchmark (BENCH=1) left of it. The run folder stays on the machine (/dev/shm/run:
# run.npz holds the 4,096 games and the last block, about 0.7 GB); agent.npz (written
# after every round), metrics.jsonl and config.json are copied to $OUT when the budget is
# spent. `timeout -k`: SIGTERM reaches Python only between jitted rounds, so a round still
# running is killed 15 s later (the files are written atomically; the last whole round's
# stay).
#
# Measured: the first try (H100, 2026-11-27) finished no round in 530 s: the vectorized
# search took 35.7 s to search 1,024 games at 64 simulations over all actions. The cause,
# found with `experiments/azero_speed.py --profile` on this project's CPU: mctx's root
# Dirichlet noise, whose Gamma variates JAX draws one after another (`lax.map`) with any
# key but a threefry one, and the search's key is an rbg one: B x A sequential loops a
# search, even at a noise share of 0. `SearchConfig.noise="threefry"` (the default then)
# drew them at once (a switch since removed: the search uses mctx's noise again). BENCH=1
# times the 1,024-game search (and profiles it: the device operations that take the
# time), then 4,096 games with the agent's evaluation and with none, before training.
# On one H200 (2026-11-27, BUDGET=555, with the switch): mctx's noise against the switch,
# 4.397 s against 0.092 s (x47.7) at 1,024 games, 0.156 s at 4,096 (0.035 s with no
# evaluation); then 22 rounds, 5.77 million decisions in 264 s of training (docs/results.md). A second
# run (H200, 2026-11-27, BUDGET=545, no BENCH): 38 rounds, 9.96 million decisions in 458 s.
set -u
t0=$(date +%s)
OUT=${OUT:-/tmp/out}
BUDGET=${BUDGET:-560}
mkdir -p "$OUT"
CONFIG=${CONFIG:-experiments/configs/azero-teacher-gpu.toml}  # CONFIG=tiny INSTALL=0 BUDGET=150: a rehearsal on a CPU
BATCH=${BATCH:-1024}  # the benchmark's games (a CPU rehearsal: BATCH=16)
if [ "${INSTALL:-1}" = 1 ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl || exit 1
fi
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
python3 -c "import jax, mctx, flax, optax; print('jax', jax.__version__, jax.devices(), 'flax', flax.__version__, 'optax', optax.__version__)" || exit 1
if [ "${BENCH:-0}" = 1 ]; then
    timeout -k 10 200 python3 experiments/azero_speed.py --batch "$BATCH" --batching vectorized \
        --dirichlet 0.25 --evaluator dqn --slots --simulations 64 \
        --repeats 1 --profile /tmp/profile | tee "$OUT/bench.txt"
    timeout -k 10 120 python3 experiments/azero_speed.py --batch $((BATCH * 4)) \
        --batching vectorized --dirichlet 0.25 --evaluator dqn,zero --slots --simulations 64 \
        --repeats 1 | tee -a "$OUT/bench.txt"
fi
left=$((BUDGET - ($(date +%s) - t0)))
echo "training budget $left s"
rm -rf /dev/shm/run
start=$(date +%s)
timeout -k 15 "$left" python3 -c "from jungle_cli import main; main()" train azero \
    --config "$CONFIG" --seed 0 --out /dev/shm/run --chunk 262144 --eval-every 262144 \
    --eval-games 0 2>&1 | tee "$OUT/train.log"
echo "wall $(( $(date +%s) - start )) s"
cp /dev/shm/run/agent.npz /dev/shm/run/metrics.jsonl /dev/shm/run/config.json "$OUT"/ 2>/dev/null
python3 - <<'PY'
import json, os
path = os.path.join(os.environ.get("OUT", "/tmp/out"), "metrics.jsonl")
def num(m, key, digits):
    value = m.get(key)
    return float("nan") if value is None else round(value, digits)
print("step time steps/s games draw_rate game_length policy_loss value_loss afterstate_loss")
for line in open(path) if os.path.exists(path) else []:
    m = json.loads(line)
    print(m["step"], num(m, "time", 0), num(m, "decisions_per_s", 0), num(m, "games", 0),
          num(m, "draw_rate", 3), num(m, "game_length", 1), num(m, "policy_loss", 3),
          num(m, "value_loss", 4), num(m, "afterstate_loss", 4))
PY
ls -la "$OUT"
