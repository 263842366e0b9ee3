"""Alembic environment: runs on the connection handed over by `arena.storage.migrate`."""

from typing import Literal

from alembic import context
from alembic.autogenerate.api import AutogenContext
from sqlmodel import SQLModel

import arena.storage.models  # noqa: F401  (registers every table on SQLModel.metadata)

config = context.config
target_metadata = SQLModel.metadata


def _render_item(type_: str, obj: object, autogen_context: AutogenContext) -> str | Literal[False]:
    """Render our custom column types as importable expressions in new revisions."""
    from arena.storage.dbtypes import Fixed, UTCDateTime

    if type_ == "type" and isinstance(obj, Fixed):
        autogen_context.imports.add("from arena.storage.dbtypes import Fixed")
        return f"Fixed({obj.places})"
    if type_ == "type" and isinstance(obj, UTCDateTime):
        autogen_context.imports.add("from arena.storage.dbtypes import UTCDateTime")
        return "UTCDateTime()"
    return False


def run_migrations() -> None:
    connection = config.attributes.get("connection")
    if connection is None:
        raise RuntimeError(
            "run migrations through arena.storage.migrate, which supplies a connection"
        )
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        render_item=_render_item,
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


run_migrations()
