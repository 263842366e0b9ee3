"""The API key never leaves the Authorization header (contract §2).

A distinctive fake key is set as OPENROUTER_API_KEY and two weeks of the season are run
through the real CLI against loopback servers: a Gamma-shaped market server and an OpenAI-compatible
chat server whose error answers (401, 402, 403, 429, 500, an `error` object in a 200) echo the
key and the Authorization header back, as misbehaving proxies and providers do. Then every
output is searched for the key (and for its random part alone):

- every column of every table, dumped through SQLAlchemy (and, on SQLite, the database file's
  raw bytes, so a value written and later overwritten is caught too);
- every log record of every logger, captured at DEBUG, formatted with its traceback;
- every CLI stdout and stderr line, and every `arena export TABLE` CSV (stdout and --out);
- every element the dashboard renders (each page through Streamlit's AppTest, the locked
  Operations page unlocked with the admin password);
- the text of an LLMError for 401/402/500, `repr(settings)` and `settings.model_dump()`;
- an `arena demo --weeks 1` run's output and database (its clock cut short, see below);
- a 200 answer whose content, `model` or `provider` echoes the key (some proxies do that).

The chat server also checks the other direction: the key is sent, and only in the header.
"""

import itertools
import json
import logging
import secrets
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from sqlalchemy import MetaData, create_engine, select
from sqlalchemy.engine import Engine
from streamlit.testing.v1 import AppTest

from arena.agents.llm import ChatClient, ChatRequest, LLMError
from arena.agents.responders import default_responders
from arena.analytics.export.tables import EXPORTS
from arena.app.cli import main
from arena.config import Methodology, Settings, get_settings, load_settings
from arena.engine.cohorts import start_cohort
from arena.engine.decisions import run_decisions
from arena.engine.market_sync import sync_markets
from arena.engine.snapshots import take_snapshots
from arena.engine.sources import GammaSource
from arena.lineup import parse_lineup
from arena.markets.gamma import GammaClient
from arena.sim.model_server import ModelServer
from arena.storage.db import dispose_engines
from tests.agents.llm_server import Reply as ChatReply
from tests.agents.llm_server import completion
from tests.agents.llm_server import serve as serve_chat
from tests.engine.chat_server import PerModelServer, answer, serve_models
from tests.engine.test_full_loop import WEEK1, WEEK2
from tests.markets.gamma_server import Reply as GammaReply
from tests.markets.gamma_server import serve as serve_gamma

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "dashboard.py"
PAGES = ROOT / "app_pages"
SUNDAY = datetime(2026, 11, 1, tzinfo=UTC)
NEXT_SUNDAY = SUNDAY + timedelta(weeks=1)
NO_WAIT = {"Retry-After": "0"}


@dataclass(frozen=True)
class Key:
    """The fake key and the fragments that must not appear anywhere either."""

    value: str
    secret_part: str

    @classmethod
    def new(cls) -> "Key":
        secret_part = secrets.token_hex(16)
        return cls(f"sk-or-v1-LEAKCHECK-{secret_part}", secret_part)

    def found_in(self, text: str) -> bool:
        return self.value in text or self.secret_part in text

    def found_in_bytes(self, data: bytes) -> bool:
        return self.value.encode() in data or self.secret_part.encode() in data


@dataclass
class Outputs:
    """Every text the run produced, labelled by where it came from."""

    texts: list[tuple[str, str]] = field(default_factory=list)

    def add(self, where: str, text: str) -> None:
        self.texts.append((where, text))

    def leaks(self, key: Key) -> list[str]:
        return [
            f"{where}: …{_around(text, key)}…" for where, text in self.texts if key.found_in(text)
        ]


def _around(text: str, key: Key) -> str:
    index = text.find(key.value) if key.value in text else text.find(key.secret_part)
    return text[max(0, index - 80) : index + 80]


# ------------------------------------------------------------------ scripted providers


