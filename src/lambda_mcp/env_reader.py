"""Reading `LAMBDA_MCP_*` environment variables: typed reads that name the variable when its value is wrong
(`ConfigError`), shared by `Settings` and the few modules that read a variable of their own."""

from __future__ import annotations

from collections.abc import Mapping

PREFIX = "LAMBDA_MCP_"
_TRUE = frozenset({"1", "true", "on", "yes"})
_FALSE = frozenset({"0", "false", "off", "no"})


class ConfigError(ValueError):
    """A `LAMBDA_MCP_*` variable is missing or has a value the kit cannot use; the message names it."""


def _split(value: str | None) -> tuple[str, ...]:
    return tuple(part.strip() for part in (value or "").split(",") if part.strip())


class _Reader:
    """Typed reads of `LAMBDA_MCP_<name>` that name the variable when its value is wrong."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env

    def text(self, name: str) -> str | None:
        value = self.env.get(PREFIX + name, "").strip()
        return value or None

    def number(self, name: str, default: float, *, minimum: float = 0.0) -> float:
        raw = self.text(name)
        if raw is None:
            return default
        try:
            value = float(raw)
        except ValueError:
            raise ConfigError(f"{PREFIX}{name} must be a number, not {raw!r}") from None
        if not value >= minimum or value == float("inf"):
            raise ConfigError(f"{PREFIX}{name} must be a finite number of at least {minimum:g}, not {raw!r}")
        return value

    def integer(self, name: str, default: int, *, minimum: int = 0) -> int:
        raw = self.text(name)
        if raw is None:
            return default
        try:
            value = int(raw)
        except ValueError:
            raise ConfigError(f"{PREFIX}{name} must be a whole number, not {raw!r}") from None
        if value < minimum:
            raise ConfigError(f"{PREFIX}{name} must be at least {minimum}, not {raw!r}")
        return value

    def flag(self, name: str, default: bool) -> bool:
        raw = self.text(name)
        if raw is None:
            return default
        if raw.lower() in _TRUE:
            return True
        if raw.lower() in _FALSE:
            return False
        raise ConfigError(f"{PREFIX}{name} must be one of true/false, on/off, yes/no, 1/0, not {raw!r}")

    def choice(self, name: str, options: tuple[str, ...], default: str) -> str:
        raw = self.text(name)
        if raw is None:
            return default
        if raw.lower() not in options:
            raise ConfigError(f"{PREFIX}{name} must be one of {', '.join(options)}, not {raw!r}")
        return raw.lower()
