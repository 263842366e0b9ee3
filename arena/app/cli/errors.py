"""The one stderr line a failed command ends with: what went wrong and what fixes it."""

from arena.core.errors import ArenaError


def command_error_line(exc: BaseException) -> str:
    """`error: …` for a failure that escaped a command, with the fix where one is known."""

    from sqlalchemy.exc import OperationalError, SQLAlchemyError

    from arena.storage.db import busy_error, is_locked_error

    if isinstance(exc, OperationalError) and is_locked_error(exc):
        exc = busy_error()
    if isinstance(exc, ArenaError):
        return f"error: {exc.one_line()}"
    detail = _missing_table(exc)
    if detail:
        return (
            f"error: the database has no schema yet ({detail}) — run `arena init-db`, or "
            "point ARENA_DATABASE_URL at the arena database"
        )
    if isinstance(exc, OperationalError):
        detail = str(exc.orig).strip().splitlines()[0] if exc.orig else "operational error"
        return (
            f"error: database error: {detail} — check ARENA_DATABASE_URL and that the "
            "database is reachable and writable"
        )
    if isinstance(exc, SQLAlchemyError):
        name = type(exc).__name__
        return f"error: database error: {name} — run `arena init-db`, or retry with --debug"
    return f"error: unexpected {type(exc).__name__}: {exc} — retry with --debug for a traceback"


def _missing_table(exc: BaseException) -> str | None:
    """The driver's first line when a query met a table that is not there (SQLite's "no such
    table", PostgreSQL's undefined_table, SQLSTATE 42P01): the schema was never built, which
    `arena init-db` fixes, not an unreachable server."""
    from sqlalchemy.exc import DBAPIError

    if not isinstance(exc, DBAPIError) or exc.orig is None:
        return None
    detail = str(exc.orig).strip()
    first = detail.splitlines()[0] if detail else "undefined table"
    if getattr(exc.orig, "sqlstate", None) == "42P01" or first.lower().startswith("no such table"):
        return first
    return None
