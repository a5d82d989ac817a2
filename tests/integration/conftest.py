"""Fixtures for the ASGI integration tests: a buffered kit serving the conformance fixture app."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.support.client import MCPTestClient, conformance_kit


@pytest.fixture
async def client() -> AsyncIterator[MCPTestClient]:
    test_client = MCPTestClient(conformance_kit())
    yield test_client
    await test_client.close()
    assert test_client.recorder.violations == [], test_client.recorder.violations
