"""The AlphaZero agent as a player: a network inside the ``mctx`` search, the JAX core
as the model (:mod:`jungle_train.azero.search._search`).

Unlike the DQN, tabular and approximate Q agents (numpy only), this agent runs JAX: its
construction compiles the search for one game (about 5–20 s on a CPU, once per process
and per configuration) and plays a warm-up search, so that no decision pays for the
compilation.

What guides the search (``prior``):

- ``"azero"``: an AlphaZero checkpoint of :mod:`jungle_train.azero` (policy, value and
  afterstate heads), its values mixed with the hand-made value by ``heuristic``.
  ``path`` names it; without one the shipped ``jungle_train/checkpoints/azero.npz``
  (``azero_classic.npz`` for CLASSIC) is used, and none ships yet: the network trained
  from its own search did not beat random (docs/training.md).
- ``"dqn"`` (DARK): a DQN checkpoint of :mod:`jungle_train.dqn` (the shipped
  ``dqn.npz`` without ``path``): its action values are the prior, ``softmax(Q / tau)``,
  and the leaf values are the hand-made value (``heuristic`` -1 or 1; below 1 mixes in
  the DQN's own ``max Q / win_reward``), chance nodes valued by their parent
  (:func:`jungle_train.azero.search._evaluations.dqn_prior_evaluation`). The DQN knows which moves
  matter (it takes and converts, and does not walk into a bigger piece), which the
  AlphaZero prior trained here did not learn; the search supplies the tactics.
- ``"hand"``: no network: the hand-made value (DARK's, or CLASSIC's piece-square
  evaluation) and a uniform prior (DARK) or each move's change of that evaluation as
  the prior's logits (CLASSIC; :func:`jungle_train.azero.search._evaluations.hand_evaluation`): the
  search's baseline, and on CLASSIC, where no checkpoint ships, what plays.
- ``""``: the kind of the checkpoint ``path`` names; without a path the shipped
  AlphaZero checkpoint where one exists, else DARK's shipped DQN
  (:func:`default_prior`), else (CLASSIC) ``"hand"``. So ``make_agent("azero", DARK)``
  plays the DQN-guided search from the shipped files, ``make_agent("azero", CLASSIC)``
  the hand-guided one.

Parameters (the knobs off by default were screened against minimax depth 3: the table
of the screens, each with its score, is "Toward 0.90: what was screened" in
experiments/readme-azero.md; the strongest setting they led to,
``endgame=4,dead_draw=0.1,draw_bounds=1,face_down_simulations=4096``, is in
docs/results.md): ``simulations`` per decision, or ``time``: seconds per decision, which
sets the simulation count once, at construction, from a timed search of a fixed
middlegame (rounded down to a power of two, at least 8), so the agent plays at about
that speed on this machine;
``heuristic``: the weight of the hand-made value in the search's leaf values (-1: the
checkpoint's, 1 for a DQN prior); ``tau``: the DQN prior's temperature; ``hunt``: with a
DQN prior, the weight of :func:`jungle_train.azero._hand_value.hunt` in the hand-made value
(0, off: measured, it did not score better); ``cover``: with a DQN prior, a side that
cannot remove every enemy piece keeps only a tenth of a lead in the hand-made value
(:func:`jungle_train.azero._hand_value.winnable`; screened, no better); ``leaf_tables``: with
a DQN prior on DARK, every leaf of the search with at most three pieces, all face up,
takes its exact value from the endgame tables
(:mod:`jungle_train.azero.search._table_leaves`; about 90 s and 180 MB to build, once per process);
``greedy``: with a DQN prior on DARK, while some piece is face down, that weight (0..1)
of the Greedy agent's heuristic (both sides' H,
:meth:`jungle_train.jitted._greedy.JaxGreedy.balance`,
through ``tanh(· / 300)``) joins the hand-made value (screened, no better);
``values``: with a DQN prior, the piece values of the hand-made value's material
(``spec``, the Greedy agent's values, or ``fitted``, fitted to recorded games' results:
:data:`jungle_train.azero._hand_value.PIECE_VALUES`; ``fitted`` screened, no better);
``material``: with a DQN prior, the form of that material balance, ``ratio`` (the
difference over the material in the game), ``difference`` (over the full set's, so
that equal trades leave it unchanged) or ``scaled`` (``difference``, with the shaping
potentials scaled by the share of the material still in play;
:data:`jungle_train.azero._hand_value.MATERIAL_FORMS`; the other two screened, no better);
``material_face_down`` (empty: ``material``): that form in the searches of the decisions
taken while some piece is still face down;
``potential``: with a DQN prior, the weight of the difference of the two sides' shaping
potentials in the hand-made value (:data:`jungle_train.azero._hand_value.POTENTIAL_WEIGHT`, 0.01,
by default; others screened, no better); ``potential_face_down`` (-1: ``potential``): that
weight in the searches of the decisions taken while some piece is still face down
(screened, no better);
``capture``: with a DQN prior on DARK, that share (0..1) of the side to move's best
immediate capture (:func:`jungle_train.azero._hand_value.capture_gain`) joins the hand-made
value, so a piece left hanging, or turned up beside a stronger enemy, reads as lost;
``qtransform`` (DARK): how PUCT scales a node's Q values, ``siblings`` (mctx's
default) or ``minmax`` (over [-1, 1]; :attr:`SearchConfig.qtransform`, screened, far
weaker); ``minimax_backup`` (DARK, in [0, 1]): the share of each Q value PUCT reads from
the tree's expectimax values instead of mctx's averages (implicit minimax backups;
:attr:`SearchConfig.minimax_backup`; 0: off); ``pb_c`` (DARK): PUCT's exploration
constant ``c1`` (mctx's 1.25; 0.6 and 2.5 screened, no better); ``pb_c_face_down`` (DARK): the
``c1`` of the decisions taken while some piece is still face down (the chance phase; 0:
``pb_c``), ``pb_c`` then serving the rest;
``face_down_simulations``: the simulations of the decisions taken while some piece is
still face down (0: ``simulations``; twice as many is part of the strongest setting);
``face_down_minimax`` (DARK, seconds; 0: off): the decisions taken while some piece is
still face down are the Minimax agent's (:mod:`jungle_agents`, its defaults, deepening
for that long), the search's after (screened, no better);
``contempt`` (DARK, in [0, 1)): a draw is worth ``-contempt`` to the agent inside its
search, and each searched position loses that much in proportion to the no-removal
clock (:attr:`SearchConfig.contempt`; the Minimax agent's ``contempt`` on the search's
value scale);
``dead_draw`` (DARK, in [0, 1); not with ``contempt``): a draw is worth ``-dead_draw``
to the agent inside its search, and so is every position in which neither side's
material can still win (:func:`jungle_train.azero._hand_value.winning_material`; a dead draw,
such as one Elephant against one), with no cost on the clock
(:attr:`SearchConfig.dead_draw`; 0.1 is part of the strongest setting);
``draw_bounds`` (DARK, a flag; not with ``contempt``): inside the search a side whose
material can no longer win is valued at most a draw (``dead_draw``'s, 0 without it),
and its opponent at least one (:attr:`SearchConfig.draw_bounds`);
``press`` (DARK, in [0, 1); not with ``contempt``): ``contempt``'s charge on the
no-removal clock without its draw, made only in searched positions where the agent's
material can still win, so that it combines with ``dead_draw`` and ``draw_bounds``
(:attr:`SearchConfig.press`; screened, no better);
``press_face_down`` (DARK, in [0, 1), or -1: ``press``): that charge in the searches
of the decisions taken while some piece is face down (0: none there, ``press`` only once
every piece is face up);
``spare_behind`` (DARK, a flag; with ``press``): no charge either where the agent holds
fewer pieces than its opponent (:attr:`SearchConfig.spare_behind`);
``count_trades`` (DARK, a flag; with ``dead_draw``, ``draw_bounds`` or ``press``): their test of
whether a side's material can still win counts the trades, each enemy piece none of
the side's takes costing it a piece (:attr:`SearchConfig.count_trades`; it differs
only for a side down to one piece);
``risk`` (DARK, in [0, 1)): in the searches of the decisions taken while some piece is
still face down, every leaf value that favours the agent keeps only ``1 - risk`` of
itself (:attr:`SearchConfig.risk`: a concave utility, so the chance phase prefers a
level position to an even gamble; screened, no better);
``chance_order`` (DARK): ``shuffled`` searches each chance node's outcomes in
a random order, ``stratified`` in a fixed spread of ranks alternating the sides, not in
the order of the pieces' identities (:class:`SearchConfig`'s);
``prior_mix`` and ``afterstate`` (-1 / empty: the checkpoint config's, ``parent`` for a DQN prior;
``expected`` adds each action's expected change of material to the position's value,
:func:`jungle_train.azero._hand_value.expected_gain`; screened, no better)
as in :class:`jungle_train.azero.search._config.SearchConfig`.
``endgame`` (DARK, default 3): once every piece is face up and at most that many are left,
the exact endgame tables of :mod:`jungle_agents.endgame` pick among the actions (a
fastest win outright; else the search chooses among those that keep the draw, or the
slowest losses); 0 turns them off; 4 is part of the strongest setting.
The search plays the most visited action (DARK) or Gumbel MuZero's choice without
noise (CLASSIC), with the root's randomness drawn from the game's generator.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from time import perf_counter
from typing import Any

import flax.traverse_util
import jax
import jax.numpy as jnp
import numpy as np

from jungle_agents import MAX_DEPTH, MinimaxAgent
from jungle_agents import SearchConfig as MinimaxConfig
from jungle_agents.endgame import EndgameTables, supported
from jungle_core import Rules, State, legal_action_mask, legal_actions, new_game, outcome, step
from jungle_core.jax_env import JaxState, make
from jungle_train.azero._guides import (
    PRIORS,
    RULES,
    build_network,
    compiled_search,
    default_prior,
    load_dqn,
    shipped_azero,
)
from jungle_train.azero._hand_value import (
    MATERIAL_FORMS,
    PIECE_VALUES,
    POTENTIAL_WEIGHT,
    classic_piece_squares,
    classic_targets,
)
from jungle_train.azero._net import PolicyValueNetwork, planes_shape
from jungle_train.azero.search import SearchConfig
from jungle_train.azero.search import leaf_tables as packed_leaf_tables
from jungle_train.common import CheckpointError, load_checkpoint
from jungle_train.players import shipped_checkpoint

__all__ = ["AZeroAgent", "calibration_position", "params_from_arrays"]


class AZeroAgent:
    """Plays the action of an ``mctx`` search guided by an AlphaZero checkpoint.

    >>> import os, tempfile
    >>> import numpy as np
    >>> from jungle_core import DARK, new_game, legal_actions
    >>> from jungle_train.common._checkpoint import save_checkpoint
    >>> from jungle_train.jitted._pytree_io import params_to_arrays
    >>> untrained = build_network(DARK, 4, 1).init(jax.random.key(0), jnp.zeros((1, 7, 8, 6)))
    >>> path = os.path.join(tempfile.mkdtemp(), "agent.npz")
    >>> config = {"rules": "dark", "channels": 4, "conv_layers": 1}
    >>> save_checkpoint(path, params_to_arrays(untrained), kind="azero", config=config, step=0)
    >>> agent = AZeroAgent(DARK, path, simulations=8)
    >>> agent.act(new_game(), np.random.default_rng(0)) in legal_actions(new_game())
    True
    """

    def __init__(
        self,
        rules: Rules,
        path: str = "",
        simulations: int = 2048,
        time: float = 0.0,
        heuristic: float = -1.0,
        prior_mix: float = -1.0,
        afterstate: str = "",
        prior: str = "",
        tau: float = 1.0,
        hunt: float = 0.0,
        endgame: int = 3,
        cover: bool = False,
        leaf_tables: bool = False,
        capture: float = 0.0,
        chance_order: str = "index",
        pb_c: float = 1.25,
        pb_c_face_down: float = 0.0,
        contempt: float = 0.0,
        dead_draw: float = 0.0,
        draw_bounds: bool = False,
        press: float = 0.0,
        press_face_down: float = -1.0,
        spare_behind: bool = False,
        count_trades: bool = False,
        face_down_simulations: int = 0,
        face_down_minimax: float = 0.0,
        greedy: float = 0.0,
        potential: float = POTENTIAL_WEIGHT,
        potential_face_down: float = -1.0,
        risk: float = 0.0,
        values: str = "spec",
        material: str = "ratio",
        material_face_down: str = "",
        qtransform: str = "siblings",
        minimax_backup: float = 0.0,
    ) -> None:
        if heuristic > 1.0:
            raise ValueError(
                f"heuristic must be in [0, 1] (or -1: the checkpoint's), not {heuristic}"
            )
        if time < 0:
            raise ValueError(f"time must be >= 0, not {time}")
        if not tau > 0:
            raise ValueError(f"tau must be > 0, not {tau}")
        if hunt < 0:
            raise ValueError(f"hunt must be >= 0, not {hunt}")
        if pb_c_face_down < 0:
            raise ValueError(f"pb_c_face_down must be > 0 (or 0: pb_c), not {pb_c_face_down}")
        if face_down_simulations < 0:
            raise ValueError(
                f"face_down_simulations must be >= 1 (or 0: simulations), not "
                f"{face_down_simulations}"
            )
        if face_down_minimax < 0:
            raise ValueError(f"face_down_minimax must be >= 0 seconds, not {face_down_minimax}")
        if face_down_minimax and not rules.is_dark:
            raise ValueError(f"face_down_minimax is for DARK rules, not {rules.name}")
        if press_face_down != -1.0 and not 0.0 <= press_face_down < 1.0:
            raise ValueError(
                f"press_face_down must be in [0, 1) (or -1: press), not {press_face_down}"
            )
        pressed_face_down = press if press_face_down == -1.0 else press_face_down
        if spare_behind and not (press or pressed_face_down):
            raise ValueError("spare_behind is press': set press")
        if count_trades and not (dead_draw or draw_bounds or press or pressed_face_down):
            raise ValueError(
                "count_trades sharpens dead_draw's, draw_bounds' or press' test: set one"
            )

        def phase(pressing: float, **knobs: Any) -> SearchConfig:
            """One phase's search settings; SearchConfig checks their ranges and
            combinations, ``check_rules`` which are DARK's only (before any checkpoint is
            read). The model's own settings are added by ``_compile``."""
            config = SearchConfig(
                chance_order=chance_order,
                qtransform=qtransform,
                minimax_backup=minimax_backup,
                contempt=contempt,
                dead_draw=dead_draw,
                draw_bounds=bool(draw_bounds),
                press=pressing,
                # press' refinements, where this phase's search charges the clock
                spare_behind=bool(spare_behind and pressing),
                count_trades=bool(count_trades and (pressing or dead_draw or draw_bounds)),
                slots=True,  # the same search on a narrower tree
                **knobs,
            )
            config.check_rules(rules)
            return config

        self._face_up_config = phase(float(press), simulations=simulations, pb_c_init=pb_c)
        """The search settings of the decisions taken once every piece is face up."""
        self._face_down_config = phase(
            float(pressed_face_down),
            simulations=face_down_simulations or simulations,
            pb_c_init=pb_c_face_down or pb_c,
            risk=risk,
        )
        """The search settings of the decisions taken while some piece is face down."""
        self._minimax = (
            MinimaxAgent(rules, MinimaxConfig(depth=MAX_DEPTH, time=float(face_down_minimax)))
            if face_down_minimax
            else None
        )
        """Plays the decisions taken while some piece is face down, when set."""
        if not 0.0 <= capture <= 1.0:
            raise ValueError(f"capture must be in [0, 1], not {capture}")
        if not 0.0 <= greedy <= 1.0:
            raise ValueError(f"greedy must be in [0, 1], not {greedy}")
        if potential < 0:
            raise ValueError(f"potential must be >= 0, not {potential}")
        if potential_face_down < 0 and potential_face_down != -1:
            raise ValueError(
                f"potential_face_down must be >= 0 (or -1: potential), not {potential_face_down}"
            )
        if values not in PIECE_VALUES:
            raise ValueError(f"values must be one of {tuple(PIECE_VALUES)}, not {values!r}")
        if material not in MATERIAL_FORMS:
            raise ValueError(f"material must be one of {MATERIAL_FORMS}, not {material!r}")
        if material_face_down and material_face_down not in MATERIAL_FORMS:
            raise ValueError(
                f"material_face_down must be one of {MATERIAL_FORMS} (or empty: material), "
                f"not {material_face_down!r}"
            )
        if endgame not in (0, 2, 3, 4):
            raise ValueError(f"endgame must be 0 (off), 2, 3 or 4 pieces, not {endgame}")
        self._endgame = EndgameTables(endgame) if endgame and supported(rules) else None
        if prior not in PRIORS:
            raise ValueError(f"prior must be one of {PRIORS}, not {prior!r}")
        prior = prior or default_prior(rules, path)
        self.rules = rules
        self.prior = prior
        self._env = make(rules)
        if prior == "dqn":
            source = path or shipped_checkpoint("dqn")
            if leaf_tables and not supported(rules):  # whether or not ``endgame`` is on
                raise ValueError(f"leaf_tables: the endgame tables do not solve {rules.name}")
            self._init_dqn(
                source,
                heuristic,
                tau,
                hunt,
                bool(cover),
                bool(leaf_tables),
                float(capture),
                float(greedy),
                float(potential),
                values,
                material,
            )
        elif (
            cover
            or leaf_tables
            or capture
            or greedy
            or potential != POTENTIAL_WEIGHT
            or potential_face_down != -1
            or values != "spec"
            or material != "ratio"
            or material_face_down
        ):
            raise ValueError(
                "cover, leaf_tables, capture, greedy, potential, potential_face_down, values, "
                "material and material_face_down adjust the leaf values of prior=dqn only"
            )
        elif prior == "hand":
            if path or hunt or heuristic >= 0:
                raise ValueError("prior=hand reads no checkpoint: no path, hunt or heuristic")
            self._init_hand()
        else:
            if hunt:
                raise ValueError("hunt weighs the hand-made value of prior=dqn only")
            source = path or shipped_azero(rules)
            self._init_azero(source, heuristic)
        self._prior_mix = float(self.config.get("prior_mix", 0.0)) if prior_mix < 0 else prior_mix
        self._afterstate = afterstate or str(
            self.config.get("afterstate", "head" if prior == "azero" else "parent")
        )
        self.simulations = simulations
        self._search = self._compile(self._face_up_config)
        if time > 0:
            self.simulations = self._calibrate(time)
            self._face_up_config = replace(self._face_up_config, simulations=self.simulations)
            self._search = self._compile(self._face_up_config)
        self.face_down_simulations = face_down_simulations or self.simulations
        """Simulations of the decisions taken while some piece is face down."""
        self._face_down_config = replace(
            self._face_down_config, simulations=self.face_down_simulations
        )
        self._model_face_down = self._model
        if self._model[0] == "dqn" and potential_face_down >= 0:  # the potential weight is last
            self._model_face_down = (*self._model_face_down[:-1], float(potential_face_down))
        if self._model[0] == "dqn" and material_face_down:  # the material form next to last
            face_down = self._model_face_down
            self._model_face_down = (*face_down[:-2], material_face_down, face_down[-1])
        """The evaluation of the decisions taken while some piece is face down."""
        self._search_face_down = (
            self._search
            if self._face_down_config == self._face_up_config
            and self._model_face_down == self._model
            else self._compile(self._face_down_config, self._model_face_down)
        )
        label = f"path={path}" if path else ""
        label += ("," if label else "") + (
            f"time={time:g}" if time > 0 else f"simulations={simulations}"
        )
        label += f",prior={prior}" if prior != default_prior(rules, "") else ""
        label += f",tau={tau:g}" if tau != 1.0 else ""
        label += f",hunt={hunt:g}" if hunt else ""
        label += ",cover=1" if cover else ""
        label += f",capture={capture:g}" if capture else ""
        label += f",greedy={greedy:g}" if greedy else ""
        label += f",potential={potential:g}" if potential != POTENTIAL_WEIGHT else ""
        label += f",potential_face_down={potential_face_down:g}" if potential_face_down >= 0 else ""
        label += f",values={values}" if values != "spec" else ""
        label += f",material={material}" if material != "ratio" else ""
        label += f",material_face_down={material_face_down}" if material_face_down else ""
        label += f",qtransform={qtransform}" if qtransform != "siblings" else ""
        label += f",minimax_backup={minimax_backup:g}" if minimax_backup else ""
        label += f",chance_order={chance_order}" if chance_order != "index" else ""
        label += f",pb_c={pb_c:g}" if pb_c != 1.25 else ""
        label += f",pb_c_face_down={pb_c_face_down:g}" if pb_c_face_down else ""
        label += f",contempt={contempt:g}" if contempt else ""
        label += f",dead_draw={dead_draw:g}" if dead_draw else ""
        label += ",draw_bounds=1" if draw_bounds else ""
        label += f",press={press:g}" if press else ""
        label += f",press_face_down={press_face_down:g}" if press_face_down != -1.0 else ""
        label += ",spare_behind=1" if spare_behind else ""
        label += ",count_trades=1" if count_trades else ""
        label += f",risk={risk:g}" if risk else ""
        label += f",face_down_simulations={face_down_simulations}" if face_down_simulations else ""
        label += f",face_down_minimax={face_down_minimax:g}" if face_down_minimax else ""
        label += ",leaf_tables=1" if leaf_tables else ""
        label += f",endgame={endgame}" if endgame != 3 else ""
        label += f",heuristic={heuristic:g}" if heuristic >= 0 else ""
        label += f",prior_mix={prior_mix:g}" if prior_mix >= 0 else ""
        label += f",afterstate={afterstate}" if afterstate else ""
        self.name = f"azero:{label}"

    def _init_azero(self, source: str, heuristic: float) -> None:
        """Read an AlphaZero checkpoint: its network guides the search."""
        ckpt = load_checkpoint(source, kind="azero")
        config = dict(ckpt.config)
        trained = RULES.get(str(config.get("rules")))
        if trained != self.rules:
            raise CheckpointError(
                f"{source}: a checkpoint for {config.get('rules')!r}, not for {self.rules.name}"
            )
        self.config = config
        self.step = ckpt.step
        try:
            channels, layers = int(config["channels"]), int(config["conv_layers"])
            network = build_network(self.rules, channels, layers)
            network_params = params_from_arrays(ckpt.arrays, network, self.rules, source)
            weight = float(list(config.get("heuristic_prior", [0.0, 0.0]))[-1])
            weight = weight if heuristic < 0 else heuristic
        except (KeyError, ValueError, TypeError) as error:
            raise CheckpointError(
                f"{source}: the network does not fit its config ({error})"
            ) from None
        self.params: Any = (network_params, jnp.float32(weight))
        """The search's parameters: the network's and the weight of the hand-made value."""
        self._model: tuple[Any, ...] = ("azero", channels, layers)
        self._depth = int(config.get("max_depth", 0))
        self._considered = int(config.get("max_considered", 16))

    def _init_hand(self) -> None:
        """No checkpoint: the hand-made prior and value."""
        self.config = {}
        self.step = 0
        if self.rules.is_dark:
            self.params = (jnp.zeros(()), jnp.zeros((), jnp.int32))
        else:
            pst = jnp.asarray(classic_piece_squares(self.rules), jnp.float32)
            self.params = (pst, jnp.asarray(classic_targets(self.rules)))
        self._model = ("hand",)
        self._depth = 0
        # every legal root action: with equal prior logits (DARK; CLASSIC's quiet moves
        # far from the dens) and no Gumbel noise (play), the top 16 would be the 16
        # lowest action indices, a corner of the board
        self._considered = self._env.num_actions

    def _init_dqn(
        self,
        source: str,
        heuristic: float,
        tau: float,
        hunt: float,
        cover: bool,
        exact: bool,
        capture: float = 0.0,
        greedy: float = 0.0,
        potential: float = POTENTIAL_WEIGHT,
        values: str = "spec",
        material: str = "ratio",
    ) -> None:
        """Read a DQN checkpoint: its action values are the search's prior."""
        if not self.rules.is_dark:
            raise ValueError(f"a DQN prior plays DARK rules only, not {self.rules.name}")
        dqn_config, q_params, self.step = load_dqn(source)
        self.config = {}
        weight = 1.0 if heuristic < 0 else heuristic
        self.params = (q_params, jnp.float32(1.0 / tau), jnp.float32(weight), jnp.float32(hunt))
        if exact:
            self.params = (*self.params, packed_leaf_tables(self.rules))
        self._model = (
            "dqn",
            dqn_config,
            hunt > 0,
            cover,
            exact,
            capture,
            greedy,
            values,
            material,
            potential,
        )
        self._depth = 0
        self._considered = 16

    def _compile(
        self, config: SearchConfig, model: tuple[Any, ...] | None = None
    ) -> Callable[[Any, jax.Array, JaxState], tuple[jax.Array, jax.Array]]:
        search_config = replace(
            config,
            max_depth=self._depth,
            max_considered=self._considered,
            prior_mix=self._prior_mix,
            afterstate=self._afterstate,
        )
        search = compiled_search(self.rules, self._model if model is None else model, search_config)
        start = self._batch(new_game(self.rules))
        search(self.params, jax.random.key(0), start)[0].block_until_ready()  # compile now
        return search

    def _calibrate(self, seconds: float) -> int:
        """Simulations that take about ``seconds`` here, from a timed search of a
        middlegame (:func:`calibration_position`; the start, all face down, searches
        several times faster than a game's later positions), rounded down to a power of
        two, at least 8."""
        position = self._batch(calibration_position(self.rules))
        self._search(self.params, jax.random.key(1), position)[0].block_until_ready()
        begin = perf_counter()
        self._search(self.params, jax.random.key(2), position)[0].block_until_ready()
        per_simulation = (perf_counter() - begin) / self.simulations
        fits = max(8, int(seconds / max(per_simulation, 1e-9)))
        return 1 << (fits.bit_length() - 1)

    def _batch(self, state: State) -> JaxState:
        one: JaxState = jax.tree.map(lambda x: x[None], self._env.from_state(state))
        return one

    def act(self, state: State, rng: np.random.Generator) -> int:
        """The search's action (a legal one) for the player to move in ``state``.

        Where the endgame tables cover ``state`` (every piece face up, at most
        ``endgame`` pieces; :mod:`jungle_agents.endgame`) the action is one that keeps
        the exact value: a fastest win outright, else the search's choice among the
        drawing (or slowest losing) actions, by its visit weights. With
        ``face_down_minimax``, the Minimax agent decides while some piece is face down."""
        if self._minimax is not None and state.face_down_mask:
            return self._minimax.act(state, rng)
        best = self._endgame.best_actions(state) if self._endgame is not None else None
        if best is not None and len(best) == 1:
            return best[0]
        key = jax.random.key(int(rng.integers(2**62)))
        search = self._search_face_down if state.face_down_mask else self._search
        chosen, weights = search(self.params, key, self._batch(state))
        action = int(chosen[0])
        if best is not None and action not in best:
            policy = np.asarray(weights[0])
            action = max(best, key=lambda a: (policy[a], -a))
        legal = legal_action_mask(state)
        if not (0 <= action < legal.shape[0] and legal[action]):  # never seen; a guard
            action = int(np.flatnonzero(legal)[0])
        return action


