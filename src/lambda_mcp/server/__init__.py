"""The user-facing app object, its decorators, the handler `Context`, and the registries behind them."""
