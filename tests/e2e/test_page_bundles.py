"""Replay bundles on the Exports and Cohorts pages, in Chromium at 1440×900.

On the shared season no cohort is finished, so no bundle is kept: Exports says why in words
and builds a provisional bundle only when asked; its zip verifies and its hash is the one
shown. On a private copy of the season with a bundle kept for cohort 1 (built provisionally:
the test is about what the pages show), Exports shows that hash and downloads exactly the
kept zip, and the Cohorts page shows the hash and links to it.
"""

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from sqlalchemy import insert, select

from arena.analytics.replay.bundle import build_bundle, project_version
from arena.analytics.replay.format import read_bundle
from arena.analytics.replay.kept import bundle_file_name
from arena.analytics.replay.verify import verify_bundle
from arena.storage.db import create_db_engine
from arena.storage.tables import COHORTS, REPLAY_BUNDLES
from tests.analytics.season import Season, writable_copy
from tests.e2e.conftest import dashboard_server, settle
from tests.e2e.shots import shoot
from tests.e2e.test_page_agent import open_page

HASH = re.compile(r"^[0-9a-f]{64}$")
BUILD_TIMEOUT_MS = 120_000  # a provisional build runs the leaderboard: seconds on a busy machine


def shown_hashes(page: Page) -> list[str]:
    """The 64-hex hashes shown in code blocks (st.code), in page order."""
    texts = [t.strip() for t in page.get_by_test_id("stCode").locator("code").all_inner_texts()]
    return [t for t in texts if HASH.match(t)]


def no_bad_text(page: Page) -> None:
    """Nothing on the page reads None or nan."""
    text = page.get_by_test_id("stMain").inner_text()
    assert not re.search(r"\b(None|nan|NaN|NaT)\b", text), text


# --------------------------------------------------------------------------------------------
# No kept bundle: why, and a provisional one on request


def test_exports_says_why_and_builds_a_provisional_bundle_when_asked(
    streamlit_server: str, page: Page, screenshots_dir: Path, tmp_path: Path
) -> None:
    open_page(page, streamlit_server, "exports?cohort=1", "Exports")

    expect(page.get_by_role("heading", name="Replay bundle")).to_be_visible()
    expect(
        page.get_by_text(re.compile(r"^No kept bundle for cohort 1 yet: it is still deciding"))
    ).to_be_visible()
    assert shown_hashes(page) == []  # nothing built unasked
    expect(
        page.get_by_role("button", name=re.compile(r"^Download forecaster-arena-"))
    ).to_have_count(0)

    page.get_by_role("button", name="Build a provisional bundle of cohort 1").click()

    expect(page.get_by_text("Provisional, not final")).to_be_visible(timeout=BUILD_TIMEOUT_MS)
    settle(page, BUILD_TIMEOUT_MS)
    expect(page.get_by_test_id("stException")).to_have_count(0)
    (shown,) = shown_hashes(page)
    name = bundle_file_name(1, shown).removesuffix(".zip") + "-provisional.zip"
    expect(page.get_by_text(f"arena verify {name} --hash {shown}")).to_be_visible()
    no_bad_text(page)
    shoot(page, screenshots_dir, "page-exports-provisional")

    with page.expect_download() as info:
        page.get_by_role("button", name=f"Download {name}").click()
    download = info.value
    assert download.suggested_filename == name
    path = tmp_path / name
    download.save_as(path)
    bundle = read_bundle(path)
    assert bundle.hash == shown
    assert json.loads(bundle.files["cohort.json"])["final"] is False
    report = verify_bundle(bundle, published_hash=shown)
    assert report.ok and report.bundle_hash == shown


# --------------------------------------------------------------------------------------------
# A kept bundle


@dataclass(frozen=True)
class Kept:
    base_url: str
    hash: str
    zip: bytes
    built_at: datetime


