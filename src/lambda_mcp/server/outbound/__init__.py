"""Calling other services from the kit-made tools (`app.openapi`, `app.mount`): how a request is
authenticated (`auth.py`), the process-wide HTTP client (`http.py`), and secret references (`secrets.py`).
Users import the public names from `lambda_mcp.outbound`."""
