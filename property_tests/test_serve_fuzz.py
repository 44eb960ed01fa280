"""Every route of ``jungle serve`` under Hypothesis: hostile paths, query strings, JSON
bodies and agent specs with extreme numbers get a 4xx answer with a message (or a normal
200), never a 500, a dropped connection or a hang (each answer within seconds).

In process, through Starlette's TestClient (no socket): the server's own handling of each
request is what is tested; its connection limits have tests of their own
(``tests/cli/test_serve_hardening.py``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

pytest.importorskip("starlette", reason="jungle serve needs the serve extra")
pytest.importorskip("httpx2", reason="Starlette's TestClient needs httpx2")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from jungle_agents import agent_kinds, kind_params
from jungle_cli import _serve_store
from jungle_cli._serve import make_app

ANSWER_S = 8.0  # the slowest answer allowed (a long poll here waits at most 0.2 s)


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    patch = pytest.MonkeyPatch()
    patch.setattr(_serve_store, "POLL_S", 0.2)  # long polls end fast: many examples
    app = make_app(workers=1, max_games=500, move_time=1.0, hint_time=1.0)
    headers = {"content-type": "application/json"}
    with TestClient(
        app, base_url="http://127.0.0.1", headers=headers, raise_server_exceptions=False
    ) as c:
        yield c
    patch.undo()


@pytest.fixture(scope="module")
def gid(client: TestClient) -> str:
    """A game of two humans that the examples may poke at."""
    response = client.post("/api/games", json={"mode": "human-human"})
    assert response.status_code == 200
    return str(response.json()["id"])


def check(response: Any, seconds: float) -> None:
    """A 200, or a 4xx with ``{"error": message}``; never a 5xx; in time."""
    assert seconds < ANSWER_S, seconds
    assert response.status_code < 500, (response.status_code, response.text[:300])
    if response.status_code >= 400:
        message = response.json()["error"]
        assert isinstance(message, str) and message


def call(client: TestClient, method: str, path: str, **kwargs: Any) -> Any:
    start = time.monotonic()
    response = client.request(method, path, **kwargs)
    check(response, time.monotonic() - start)
    if method == "POST" and response.status_code == 200:
        made = response.json().get("id")
        if isinstance(made, str) and path in ("/api/games", "/api/games/load"):
            client.delete(f"/api/games/{made}")  # the examples never fill the server
    return response


EXTREME_TEXT = [
    "0",
    "-1",
    "1",
    "1e308",
    "-1e308",
    "1e-320",
    "nan",
    "inf",
    "-inf",
    "9" * 18,
    "1" + "0" * 30,
    "-" + "9" * 17,
    "\u00b2",
    "\uff11",
    "0x10",
    "1_000",
    "",
    "/etc/passwd",
    "/dev/stdin",
    "true",
    "ratio",
]
EXTREME_NUMBERS = st.one_of(
    st.integers(-(10**400), 10**400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, -1, 2**31, 2**63, 10**308, -(10**400), 1e308, 5e-324]),
)
MODES = ["human-agent", "agent-agent"]


@st.composite
def agent_specs(draw: st.DrawFn) -> str:
    """A spec of a registered kind (or none) whose parameters take extreme values. The
    kinds are read when drawn: other tests in this process register and remove kinds."""
    kind = draw(st.sampled_from([*agent_kinds(), "nosuchagent"]))
    params = list(kind_params(kind)) if kind != "nosuchagent" else []
    keys = draw(st.lists(st.sampled_from([*params, "bogus"]), max_size=4, unique=True))
    values = draw(
        st.lists(
            st.one_of(st.sampled_from(EXTREME_TEXT), EXTREME_NUMBERS.map(str)),
            min_size=len(keys),
            max_size=len(keys),
        )
    )
    text = ",".join(f"{k}={v}" for k, v in zip(keys, values, strict=True))
    return f"{kind}:{text}" if text else kind


JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), EXTREME_NUMBERS, st.text(max_size=30)),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
FIELDS = ["rules", "mode", "agent", "agent1", "side", "clock", "hint", "delay", "paused"]
FIELDS += ["move", "action", "ply", "text", "index"]


@st.composite
def bodies(draw: st.DrawFn) -> dict[str, Any]:
    """A JSON object of the API's field names (and others) with hostile values."""
    keys = draw(st.lists(st.sampled_from([*FIELDS, "x"]), max_size=6, unique=True))
    body: dict[str, Any] = {}
    for key in keys:
        body[key] = draw(
            st.one_of(
                JSON_VALUES,
                agent_specs(),
                st.sampled_from(["dark", "classic", "human-agent", "agent-agent", "5+3"]),
            )
        )
    return body


def dumps(body: Any) -> bytes:
    """JSON text, huge numbers and non-finite floats included (as Python writes them)."""
    return json.dumps(body, allow_nan=True).encode()


POST_ROUTES = ["", "/load", "/{gid}/move", "/{gid}/undo", "/{gid}/resign", "/{gid}/hint"]
POST_ROUTES += ["/{gid}/watch"]
GET_ROUTES = ["/{gid}", "/{gid}/ply/{seg}", "/{gid}/record", "/{seg}", "/{seg}/ply/0"]
SEGMENTS = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["\u00b2", "--5", "-0", "1" * 5000, "%00", "..", "../../etc/passwd"]),
    st.integers(-(10**30), 10**30).map(str),
)

fuzz = settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@fuzz
@given(route=st.sampled_from(POST_ROUTES), body=bodies())
def test_posts_with_hostile_bodies(client: TestClient, gid: str, route: str, body: Any) -> None:
    call(client, "POST", "/api/games" + route.format(gid=gid), content=dumps(body))


@fuzz
@given(route=st.sampled_from(GET_ROUTES), seg=SEGMENTS, after=SEGMENTS)
def test_gets_with_hostile_paths_and_queries(
    client: TestClient, gid: str, route: str, seg: str, after: str
) -> None:
    path = "/api/games" + route.format(gid=gid, seg=quote(seg, safe=""))
    call(client, "GET", path)
    call(client, "GET", f"/api/games/{gid}", params={"after": after})


@fuzz
@given(spec=agent_specs(), other=agent_specs(), mode=st.sampled_from(MODES))
def test_agent_specs_with_extreme_numbers(
    client: TestClient, spec: str, other: str, mode: str
) -> None:
    body = {"mode": mode, "agent": spec, "agent1": other, "hint": other, "side": 0}
    call(client, "POST", "/api/games", content=dumps(body))


@fuzz
@given(raw=st.one_of(st.binary(max_size=200), st.text(max_size=200).map(str.encode)))
def test_raw_bytes_as_bodies(client: TestClient, gid: str, raw: bytes) -> None:
    for route in ("/api/games", f"/api/games/{gid}/move", "/api/games/load"):
        call(client, "POST", route, content=raw)


def test_a_number_too_large_for_a_float_is_a_400(client: TestClient) -> None:
    """The example the probe found, kept whatever Hypothesis draws."""
    body = b'{"delay": 1' + b"0" * 400 + b"}"
    response = call(client, "POST", "/api/games", content=body)
    assert response.status_code == 400 and "delay" in response.json()["error"]