def calibration_position(rules: Rules, plies: int = 60, seed: int = 0) -> State:
    """A fixed middlegame: ``plies`` of seeded random play from the start (a new game
    where one ends); the position the ``time`` parameter's timed search runs on.

    >>> from jungle_core import DARK, outcome
    >>> position = calibration_position(DARK)
    >>> outcome(position) is None, position == calibration_position(DARK)
    (True, True)
    """
    rng = np.random.default_rng(seed)
    state = new_game(rules, seed=seed)
    for _ in range(plies):
        if outcome(state) is not None:
            state = new_game(rules, seed=int(rng.integers(2**31)))
        actions = legal_actions(state)
        state = step(state, actions[int(rng.integers(len(actions)))], rng)
    return state if outcome(state) is None else new_game(rules, seed=seed)


def params_from_arrays(arrays: Any, network: PolicyValueNetwork, rules: Rules, where: str) -> Any:
    """The network parameters from a checkpoint's ``params/...`` arrays, checked
    against the network's own shapes (``where`` names the file in errors).

    >>> from jungle_core import DARK
    >>> from jungle_train.jitted._pytree_io import params_to_arrays
    >>> network = build_network(DARK, 4, 1)
    >>> params = network.init(jax.random.key(0), jnp.zeros((1, *planes_shape(DARK))))
    >>> back = params_from_arrays(params_to_arrays(params), network, DARK, "agent.npz")
    >>> jax.tree.all(jax.tree.map(lambda a, b: bool((a == b).all()), params, back))
    True
    """
    flat = {}
    for name, value in arrays.items():
        parts = tuple(name.split("/"))
        if len(parts) < 3 or parts[0] != "params":
            raise CheckpointError(f"{where}: unexpected array {name!r} in an azero checkpoint")
        flat[parts] = jnp.asarray(value, jnp.float32)
    params = flax.traverse_util.unflatten_dict(flat)  # type: ignore[no-untyped-call]
    template = jax.eval_shape(network.init, jax.random.key(0), jnp.zeros((1, *planes_shape(rules))))
    want = jax.tree.map(lambda x: x.shape, template)
    got = jax.tree.map(lambda x: x.shape, params)
    if want != got:
        raise ValueError("parameter shapes differ from the config's network")
    return params
