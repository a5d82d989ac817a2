"""lambda-mcp's HTTP entrypoint without its observability (no Powertools Logger, Metrics or request
record): bench/run.py compares it with `lambda_mcp.entrypoints.http` to measure what those add."""

from mangum import Mangum

from lambda_mcp.entrypoints._kit import lambda_kit

handler = Mangum(lambda_kit().asgi(), lifespan="off")
