"""Streamable HTTP for both protocol eras on one endpoint, on Starlette; no boto3, no mangum."""