@pytest.fixture(scope="module")
def kept(season: Season, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kept]:
    """A server over a private copy of the season where cohort 1's bundle is kept."""
    folder = tmp_path_factory.mktemp("e2e-kept-bundle")
    url = writable_copy(season, folder / "kept.db")
    engine = create_db_engine(url)
    try:
        built = build_bundle(engine, 1, provisional=True)
        data = built.bundle.zip_bytes()
        with engine.begin() as conn:
            cohort_id = conn.execute(select(COHORTS.c.id).where(COHORTS.c.number == 1)).scalar_one()
            conn.execute(
                insert(REPLAY_BUNDLES).values(
                    cohort_id=cohort_id,
                    bundle_hash=built.hash,
                    project_version=project_version(),
                    file_count=len(built.bundle.files),
                    size_bytes=sum(len(b) for b in built.bundle.files.values()),
                    zip=data,
                    built_at=season.end,
                )
            )
    finally:
        engine.dispose()
    with dashboard_server(url, folder) as base_url:
        yield Kept(base_url, built.hash, data, season.end)


def test_exports_offers_the_kept_bundle(
    kept: Kept, page: Page, screenshots_dir: Path, tmp_path: Path
) -> None:
    open_page(page, kept.base_url, "exports?cohort=1", "Exports")

    assert shown_hashes(page) == [kept.hash]
    name = bundle_file_name(1, kept.hash)
    expect(page.get_by_text(f"arena verify {name} --hash {kept.hash}")).to_be_visible()
    expect(page.get_by_role("button", name=re.compile(r"^Build a provisional"))).to_have_count(0)
    expect(
        page.get_by_text(
            re.compile(
                r"^13 files, [0-9.]+ kB \([0-9.]+ kB zipped\); kept "
                f"{kept.built_at:%Y-%m-%d %H:%M} UTC by the hourly bundle job; project "
                f"version {re.escape(project_version())}\\.$"
            )
        )
    ).to_be_visible()
    no_bad_text(page)
    shoot(page, screenshots_dir, "page-exports-bundle")

    with page.expect_download() as info:
        page.get_by_role("button", name=f"Download {name}").click()
    assert info.value.suggested_filename == name
    path = tmp_path / name
    info.value.save_as(path)
    assert path.read_bytes() == kept.zip

    # "All" cohorts: the bundle's own picker opens on the cohort with a kept bundle.
    open_page(page, kept.base_url, "exports", "Exports")
    expect(page.get_by_role("combobox", name="Cohort of the bundle")).to_have_value(
        "Cohort 1 (bundle kept)"
    )
    assert shown_hashes(page) == [kept.hash]


def test_cohorts_shows_the_kept_bundles_hash_and_links_to_it(
    kept: Kept, page: Page, screenshots_dir: Path
) -> None:
    open_page(page, kept.base_url, "cohorts?cohort=1", "Cohorts")

    expect(page.get_by_test_id("stMarkdown").locator("code", has_text=kept.hash)).to_be_visible()
    link = page.get_by_role("link", name="Download and check cohort 1's bundle on Exports")
    expect(link).to_be_visible()
    no_bad_text(page)
    shoot(page, screenshots_dir, "page-cohorts-bundle")

    open_page(page, kept.base_url, "cohorts?cohort=2", "Cohorts")
    expect(
        page.get_by_text(
            re.compile(r"no final bundle yet: cohort 2 is still deciding \(its agents decide")
        )
    ).to_be_visible()
    no_bad_text(page)
    shoot(page, screenshots_dir, "page-cohorts-no-bundle")
    page.get_by_role("link", name="Build a provisional bundle of cohort 2 on Exports").click()
    expect(page.get_by_role("heading", name="Exports", exact=True)).to_be_visible()
    expect(page).to_have_url(re.compile(r"/exports\?cohort=2$"))
    settle(page)
    expect(page.get_by_role("combobox", name="Cohort", exact=True)).to_have_value("Cohort 2")
    expect(page.get_by_text(re.compile(r"^No kept bundle for cohort 2 yet"))).to_be_visible()
