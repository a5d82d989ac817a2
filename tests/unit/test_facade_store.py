"""The facade's store in memory and in DynamoDB (DynamoDB Local): expiry, single-use
`take`, conditional `swap`, the registration counter; and a whole sign-in with its state in DynamoDB."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from lambda_mcp.storage.facade import FacadeStore, InMemoryFacadeStore, RowTooLarge
from tests.contract.conftest import backend  # noqa: F401 (the contract suites' backends, fresh table each)

pytestmark = pytest.mark.anyio
NOW = 1_800_000_000.0
on_backends = pytest.mark.parametrize("backend", ["memory", "dynamodb-local"], indirect=True)
"""Memory, and the real DynamoDB semantics (conditional deletes, ReturnValues) on DynamoDB Local."""


@pytest.fixture
def store(backend: tuple[str, Any]) -> FacadeStore:  # noqa: F811
    if backend[1] is None:
        return InMemoryFacadeStore()
    from lambda_mcp.storage.dynamodb.facade import DynamoDBFacadeStore

    client, table = backend[1]
    return DynamoDBFacadeStore(table, client=client)


@on_backends
async def test_rows_expire(store: FacadeStore) -> None:
    await store.put("client", "c1", {"name": "one"}, NOW + 10, "v1")
    assert await store.get("client", "c1", NOW) == ({"name": "one"}, "v1")
    assert await store.get("client", "c1", NOW + 11) is None
    assert await store.take("client", "c1", NOW + 11) is None
    assert await store.get("client", "missing", NOW) is None


@on_backends
async def test_take_hands_a_row_out_once_even_to_concurrent_callers(store: FacadeStore) -> None:
    await store.put("code", "k", {"client_id": "a"}, NOW + 60)
    taken = await asyncio.gather(*(store.take("code", "k", NOW) for _ in range(5)))
    assert [t for t in taken if t is not None] == [{"client_id": "a"}]
    assert await store.get("code", "k", NOW) is None


@on_backends
async def test_swap_only_replaces_the_expected_version(store: FacadeStore) -> None:
    await store.put("family", "f", {"n": 0}, NOW + 60, "h0")
    assert await store.swap("family", "f", "h0", {"n": 1}, NOW + 60, "h1", NOW)
    assert not await store.swap("family", "f", "h0", {"n": 2}, NOW + 60, "h2", NOW)  # a replay of h0
    assert await store.get("family", "f", NOW) == ({"n": 1}, "h1")
    assert not await store.swap("family", "f", "h1", {"n": 2}, NOW + 60, "h2", NOW + 61)  # expired
    await store.delete("family", "f")
    assert not await store.swap("family", "f", "h1", {"n": 2}, NOW + 60, "h2", NOW)


@on_backends
async def test_the_counter_stops_at_its_limit_and_restarts_after_its_window(store: FacadeStore) -> None:
    results = [await store.count("rate", "w", 3, NOW + 60, NOW) for _ in range(5)]
    assert results == [True, True, True, False, False]
    assert await store.count("rate", "w", 3, NOW + 200, NOW + 61)  # the old window expired


@on_backends
async def test_long_keys_and_large_rows(store: FacadeStore) -> None:
    key = "https://client.example/" + "x" * 1500
    await store.put("cimd", key, {"ok": True}, NOW + 60)
    assert await store.get("cimd", key, NOW) == ({"ok": True}, "")
    with pytest.raises(RowTooLarge):
        await store.put("client", "big", {"blob": "x" * 20_000}, NOW + 60)


async def test_the_memory_store_is_bounded() -> None:
    small = InMemoryFacadeStore(max_rows=3)
    for i in range(5):
        await small.put("client", str(i), {}, NOW + i + 10)
    assert [await small.get("client", str(i), NOW) is not None for i in range(5)] == [False, False, True, True, True]


@pytest.mark.parametrize("backend", ["dynamodb-local"], indirect=True)
async def test_a_sign_in_with_its_state_in_dynamodb(backend: tuple[str, Any]) -> None:  # noqa: F811
    from lambda_mcp.kit import Stores, build_kit
    from lambda_mcp.loader import load_app
    from tests.unit.test_facade_http import BASE, FakeUpstream, Rig, settings

    client, table = backend[1]
    stores = Stores.dynamodb(table, client=client)
    kit = build_kit(load_app("tests/apps/scoped.py"), settings(), streaming=True, local=True, stores=stores)
    assert kit.facade is not None
    kit.facade.upstream = FakeUpstream()  # type: ignore[assignment]
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=kit.asgi()), base_url=BASE) as http:
        rig = Rig(http, kit.facade.upstream, kit)  # type: ignore[arg-type]
        registered = await rig.register()
        code = await rig.code(registered["client_id"])
        assert (await rig.exchange(registered["client_id"], code)).status_code == 200
        assert {"client", "code", "family", "rate"} <= _kinds(client, table)
        assert (await rig.exchange(registered["client_id"], code)).json()["error"] == "invalid_grant"
    assert "family" not in _kinds(client, table)  # the replayed code ended the sign-in its first use started
    found = client.scan(TableName=table)["Items"]
    marks = [item["version"]["S"] for item in found if item["pk"]["S"].startswith("FACADE#code#")]
    assert len(marks) == 1 and marks[0].startswith("replayed:")  # kept until it expires, marked
    assert all("expires_at" in item for item in found if item["pk"]["S"].startswith("FACADE#"))


def _kinds(client: Any, table: str) -> set[str]:
    found = client.scan(TableName=table)["Items"]
    return {item["pk"]["S"].split("#")[1] for item in found if item["pk"]["S"].startswith("FACADE#")}
