"""Catch the unexpected exceptions the kit logs while serving one test client, for the test to raise.

The kit turns a handler's unexpected exception into a generic error (a tool's "failed unexpectedly
(reference …)" result, a resource's or prompt's -32603) and logs it with its traceback on the
`lambda_mcp` logger. A `Catcher` is a handler on that logger that keeps the exception object of every
such record made while serving its own client's requests (a context variable set around each request,
which the tasks those requests start inherit), so production code is unchanged and other clients in
the same process are not affected.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_serving: ContextVar[Catcher | None] = ContextVar("lambda_mcp_testing_catcher", default=None)
KIT_LOGGER = "lambda_mcp"


class Catcher(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.caught: list[BaseException] = []

    def emit(self, record: logging.LogRecord) -> None:
        exc_info = record.exc_info
        if _serving.get() is self and exc_info and exc_info[1] is not None:
            self.caught.append(exc_info[1])

    def install(self) -> None:
        logging.getLogger(KIT_LOGGER).addHandler(self)

    def remove(self) -> None:
        logging.getLogger(KIT_LOGGER).removeHandler(self)

    @contextmanager
    def serving(self) -> Iterator[None]:
        """Around one request: what the kit logs while serving it (and the tasks it starts) is this client's."""
        token = _serving.set(self)
        try:
            yield
        finally:
            _serving.reset(token)

    def raise_caught(self) -> None:
        """Raise the first exception caught since the last call (its own type and traceback), if any."""
        if self.caught:
            first = self.caught[0]
            self.caught.clear()
            raise first