def echoing_replies(key: Key) -> dict[str, list[ChatReply]]:
    """Per model: good answers and error bodies that echo the key and the auth header."""
    header = f"Authorization: Bearer {key.value}"
    bet = {
        "action": "BET",
        "bets": [
            {"market_id": "501", "side": "YES", "amount": 500},
            {"market_id": "503", "side": "Blue", "amount": 300},
        ],
        "reasoning": "value on both",
    }
    hold = {"action": "HOLD", "reasoning": "fair prices"}
    fade = {"action": "BET", "bets": [{"market_id": "502", "side": "NO", "amount": 1000}]}
    return {
        "openai/gpt-5.2": [answer(bet, "openai/gpt-5.2")],
        "google/gemini-3-pro-preview": [
            ChatReply(
                402,
                {
                    "error": {
                        "message": f"Insufficient credits on key {key.value}. {header}",
                        "code": 402,
                        "metadata": {"headers": {"Authorization": f"Bearer {key.value}"}},
                    }
                },
            )
        ],
        "x-ai/grok-4.1-fast": [
            ChatReply(
                500,
                {"error": {"message": f"upstream crashed handling {header}", "key": key.value}},
                NO_WAIT,
            )
        ],
        "anthropic/claude-opus-4.5": [
            ChatReply(401, f"Unauthorized: invalid API key {key.value}\n{header}\n")
        ],
        "deepseek/deepseek-v3.2": [
            ChatReply(500, f"<html>502 from proxy; {header}; key={key.value}</html>", NO_WAIT),
            answer(fade, "deepseek/deepseek-v3.2"),
        ],
        "moonshotai/kimi-k2-thinking": [
            ChatReply(200, {"error": {"message": f"rate limit for {key.value}", "code": 429}}),
            ChatReply(429, {"detail": f"slow down, {header}"}, NO_WAIT),
            answer("I cannot comply with this format.", "moonshotai/kimi-k2-thinking"),
            answer(hold, "moonshotai/kimi-k2-thinking"),
        ],
        "qwen/qwen3-235b-a22b-2507": [
            ChatReply(403, {"detail": f"key={key.value}&model=qwen is not allowed"})
        ],
    }


def script_all(server: PerModelServer, key: Key) -> None:
    for model, replies in echoing_replies(key).items():
        server.script_model(model, *replies)


@contextmanager
def gamma_url(markets: dict[str, dict[str, Any]]) -> Iterator[str]:
    """A Gamma-shaped server: open markets on the keyset list, every market by id."""
    with serve_gamma() as server:
        listed = [m for m in markets.values() if not m.get("closed")]
        server.script("/markets/keyset", GammaReply(body={"markets": listed}))
        for mid, raw in markets.items():
            server.script(f"/markets/{mid}", GammaReply(body=raw))
        yield server.url


# ------------------------------------------------------------------ collecting outputs


class Cli:
    """Runs `arena …` in-process and keeps every stdout and stderr it printed."""

    def __init__(self, capsys: pytest.CaptureFixture[str], outputs: Outputs) -> None:
        self.capsys = capsys
        self.outputs = outputs

    def __call__(self, *args: str) -> tuple[int, str, str]:
        get_settings.cache_clear()
        with pytest.raises(SystemExit) as exited:
            main(list(args))
        out, err = self.capsys.readouterr()
        label = "arena " + " ".join(args)
        self.outputs.add(f"{label} (stdout)", out)
        self.outputs.add(f"{label} (stderr)", err)
        code = exited.value.code
        return (code if isinstance(code, int) else 0), out, err


def not_built(err: str) -> bool:
    return "not built yet" in err


