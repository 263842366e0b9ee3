"""Which families' results were answered by the simulated model server (`arena demo`).

The demo serves every LLM family from `arena.sim.model_server`, whose answers all say
`provider: "simulated"`; the LLM client stores that provider on every decision attempt and on
the decision. A family counts as simulated when its latest answered decision (status `ok` or
`fallback_hold`) has that provider: one row per family is read, found through the decisions'
covering indexes, so the badge costs the pages next to nothing on a year's database.
"""

from sqlalchemy import func, select
from sqlalchemy.engine import Engine

from arena.storage.tables import AGENTS, DECISIONS

SIMULATED_PROVIDER = "simulated"
SERVED_BY = "simulated-model-server"
ANSWERED = ("ok", "fallback_hold")


def simulated_families(engine: Engine) -> list[str]:
    """Ids of the families whose latest answered decision the simulated model server served."""
    latest = (
        select(func.max(DECISIONS.c.id))
        .select_from(DECISIONS)
        .join(AGENTS, AGENTS.c.id == DECISIONS.c.agent_id)
        .where(DECISIONS.c.status.in_(ANSWERED))
        .group_by(AGENTS.c.family_id)
    )
    query = (
        select(AGENTS.c.family_id)
        .select_from(DECISIONS)
        .join(AGENTS, AGENTS.c.id == DECISIONS.c.agent_id)
        .where(DECISIONS.c.id.in_(latest), DECISIONS.c.provider == SIMULATED_PROVIDER)
        .order_by(AGENTS.c.family_id)
    )
    with engine.connect() as conn:
        return [str(family_id) for family_id in conn.execute(query).scalars()]
