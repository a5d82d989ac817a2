"""SnapStart's hooks in pieces (entrypoints/_snapstart.py; the whole, emulating restores: tests/integration/
test_snapstart.py): the priming request answers in memory, a kit without AWS clients has none to build, and the
credentials a restored client signs with are resolved at its first call, once."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import NoCredentialsError
from mangum import Mangum

from lambda_mcp import MCPApp
from lambda_mcp.config import Settings
from lambda_mcp.entrypoints import _snapstart
from lambda_mcp.kit import build_kit
from lambda_mcp.storage.aws_clients import _ResolvedAtNextUse


def _app() -> MCPApp:
    app = MCPApp("primed", version="1.0.0")

    @app.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    return app


def test_the_priming_request_is_a_2026_tools_list_the_handler_answers_in_memory() -> None:
    kit = build_kit(_app(), Settings(), streaming=False)
    answered: list[Any] = []
    serve = Mangum(kit.asgi(), lifespan="off")

    def recording(event: dict[str, Any], context: Any) -> Any:
        answered.append(response := serve(event, context))
        return response

    assert _snapstart.prime(recording) == 200
    (response,) = answered
    assert '"name":"add"' in response["body"].replace(" ", "")
    assert _snapstart.priming_event()["headers"]["host"] == _snapstart.PRIMING_HOST  # a name nobody can call from


def test_a_priming_request_that_fails_leaves_the_snapshot_to_be_taken(caplog: pytest.LogCaptureFixture) -> None:
    def broken(event: dict[str, Any], context: Any) -> Any:
        raise RuntimeError("the app cannot answer yet")

    assert _snapstart.prime(broken) == 0
    assert "the priming request failed" in caplog.text


def test_a_kit_in_memory_has_no_client_to_build() -> None:
    kit = build_kit(_app(), Settings(), streaming=False)
    _snapstart.build_clients(kit)  # nothing to build, nothing raised


class _Session:
    def __init__(self, found: Any) -> None:
        self.found, self.asked = found, 0

    def get_credentials(self) -> Any:
        self.asked += 1
        return self.found


class _Credentials:
    access_key = "RESTORED"

    def get_frozen_credentials(self) -> str:
        return "frozen"


def test_restored_credentials_are_resolved_at_their_first_use_once() -> None:
    session = _Session(_Credentials())
    credentials = _ResolvedAtNextUse(session)
    assert session.asked == 0  # the restore hook fetched nothing
    assert credentials.get_frozen_credentials() == "frozen"
    assert credentials.access_key == "RESTORED"
    assert session.asked == 1


def test_no_credentials_after_a_restore_is_botocore_s_own_error() -> None:
    with pytest.raises(NoCredentialsError):
        _ResolvedAtNextUse(_Session(None)).get_frozen_credentials()
