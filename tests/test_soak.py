"""Smoke test of ``make soak``'s script (``property_tests/soak.py``) at a tiny size."""

from __future__ import annotations

import pytest

from property_tests import soak


def test_soak_runs_and_agrees(capsys: pytest.CaptureFixture[str]) -> None:
    assert soak.main(["--steps", "256", "--batch", "32", "--rules", "DARK_STRICT"]) == 0
    out = capsys.readouterr().out
    assert "256 steps" in out and "no difference" in out


def test_soak_reports_a_difference(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # a pure core that counts one ply too many must be caught at the first step
    real = soak.step_outcome  # type: ignore[attr-defined]  # the name soak imported

    def off_by_one(state, action, o):  # type: ignore[no-untyped-def]
        nxt = real(state, action, o)
        return type(nxt)(
            nxt.rules,
            nxt.board,
            nxt.to_move,
            nxt.face_down_mask,
            nxt.plies_since_removal,
            nxt.ply + 1,
            nxt.history,
        )

    monkeypatch.setattr(soak, "step_outcome", off_by_one)
    assert soak.main(["--steps", "32", "--batch", "32", "--rules", "DARK_STRICT"]) == 1
    assert "next state differs" in capsys.readouterr().err
