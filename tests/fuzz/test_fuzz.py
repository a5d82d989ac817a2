"""Fuzz `/mcp` with Hypothesis through the Lambda handler and the streaming server, on both protocol eras
and with raw garbage, checking the properties of `properties.py` on every exchange.

The `fuzz-ci` profile keeps the whole module well under a minute; `LAMBDA_MCP_FUZZ_PROFILE=fuzz-long`
runs many more examples (`bench/fuzz.py` runs the same properties and counts what it finds).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lambda_mcp.loader import load_app
from tests.support.recorder import Recorder

from .auth_probes import TAINT
from .probes import ASKING_TOOLS, CONFORMANCE, EXCLUDED_TOOLS, SAFE_TOOLS, TASK_TOOLS, probes_for
from .properties import categories_of, check, describe, run_probe
from .targets import FAMILIES, TARGETS, KeyAudit, Outcome, Target

HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much, HealthCheck.large_base_example]
settings.register_profile("fuzz-ci", max_examples=75, deadline=None, suppress_health_check=HEALTH, print_blob=True)
settings.register_profile("fuzz-long", parent=settings.get_profile("fuzz-ci"), max_examples=3500)
PROFILE = settings.get_profile(os.environ.get("LAMBDA_MCP_FUZZ_PROFILE", "fuzz-ci"))
CASES = [(target, family) for target in TARGETS for family in FAMILIES[target]]


@pytest.fixture(scope="module")
def targets() -> Iterator[dict[str, Target]]:
    """One kit per target for the module: its sessions and seeded ids are reused across examples."""
    built: dict[str, Target] = {}
    yield built
    for target in built.values():
        target.close()


def _target(targets: dict[str, Target], name: str) -> Target:
    if name not in targets:
        targets[name] = TARGETS[name]()
    return targets[name]


@pytest.mark.parametrize(("target_name", "family"), CASES)
@settings(PROFILE)
@given(data=st.data())
def test_every_exchange_keeps_the_properties(
    targets: dict[str, Target], target_name: str, family: str, data: st.DataObject
) -> None:
    target = _target(targets, target_name)
    probe = data.draw(probes_for(target_name, family), label="probe")
    outcome, findings = run_probe(target, probe)
    assert not findings, describe(probe, outcome, findings)


def test_the_tool_lists_cover_the_conformance_app() -> None:
    """Every tool of the fixture app is classified, so a new one is not silently left out."""
    app = load_app(str(CONFORMANCE))
    named = set(SAFE_TOOLS + ASKING_TOOLS + TASK_TOOLS + EXCLUDED_TOOLS)
    assert named == set(app.tools)


def _outcome(status: int | None, body: bytes, **fields: Any) -> Outcome:
    request = {"request_headers": {"host": "127.0.0.1:8000"}, "request_body": b"{}", "session_version": None}
    return Outcome(status, {"content-type": "application/json"}, body, **{**request, **fields})


def _categories(outcome: Outcome) -> set[str]:
    return categories_of(check(Recorder(), outcome))


def test_the_properties_flag_what_they_must() -> None:
    """The properties are not vacuous: each one fires on an exchange that breaks it."""
    traceback = b'Traceback (most recent call last):\n  File "/x/lambda_mcp/front.py", line 9\nKeyError: 1'
    assert {"5xx", "leak"} <= _categories(_outcome(500, traceback))
    internal = b'{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}}'
    assert "internal" in _categories(_outcome(200, internal, request_body=b'{"jsonrpc":"2.0","id":1,"method":"x"}'))
    changed = _outcome(404, b"", before={"sessions": {}}, after={"sessions": {"s": ("2025-11-25", None, [])}})
    assert _categories(changed) == {"state"}
    batch = b'[{"jsonrpc":"2.0","id":1,"result":{}}]'
    served = _outcome(
        200, batch, request_body=b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', session_version="2025-06-18"
    )
    assert _categories(served) == {"protocol"}
    stranger = b'{"jsonrpc":"2.0","id":2,"result":{}}'
    assert "protocol" in _categories(_outcome(200, stranger, request_body=b'{"jsonrpc":"2.0","id":1,"method":"ping"}'))
    assert "protocol" not in _categories(_outcome(200, stranger, request_body=b"null", method="GET"))  # a replay
    assert _categories(_outcome(None, b"")) == {"hang"}
    echoing = Outcome(401, {"www-authenticate": f'Bearer error_description="{TAINT}"'}, b"{}", {}, b"{}", None)
    assert "header" in _categories(echoing)
    bloated = Outcome(401, {"www-authenticate": "x" * 9000}, b"{}", {}, b"{}", None)
    assert "header" in _categories(bloated)
    assert _categories(_outcome(None, b"", open_stream=True)) == set()
    audit = KeyAudit()
    audit.arguments("sessions", "get", {"session_id": "x" * 3000})
    audit.arguments("calls", "cancel", {"session_id": "s", "stream_id": "call~" + "y" * 1100})
    assert len(audit.problems) == 2


def test_echoed_input_is_not_a_leak() -> None:
    """Text the request carried itself may come back (an unknown tool's name, a bad header value)."""
    echoed = b'{"jsonrpc":"2.0","error":{"code":-32600,"message":"Unsupported MCP-Protocol-Version: KeyError: x"}}'
    headers = {"host": "127.0.0.1:8000", "mcp-protocol-version": "KeyError: x"}
    assert "leak" not in _categories(_outcome(400, echoed, request_headers=headers))
