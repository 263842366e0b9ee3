"""The Decisions page in Chromium at 1440×900: the list reads with display names and
formatted numbers, its key columns in view; a decision opens on the model's rationale as text,
its legs name their markets with sides and implied confidence in view, rejected legs say why,
attempts show tokens, cost and latency, and the raw answer appears once, collapsed. (How "in
view" is measured: `test_page_markets`. Links naming no decision or family warn, through
AppTest: tests/dashboard/test_decisions_page.py.)"""

import re
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.e2e.shots import shoot
from tests.e2e.test_page_markets import assert_readable, headers_in_view, open_page

# Decision 1: Model A's week-1 answer in cohort 1 (a 500, a malformed answer, then a BET with
# one leg under the $50 minimum), whose reasoning carries markup to be shown as text.
REASONING = "Two cheap favourites; the <b>second</b> is a token bet."


def test_the_list_reads_with_names_and_formatted_numbers(
    streamlit_server: str, page: Page, screenshots_dir: Path
) -> None:
    open_page(page, streamlit_server, "decisions", "Decisions")

    grid = page.get_by_test_id("stDataFrame").first
    shown = headers_in_view(grid)
    for column in ("Decision", "Decided (UTC)", "Family", "Action", "Status", "Bet", "API cost"):
        assert column in shown, shown
    cells = assert_readable(grid)
    assert "Model A" in cells["Family"] and "llm-a" not in cells["Family"]
    assert "Family id" not in shown and "family_id" not in shown
    shoot(page, screenshots_dir, "decisions")


def test_a_decision_opens_on_its_rationale_legs_and_attempts(
    streamlit_server: str, page: Page, screenshots_dir: Path
) -> None:
    open_page(page, streamlit_server, "decisions?cohort=1&family=llm-a&decision=1", "Decisions")

    expect(page.get_by_role("heading", name="Decision 1", exact=True)).to_be_visible()
    main = page.get_by_test_id("stMain")
    # The rationale: the model's own words as text (its markup not rendered).
    expect(main.get_by_test_id("stText").get_by_text(REASONING, exact=True)).to_be_visible()
    expect(main.locator("b", has_text="second")).to_have_count(0)
    # The raw answer once, collapsed until asked for.
    raw = main.get_by_test_id("stExpander").filter(has_text=re.compile(r"Raw response \("))
    expect(raw).to_have_count(1)
    expect(raw.get_by_test_id("stCode")).not_to_be_visible()
    # The legs: each market's question, the side whole, the implied confidence in view.
    legs = page.get_by_test_id("stDataFrame").nth(1)
    in_view = headers_in_view(legs)
    for column in ("Leg", "Market", "Side", "Result", "Amount", "Price", "Implied confidence"):
        assert column in in_view, in_view
    cells = assert_readable(legs)
    # A v1 cohort: no stated-probability column (not even an empty one) after the price.
    assert "Stated probability" not in cells
    assert in_view[in_view.index("Price") + 1] == "Implied confidence", in_view
    assert cells["Market"][0] == "Will the Fed cut rates by 50+ bps at the February 2026 meeting?"
    assert cells["Result"] == ["executed", "rejected", "executed"]
    assert cells["Implied confidence"][1] == "—"  # rejected: no confidence, never None
    expect(
        main.get_by_text(re.compile(r"^Leg 1 rejected \(below_min\): amount .* below the \$50"))
    ).to_be_visible()
    shoot(page, screenshots_dir, "decision-detail")

    raw.get_by_text(re.compile(r"Raw response \(")).click()
    expect(raw.get_by_test_id("stCode")).to_be_visible()
    expect(raw).to_contain_text(REASONING)
    assert main.inner_text().count('"action": "BET"') == 1  # the final answer, once

    page.get_by_role("tab", name="Attempts").click()
    # The tab's own grid: the hidden tabs (Legs, Prices) keep theirs in the page.
    attempts = page.locator('[data-testid="stDataFrame"]:visible').nth(1)
    in_view = headers_in_view(attempts)
    for column in ("Attempt", "Outcome", "Tokens in", "Tokens out", "Cost", "Latency (ms)"):
        assert column in in_view, in_view
    cells = assert_readable(attempts)
    assert cells["Outcome"] == ["transport_retry", "malformed", "valid"]
    assert cells["Served by"][0] == "—"  # the 500 was served by nobody
    expect(
        main.get_by_text("Attempt 1 — transport_retry — HTTP 500: upstream overloaded")
    ).to_be_visible()
    expect(main.get_by_text("(no response body)")).to_be_visible()
    malformed = main.get_by_test_id("stExpander").filter(has_text="Attempt 2 — malformed")
    malformed.get_by_text("Attempt 2 — malformed").click()
    expect(
        malformed.get_by_text("I would buy YES on the first market, it looks cheap.")
    ).to_be_visible()
    expect(
        main.get_by_text(
            "Attempt 3 — valid: its answer is the raw response under Rationale, above."
        )
    ).to_be_visible()
    shoot(page, screenshots_dir, "decision-attempts")