def dump_database(url: str, outputs: Outputs) -> int:
    """Every value of every table, as text; returns the number of rows read."""
    engine = create_engine(url)
    rows = 0
    try:
        metadata = MetaData()
        metadata.reflect(engine)
        with engine.connect() as conn:
            for table in metadata.sorted_tables:
                for row in conn.execute(select(table)).mappings():
                    rows += 1
                    for column, value in row.items():
                        outputs.add(f"db {table.name}.{column}", _text(value))
    finally:
        engine.dispose()
    return rows


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("latin-1")
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def sqlite_file_bytes(url: str) -> Iterable[tuple[str, bytes]]:
    """The SQLite database file and its journal/WAL files, raw."""
    if not url.startswith("sqlite:///"):
        return []
    path = Path(url.removeprefix("sqlite:///"))
    candidates = [path, *(path.with_name(path.name + s) for s in ("-wal", "-journal", "-shm"))]
    return [(str(p), p.read_bytes()) for p in candidates if p.exists()]


def log_texts(records: Iterable[logging.LogRecord]) -> list[str]:
    formatter = logging.Formatter("%(levelname)s %(name)s: %(message)s")
    return [formatter.format(record) for record in records]


def walk(node: Any) -> Iterator[Any]:
    """Every node of a Streamlit AppTest element tree."""
    yield node
    children = getattr(node, "children", None)
    if isinstance(children, dict):
        for child in children.values():
            yield from walk(child)


def dashboard_texts(app: AppTest) -> list[str]:
    """What every rendered element carries: its protobuf and, where it has one, its value."""
    texts = []
    for node in walk(app._tree):
        proto = getattr(node, "proto", None)
        if proto is not None:
            texts.append(str(proto))
        try:
            value = node.value
        except Exception:  # blocks and some elements have no value
            continue
        to_csv = getattr(value, "to_csv", None)
        texts.append(to_csv() if callable(to_csv) else str(value))
    return texts


def clear_streamlit_caches() -> None:
    get_settings.cache_clear()
    dispose_engines()
    st.cache_data.clear()
    st.cache_resource.clear()


# ------------------------------------------------------------------ the full flow


@pytest.fixture
def key() -> Key:
    return Key.new()


@pytest.fixture
def key_env(monkeypatch: pytest.MonkeyPatch, key: Key) -> Callable[[str, str], None]:
    """Set the key, the database and the LLM endpoint in the environment."""

    def _set(database_url: str, llm_url: str) -> None:
        monkeypatch.setenv("OPENROUTER_API_KEY", key.value)
        monkeypatch.setenv("ARENA_DATABASE_URL", database_url)
        monkeypatch.setenv("ARENA_LLM_BASE_URL", llm_url)
        get_settings.cache_clear()

    return _set


