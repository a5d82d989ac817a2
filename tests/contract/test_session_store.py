"""The SessionStore contract, run against every adapter: memory, moto, moto server, DynamoDB Local."""

from __future__ import annotations

import pytest

from lambda_mcp.storage import ConflictError, NotFoundError, SessionRecord, SessionStore
from tests.support.records import session_record

pytestmark = pytest.mark.anyio


def _record(
    session_id: str = "s1", expires_at: float = 4_000_000_000, principal: str | None = "alice"
) -> SessionRecord:
    return session_record(
        session_id,
        expires_at,
        client_capabilities={"sampling": {}, "elicitation": {"form": {}}},
        client_info={"name": "client", "version": "1.0"},
        created_at=1_700_000_000.5,
        principal=principal,
        touched_at=1_700_000_000.5,
    )


async def test_a_created_session_reads_back_whole(session_store: SessionStore) -> None:

    await session_store.create(_record())
    found = await session_store.get("s1", 1_700_000_001)
    assert found == _record()


async def test_create_is_conditional_on_a_new_id(session_store: SessionStore) -> None:

    await session_store.create(_record())
    with pytest.raises(ConflictError):
        await session_store.create(_record())


async def test_expired_sessions_read_as_absent_even_before_ttl_deletes_them(session_store: SessionStore) -> None:

    await session_store.create(_record(expires_at=1_800_000_000))
    assert await session_store.get("s1", 1_799_999_999) is not None
    assert await session_store.get("s1", 1_800_000_000) is None
    assert await session_store.get("unknown", 0) is None


async def test_touch_slides_the_expiry_of_a_live_session_only(session_store: SessionStore) -> None:

    await session_store.create(_record(expires_at=4_000_000_000))
    await session_store.touch("s1", 1_700_000_100, 4_100_000_000)
    found = await session_store.get("s1", 4_050_000_000)
    assert found is not None and found.expires_at == 4_100_000_000 and found.touched_at == 1_700_000_100
    with pytest.raises(NotFoundError):
        await session_store.touch("unknown", 1_700_000_100, 4_100_000_000)


async def test_log_level_and_subscriptions_are_stored(session_store: SessionStore) -> None:

    await session_store.create(_record())
    await session_store.set_log_level("s1", "warning")
    await session_store.subscribe("s1", "test://a", True)
    await session_store.subscribe("s1", "test://b", True)
    await session_store.subscribe("s1", "test://a", False)
    found = await session_store.get("s1", 1_700_000_001)
    assert found is not None and found.log_level == "warning" and found.subscriptions == {"test://b"}


async def test_terminated_sessions_are_gone_for_every_operation(session_store: SessionStore) -> None:

    await session_store.create(_record())
    await session_store.terminate("s1")
    assert await session_store.get("s1", 1_700_000_001) is None
    for change in (
        session_store.terminate("s1"),
        session_store.set_log_level("s1", "info"),
        session_store.subscribe("s1", "test://a", True),
        session_store.touch("s1", 1_700_000_100, 4_100_000_000),
    ):
        with pytest.raises(NotFoundError):
            await change
    with pytest.raises(ConflictError):
        await session_store.create(_record())


async def test_principal_is_kept_for_binding(session_store: SessionStore) -> None:

    await session_store.create(_record("anon", principal=None))
    found = await session_store.get("anon", 1_700_000_001)
    assert found is not None and found.principal is None
