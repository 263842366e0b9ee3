"""The system log: operational events kept in the database for audit (methodology §14)."""

import logging
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, insert
from sqlmodel import Session

from arena.storage.tables import SYSTEM_LOGS

_python_log = logging.getLogger("arena")
_LEVELS = {"DEBUG": 10, "INFO": 20, "WARNING": 30, "ERROR": 40, "CRITICAL": 50}


_INSERT = insert(SYSTEM_LOGS)


def log_event(
    session: Session | Connection,
    at: datetime,
    level: str,
    source: str,
    message: str,
    **context: Any,
) -> None:
    """Record an event in `system_logs` (inside the caller's transaction) and in Python logging.

    One Core INSERT, so jobs on a plain connection and ORM units of work log the same way.
    """
    conn = session.connection() if isinstance(session, Session) else session
    row = {"at": at, "level": level, "source": source, "message": message, "context": context}
    conn.execute(_INSERT, row)
    _python_log.log(_LEVELS.get(level, 20), "%s: %s", source, message)