def test_full_flow_never_writes_the_key_anywhere(
    db_url: str,
    key: Key,
    key_env: Callable[[str, str], None],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    tmp_path: Path,
) -> None:
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="arena")
    outputs = Outputs()
    cli = Cli(capsys, outputs)

    with serve_models() as llm:
        script_all(llm, key)
        key_env(db_url, llm.url)
        assert cli("init-db")[0] == 0
        assert cli("start-cohort", "--at", SUNDAY.isoformat())[0] == 0
        with gamma_url(WEEK1) as url:
            monkeypatch.setenv("ARENA_GAMMA_URL", url)
            assert cli("sync-markets", "--at", SUNDAY.isoformat())[0] == 0
        code, _out, err = cli("-v", "decide", "--at", (SUNDAY + timedelta(minutes=5)).isoformat())
        assert code == 0, err
        snapshot(cli, db_url, SUNDAY + timedelta(minutes=10))

        with gamma_url(WEEK2) as url:
            monkeypatch.setenv("ARENA_GAMMA_URL", url)
            assert cli("sync-markets", "--at", NEXT_SUNDAY.isoformat())[0] == 0
            assert cli("resolve", "--at", NEXT_SUNDAY.isoformat())[0] == 0
        code, _out, err = cli("decide", "--at", (NEXT_SUNDAY + timedelta(minutes=5)).isoformat())
        assert code == 0, err
        snapshot(cli, db_url, NEXT_SUNDAY + timedelta(minutes=10))

        requests = llm.requests
    # The key was really used, and only as the bearer token.
    assert requests, "no model was asked"
    assert all(r.headers.get("Authorization") == f"Bearer {key.value}" for r in requests)
    assert not any(key.found_in_bytes(r.body) for r in requests)

    for table in EXPORTS:
        code, _out, err = cli("export", table)
        assert code == 0, err
        target = tmp_path / f"{table}.csv"
        assert cli("export", table, "--out", str(target))[0] == 0
        outputs.add(f"export {table} --out", target.read_text(encoding="utf-8"))
    cli("leaderboard", "--format", "csv")
    cli("export", "no-such-table")
    cli("--verbose", "snapshot", "--at", "not-a-date")

    rows = dump_database(db_url, outputs)
    assert rows > 50, "the flow wrote too little to be a meaningful check"
    _assert_statuses_show_the_errors_happened(outputs)
    for index, text in enumerate(log_texts(caplog.records)):
        outputs.add(f"log record {index}", text)

    assert not outputs.leaks(key), "\n".join(outputs.leaks(key)[:20])
    for where, data in sqlite_file_bytes(db_url):
        assert not key.found_in_bytes(data), f"the key is in the bytes of {where}"

    if not db_url.startswith("sqlite"):
        return  # the dashboard reads both backends through the same code: once is enough
    # The dashboard, with the key in its environment, on the same database, unlocked.
    monkeypatch.setenv("ARENA_ADMIN_PASSWORD", ADMIN_PASSWORD)
    clear_streamlit_caches()
    try:
        pages = render_every_page()
    finally:
        clear_streamlit_caches()
    for page in pages:
        leaked = [t for t in page.texts + page.exceptions if key.found_in(t)]
        assert not leaked, f"{page.where} shows the key: {_around(leaked[0], key)}"
    shown = " ".join(" ".join(page.texts) for page in pages)
    assert "GPT-5.2" in shown or "gpt-5.1" in shown, "the dashboard showed no agent at all"
    assert "HTTP 402" in shown, "no page showed the provider errors: the check saw too little"
    broken = {page.where: page.exceptions for page in pages if page.exceptions}
    assert not broken, f"pages raised (their key check is incomplete): {broken}"


def snapshot(cli: Cli, db_url: str, at: datetime) -> None:
    """`arena snapshot`, or the snapshot job itself while the command is not wired in."""
    code, _out, err = cli("snapshot", "--at", at.isoformat())
    if code != 0 and not_built(err):
        engine = create_engine(db_url)
        try:
            take_snapshots(engine, at)
        finally:
            engine.dispose()
    else:
        assert code == 0, err


def _assert_statuses_show_the_errors_happened(outputs: Outputs) -> None:
    """Guard against a vacuous pass: the provider errors were met and recorded."""
    statuses = [t for w, t in outputs.texts if w == "db decisions.status"]
    assert "error" in statuses and "ok" in statuses, statuses
    errors = " ".join(t for w, t in outputs.texts if w == "db decision_attempts.error")
    assert "HTTP 402" in errors and "HTTP 401" in errors and "HTTP 500" in errors, errors[:500]


ADMIN_PASSWORD = "leak-check-admin"


@dataclass
class Page:
    """One rendered dashboard page: every text it carries and any exception it showed."""

    where: str
    texts: list[str]
    exceptions: list[str]


