"""The shipped checkpoints still play well: each learned agent that ships one beats the
random agent on DARK in a small match of fixed seed.

The threshold is a score (wins plus half the draws, over the games) of at least
:data:`THRESHOLD` in :data:`GAMES` games. Random against random in games of at most
:data:`MAX_PLIES` plies draws about 83 % of its games and wins and loses about 8.5 % each
(1000 games measured), so a random agent scores :data:`THRESHOLD` or more in such a match
with a probability of about 0.35 %; the shipped checkpoints scored, with this seed:
``approxq`` 1.00, ``qlearn`` 0.97, ``dqn`` 0.94, ``value`` 0.81 (0.69 to 0.81 over
seeds 0 to 2: it never lost, but draws more). A checkpoint that no longer loads into the
agent it was trained for, or plays no better than chance, fails.

``azero`` ships no checkpoint of its own (without one it searches with the DQN
checkpoint as its prior, which ``dqn`` already covers here) and takes about 0.25 s a move
after about 18 s of compilation, so such a match would take minutes: it is left out.
"""

from __future__ import annotations

import pytest

from jungle_agents.arena import play_match
from jungle_core import DARK
from tests._requires import needs_jax

GAMES, SEED, MAX_PLIES = 16, 0, 200
THRESHOLD = 0.65


@pytest.mark.parametrize(
    "kind",
    [
        "qlearn",
        "approxq",
        pytest.param("dqn", marks=needs_jax),
        pytest.param("value", marks=needs_jax),
    ],
)
def test_each_shipped_checkpoint_beats_random(kind: str) -> None:
    result = play_match(DARK, kind, "random", GAMES, seed=SEED, workers=1, max_plies=MAX_PLIES)
    assert result.games == GAMES == result.wins + result.draws + result.losses
    score = (result.wins + 0.5 * result.draws) / result.games
    assert score >= THRESHOLD, (kind, result.wins, result.draws, result.losses)
    assert result.wins > result.losses, (kind, result.wins, result.draws, result.losses)
