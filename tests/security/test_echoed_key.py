"""An endpoint that echoes the API key back never gets it stored.

Proxies and misconfigured gateways echo the key: as the answer's action, inside its reasoning
(JSON-escaped, `\\u`-escaped, URL-encoded, upper or lower case, split by invisible
characters), in `model` and `provider`, in error bodies; and re-encoded (reversed, hex,
decimal bytes, base64 inside a longer base64 string, base32, every byte percent-encoded, HTML
character references: `tests.security.echoes.encoded_forms`), each such form in the action,
the reasoning, `model`, `provider` and an error body. A decision run against such an endpoint,
every `arena export TABLE --out` and `arena bundle N --out x.zip` are then searched
(`tests.security.echoes.found`) for the key, its random part and every 12-character piece of
it, as is, reversed and re-encoded: in the SQLite database file's raw bytes (and its WAL), in
every value PostgreSQL holds (dumped through SQLAlchemy), in every export and in every member
of the bundle. Both an OpenRouter-shaped `sk-or-v1-<64 hex>` key and a plain
`ARENA_LLM_API_KEY` are tried.

A database holding the key (a row inserted directly, as a version that did not redact stored
it) gives a bundle without the key too. `redact` itself is checked for every form.
"""

import json
import zipfile
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import create_engine, func, select
from sqlalchemy.engine import Engine
from sqlmodel import select as sqlmodel_select

from arena.agents.llm import AttemptRecord, ChatResult
from arena.agents.secrets import REDACTED, redact
from arena.analytics.export.tables import EXPORTS
from arena.app.cli import main
from arena.config import Methodology, get_settings
from arena.engine.cohorts import start_cohort
from arena.engine.decisions import run_decisions
from arena.engine.market_sync import sync_markets
from arena.engine.sources import GammaSource
from arena.lineup import parse_lineup
from arena.markets.gamma import GammaClient
from arena.storage.db import create_db_engine, session_scope
from arena.storage.models import Cohort, Decision, DecisionAttempt
from arena.storage.tables import DECISION_ATTEMPTS, DECISIONS
from tests.agents.llm_server import Reply, completion
from tests.engine.chat_server import PerModelServer, serve_models
from tests.engine.test_full_loop import WEEK1
from tests.examples import examples
from tests.factories import new_cohort_agents
from tests.security.echoes import (
    ENCODED,
    KEYS,
    PIECE,
    SAMPLE,
    WITHOUT_THE_KEY,
    Key,
    forms,
    found,
    leaks,
    openrouter_key,
    plain_key,
    u_escaped,
)
from tests.security.test_no_key_leak import dump_database, gamma_url, sqlite_file_bytes

SUNDAY = datetime(2026, 11, 1, tzinfo=UTC)
NO_WAIT = {"Retry-After": "0"}


# ------------------------------------------------------------------ pure `redact`


def assert_clean(key: Key, text: str) -> None:
    hit = found(key, text)
    assert hit is None, hit


@pytest.mark.parametrize("make_key", KEYS)
@pytest.mark.parametrize("form", list(forms("x" * 20)))
def test_redact_removes_every_form_of_the_key(make_key: Callable[[], Key], form: str) -> None:
    key = SAMPLE[make_key]
    echoed = forms(key.value)[form]
    for text in (
        echoed,
        f"invalid key {echoed}.",
        f'{{"action": "{echoed}", "reasoning": "key={echoed}&x=1"}}',
        f"Authorization: Bearer {echoed}",
    ):
        redacted = redact(text, [key.value])
        assert_clean(key, redacted)
        assert REDACTED in redacted


@pytest.mark.parametrize("make_key", KEYS)
def test_redact_removes_pieces_of_the_key(make_key: Callable[[], Key]) -> None:
    """A quoted key cut short (`got 'SK-OR-V1-0a1b…'`) or a piece of it is still the key."""
    key = SAMPLE[make_key]
    value = key.value
    for piece in (value[:PIECE], value[:37] + "…", value[-PIECE:], value[5 : 5 + PIECE + 3]):
        for text in (piece, piece.upper(), f"got '{piece.upper()}'", u_escaped(piece)):
            assert_clean(key, redact(text, [value]))


