"""Deep links: the selections worth sharing (`LINK_KEYS`: cohort, family, decision, market…) live
in the URL's query string.

The dashboard entry calls `restore_links(page)` before every page run and `drop_unused_links()`
after it, so a link like ``/decisions?cohort=3&family=gpt-5.1&decision=42`` opens exactly that
view, each page remembers its own selections (never another page's), and the address bar holds
only the keys the page uses. The session's keys (`SESSION_KEYS`: the sidebar's methodology) are
the exception: one value for the whole session, carried to every page that reads it. A link
naming something that does not exist gets a warning, never a silent fallback (`names_nothing`).
Widgets are bound to a link key with `select_link` / `choice_link` / `text_link`: the URL is
the source of truth; a widget change writes the URL in its on_change callback.
"""

import re
from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

from arena.analytics.query.scope import normalised_key
from arena.dashboard import fmt

LINK_KEYS: tuple[str, ...] = (
    "cohort",
    "family",
    "decision",
    "market",
    "snapshot",
    "week",
    "action",
    "status",
    "range",
    "unit",
    "search",
    "mstatus",
    "category",
    "mtype",
    "held",
    "sort",
    "versus",
    "methodology",
)
# Old link keys, read as the key that replaced them: "When will we know?" had its own
# protocol picker (``protocol``) before every page shared the sidebar's selector.
ALIASES: dict[str, str] = {"protocol": "methodology"}
# Link keys whose value is a protocol key (`scope.normalised_key`: a hand-typed "+" arrives
# as a space).
KEY_VALUED: tuple[str, ...] = ("methodology",)


_LINKS = "_arena_links"


# Keys whose selection is the session's, not one page's: the sidebar's methodology selector
# picks whose cohorts every page's all-cohort figures cover, so navigating to another page
# (sidebar or page link, whose query strings do not carry it) keeps it.
SESSION_KEYS: tuple[str, ...] = ("methodology",)


_SESSION = "_arena_session_links"


_PAGE = "_arena_page"  # the url path of the page running now


_USED = "_arena_used_links"  # the link keys it has read so far


ALL = "All"


LINK_INT_MAX = 2**63 - 1  # the largest id a database integer column holds


_ID_TEXT = re.compile(r"[0-9]{1,19}")


def _memory() -> dict[str, dict[str, str]]:
    """This session's remembered selections, per page (url path → {link key: value})."""
    memory: dict[str, dict[str, str]] = st.session_state.setdefault(_LINKS, {})
    return memory


def _page_links() -> dict[str, str]:
    return _memory().setdefault(page_name(), {})


def _remembered(key: str) -> dict[str, str]:
    """Where link `key`'s selection is remembered: this session's (a `SESSION_KEYS` key), or
    this page's."""
    if key in SESSION_KEYS:
        session: dict[str, str] = st.session_state.setdefault(_SESSION, {})
        return session
    return _page_links()


def _used() -> set[str]:
    used: set[str] = st.session_state.setdefault(_USED, set())
    return used


def page_name() -> str:
    """The url path of the page running now ("" for the default page)."""
    return str(st.session_state.get(_PAGE, ""))


def restore_links(page: str) -> None:
    """Sync the URL and `page`'s remembered selections (call before each page run).

    A key in the URL wins (a shared link, or a `st.page_link` carrying its selection); a key
    missing from the URL but remembered for this page is put back, so coming back to a page
    finds it as it was left. Memory is per page: a cohort picked on the Agent page never
    filters the Leaderboard; a `SESSION_KEYS` key is remembered for the session, so every page
    finds the methodology picked on another. (The sidebar's navigation clears the query
    string, checked in Chromium with Streamlit 1.67; `st.page_link(..., query_params=...)`
    carries its own.)
    """
    st.session_state[_PAGE] = page
    st.session_state[_USED] = set()
    params = st.query_params
    _read_aliases(params)
    for key in LINK_KEYS:
        mine = _remembered(key)
        if key in params:
            mine[key] = params[key]
        elif key in mine:
            params[key] = mine[key]


def _read_aliases(params: Any) -> None:
    """An old link's keys as their new ones (`ALIASES`; the new key wins when both are
    given), and a protocol key's spaces as the "+" they were (`KEY_VALUED`)."""
    for old, new in ALIASES.items():
        if old in params:
            value = params[old]
            del params[old]
            if new not in params:
                params[new] = value
    for key in KEY_VALUED:
        if key in params:
            fixed = normalised_key(params[key])
            if fixed != params[key]:
                params[key] = fixed