def render(page: str | None) -> Page:
    """The dashboard with `page` selected (None: the default page), unlocked if it asks.

    A form submitted after `switch_page` does not reach the page under AppTest, so a page
    that asks for the admin password is rendered from its own file to unlock it.
    """
    app = AppTest.from_file(str(DASHBOARD), default_timeout=60).run()
    if page is not None:
        app.switch_page(page).run()
    texts = dashboard_texts(app)
    exceptions = [str(e.value) for e in app.exception]
    if page is not None and _password_inputs(app):
        app = AppTest.from_file(str(ROOT / page), default_timeout=60).run()
        _password_inputs(app)[0].input(ADMIN_PASSWORD)
        app.button[0].click().run()
        assert not _password_inputs(app), f"{page} did not unlock"
        texts += dashboard_texts(app)
        exceptions += [str(e.value) for e in app.exception]
    return Page(page or "default page", texts, exceptions)


def _password_inputs(app: AppTest) -> list[Any]:
    return [w for w in app.text_input if "password" in str(w.label).lower()]


def render_every_page() -> list[Page]:
    """The default page and every page in app_pages/, with the key in the environment."""
    return [render(None), *(render(f"app_pages/{p.name}") for p in sorted(PAGES.glob("*.py")))]


# ------------------------------------------------------------------ the demo


DEMO_TICKS = 40  # 5-minute ticks: Sunday 00:00 to 03:15, every job kind runs


def test_demo_run_never_writes_the_key(
    key: Key,
    key_env: Callable[[str, str], None],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    tmp_path: Path,
) -> None:
    """`arena demo --weeks 1` with the key set, its clock cut to its first 40 ticks.

    The whole week plus its settling tail is thousands of ticks (minutes of runtime); the
    first 40 (3 h 15 min) already run every job the demo has (start-cohort, decide, hourly
    sync and resolve, 10-minute snapshots) and the rest of the season only repeats them.

    The demo serves its LLM families from its own simulated model server, never from
    the configured endpoint, so the key must not even be sent: the endpoint configured here (a
    simulated model server too, which would answer) gets no request.
    """
    import arena.app.demo

    full_season = arena.app.demo.season_ticks

    def short_season(start: datetime, weeks: int, tail_weeks: int) -> Iterator[Any]:
        return itertools.islice(full_season(start, weeks, tail_weeks), DEMO_TICKS)

    monkeypatch.setattr(arena.app.demo, "season_ticks", short_season)
    caplog.set_level(logging.DEBUG)
    outputs = Outputs()
    cli = Cli(capsys, outputs)
    url = f"sqlite:///{tmp_path / 'demo.db'}"
    with ModelServer(latency_scale=0) as llm:
        key_env(url, llm.base_url)
        code, _out, err = cli("demo", "--weeks", "1")
        requests = list(llm.log)
    if code != 0 and not_built(err):
        pytest.skip("`arena demo` is not wired into the CLI yet")
    assert code == 0, err
    assert not requests, "the demo called the configured endpoint instead of its simulated one"
    assert dump_database(url, outputs) > 100
    for index, text in enumerate(log_texts(caplog.records)):
        outputs.add(f"log record {index}", text)
    assert not outputs.leaks(key), "\n".join(outputs.leaks(key)[:20])
    for where, data in sqlite_file_bytes(url):
        assert not key.found_in_bytes(data), f"the key is in the bytes of {where}"


