"""Change notifications to clients: which notification a change becomes for a listener, following the
in-process feed (streaming server), and polling the durable change log (buffered transport).

Listeners: a 2026 `subscriptions/listen` (its filter says what it wants) and a legacy session's GET
stream (every list change, and updates of the resources the session subscribed to).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterable
from typing import Any

from ..polling import Backoff
from ..protocol import jsonrpc
from ..server.app import MCPApp
from ..server.changes import ChangeFeed, Published
from ..storage.ports import ChangeLog
from ..storage.records import Change
from .deadline import quiet_seconds

LIST_FLAGS = {"tools": "toolsListChanged", "prompts": "promptsListChanged", "resources": "resourcesListChanged"}
"""List kind -> the `subscriptions/listen` filter flag that asks for its `list_changed` notifications."""


def every_list(subscriptions: set[str] | list[str], session_id: str | None = None) -> dict[str, Any]:
    """The filter of a legacy session: every list change, the resources it subscribed to, and the URL
    elicitations its requests started (their ids begin with the session's: `Context.elicitation_id`)."""
    wanted: dict[str, Any] = {**{flag: True for flag in LIST_FLAGS.values()}, "resourceSubscriptions": subscriptions}
    if session_id:
        wanted[ELICITATIONS_OF] = session_id + ":"
    return wanted


ELICITATIONS_OF = "elicitationsOf"
"""A legacy session's filter key: the prefix of the elicitation ids whose completion it is told of."""


def readable(app: MCPApp, uris: Iterable[str], scopes: frozenset[str] | None) -> list[str]:
    """The resources among `uris` a caller holding `scopes` may subscribe to (all, when scopes are not
    enforced): a listener learns of updates only to what it may read, whatever it subscribed to before."""
    return [uri for uri in uris if not app.unmet_scopes(scopes, "resources/subscribe", {"uri": uri})]


def notification_for(
    change: Change | Published,
    wanted: dict[str, Any],
    listener: str | None,
    meta: dict[str, Any] | None = None,
) -> dict[str, Any] | None:
    """The notification for one change, if `wanted` (list flags and `resourceSubscriptions`) asks for it
    and the change is for every listener or for this listener's principal; `meta` goes into its `_meta`
    (a listen's subscription id)."""
    kind, uri = change.kind, change.uri
    if change.principal is not None and change.principal != listener:
        return None
    params: dict[str, Any] = {} if meta is None else {"_meta": meta}
    if kind in LIST_FLAGS and wanted.get(LIST_FLAGS[kind]):
        return jsonrpc.notification(f"notifications/{kind}/list_changed", params or None)
    if kind == "resource" and uri in wanted.get("resourceSubscriptions", ()):
        return jsonrpc.notification("notifications/resources/updated", {"uri": uri, **params})
    prefix = wanted.get(ELICITATIONS_OF)
    if kind == "elicitation" and uri and isinstance(prefix, str) and uri.startswith(prefix):
        return jsonrpc.notification("notifications/elicitation/complete", {"elicitationId": uri})
    return None


async def follow(feed: ChangeFeed, every: float, until: float | None = None) -> AsyncIterator[Published | None]:
    """The changes published in this process from now on, and None every `every` seconds without one;
    it ends at the epoch time `until` (None: never)."""
    queue = feed.listen()
    try:
        while until is None or time.time() < until:
            try:
                yield await asyncio.wait_for(queue.get(), timeout=quiet_seconds(every, until))
            except TimeoutError:
                if until is None or time.time() < until:
                    yield None
    finally:
        feed.close(queue)


async def poll(log: ChangeLog, cursor: str, until: float) -> list[Change]:
    """The changes after `cursor`, polling the change log (backoff to 1 s) until there is one or `until`."""
    backoff = Backoff(until, first=0.1, limit=1.0)
    while True:
        changes = await log.since(cursor, time.time())
        if changes or not await backoff.sleep():
            return changes
