"""Entering the app's lifespan at an entrypoint's cold start, and leaving it on SIGTERM."""

from __future__ import annotations

import os
import signal
import sys
import threading
from types import FrameType

from ..runloop import process_loop, run
from ..server.lifespan import Lifespan


def start_lifespan(lifespan: Lifespan) -> None:
    """Enter the app's lifespan now (the cold start) and, in the main thread of a Lambda runtime, leave
    it on SIGTERM: Lambda sends that signal before it shuts an environment down, but only to functions
    with an extension registered; without one the environment is frozen and discarded, and nothing runs."""
    if not lifespan.registered or "AWS_LAMBDA_RUNTIME_API" not in os.environ:
        return  # not in a Lambda runtime (`lambda-mcp dev --lambda`): entered on each thread's first request
    run(lifespan.start())
    if threading.current_thread() is not threading.main_thread():
        return

    def leave(signum: int, frame: FrameType | None) -> None:
        loop = process_loop()
        if not loop.is_running():
            loop.run_until_complete(lifespan.stop())
        sys.exit(0)

    signal.signal(signal.SIGTERM, leave)
