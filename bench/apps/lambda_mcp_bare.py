"""lambda-mcp's HTTP entrypoint without its observability (no Powertools Logger, Metrics or request
record): bench/run.py compares it with `lambda_mcp.entrypoints.http` to measure what those add."""

from mangum import Mangum

from lambda_mcp.entrypoints._kit import lambda_kit
from lambda_mcp.transport.app import create_app

handler = Mangum(create_app(lambda_kit()), lifespan="off")