# ------------------------------------------------------------------ error messages, settings


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param(
            lambda k: ChatReply(401, {"error": {"message": f"bad key {k}", "code": 401}}),
            id="401-json",
        ),
        pytest.param(
            lambda k: ChatReply(402, f"No credits left for {k}. Authorization: Bearer {k}"),
            id="402-text",
        ),
        pytest.param(
            lambda k: ChatReply(402, {"error": f"Bearer {k} has no credits"}), id="402-string"
        ),
        pytest.param(
            lambda k: ChatReply(500, {"message": f"echo {k}"}, NO_WAIT), id="500-after-retries"
        ),
        pytest.param(
            lambda k: ChatReply(200, {"error": {"message": f"key {k} flagged"}}, NO_WAIT),
            id="200-error-object",
        ),
    ],
)
def test_llm_error_text_never_contains_the_key(
    key: Key, reply: Callable[[str], ChatReply], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with serve_chat() as server:
        server.script(reply(key.value))
        client = ChatClient(server.url, key.value, max_attempts=2, sleep=lambda _s: None)
        with client, pytest.raises(LLMError) as raised:
            client.complete(ChatRequest("test/model", [{"role": "user", "content": "hi"}]))
    error = raised.value
    texts = [
        str(error),
        repr(error),
        error.one_line(),
        error.message,
        str(error.hint),
        str(error.args),
        *(repr(attempt) for attempt in error.attempts),
        *log_texts(caplog.records),
    ]
    assert any(t.startswith("LLM test/model") for t in texts)
    assert not [t for t in texts if key.found_in(t)]


def test_settings_never_show_the_key(
    key: Key, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", key.value)
    monkeypatch.setenv("ARENA_ADMIN_PASSWORD", f"admin-{key.secret_part}")
    settings = load_settings()
    assert settings.llm_api_key is not None
    assert settings.llm_api_key.get_secret_value() == key.value
    client = ChatClient.from_settings(settings)
    texts = [
        repr(settings),
        str(settings),
        str(settings.model_dump()),
        json.dumps(settings.model_dump(mode="json")),
        settings.model_dump_json(),
        repr(client),
        str(client),
    ]
    client.close()
    assert not [t for t in texts if key.found_in(t)]

    monkeypatch.setenv("ARENA_DATABASE_URL", "no-scheme")  # a bad setting beside the key
    with pytest.raises(Exception) as raised:
        load_settings()
    assert not key.found_in(str(raised.value)) and not key.found_in(repr(raised.value))


def test_a_settings_object_survives_a_bad_value_without_showing_the_key(key: Key) -> None:
    """A Settings validation failure (pydantic's own text) never echoes the secret input."""
    with pytest.raises(Exception) as raised:
        Settings(llm_api_key=key.value, llm_base_url="ftp://nope")
    assert not key.found_in(str(raised.value))


# ------------------------------------------------------------------ a 200 that echoes the key

ECHO_LINEUP = (
    '[[family]]\nid = "echo-content"\ndisplay_name = "E1"\nprovider = "T"\nmodel = "test/content"\n'
    '[[family]]\nid = "echo-meta"\ndisplay_name = "E2"\nprovider = "T"\nmodel = "test/meta"\n'
)


def test_a_successful_answer_echoing_the_key_is_not_stored(engine: Engine, key: Key) -> None:
    """Some proxies put an upstream error into the assistant content, or echo headers into
    the `model`/`provider` fields of a 200: the key must not reach the DB from there either."""
    header = f"Authorization: Bearer {key.value}"
    hold = json.dumps({"action": "HOLD", "reasoning": "fair"})
    with serve_models() as llm:
        llm.script_model(
            "test/content",
            answer(f"Upstream error: invalid key {key.value} ({header})", "test/content"),
            answer(hold, "test/content"),
        )
        body = completion(hold, model=f"test/meta via {header}", provider=f"proxy {key.value}")
        llm.script_model("test/meta", ChatReply(200, body))
        settings = load_settings(llm_api_key=key.value, llm_base_url=llm.url)
        lineup = parse_lineup(ECHO_LINEUP)
        start_cohort(engine, SUNDAY, lineup, Methodology())
        with gamma_url(WEEK1) as url, GammaClient(url, min_interval=0.0) as client:
            sync_markets(engine, GammaSource(client), SUNDAY, 500)
        responders, close = default_responders(settings, sleep=lambda _s: None)
        try:
            result = run_decisions(
                engine, SUNDAY + timedelta(minutes=5), lineup, settings.methodology, responders
            )
        finally:
            close()
    assert result.statuses == {"ok": 2}
    outputs = Outputs()
    dump_database(str(engine.url.render_as_string(hide_password=False)), outputs)
    assert not outputs.leaks(key), "\n".join(outputs.leaks(key)[:20])
