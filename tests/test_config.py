"""Settings from the environment, methodology constants, and the lineup file."""

from decimal import Decimal as D
from pathlib import Path

import pytest

from arena.config import Methodology, load_settings
from arena.core.errors import ConfigError
from arena.lineup import load_lineup, parse_lineup

METHODOLOGY_TABLE = {
    "gpt-5.1": ("GPT-5.2", "OpenAI", "openai/gpt-5.2"),
    "gemini-2.5-flash": ("Gemini 3 Pro", "Google", "google/gemini-3-pro-preview"),
    "grok-4": ("Grok 4.1", "xAI", "x-ai/grok-4.1-fast"),
    "claude-opus-4.5": ("Claude Opus 4.5", "Anthropic", "anthropic/claude-opus-4.5"),
    "deepseek-v3.1": ("DeepSeek V3.2", "DeepSeek", "deepseek/deepseek-v3.2"),
    "kimi-k2": ("Kimi K2", "Moonshot AI", "moonshotai/kimi-k2-thinking"),
    "qwen-3-next": ("Qwen 3", "Alibaba", "qwen/qwen3-235b-a22b-2507"),
}


def test_defaults_are_the_contract() -> None:
    settings = load_settings()
    assert settings.database_url == "sqlite:///data/arena.db"
    assert settings.gamma_url == "https://gamma-api.polymarket.com"
    assert settings.llm_base_url == "https://openrouter.ai/api/v1"
    assert settings.llm_api_key is None
    m = settings.methodology
    assert (m.version, m.starting_balance, m.min_bet, m.max_bet_fraction) == (
        "v1",
        D("10000"),
        D("50"),
        D("0.25"),
    )
    assert (m.snapshot_interval_minutes, m.decision_window_weeks, m.malformed_retries) == (10, 5, 2)
    assert (m.transport_attempts, m.market_universe_size) == (3, 500)


def test_key_aliases_and_secrecy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-secret")
    settings = load_settings()
    assert settings.llm_api_key is not None
    assert settings.llm_api_key.get_secret_value() == "sk-or-secret"
    assert "sk-or-secret" not in repr(settings) and "sk-or-secret" not in str(settings.model_dump())
    monkeypatch.delenv("OPENROUTER_API_KEY")
    monkeypatch.setenv("ARENA_LLM_API_KEY", "sk-other")
    assert load_settings().llm_api_key.get_secret_value() == "sk-other"  # type: ignore[union-attr]


def test_constants_are_overridable_and_stamped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_METHODOLOGY__MIN_BET", "100")
    monkeypatch.setenv("ARENA_METHODOLOGY__DECISION_WINDOW_WEEKS", "3")
    m = load_settings().methodology
    assert m.min_bet == D("100") and m.decision_window_weeks == 3
    stamp = m.stamp()
    assert stamp["min_bet"] == "100" and stamp["is_default"] is False
    assert stamp["version"] == "v1"
    assert Methodology().stamp()["is_default"] is True


@pytest.mark.parametrize(
    ("name", "value", "needle"),
    [
        ("ARENA_METHODOLOGY__MAX_BET_FRACTION", "1.5", "max_bet_fraction"),
        ("ARENA_METHODOLOGY__MIN_BET", "-1", "min_bet"),
        ("ARENA_GAMMA_URL", "ftp://x", "gamma_url"),
        ("ARENA_DATABASE_URL", "arena.db", "database_url"),
        # the export query asks cap + 1 rows: a cap at 2**63 - 1 must not overflow it
        ("ARENA_EXPORT_ROW_CAP", str(2**63 - 1), "export_row_cap"),
    ],
)
def test_bad_settings_are_one_clear_error(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, needle: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert needle in info.value.one_line()
    assert "\n" not in info.value.one_line()


def test_bundled_lineup_is_the_methodology_table_plus_baselines() -> None:
    lineup = load_lineup()
    enabled = lineup.enabled()
    llm = {f.id: (f.display_name, f.provider, f.model) for f in enabled if f.kind == "llm"}
    assert llm == METHODOLOGY_TABLE
    # The one disabled family is the demo's late entrant, which never plays a live cohort.
    assert [f.id for f in lineup.families if not f.enabled] == ["newcomer"]
    baselines = {f.id: f.strategy for f in enabled if f.kind == "baseline"}
    assert baselines == {
        "baseline-cash": "cash",
        "baseline-favorite": "favorite",
        "baseline-random": "random",
    }


def test_custom_lineup_file(tmp_path: Path) -> None:
    path = tmp_path / "lineup.toml"
    path.write_text(
        '[[family]]\nid = "local-llama"\ndisplay_name = "Llama"\nprovider = "Meta"\n'
        'model = "llama3"\nbase_url = "http://localhost:11434/v1/"\n'
    )
    lineup = load_lineup(path)
    assert lineup.get("local-llama").base_url == "http://localhost:11434/v1"


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[[family]\n", "not valid TOML"),
        ("title = 'x'\n", "no [[family]]"),
        ('[[family]]\nid = "a"\n', "display_name"),
        ('[[family]]\nid = "a b"\ndisplay_name="x"\nprovider="p"\nmodel="m"\n', "id"),
        (
            '[[family]]\nid = "b"\ndisplay_name="x"\nprovider="p"\nmodel="m"\nkind="baseline"\n',
            "strategy",
        ),
        ('[[family]]\nid = "c"\ndisplay_name="x"\nprovider="p"\nmodel="m"\nkind="robot"\n', "kind"),
        ('[[family]]\nid = "d"\ndisplay_name="x"\nprovider="p"\nmodel="m"\n' * 2, "twice"),
    ],
)
def test_bad_lineups_are_one_clear_error(text: str, needle: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_lineup(text, "test.toml")
    assert needle in info.value.one_line() and "test.toml" in info.value.one_line()


def test_missing_lineup_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read lineup file"):
        load_lineup(tmp_path / "nope.toml")