def test_the_openrouter_pattern_needs_no_configured_secret() -> None:
    key = openrouter_key()
    f = forms(key.value)
    for name in WITHOUT_THE_KEY:
        assert_clean(key, redact(f"echo: {f[name]}"))
    assert redact("key sk-or-v1-deadbeefcafe0123") == "key [redacted]"
    assert redact("KEY SK-OR-V1-DEADBEEFCAFE0123") == "KEY [redacted]"


def test_redact_keeps_clean_text_and_the_old_behaviour() -> None:
    key = openrouter_key()
    clean = 'A "quoted" 50% \\u00e9 \\/ %2F text, Bearer-less: sk-or- too short → fine'
    assert redact(clean, [key.value]) == clean
    assert redact("Authorization: Bearer abc.def") == "Authorization: Bearer [redacted]"
    assert redact(f"a {key.value} b", [key.value]) == "a [redacted] b"
    assert redact("nothing secret") == "nothing secret"


alphabet = st.characters(codec="utf-8")  # surrogates are not UTF-8: none drawn


@settings(max_examples=examples(200), deadline=None)
@given(
    before=st.text(alphabet, max_size=40),
    after=st.text(alphabet, max_size=40),
    form=st.sampled_from(list(forms("x" * 20))),
    plain=st.booleans(),
)
def test_redact_removes_the_key_wherever_it_sits(
    before: str, after: str, form: str, plain: bool
) -> None:
    key = SAMPLE[plain_key if plain else openrouter_key]
    text = before + forms(key.value)[form] + after
    redacted = redact(text, [key.value])
    assert_clean(key, redacted)
    assert redact(redacted, [key.value]) == redacted  # idempotent


@settings(max_examples=examples(200), deadline=None)
@given(text=st.text(alphabet, max_size=200))
def test_redact_leaves_text_without_the_key_unchanged(text: str) -> None:
    if "bearer" in text.lower() or "sk-or-" in text.lower():
        return  # the patterns apply
    for key in SAMPLE.values():
        assert redact(text, [key.value]) == text


# ------------------------------------------------------------------ a decision run


LINEUP = "".join(
    f'[[family]]\nid = "{fid}"\ndisplay_name = "{fid}"\nprovider = "T"\nmodel = "echo/{fid}"\n'
    for fid in ("action-upper", "action-lower", "reasoning", "side", "meta", "errors", "invisible")
)


def script_echoes(server: PerModelServer, key: str) -> None:
    """Each family's endpoint echoes the key another way; every re-encoded form (`ENCODED`)
    stands in the action, the reasoning, `model`, `provider` and an error body."""
    f = forms(key)

    def raw(content: str, model: str, **fields: str) -> Reply:
        return Reply(200, completion(content, model=model, **fields), NO_WAIT)

    def encoded(names: Iterable[str] = ENCODED, case: Callable[[str], str] = str) -> str:
        """The forms named, as the inside of a JSON string (the node buffer quotes)."""
        return json.dumps(" ".join(case(f[name]) for name in names))[1:-1]

    upper = json.dumps({"action": " ".join([f["upper"], *(f[n].upper() for n in ENCODED)])})
    server.script_model("echo/action-upper", raw(upper, "echo/action-upper"))
    server.script_model(
        "echo/action-lower",
        raw(
            f'{{"action": "{f["lower"]} {encoded()}", "reasoning": "{f["u-escaped"]}"}}',
            "echo/action-lower",
        ),
    )
    reasoning = " ".join(f[name] for name in ("u-escaped", "json-escaped", "url-encoded"))
    server.script_model(
        "echo/reasoning",
        raw(f'{{"action": "HOLD", "reasoning": "echo {reasoning} {encoded()}"}}', "echo/reasoning"),
    )
    bet = {"market_id": "501", "side": f["lower"], "amount": 100}
    server.script_model(
        "echo/side",
        raw(json.dumps({"action": "BET", "bets": [bet], "reasoning": f["swapped"]}), "echo/side"),
    )
    plain_encoded = " ".join(f[name] for name in ENCODED)
    server.script_model(
        "echo/meta",
        raw(
            json.dumps({"action": "HOLD", "reasoning": f"Bearer {f['upper']}"}),
            f"{f['upper']} {plain_encoded}",
            provider=f"{f['swapped']} {plain_encoded.swapcase()}",
        ),
    )
    # An error text is cut to 200 characters once redacted: a third of the forms in each.
    thirds = [ENCODED[i::3] for i in range(3)]
    server.script_model(
        "echo/errors",
        Reply(
            500,
            {
                "error": {
                    "message": f"bad key {f['upper']} {' '.join(f[n] for n in thirds[0])}",
                    "url": f["url-encoded"],
                }
            },
            NO_WAIT,
        ),
        Reply(
            200,
            {"error": {"message": f"key {f['swapped']} {' '.join(f[n] for n in thirds[1])}"}},
            NO_WAIT,
        ),
        Reply(
            401,
            f"Unauthorized: {f['u-escaped']} / {f['lower']} {' '.join(f[n] for n in thirds[2])}\n",
            NO_WAIT,
        ),
    )
    server.script_model(
        "echo/invisible",
        raw(
            '{"action": "HOLD", "reasoning": "' + f["invisibly split"] + '"}',
            "echo/invisible",
            provider=f["invisibly split"],
        ),
    )


