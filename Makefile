# `make demo` and `make test` work on a fresh machine with only python3: they create
# .venv when it is missing and (re)install the project only when its metadata changed.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# Extras installed into .venv: the test tools, every user extra (the type check and the
# tests cover every module, each with its optional frameworks) and the documentation tools.
EXTRAS ?= dev,all,docs
comma := ,
# One stamp per set of extras (`.install-stamp-dev-all-docs`): changing EXTRAS reinstalls.
STAMP := $(VENV)/.install-stamp-$(subst $(comma),-,$(EXTRAS))
PACKAGES := jungle_core jungle_agents jungle_train jungle_cli

.PHONY: demo test test-pypy lint typecheck docs dist bench bench-pypy test-long soak \
	soak-serve tournament-memory clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -q -e '.[$(EXTRAS)]'
	rm -f $(VENV)/.install-stamp-*
	touch $(STAMP)

# The main job: the round robin of the whole portfolio on DARK with the shipped checkpoints
# (random, greedy, minimax depth 3, tabular Q, approximate Q, DQN): the evaluation table (each
# pair's score, as first and as second player), Elo ratings, heat map; results/demo gets the
# games, CSV and Markdown. GAMES games a pair (12: a few minutes on 2 cores); `make demo
# GAMES=200` plays the full evaluation, 200 games a pair, half with each agent moving first.
GAMES ?= 12
DEMO_AGENTS := random,greedy,minimax:depth=3,qlearn,approxq,dqn
demo: $(STAMP)
	rm -rf results/demo
	$(VENV)/bin/jungle tournament --rules dark --agents $(DEMO_AGENTS) \
		--games $(GAMES) --out results/demo

# ruff (lint and format), and the import contracts of pyproject.toml (layers, no
# circles) with import-linter.
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports

# The packages, and the tests, property tests and benchmarks that use them.
typecheck: $(STAMP)
	$(VENV)/bin/mypy --strict $(PACKAGES) tests property_tests benchmarks experiments

# One pytest worker a core (pytest-xdist); `worksteal` hands the last slow tests to idle workers.
# README.md and docs/*.md: their examples are doctests (docs/'s Python files, the site's hooks
# and helper scripts, are not collected: conftest.py).
test: lint typecheck
	$(VENV)/bin/pytest -q -n auto --dist worksteal README.md docs $(PACKAGES) tests property_tests benchmarks experiments

# The documentation site (mkdocs.yml) into site/; --strict: a broken link or reference fails it.
docs: $(STAMP)
	$(VENV)/bin/mkdocs build --strict -d site

# The sdist and the wheel into dist/, and twine's check of their metadata (what PyPI renders).
dist: $(STAMP)
	rm -rf dist
	$(PY) -m build --outdir dist .
	$(VENV)/bin/twine check --strict dist/*

# Under PyPy (PYPY: a PyPy 3.11 or later), in .venv-pypy: every test that needs no JAX (JAX
# has no PyPy build; conftest.py leaves the others uncollected), the doctests of the
# packages included. README.md's doctests are not run here: one of its examples is the
# JAX core's. Opt-in, since CI has no PyPy; figures in the README's "On PyPy".
PYPY ?= pypy3
PYPY_VENV := .venv-pypy
$(PYPY_VENV)/bin/python:
	$(PYPY) -c "import platform, sys; sys.exit(platform.python_implementation() != 'PyPy')" \
		|| { echo "PYPY=$(PYPY) is not a PyPy"; exit 2; }
	$(PYPY) -m venv $(PYPY_VENV)
	$(PYPY_VENV)/bin/python -m pip install -q --upgrade pip

$(PYPY_VENV)/.install-stamp: pyproject.toml | $(PYPY_VENV)/bin/python
	$(PYPY_VENV)/bin/python -m pip install -q -e '.[pypy-test]'
	touch $@

test-pypy: $(PYPY_VENV)/.install-stamp
	$(PYPY_VENV)/bin/pytest -q -n auto --dist worksteal $(PACKAGES) tests property_tests

# Long Hypothesis run: many more examples per property.
test-long: $(STAMP)
	HYPOTHESIS_PROFILE=long $(VENV)/bin/pytest -q property_tests

# The JAX core against the pure core on a million random steps of every rule variant,
# then `make test-long`, every property under the long Hypothesis profile (about 26
# minutes here; figures in the README). Exits non-zero on a difference.
soak: $(STAMP)
	$(PY) -m property_tests.soak --steps 1000000
	$(MAKE) test-long

# 1,000 games through `jungle serve`'s HTTP API on loopback by 8 concurrent clients (a mix of
# agent, human, hint and upload games), the server's memory, open files and processes
# sampled: exits non-zero on an error, growth after warm-up or a leaked process (a few
# minutes; figures in docs/guarantees.md).
soak-serve: $(STAMP)
	$(PY) -m property_tests.serve_soak --games 1000 --clients 8

# A 10,000-game tournament of cheap agents on every core: peak memory at the start and the end.
tournament-memory: $(STAMP)
	$(PY) benchmarks/tournament_memory.py --games 10000

bench: $(STAMP)
	$(PY) -m pip install -q -e '.[bench]'
	$(PY) benchmarks/core_speed.py

# The same, with the pure core also played under PyPy (.venv-pypy, made by `make test-pypy`)
# in the same run.
bench-pypy: $(STAMP) $(PYPY_VENV)/.install-stamp
	$(PY) -m pip install -q -e '.[bench]'
	$(PY) benchmarks/core_speed.py --python $(PYPY_VENV)/bin/python

clean:
	rm -rf $(VENV) $(PYPY_VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis site dist build
