"""Errors the CLI turns into one clear line on stderr (message, then how to fix it)."""


class ArenaError(Exception):
    """A problem the user can act on: bad input, bad configuration, an unreachable service."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def one_line(self) -> str:
        """The single stderr line: what is wrong and, when known, the fix."""
        text = " ".join(self.message.split())
        return f"{text} — {self.hint}" if self.hint else text


class ConfigError(ArenaError):
    """The configuration (environment, .env, lineup file) cannot be used."""


class InputError(ArenaError):
    """A command argument or a requested value is invalid."""


class DatabaseBusyError(ArenaError):
    """The database stayed locked by another process longer than the busy timeout."""
