"""Read a sharded partition (the change feed, the due index): one Query per shard, in parallel, merged.

A partition takes about 1,000 writes/s; spreading writes over N shards raises that N times, and readers
pay N Queries (run concurrently in worker threads). The merge keeps a reader's cursor exact: when a shard
filled its page, items beyond that shard's last key may still be unread there, so the merged page stops
at the smallest such key.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from ._client import LazyClient

Item = dict[str, Any]


async def query_shards(
    client: LazyClient, partitions: list[str], query: Callable[[str], dict[str, Any]], sort_key: Callable[[Item], str]
) -> list[Item]:
    """The items of `query(partition)` over every partition, in `sort_key` order, as one consistent page."""
    pages = await asyncio.gather(*(client.call("query", **query(partition)) for partition in partitions))
    items: list[Item] = []
    bound: str | None = None
    for page in pages:
        found: list[Item] = page.get("Items", [])
        items += found
        if page.get("LastEvaluatedKey") is not None and found:  # a full page: more may follow in this shard
            last = sort_key(found[-1])
            bound = last if bound is None else min(bound, last)
    items.sort(key=sort_key)
    return items if bound is None else [item for item in items if sort_key(item) <= bound]
