#!/usr/bin/env bash
# The bare install, as `pip install dou-shou-qi` gives it (attrs and numpy, no extra): a fresh
# virtual environment in a temporary folder gets the wheel and nothing else, then plays what
# the bare install promises: the command's version, a game, a match between two shipped
# learned agents (played with numpy) and a small tournament. JAX must not be importable there.
#
#   .ci/smoke-bare.sh [WHEEL]     # default: build the wheel of this checkout first
#
# PYTHON (default python3) makes the environment. Exits non-zero on the first failure; the
# temporary folder is removed either way.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
PYTHON=${PYTHON:-python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/jungle-smoke.XXXXXX")
trap 'rm -rf "$work"' EXIT

wheel=${1:-}
if [ -z "$wheel" ]; then
    "$PYTHON" -m pip wheel -q --no-deps -w "$work/wheel" "$root"
    wheel=$(ls "$work"/wheel/*.whl)
fi
wheel=$(cd "$(dirname "$wheel")" && pwd)/$(basename "$wheel")

"$PYTHON" -m venv "$work/venv"
bin=$work/venv/bin
"$bin/python" -m pip install -q "$wheel"
cd "$work"  # away from the checkout, so that only the installed package can be imported

echo "== installed: $("$bin/python" -m pip list --format=freeze | tr '\n' ' ')"
version=$("$bin/python" -c "import jungle_core; print(jungle_core.__version__)")
"$bin/jungle" --version | tee "$work/version.txt"
grep -qF "$version" "$work/version.txt"

echo "== a game"
"$bin/jungle" demo --seed 1 > "$work/demo.txt"
tail -n 1 "$work/demo.txt"

echo "== a match of two shipped learned agents"
"$bin/jungle" match dqn qlearn --games 2 --workers 1 --out "$work/match.jsonl"
"$bin/python" - "$work/match.jsonl" <<'PY'
import sys
from jungle_agents.arena import load_games
assert len(load_games(sys.argv[1])[1]) == 2, "the match file does not hold 2 games"
PY

echo "== a tournament"
"$bin/jungle" tournament --agents random,greedy,qlearn --games 2 --workers 1 \
    --out "$work/tournament"
test -s "$work/tournament/results.csv"

echo "== no JAX here"
if "$bin/python" -c "import jax" 2>/dev/null; then
    echo "jax is importable in the bare install" >&2
    exit 1
fi
echo "bare install: OK"