def drop_unused_links() -> None:
    """After a page ran to its end: remove the link keys it never read from the URL (and its
    memory), so the address bar shows only what filters this page. A `SESSION_KEYS` key
    leaves the URL but stays remembered for the pages that read it."""
    used, mine, params = _used(), _page_links(), st.query_params
    for key in LINK_KEYS:
        if key not in used:
            if key not in SESSION_KEYS:
                mine.pop(key, None)
            if key in params:
                del params[key]


def get_link(key: str) -> str | None:
    """The URL's value for link `key` (None when absent or empty)."""
    _used().add(key)
    value = st.query_params.get(key)
    return value or None


def set_link(key: str, value: Any) -> None:
    """Put `value` in the URL under `key` (None or "All" removes it) and remember it."""
    mine = _remembered(key)
    if value is None or value == ALL or value == "":
        mine.pop(key, None)
        if key in st.query_params:
            del st.query_params[key]
        return
    text = str(value)
    mine[key] = text
    if st.query_params.get(key) != text:
        st.query_params[key] = text


def forget_link(key: str) -> None:
    """Stop remembering link `key` (the URL keeps it for this run): a session key's bad value
    is named on the page it came with, never carried to the next."""
    _remembered(key).pop(key, None)


def names_nothing(label: str, key: str, value: str, hint: str = "") -> None:
    """A deep link whose `key` names nothing here: say so and stop (never a silent fallback)."""
    st.warning(
        f"This link's {key}={fmt.escaped(repr(value))} names no {label.lower()} in this database"
        + (f": {hint}" if hint else ".")
        + " Pick one above, or check the link.",
        icon="⚠️",
    )
    st.stop()


def link_int(key: str) -> int | None:
    """Link `key` as a database id: None when absent, not a number, or outside 1..2**63-1
    (an id no row can have; a larger one would overflow the database driver), so the page
    treats it like any other link naming nothing."""
    return id_value(get_link(key))


def id_value(value: str | None) -> int | None:
    """`value` as a positive 64-bit id, or None (pure: the rule of `link_int`)."""
    text = (value or "").strip()
    # Digits only, and at most 19 of them: int() would take "٣" or "1_000", and refuse a
    # 5,000-digit value with ValueError (Python's int-from-text limit).
    if not _ID_TEXT.fullmatch(text):
        return None
    number = int(text)
    return number if 1 <= number <= LINK_INT_MAX else None


def _bound(
    widget: Callable[..., Any],
    label: str,
    key: str,
    options: Sequence[Any],
    default: Any,
    after_change: Callable[[Any], None] | None = None,
    **kwargs: Any,
) -> Any:
    """Render `widget` over `options` with its value taken from, and written to, link `key`
    (then `after_change(value)`, when given, in the same callback)."""
    state_key = f"link-widget:{key}:{label}"
    by_text = {str(option): option for option in options}
    current = get_link(key)
    unknown = current is not None and current not in by_text
    wanted = default if current is None or unknown else by_text[current]
    # Always (re)seed from the URL: a same-keyed widget on another page may have left a value
    # that the new widget would not adopt, and a link followed in-session must win.
    st.session_state[state_key] = wanted

    def changed() -> None:
        value = st.session_state.get(state_key)
        set_link(key, value)
        if after_change is not None:
            after_change(value)

    value = widget(label, options, key=state_key, on_change=changed, **kwargs)
    if unknown:
        names_nothing(label, key, str(current))
    return value


def select_link(
    label: str,
    key: str,
    options: Sequence[Any],
    *,
    default: Any = ALL,
    format_func: Callable[[Any], str] = str,
    container: Any = None,
    after_change: Callable[[Any], None] | None = None,
    **kwargs: Any,
) -> Any:
    """A selectbox bound to link `key` ("All" first unless `default` is an option itself);
    `after_change(value)` runs after a person changed it."""
    where = container or st
    choices = list(options) if default in options else [default, *options]
    value = _bound(
        where.selectbox,
        label,
        key,
        choices,
        default,
        after_change=after_change,
        format_func=format_func,
        **kwargs,
    )
    return None if value == ALL else value


def choice_link(
    label: str,
    key: str,
    options: Sequence[str],
    *,
    default: str,
    container: Any = None,
    **kwargs: Any,
) -> str:
    """A segmented control (always one option selected) bound to link `key`."""
    where = container or st
    value = _bound(
        where.segmented_control,
        label,
        key,
        list(options),
        default,
        required=True,
        **kwargs,
    )
    return str(value) if value is not None else default


def text_link(label: str, key: str, *, container: Any = None, **kwargs: Any) -> str:
    """A text input bound to link `key` (empty: no link)."""
    where = container or st
    state_key = f"link-widget:{key}:{label}"
    st.session_state[state_key] = get_link(key) or ""

    def changed() -> None:
        set_link(key, (st.session_state.get(state_key) or "").strip() or None)

    return str(where.text_input(label, key=state_key, on_change=changed, **kwargs)).strip()
