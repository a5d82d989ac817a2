"""Smoke-test a deployed (or local) lambda-mcp endpoint: `lambda-mcp smoke`, kept here for the commands
written before it shipped in the wheel (`python infra/smoke.py URL [--stream] ...`). See
src/lambda_mcp/smoke.py for what it checks."""

from __future__ import annotations

import sys

from lambda_mcp.smoke import main

if __name__ == "__main__":
    sys.exit(main())
