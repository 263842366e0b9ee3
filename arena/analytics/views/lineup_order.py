"""The families in lineup order, for what must stay fixed per family across the dashboard
(each family's chart colour): the order they joined the database, so a family added later
comes last and the families before it keep their place."""

from sqlalchemy import select
from sqlalchemy.engine import Engine

from arena.storage.tables import FAMILIES


def family_lineup(engine: Engine) -> list[tuple[str, str, str]]:
    """Every family as (id, display name, kind), in the order it was added (then by id)."""
    query = select(
        FAMILIES.c.id, FAMILIES.c.display_name, FAMILIES.c.kind, FAMILIES.c.created_at
    ).order_by(FAMILIES.c.created_at, FAMILIES.c.id)
    with engine.connect() as conn:
        return [
            (str(family_id), str(name or family_id), str(kind))
            for family_id, name, kind, _ in conn.execute(query)
        ]
