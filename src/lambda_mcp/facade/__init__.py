"""The authorization facade (`LAMBDA_MCP_AUTH=proxy`): an OAuth 2.1 authorization server on the MCP
origin, in front of an upstream OpenID provider that registers no clients itself.

MCP clients register with it (Dynamic Client Registration, or a Client ID Metadata Document), the user
approves each client on its consent page and signs in at the upstream with the facade's one
pre-registered client, and the facade issues its own short-lived access tokens for the MCP resource.
Upstream tokens never leave it. Imported only in `proxy` mode.
"""
