"""Home through AppTest: before the hourly analyses it computes nothing and says when the
leader will appear; with cohort 2 re-stamped as extended its leader is v1's and it names the
cohort left out. (Home's screen layout and its links opened: tests/e2e/test_page_home.py.)"""

import re

from streamlit.testing.v1 import AppTest

from tests.dashboard.apptest import all_text, read, run_page

BAD_TEXT = re.compile(r"\b(None|nan|NaN|NaT|<NA>)\b|\[\"|\{\"")


def shown(at: AppTest) -> str:
    """The page's text as read, the status badge's included."""
    assert not at.exception, [e.value for e in at.exception]
    return read(all_text(at))


def test_before_the_hourly_analyses_home_computes_nothing(on_season: str) -> None:
    at = run_page("home")

    text = shown(at)
    assert re.search(r"^The leader appears after the hourly analyses", text, re.M), text
    assert not [b for b in at.button if "Compute" in str(b.label)]  # no offer
    assert re.search(r"\bStopped\]", text), text  # the status badge
    assert not BAD_TEXT.search(text), text


def test_the_leader_is_v1s_and_home_names_the_extended_cohort(on_mixed: str) -> None:
    """Cohort 2 re-stamped as extended: the leader comes from the v1 cohorts only, and Home
    says which cohort its figures leave out."""
    at = run_page("home")

    text = shown(at)
    assert (
        "1 extended cohort (#2) is left out of these v1 figures; the Leaderboard shows it "
        "when it is chosen in its cohort filter."
    ) in text, text
    assert re.search(r"^The best-ranked model over all v1 cohorts", text, re.M), text
    assert not BAD_TEXT.search(text), text
