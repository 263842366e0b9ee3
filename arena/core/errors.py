"""Errors the CLI turns into one clear line on stderr (message, then how to fix it)."""

from collections.abc import Iterable


class ArenaError(Exception):
    """A problem the user can act on: bad input, bad configuration, an unreachable service."""

    exit_code = 1  # what `arena` exits with (contract §1: non-zero, one line)

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


class UnreadableInput(InputError):
    """A file given to a command cannot be read as what it should be (not a bundle, damaged,
    over a size cap): exit 2, apart from 1 for "read fine but wrong" (contract §7)."""

    exit_code = 2


class UsageError(InputError):
    """An option's value the command cannot take (not a number, out of its range), found
    before anything runs: exit 2, as the command line's own usage errors (contract §1)."""

    exit_code = 2


class DatabaseBusyError(ArenaError):
    """The database stayed locked by another process longer than the busy timeout."""


MAX_ERROR_CHARS = 500
REDACTED = "***"


def error_line(exc: BaseException, secrets: Iterable[str] = ()) -> str:
    """One line naming a failure, with any known secret blanked out, at most 500 chars.

    What jobs and per-market settlement failures store in `job_runs` and `system_logs`: short,
    readable on the Operations page, and never carrying a key.
    """
    if isinstance(exc, ArenaError):
        text = exc.one_line()
    else:
        detail = str(getattr(exc, "orig", None) or exc).strip()
        first = detail.splitlines()[0] if detail else ""
        text = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    text = " ".join(text.split())
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1] + "…"
