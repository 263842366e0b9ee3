"""The system log: operational events kept in the database for audit (methodology §14)."""

import logging
from datetime import datetime
from typing import Any

from sqlmodel import Session

from arena.models import SystemLog

_python_log = logging.getLogger("arena")
_LEVELS = {"DEBUG": 10, "INFO": 20, "WARNING": 30, "ERROR": 40, "CRITICAL": 50}


def log_event(
    session: Session, at: datetime, level: str, source: str, message: str, **context: Any
) -> None:
    """Record an event in `system_logs` (inside the caller's transaction) and in Python logging."""
    session.add(SystemLog(at=at, level=level, source=source, message=message, context=context))
    _python_log.log(_LEVELS.get(level, 20), "%s: %s", source, message)
