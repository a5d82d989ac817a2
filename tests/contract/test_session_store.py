"""The SessionStore contract, run against every adapter: memory, moto, moto server, DynamoDB Local."""

from __future__ import annotations

from typing import Any

import pytest

from lambda_mcp.storage import ConflictError, InMemorySessionStore, NotFoundError, SessionRecord, SessionStore

pytestmark = pytest.mark.anyio


def _store(backend: tuple[str, Any]) -> SessionStore:
    name, resource = backend
    if resource is None:
        return InMemorySessionStore()
    from lambda_mcp.storage.dynamodb import DynamoDBSessionStore

    client, table = resource
    return DynamoDBSessionStore(table, client=client)


def _record(
    session_id: str = "s1", expires_at: float = 4_000_000_000, principal: str | None = "alice"
) -> SessionRecord:
    return SessionRecord(
        session_id=session_id,
        protocol_version="2025-11-25",
        client_capabilities={"sampling": {}, "elicitation": {"form": {}}},
        client_info={"name": "client", "version": "1.0"},
        created_at=1_700_000_000.5,
        expires_at=expires_at,
        principal=principal,
        touched_at=1_700_000_000.5,
    )


async def test_a_created_session_reads_back_whole(backend: tuple[str, Any]) -> None:
    store = _store(backend)
    await store.create(_record())
    found = await store.get("s1", 1_700_000_001)
    assert found == _record()


async def test_create_is_conditional_on_a_new_id(backend: tuple[str, Any]) -> None:
    store = _store(backend)
    await store.create(_record())
    with pytest.raises(ConflictError):
        await store.create(_record())


async def test_expired_sessions_read_as_absent_even_before_ttl_deletes_them(backend: tuple[str, Any]) -> None:
    store = _store(backend)
    await store.create(_record(expires_at=1_800_000_000))
    assert await store.get("s1", 1_799_999_999) is not None
    assert await store.get("s1", 1_800_000_000) is None
    assert await store.get("unknown", 0) is None


async def test_touch_slides_the_expiry_of_a_live_session_only(backend: tuple[str, Any]) -> None:
    store = _store(backend)
    await store.create(_record(expires_at=4_000_000_000))
    await store.touch("s1", 1_700_000_100, 4_100_000_000)
    found = await store.get("s1", 4_050_000_000)
    assert found is not None and found.expires_at == 4_100_000_000 and found.touched_at == 1_700_000_100
    with pytest.raises(NotFoundError):
        await store.touch("unknown", 1_700_000_100, 4_100_000_000)


async def test_log_level_and_subscriptions_are_stored(backend: tuple[str, Any]) -> None:
    store = _store(backend)
    await store.create(_record())
    await store.set_log_level("s1", "warning")
    await store.subscribe("s1", "test://a", True)
    await store.subscribe("s1", "test://b", True)
    await store.subscribe("s1", "test://a", False)
    found = await store.get("s1", 1_700_000_001)
    assert found is not None and found.log_level == "warning" and found.subscriptions == {"test://b"}


async def test_terminated_sessions_are_gone_for_every_operation(backend: tuple[str, Any]) -> None:
    store = _store(backend)
    await store.create(_record())
    await store.terminate("s1")
    assert await store.get("s1", 1_700_000_001) is None
    for change in (
        store.terminate("s1"),
        store.set_log_level("s1", "info"),
        store.subscribe("s1", "test://a", True),
        store.touch("s1", 1_700_000_100, 4_100_000_000),
    ):
        with pytest.raises(NotFoundError):
            await change
    with pytest.raises(ConflictError):
        await store.create(_record())


async def test_principal_is_kept_for_binding(backend: tuple[str, Any]) -> None:
    store = _store(backend)
    await store.create(_record("anon", principal=None))
    found = await store.get("anon", 1_700_000_001)
    assert found is not None and found.principal is None