class Cli:
    """`arena …` in-process: (exit code, stdout, stderr)."""

    def __init__(self, capsys: pytest.CaptureFixture[str]) -> None:
        self.capsys = capsys
        self.printed: list[tuple[str, str]] = []

    def __call__(self, *args: str) -> tuple[int, str, str]:
        get_settings.cache_clear()
        with pytest.raises(SystemExit) as exited:
            main(list(args))
        out, err = self.capsys.readouterr()
        self.printed += [(f"arena {' '.join(args)}", out + err)]
        code = exited.value.code
        return (code if isinstance(code, int) else 0), out, err


def bundle_members(path: Path) -> Iterator[tuple[str, str]]:
    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            yield f"bundle {name}", archive.read(name).decode("utf-8")


def exports_and_bundle(cli: Cli, tmp_path: Path) -> list[tuple[str, str]]:
    """Every `arena export TABLE --out` and every member of `arena bundle 1 --out x.zip`."""
    texts = []
    for table in EXPORTS:
        target = tmp_path / f"{table}.csv"
        code, _out, err = cli("export", table, "--out", str(target))
        assert code == 0, err
        texts.append((f"export {table}", target.read_text(encoding="utf-8")))
    archive = tmp_path / "x.zip"
    code, _out, err = cli("bundle", "1", "--provisional", "--out", str(archive))
    assert code == 0, err
    texts += list(bundle_members(archive))
    return texts


def database_texts(url: str) -> list[tuple[str, str]]:
    """Every value in the database (SQLAlchemy), and on SQLite the file's raw bytes."""
    from tests.security.test_no_key_leak import Outputs

    outputs = Outputs()
    assert dump_database(url, outputs) > 10
    texts = list(outputs.texts)
    for where, data in sqlite_file_bytes(url):
        texts.append((f"bytes of {where}", data.decode("latin-1")))
    return texts


