"""Reference rows every database needs: methodology versions, and families from the lineup."""

from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import select

from arena.config import METHODOLOGY_VERSION, Methodology
from arena.lineup import Lineup
from arena.storage.db import session_scope
from arena.storage.models import Family, MethodologyVersion, utcnow


def ensure_methodology_versions(engine: Engine) -> None:
    """Insert the v1 methodology row with its reference constants if missing."""
    with session_scope(engine) as session:
        if session.get(MethodologyVersion, METHODOLOGY_VERSION) is None:
            session.add(
                MethodologyVersion(
                    version=METHODOLOGY_VERSION,
                    title="Forecaster Arena Methodology v1",
                    constants=Methodology().stamp(),
                )
            )


def sync_families(engine: Engine, lineup: Lineup) -> int:
    """Upsert the lineup's families (display names may change; ids never do).

    Two processes may sync the same new family at once (two schedulers and a manual run at
    one instant): the loser's INSERT hits the primary key, so it reads the rows again and
    retries, and finds the family there.
    """
    for _ in range(3):
        try:
            return _upsert_families(engine, lineup)
        except IntegrityError:
            continue
    return _upsert_families(engine, lineup)


def _upsert_families(engine: Engine, lineup: Lineup) -> int:
    changed = 0
    with session_scope(engine) as session:
        existing = {family.id: family for family in session.exec(select(Family)).all()}
        for spec in lineup.families:
            row = existing.get(spec.id) or Family(
                id=spec.id, display_name="", provider="", model="", kind=spec.kind
            )
            values = {
                "display_name": spec.display_name,
                "provider": spec.provider,
                "model": spec.model,
                "kind": spec.kind,
                "base_url": spec.base_url,
                "strategy": spec.strategy,
                "enabled": spec.enabled,
            }
            if spec.id not in existing or any(getattr(row, k) != v for k, v in values.items()):
                for key, value in values.items():
                    setattr(row, key, value)
                row.updated_at = utcnow()
                session.add(row)
                changed += 1
    return changed
