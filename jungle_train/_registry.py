"""The learned agents' entries in the agent registry, loaded through the ``jungle.agents``
entry points (``pyproject.toml``), so :mod:`jungle_agents` finds them without importing
this package: ``make_agent("dqn", DARK)`` plays the shipped checkpoint,
``make_agent("dqn:path=runs/dqn/agent.npz", DARK)`` another; the same for ``qlearn`` and
``approxq``. Each kind is its own entry point, so one that fails to load leaves the
others working.

>>> from jungle_agents import agent_kinds
>>> {"dqn", "qlearn", "approxq"} <= set(agent_kinds())
True
"""

from __future__ import annotations

from typing import Any

from jungle_agents import Param, register_agent

__all__ = [
    "register_approxq",
    "register_azero",
    "register_dqn",
    "register_qlearn",
    "register_value",
]


def _params(kind: str) -> dict[str, Param]:
    return {
        "path": Param(str, "", f"checkpoint file (default: the shipped {kind}.npz)"),
        "epsilon": Param(float, 0.0, "probability of a uniformly random legal action instead"),
    }


def register_dqn() -> None:
    """Register ``dqn``: the masked argmax of a DQN checkpoint."""
    from jungle_train.players import DQNAgent

    register_agent(
        "dqn",
        DQNAgent,
        _params("dqn"),
        "DQN: masked argmax of a trained network",
        replace=True,
    )


def register_qlearn() -> None:
    """Register ``qlearn``: the greedy action of a tabular Q checkpoint."""
    from jungle_train.tabular.qlearn import QTableAgent

    register_agent("qlearn", QTableAgent, _params("qlearn"), "tabular Q-learning", replace=True)


def register_value() -> None:
    """Register ``value``: one ply of expectimax on a value-network checkpoint; and the
    same network as the Minimax search's leaf evaluation, ``minimax:eval=value``."""
    from jungle_agents import register_evaluation
    from jungle_train.players import SearchValue, ValueAgent

    register_evaluation(
        "value",
        SearchValue,
        "the value network (jungle train value) at the search's leaves",
    )
    register_agent(
        "value",
        ValueAgent,
        _params("value"),
        "one ply of expectimax on a trained value network (DARK)",
        replace=True,
    )


def register_approxq() -> None:
    """Register ``approxq``: the greedy action of a linear Q checkpoint ."""
    from jungle_train.tabular.approxq import ApproxQAgent

    register_agent(
        "approxq",
        ApproxQAgent,
        _params("approxq"),
        "approximate Q-learning, 16 features",
        replace=True,
    )


