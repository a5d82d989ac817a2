"""Authorization: the auth modes (`none`, `jwt`, `gateway`), caller identities and their scopes, bearer
token validation, and the protected resource metadata and challenges MCP clients discover it through.

Only `jwt` mode imports the JWT library (`auth.tokens`); the rest is standard library.
"""
