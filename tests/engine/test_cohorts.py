"""Starting the week's cohort (methodology §3): one agent per enabled family, or no cohort."""

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import func, select

from arena.config import Methodology
from arena.core.errors import ConfigError
from arena.engine.cohorts import start_cohort
from arena.lineup import parse_lineup
from arena.storage.db import session_scope
from arena.storage.models import Agent, Cohort, Family
from tests.factories import WEEK1

FAMILY = """
[[family]]
id = "m-a"
display_name = "Model A"
provider = "Test"
model = "test/a"
enabled = {enabled}
"""


def test_a_lineup_with_no_enabled_family_starts_no_cohort(engine: Engine) -> None:
    """A cohort without agents would trade nothing, take a number and be offered by every
    filter; the job fails with the reason instead, and a later week starts normally."""
    with pytest.raises(ConfigError, match="no family of the lineup is enabled"):
        start_cohort(engine, WEEK1, parse_lineup(FAMILY.format(enabled="false")), Methodology())
    with session_scope(engine) as s:
        assert s.exec(select(func.count()).select_from(Cohort)).one() == 0
        assert s.exec(select(Family.id)).all() == ["m-a"]  # the lineup is still synced

    started = start_cohort(
        engine, WEEK1, parse_lineup(FAMILY.format(enabled="true")), Methodology()
    )
    assert (started.number, started.created, started.agents) == (1, True, 1)
    with session_scope(engine) as s:
        assert s.exec(select(func.count()).select_from(Agent)).one() == 1
