"""Full-page screenshots for a person to look at (`test-artifacts/screenshots/`).

Why one helper: Streamlit's main area scrolls inside the app, so a full-page screenshot needs
the viewport grown to the content's height first, then put back; the browser tests shot pages
this way from six copies of the same lines.
"""

from pathlib import Path

from playwright.sync_api import Page

WIDTH, HEIGHT = 1440, 900  # the width every page is designed and shot at
MAX_HEIGHT = 8000  # a taller page is cut there (a PNG that size is already megabytes)
RELAYOUT_MS = 150  # the grown viewport's re-layout (charts resize): no script run


def shoot(page: Page, folder: Path, name: str, *, from_top: bool = False) -> None:
    """`folder`/`name`.png of the whole page at 1440 px wide (`from_top`: the main area
    scrolled to its top first), the viewport back at 1440×900 after."""
    scroll = "main?.scrollTo(0, 0);" if from_top else ""
    height = page.evaluate(
        "() => { const main = document.querySelector('[data-testid=stMain]'); "
        f"{scroll} return main?.scrollHeight ?? {HEIGHT}; }}"
    )
    page.set_viewport_size(
        {"width": WIDTH, "height": max(HEIGHT, min(int(height) + 40, MAX_HEIGHT))}
    )
    page.wait_for_timeout(RELAYOUT_MS)
    page.screenshot(path=str(folder / f"{name}.png"), full_page=True)
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
