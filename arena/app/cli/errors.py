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
    detail = _missing_schema(exc)
    if detail:
        return f"error: {_schema_line(detail)}"
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


def _missing_schema(exc: BaseException) -> str | None:
    """The driver's first line when a query met a table or a column that is not there
    (SQLite's "no such table" / "no such column" / "has no column named", PostgreSQL's
    undefined_table 42P01 and undefined_column 42703): the schema was never built or is
    older than the code, which `arena init-db` fixes, not an unreachable server."""
    from sqlalchemy.exc import DBAPIError

    if not isinstance(exc, DBAPIError) or exc.orig is None:
        return None
    detail = str(exc.orig).strip()
    first = detail.splitlines()[0] if detail else "undefined table or column"
    sqlite = first.lower().startswith(("no such table", "no such column")) or (
        "has no column named" in first.lower()
    )
    if getattr(exc.orig, "sqlstate", None) in ("42P01", "42703") or sqlite:
        return first
    return None


def _schema_line(detail: str) -> str:
    """What the schema lacks and the fix, from the revision the database is at (read only
    now, when a query met a missing table or column: no command pays for it otherwise)."""
    found = _revisions()
    if found is None or found[0] is None:
        return (
            f"the database has no schema yet ({detail}) — run `arena init-db`, or point "
            "ARENA_DATABASE_URL at the arena database"
        )
    revision, head, known = found
    if revision == head:
        return (
            f"the database is at this code's schema revision {head} but lacks part of it "
            f"({detail}) — restore it from a backup (`arena restore`)"
        )
    if known:
        return (
            f"the database schema is at revision {revision}, older than this code's {head} "
            f"({detail}) — run `arena init-db` to migrate it (`arena backup` first keeps a copy)"
        )
    return (
        f"the database is at schema revision {revision}, which this code does not know "
        f"(its newest is {head}; {detail}) — run the arena version that migrated it, or point "
        "ARENA_DATABASE_URL at this version's database"
    )


def _revisions() -> tuple[str | None, str, bool] | None:
    """(the database's revision, this code's head, whether the code knows the database's),
    or None when the database cannot tell."""
    from alembic.script import ScriptDirectory
    from alembic.util import CommandError

    from arena.config import get_settings
    from arena.storage.db import get_engine
    from arena.storage.migrate import alembic_config, current_revision

    try:
        revision = current_revision(get_engine(get_settings().database_url, role="reader"))
    except Exception:  # the line still says init-db: the query met no table or column
        return None
    script = ScriptDirectory.from_config(alembic_config())
    head = script.get_current_head() or ""
    try:
        known = revision is not None and script.get_revision(revision) is not None
    except CommandError:
        known = False
    return revision, head, known