@pytest.mark.parametrize("make_key", KEYS)
def test_an_echoing_endpoint_leaves_no_key_in_the_database_exports_or_bundle(
    make_key: Callable[[], Key],
    db_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    key = make_key()
    lineup = tmp_path / "lineup.toml"
    lineup.write_text(LINEUP, encoding="utf-8")
    cli = Cli(capsys)
    with serve_models() as llm:
        script_echoes(llm, key.value)
        monkeypatch.setenv(key.env, key.value)
        monkeypatch.setenv("ARENA_DATABASE_URL", db_url)
        monkeypatch.setenv("ARENA_LLM_BASE_URL", llm.url)
        monkeypatch.setenv("ARENA_LINEUP", str(lineup))
        assert cli("init-db")[0] == 0
        assert cli("start-cohort", "--at", SUNDAY.isoformat())[0] == 0
        with gamma_url(WEEK1) as url:
            monkeypatch.setenv("ARENA_GAMMA_URL", url)
            assert cli("sync-markets", "--at", SUNDAY.isoformat())[0] == 0
        code, _out, err = cli("decide", "--at", (SUNDAY + timedelta(minutes=5)).isoformat())
        assert code == 0, err
        requests = llm.requests
    assert requests and all(
        r.headers.get("Authorization") == f"Bearer {key.value}" for r in requests
    ), "the key was not sent: the endpoint had nothing to echo"

    texts = database_texts(db_url) + exports_and_bundle(cli, tmp_path) + cli.printed
    found_leaks = leaks(key, texts)
    assert not found_leaks, "\n".join(found_leaks[:10])
    _assert_the_echoes_were_stored(db_url)


def _assert_the_echoes_were_stored(url: str) -> None:
    """Guard against a vacuous pass: every echo reached a stored row, redacted."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            counted = select(DECISIONS.c.status, func.count()).group_by(DECISIONS.c.status)
            statuses: dict[str, int] = {s: n for s, n in conn.execute(counted).all()}
            attempts = conn.execute(select(DECISION_ATTEMPTS.c.error)).scalars().all()
            served = conn.execute(select(DECISION_ATTEMPTS.c.served_model)).scalars().all()
            parsed = conn.execute(select(DECISIONS.c.parsed_response)).scalars().all()
    finally:
        engine.dispose()
    assert statuses.get("fallback_hold") == 2 and statuses.get("error") == 1, statuses
    assert statuses.get("ok", 0) + statuses.get("zero_trade", 0) == 4, statuses
    errors = " ".join(e for e in attempts if e)
    assert "HTTP 500" in errors and "HTTP 401" in errors and REDACTED in errors, errors
    meta = [m for m in served if m and m.startswith(REDACTED)]  # "echo/meta": every form
    assert meta and all(m.count(REDACTED) > len(ENCODED) for m in meta), meta
    reasons = [p["reasoning"] for p in parsed if p]
    assert sum(REDACTED in r for r in reasons) >= 3, reasons


# ------------------------------------------------------------------ a database from before


@pytest.mark.parametrize("make_key", KEYS)
def test_a_bundle_of_an_older_database_holds_no_key(
    make_key: Callable[[], Key],
    db_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    """Rows stored by a version before the fix hold the key; the bundle built now does not."""
    key = make_key()
    f = forms(key.value)
    engine = create_db_engine(db_url)
    try:
        write_old_rows(engine, f)
    finally:
        engine.dispose()
    monkeypatch.setenv(key.env, key.value)
    monkeypatch.setenv("ARENA_DATABASE_URL", db_url)
    archive = tmp_path / "old.zip"
    cli = Cli(capsys)
    code, _out, err = cli("bundle", "1", "--provisional", "--out", str(archive))
    assert code == 0, err
    members = list(bundle_members(archive))
    found_leaks = leaks(key, members + cli.printed)
    assert not found_leaks, "\n".join(found_leaks[:10])
    attempts = dict(members)["bundle attempts.jsonl"]
    assert attempts.count(REDACTED) >= 4, attempts  # the old rows are in it, redacted


def write_old_rows(engine: Engine, f: dict[str, str]) -> None:
    """A decision and its attempts as a version before the fix stored an echoing endpoint."""
    (agent_id,) = new_cohort_agents(engine, ("gpt-5.1",))
    at = SUNDAY + timedelta(minutes=5)
    with session_scope(engine) as s:
        cohort = s.exec(sqlmodel_select(Cohort)).one()
        decision = Decision(
            agent_id=agent_id,
            cohort_id=cohort.id,  # type: ignore[arg-type]
            decision_week=1,
            status="ok",
            action="HOLD",
            attempts=2,
            raw_response=f'{{"action": "HOLD", "reasoning": "{f["u-escaped"]}"}}',
            parsed_response={
                "action": "HOLD",
                "reasoning": f["as is"],
                "notes": [f["lower"], *(f[name] for name in ENCODED)],
            },
            validation_errors=[f"action: must be one of BET, SELL, HOLD, got '{f['upper'][:37]}…'"],
            served_model=f["upper"],
            provider=f["swapped"],
            error=None,
            decided_at=at,
            created_at=at,
        )
        s.add(decision)
        s.flush()
        s.add_all(
            [
                DecisionAttempt(
                    decision_id=decision.id,  # type: ignore[arg-type]
                    attempt_no=1,
                    outcome="malformed",
                    raw_response=json.dumps({"action": f["upper"]}),
                    error=f"action: must be one of BET, SELL, HOLD, got '{f['upper'][:37]}…'",
                    served_model=f["url-encoded"],
                    provider=f["as is"],
                    cost_usd=0.001,
                    created_at=at,
                ),
                DecisionAttempt(
                    decision_id=decision.id,  # type: ignore[arg-type]
                    attempt_no=2,
                    outcome="valid",
                    raw_response=f'{{"action": "HOLD", "reasoning": "{f["u-escaped"]}"}}',
                    served_model=f["upper"],
                    provider=f["swapped"],
                    cost_usd=float(Decimal("0.001")),
                    created_at=at,
                ),
            ]
        )


# ------------------------------------------------------------------ the engine's own choke point


class EchoingResponder:
    """A responder whose answers were not redacted before they reached the engine (a future
    client, a plug-in): the engine's own redaction must still keep its key out."""

    def __init__(self, key: str) -> None:
        self.secrets = (key,)
        self.key = key
        self.calls = 0

    def respond(self, messages: Any, context: Any) -> ChatResult:
        self.calls += 1
        f = forms(self.key)
        action = f["upper"] if self.calls == 1 else "HOLD"  # malformed first, then valid
        reasoning = f"echo {f['as is']} {f['basic auth']} {f['reversed upper']} {f['hex colons']}"
        content = json.dumps({"action": action, "reasoning": reasoning})
        record = AttemptRecord(
            attempt_no=1,
            status=200,
            outcome="ok",
            latency_ms=1,
            served_model=f["upper"],
            provider=f["url-encoded"],
            error=f"earlier: {f['swapped']} {f['base64 url-safe unpadded']} {f['byte list']}",
        )
        return ChatResult(content=content, finish_reason="stop", attempts=[record])


@pytest.mark.parametrize("make_key", KEYS)
def test_the_engine_redacts_what_a_responder_hands_it(
    make_key: Callable[[], Key], engine: Engine
) -> None:
    key = make_key()
    lineup = parse_lineup(
        '[[family]]\nid = "echo"\ndisplay_name = "E"\nprovider = "T"\nmodel = "echo/raw"\n'
    )
    start_cohort(engine, SUNDAY, lineup, Methodology())
    with gamma_url(WEEK1) as url, GammaClient(url, min_interval=0.0) as client:
        sync_markets(engine, GammaSource(client), SUNDAY, 500)
    responder = EchoingResponder(key.value)
    result = run_decisions(
        engine, SUNDAY + timedelta(minutes=5), lineup, Methodology(), lambda _f: responder
    )
    assert result.statuses == {"ok": 1} and responder.calls == 2
    url = engine.url.render_as_string(hide_password=False)
    found_leaks = leaks(key, database_texts(url))
    assert not found_leaks, "\n".join(found_leaks[:10])
    with engine.connect() as conn:
        errors = conn.execute(select(DECISION_ATTEMPTS.c.error)).scalars().all()
        parsed = conn.execute(select(DECISIONS.c.parsed_response)).scalars().one()
    reasoning = parsed["reasoning"]  # "dXNlcjp": base64 of "user:", kept; the key's is not
    assert reasoning.startswith(f"echo {REDACTED} dXNlcjp{REDACTED}"), reasoning
    assert reasoning.count(REDACTED) == 4, reasoning
    assert any(e and "got '[redacted]" in e for e in errors), errors  # the quote cut short