def register_azero() -> None:
    """Register ``azero``: an ``mctx`` search (the JAX core as the model) guided by an
    AlphaZero checkpoint (search + network); runs JAX, unlike the agents above,
    so JAX is imported when an ``azero`` agent is built, not when the registry loads."""
    register_agent(
        "azero",
        _make_azero,
        {
            "path": Param(str, "", "checkpoint file, AlphaZero or DQN (default: see prior)"),
            "prior": Param(
                str,
                "",
                "what guides the search: an azero or a dqn checkpoint, or hand (the "
                "hand-made value and prior) (empty: the path's kind; without a path the "
                "shipped azero.npz, else DARK's shipped dqn.npz, CLASSIC's hand)",
                ("", "azero", "dqn", "hand"),
            ),
            "tau": Param(float, 1.0, "temperature of a DQN prior: softmax(Q / tau)"),
            "hunt": Param(
                float,
                0.0,
                "DQN prior: weight of the pull of the side ahead toward the enemies it can "
                "take or trade off, in the hand-made leaf value",
            ),
            "cover": Param(
                bool,
                False,
                "DQN prior: keep only a tenth of the hand-made leaf value's lead for a side "
                "that cannot remove every enemy piece (none of its pieces takes or trades "
                "with one of them)",
            ),
            "capture": Param(
                float,
                0.0,
                "DQN prior, DARK: share (0..1) of the side to move's best immediate capture "
                "in the hand-made leaf value (a one-ply capture search at the leaves)",
            ),
            "pb_c": Param(
                float,
                1.25,
                "DARK: PUCT's exploration constant c1 (the prior's weight against the "
                "searched values; mctx's default 1.25)",
            ),
            "pb_c_face_down": Param(
                float,
                0.0,
                "DARK: PUCT's c1 for the decisions taken while some piece is face down "
                "(0: pb_c); pb_c serves the rest of the game",
            ),
            "face_down_simulations": Param(
                int,
                0,
                "search simulations of the decisions taken while some piece is face down "
                "(0: simulations)",
            ),
            "greedy": Param(
                float,
                0.0,
                "DQN prior, DARK: weight (0..1) of the greedy agent's heuristic (both sides, "
                "with the safety of adjacent pairs) in the hand-made leaf value while some "
                "piece is face down (0: off)",
            ),
            "potential": Param(
                float,
                0.01,
                "DQN prior: weight of the difference of the training's shaping potentials (pieces "
                "near enemies they can take, minus near enemies that can take them) in the "
                "hand-made leaf value, beside the material balance",
            ),
            "values": Param(
                str,
                "spec",
                "DQN prior: the piece values of the hand-made leaf value's material balance: "
                "spec (the greedy agent's piece values) or fitted (fitted to recorded games' "
                "results: "
                "Rat 90, Cat 10, Dog 40, Wolf 50, Leopard 50, Tiger 75, Lion 105, Elephant 160)",
                ("spec", "fitted"),
            ),
            "material": Param(
                str,
                "ratio",
                "DQN prior: the form of the hand-made leaf value's material balance: ratio "
                "(the difference over the material still in the game), difference (over "
                "the full set's: equal trades leave it unchanged) or scaled (difference, "
                "the shaping potentials scaled by the share of material still in play)",
                ("ratio", "difference", "scaled"),
            ),
            "material_face_down": Param(
                str,
                "",
                "DQN prior: that form in the searches of the decisions taken while some "
                "piece is face down (empty: material)",
                ("", "ratio", "difference", "scaled"),
            ),
            "potential_face_down": Param(
                float,
                -1.0,
                "DQN prior: that weight of the shaping potentials in the searches of the "
                "decisions taken while some piece is face down (-1: potential)",
            ),
            "face_down_minimax": Param(
                float,
                0.0,
                "DARK: seconds of the Minimax agent (its defaults, deepening) that decides "
                "while some piece is face down, the search deciding after (0: off)",
            ),
            "risk": Param(
                float,
                0.0,
                "DARK: in the searches of the decisions taken while some piece is face "
                "down, every leaf value that favours the agent keeps 1 - risk of itself "
                "(a concave utility: a level position over an even gamble; 0: off)",
            ),
            "contempt": Param(
                float,
                0.0,
                "DARK: a draw is worth -contempt to the agent in its search (values in "
                "[-1, 1]), and each searched position loses that much in proportion to the "
                "no-removal clock (minimax's contempt on the search's scale; 0: off)",
            ),
            "dead_draw": Param(
                float,
                0.0,
                "DARK: a draw is worth -dead_draw to the agent in its search, and so is "
                "every position where neither side's material can still win (a dead draw, "
                "such as one Elephant against one); no cost on the clock (0: off; not with "
                "contempt)",
            ),
            "draw_bounds": Param(
                bool,
                False,
                "DARK: in the agent's search a side whose material can no longer win is "
                "valued at most a draw (worth -dead_draw to the agent) and its opponent at "
                "least one (not with contempt)",
            ),
            "press": Param(
                float,
                0.0,
                "DARK: contempt's charge on the no-removal clock without its draw, made only "
                "in searched positions where the agent's material can still win (combines "
                "with dead_draw and draw_bounds; 0: off; not with contempt)",
            ),
            "press_face_down": Param(
                float,
                -1.0,
                "DARK: press' charge in the searches of the decisions taken while some piece "
                "is face down (0: none there, press only once every piece is face up; "
                "-1: press)",
            ),
            "spare_behind": Param(
                bool,
                False,
                "DARK, with press: no charge either where the agent holds fewer pieces than "
                "its opponent (the clock works for a side behind)",
            ),
            "count_trades": Param(
                bool,
                False,
                "DARK, with dead_draw, draw_bounds or press: their test of whether a side's "
                "material can still win counts the trades (an enemy piece none of the "
                "side's takes costs it a piece in a trade)",
            ),
            "qtransform": Param(
                str,
                "siblings",
                "DARK: how PUCT scales a node's Q values: siblings (mctx's default, by the "
                "node's value and its searched children's) or minmax (over [-1, 1])",
                ("siblings", "minmax"),
            ),
            "minimax_backup": Param(
                float,
                0.0,
                "DARK: the share of each Q value the search reads from the tree's "
                "expectimax values instead of mctx's averages (implicit minimax backups; "
                "0: off)",
            ),
            "chance_order": Param(
                str,
                "index",
                "DARK: the order a chance node's outcomes are first searched in: index "
                "(mctx's, the pieces' identities), shuffled (a random order per node) or "
                "stratified (a fixed spread of ranks, the two sides in turn)",
                ("index", "shuffled", "stratified"),
            ),
            "leaf_tables": Param(
                bool,
                False,
                "DQN prior, DARK: the search's leaves of at most three face-up pieces take "
                "their exact value from the endgame tables (~90 s and 180 MB to build)",
            ),
            "endgame": Param(
                int,
                3,
                "exact endgame tables (jungle_agents.endgame) for face-up positions of at "
                "most this many pieces: 2, 3 or 4 (0: off; 4 costs 8-20 s and 1.7 GB per material)",
            ),
            "simulations": Param(int, 2048, "search simulations per decision"),
            "time": Param(float, 0.0, "seconds per decision: sets simulations once (0: off)"),
            "heuristic": Param(
                float,
                -1.0,
                "weight of the hand-made leaf value (-1: the checkpoint's; 1 for a DQN prior)",
            ),
            "prior_mix": Param(
                float, -1.0, "uniform share mixed into the search's priors (-1: the checkpoint's)"
            ),
            "afterstate": Param(
                str,
                "",
                "chance nodes' first value (empty: the checkpoint's; expected: the "
                "position's value plus the action's expected change of material)",
                ("", "head", "parent", "expected"),
            ),
        },
        "AlphaZero: mctx search with the true rules as the model, guided by a network (JAX)",
        replace=True,
    )


def _make_azero(rules: Any, **params: Any) -> Any:
    """Build an :class:`~jungle_train.azero._agent.AZeroAgent` (imports JAX; where the
    ``train`` extra is not installed, :class:`jungle_core.MissingExtraError` naming it,
    which :func:`~jungle_agents.make_agent` reports as an ``AgentSpecError``)."""
    from jungle_train.common import import_train_module

    agent = import_train_module("jungle_train.azero._agent", "the agent 'azero'").AZeroAgent
    return agent(rules, **params)
