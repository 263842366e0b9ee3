"""Configuration: the contract's environment variables and the methodology constants.

The methodology constants live here and nowhere else. Each can be overridden for a research
run (e.g. `ARENA_METHODOLOGY__MIN_BET=100`); every cohort is stamped with the constants it
actually ran under, together with the methodology version, so results stay comparable.

Protocol extensions (`ARENA_EXTENSIONS=stated_probability`) are opt-in additions to v1 that
ask the models for more without changing how v1 trades or scores. They are stamped on the
cohort like an overridden constant (`cohort_stamp`: an `extensions` list, `is_default`
false), so an extended cohort is never taken for a stock v1 one; a v1 cohort's stamp has no
`extensions` key at all, byte for byte what it was before extensions existed.

Replicates (`ARENA_REPLICATES=N`, N > 1) field N independent agents per family in a cohort; the
stamp then lists `replicates` among its extensions and records `replicates: N`.

A `book_execution` cohort's stamp records how its buys pay Polymarket's taker fee
(`fee_charged`: `usdc_on_top`, as the CLOB charges since V2, unless `in_shares` is named); a
`book_execution` stamp without the key ran `in_shares` (`stamped_fee_charged`).

The horizon (`ARENA_HORIZON_DAYS=D`, or `horizon` in `ARENA_EXTENSIONS` with the default D)
serves only markets ending within D days of each decision run; the stamp lists `horizon` among
its extensions and records `horizon_days: D`.

Methodology versions (`ARENA_METHODOLOGY=v1|v2`, default v1; docs/methodology-v2.md): the version
a new cohort is stamped with. v2 keeps every v1 constant and adds its rules as stamp keys that
only a v2 stamp carries (`VERSION_RULES`), so `Methodology().stamp()` for v1 is byte for byte
what it was before v2 existed. A cohort's rules come from its stamp, never from the settings.
"""

import json
import os
from collections.abc import Iterable, Mapping
from datetime import timedelta
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from arena.core.fees import FEE_CONVENTIONS, FEE_IN_SHARES, FEE_USDC_ON_TOP, FeeCharged

METHODOLOGY_VERSION = "v1"
METHODOLOGY_V2 = "v2"
METHODOLOGY_VERSIONS = (METHODOLOGY_VERSION, METHODOLOGY_V2)
# The rules a version adds to the v1 constants, stamped as extra keys (v1 adds none).
PRICES_CLOB_MID = "clob_mid"  # execute and value at CLOB midpoints, validated (price_source)
BET_CAP_TOTAL = "decision_total"  # the cap bounds the sum of a decision's BET legs
# Which set of v2's execution rules a v2 cohort runs (docs/methodology-v2.md, "Rule sets").
# `source-7c78b0c`: the original's code at that commit (execution at midpoints re-read after the
# answer, never at Gamma's price; a BET batch all or nothing; one malformed-answer retry;
# ranked by dollar P/L summed over cohorts). A v2 stamp without the key ran `frozen-quotes`:
# execution at the frozen universe's quotes, Gamma's price when the CLOB had none, legs
# independent, two retries, ranked by return. Each keeps its rules for good.
RULE_SET = "rule_set"
V2_SOURCE_RULES = "source-7c78b0c"
V2_FROZEN_RULES = "frozen-quotes"
V2_MALFORMED_RETRIES = 1  # the original's LLM_MAX_RETRIES (lib/constants/llm.ts)
VERSION_RULES: dict[str, dict[str, str]] = {
    METHODOLOGY_V2: {
        "prices": PRICES_CLOB_MID,
        "bet_cap": BET_CAP_TOTAL,
        RULE_SET: V2_SOURCE_RULES,
    },
}
VERSION_TITLES = {
    METHODOLOGY_VERSION: "Forecaster Arena Methodology v1",
    METHODOLOGY_V2: "Forecaster Arena Methodology v2 (CLOB midpoints, total bet cap)",
}
DEFAULT_DATABASE_URL = "sqlite:///data/arena.db"

# Protocol extensions (methodology §18, "Protocol extensions"): name → what it adds.
STATED_PROBABILITY = "stated_probability"
BOOK_EXECUTION = "book_execution"
HORIZON = "horizon"
HORIZON_DAYS = "horizon_days"  # the stamp key of the horizon's days
FEE_CHARGED = "fee_charged"  # the stamp key of how a book_execution cohort's buys pay the fee
EXTENSIONS: dict[str, str] = {
    STATED_PROBABILITY: "each BET leg also states the model's probability that its side wins",
    BOOK_EXECUTION: (
        "BETs walk the stored order book's asks and SELLs its bids (VWAP, partial fills from "
        "$50, taker fees); positions are marked at the bid (docs/book-execution.md)"
    ),
    HORIZON: "the universe holds only markets ending within ARENA_HORIZON_DAYS of the decision run",
}
# Stamped (not named in ARENA_EXTENSIONS) when ARENA_REPLICATES > 1.
REPLICATES = "replicates"
MAX_REPLICATES = 20
# `horizon` named without ARENA_HORIZON_DAYS: two weeks. ForecastBench asks for resolution at
# least 10 days out and Foresight Arena serves 48-72 h markets; with weekly decision runs a
# horizon under 7 days would leave most runs' markets ended before the next run, and 14 days
# keeps every run's universe non-trivial while a cohort completes about two weeks after its
# last decision run instead of months.
DEFAULT_HORIZON_DAYS = 14
MAX_HORIZON_DAYS = 3650
# The hourly stored analyses: a stored frame is shown while the newest snapshot is at most this
# much newer than its data; past that the page recomputes live instead of showing stale numbers.
STALE_AFTER = timedelta(hours=2)


class Methodology(BaseModel):
    """The benchmark constants of methodology v1 (§5, §6.2, §8.5, §12.1, contract §5); with
    `version="v2"` the same constants under v2's rules (`VERSION_RULES`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: str = METHODOLOGY_VERSION
    starting_balance: Decimal = Field(default=Decimal("10000"), gt=0)
    min_bet: Decimal = Field(default=Decimal("50"), gt=0)
    max_bet_fraction: Decimal = Field(default=Decimal("0.25"), gt=0, le=1)
    snapshot_interval_minutes: int = Field(default=10, ge=1, le=1440)
    decision_window_weeks: int = Field(default=5, ge=1, le=520)
    malformed_retries: int = Field(default=2, ge=0, le=10)
    transport_attempts: int = Field(default=3, ge=1, le=20)
    market_universe_size: int = Field(default=500, ge=1, le=10000)

    @model_validator(mode="before")
    @classmethod
    def _version_defaults(cls, data: Any) -> Any:
        """v2's own default for a constant it changes (one malformed-answer retry, the
        original's), unless set: v1's defaults stay as they are."""
        if isinstance(data, dict) and data.get("version") == METHODOLOGY_V2:
            data = {"malformed_retries": V2_MALFORMED_RETRIES, **data}
        return data

    @field_validator("version")
    @classmethod
    def _known_version(cls, value: str) -> str:
        if value not in METHODOLOGY_VERSIONS:
            raise ValueError(
                f"unknown methodology version {value!r}; known: {', '.join(METHODOLOGY_VERSIONS)}"
            )
        return value

    def stamp(self) -> dict[str, Any]:
        """The JSON-safe record stamped on a cohort: every constant, the version's own rules
        (none for v1) and whether it is the stock version."""
        values = self.model_dump(mode="json")
        values.update(VERSION_RULES.get(self.version, {}))
        values["is_default"] = self == Methodology(version=self.version)
        return values


def is_v2(version: str | None) -> bool:
    """Whether a cohort stamped `version` runs v2's rules (CLOB prices, total bet cap)."""
    return version == METHODOLOGY_V2


def v2_rule_set(version: str | None, constants: Mapping[str, Any] | None) -> str | None:
    """The v2 rule set a cohort's stamp runs (None for v1): its `rule_set`, else
    `frozen-quotes`, the rules every v2 cohort stamped before the key existed ran."""
    if not is_v2(version):
        return None
    value = (constants or {}).get(RULE_SET)
    return str(value) if value else V2_FROZEN_RULES


def runs_source_rules(version: str | None, constants: Mapping[str, Any] | None) -> bool:
    """Whether a cohort runs v2 as the original's code does (`V2_SOURCE_RULES`): execution at
    re-read CLOB midpoints only, BET batches all or nothing, ranked by summed dollar P/L."""
    return v2_rule_set(version, constants) == V2_SOURCE_RULES


def stamped_methodology(version: str, constants: Mapping[str, Any] | None) -> "Methodology":
    """The constants a cohort was stamped with, as the Methodology its runs use: a cohort's
    rules come from its stamp, never from the settings of the process that runs it."""
    stamp = constants or {}
    known = {name: stamp[name] for name in Methodology.model_fields if name in stamp}
    known["version"] = version
    return Methodology(**known)


NESTED_PREFIX = "ARENA_METHODOLOGY__"


def methodology_from(value: Any, environ: Mapping[str, str] | None = None) -> Any:
    """`ARENA_METHODOLOGY` as a version name (`v2`) or JSON, or the nested form as parsed.

    Why merge by hand: given `ARENA_METHODOLOGY=v2`, pydantic-settings hands over the plain
    string and drops the nested `ARENA_METHODOLOGY__MIN_BET=…` overrides; silently losing a
    research override would start cohorts under constants nobody asked for.
    """
    if not isinstance(value, str):
        return value
    text = value.strip()
    found = json.loads(text) if text.startswith("{") else {"version": text or METHODOLOGY_VERSION}
    env = os.environ if environ is None else environ
    for key, item in env.items():
        if key.upper().startswith(NESTED_PREFIX):
            found.setdefault(key[len(NESTED_PREFIX) :].lower(), item)
    return found


def cohort_stamp(
    methodology: Methodology,
    extensions: Iterable[str] = (),
    replicates: int = 1,
    horizon_days: int | None = None,
    *,
    fee_charged: FeeCharged = FEE_USDC_ON_TOP,
) -> dict[str, Any]:
    """The constants stamp of a new cohort: the methodology's, plus its protocol extensions.

    Without extensions (and one agent per family) it is exactly `methodology.stamp()` (no
    `extensions` key), so a v1 cohort's stamp, its replay bundle and the versions table read as
    before. With any, the sorted names go under `extensions` (`replicates` among them when
    `replicates` > 1, with the count under `replicates`) and `is_default` is false, as for an
    overridden constant. `horizon_days` (or `horizon` among `extensions`, then with
    `DEFAULT_HORIZON_DAYS`) stamps `horizon` with the days under `horizon_days`. With
    `book_execution`, `fee_charged` records how its buys pay the taker fee.
    """
    if fee_charged not in FEE_CONVENTIONS:
        raise ValueError(f"fee_charged {fee_charged!r}; known: {', '.join(FEE_CONVENTIONS)}")
    stamp = methodology.stamp()
    days = horizon_days_of(extensions, horizon_days)
    implied = ({REPLICATES} if replicates > 1 else set()) | ({HORIZON} if days else set())
    names = sorted(set(extensions) | implied)
    if not names:
        return stamp
    del stamp["is_default"]  # kept last, as in every stamp
    counts: dict[str, int] = {REPLICATES: replicates} if replicates > 1 else {}
    if days is not None:
        counts[HORIZON_DAYS] = days
    charged = {FEE_CHARGED: fee_charged} if BOOK_EXECUTION in names else {}
    return {**stamp, "extensions": names, **counts, **charged, "is_default": False}


def horizon_days_of(extensions: Iterable[str], horizon_days: int | None) -> int | None:
    """The horizon a new cohort runs: the days set, else the default when `horizon` is named,
    else none (setting the days alone enables the extension, as replicates > 1 does)."""
    if horizon_days is not None:
        if not 1 <= horizon_days <= MAX_HORIZON_DAYS:
            raise ValueError(f"horizon_days must be 1 to {MAX_HORIZON_DAYS}, not {horizon_days}")
        return horizon_days
    return DEFAULT_HORIZON_DAYS if HORIZON in set(extensions) else None


def stamped_horizon_days(constants: Mapping[str, Any] | None) -> int | None:
    """The horizon in days a cohort's stamp runs (None: no `horizon`, as for a v1 cohort)."""
    if HORIZON not in stamped_extensions(constants):
        return None
    value = (constants or {}).get(HORIZON_DAYS)
    is_days = isinstance(value, int) and not isinstance(value, bool) and value >= 1
    return value if is_days else DEFAULT_HORIZON_DAYS


def stamped_extensions(constants: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The protocol extensions a cohort's stamp names (none for a v1 cohort)."""
    value = (constants or {}).get("extensions") or ()
    return tuple(str(name) for name in value) if isinstance(value, list | tuple) else ()


def executes_on_books(constants: Mapping[str, Any] | None) -> bool:
    """Whether a cohort's stamp runs `book_execution`: its legs walk the run's stored books, so
    its decision runs store books whatever `record_books` says."""
    return BOOK_EXECUTION in stamped_extensions(constants)


def stamped_fee_charged(constants: Mapping[str, Any] | None) -> FeeCharged | None:
    """How a cohort's buys pay the taker fee when they walk books (None: it runs no
    `book_execution`): its stamp's `fee_charged`, else `in_shares`, the convention every
    `book_execution` cohort stamped before the key existed ran. An unknown value is a
    ValueError, never a guess."""
    if not executes_on_books(constants):
        return None
    value = (constants or {}).get(FEE_CHARGED, FEE_IN_SHARES)
    for known in FEE_CONVENTIONS:
        if value == known:
            return known
    raise ValueError(f"a cohort stamped fee_charged {value!r}; known: {', '.join(FEE_CONVENTIONS)}")


def stamped_replicates(constants: Mapping[str, Any] | None) -> int:
    """How many agents per family the cohort was started with (1 for a v1 cohort)."""
    value = (constants or {}).get(REPLICATES, 1)
    return int(value) if isinstance(value, int) and value >= 1 else 1


def parse_extensions(value: Any) -> tuple[str, ...]:
    """`ARENA_EXTENSIONS` (comma-separated names, or a list) as known extension names.

    An unknown name is a configuration error (one line naming the known ones), never ignored:
    a typo must not start a cohort without the extension someone asked for.
    """
    if value is None or value == "":
        return ()
    items = value.split(",") if isinstance(value, str) else list(value)
    names = tuple(dict.fromkeys(str(item).strip() for item in items if str(item).strip()))
    unknown = [name for name in names if name not in EXTENSIONS]
    if unknown:
        raise ValueError(
            f"unknown protocol extension {', '.join(map(repr, unknown))}; "
            f"known: {', '.join(EXTENSIONS)}"
        )
    return names


class Settings(BaseSettings):
    """Everything read from the environment (and `.env`). Secrets are `SecretStr`: never printed."""

    model_config = SettingsConfigDict(
        env_prefix="ARENA_",
        env_file=".env",
        env_file_encoding="utf-8",
        env_nested_delimiter="__",
        extra="ignore",
        populate_by_name=True,
    )

    database_url: str = DEFAULT_DATABASE_URL
    gamma_url: str = "https://gamma-api.polymarket.com"
    llm_base_url: str = "https://openrouter.ai/api/v1"
    llm_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("OPENROUTER_API_KEY", "ARENA_LLM_API_KEY", "llm_api_key"),
    )
    lineup: Path | None = None
    admin_password: SecretStr | None = None
    # `ARENA_METHODOLOGY=v2` (a version name) or the nested `ARENA_METHODOLOGY__MIN_BET=…`.
    methodology: Annotated[Methodology, NoDecode] = Methodology()
    clob_url: str = "https://clob.polymarket.com"
    # Every decision run stores the books of its universe's tokens (`decision_books`), whatever
    # the version; `ARENA_RECORD_BOOKS=0` turns it off (v1 runs then read no CLOB).
    record_books: bool = True
    # Opt-in protocol extensions stamped on every cohort this process starts (methodology §18).
    extensions: Annotated[tuple[str, ...], NoDecode] = ()
    # Independent agents per family in every cohort this process starts (1 = v1).
    replicates: int = Field(default=1, ge=1, le=MAX_REPLICATES)
    # `ARENA_HORIZON_DAYS=D` stamps the extension `horizon` with D days on every new cohort.
    horizon_days: int | None = Field(default=None, ge=1, le=MAX_HORIZON_DAYS)
    export_row_cap: int = Field(default=1_000_000, ge=1, le=2**63 - 2)  # the query asks cap + 1
    sqlite_busy_timeout_ms: int = Field(default=30_000, ge=0)
    claim_stale_minutes: int = Field(default=60, ge=1)

    def horizon(self) -> int | None:
        """The horizon in days of the cohorts this process starts (None: no `horizon`)."""
        return horizon_days_of(self.extensions, self.horizon_days)

    @field_validator("database_url")
    @classmethod
    def _url_has_scheme(cls, value: str) -> str:
        if "://" not in value:
            raise ValueError(
                "ARENA_DATABASE_URL must be a SQLAlchemy URL such as sqlite:///data/arena.db "
                "or postgresql+psycopg://user:pass@host/db"
            )
        return value

    @field_validator("extensions", mode="before")
    @classmethod
    def _known_extensions(cls, value: Any) -> tuple[str, ...]:
        return parse_extensions(value)

    @field_validator("methodology", mode="before")
    @classmethod
    def _methodology_version(cls, value: Any) -> Any:
        return methodology_from(value)

    @field_validator("gamma_url", "llm_base_url", "clob_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"{value!r} is not an http(s) URL")
        return value.rstrip("/")


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once."""
    return load_settings()


def load_settings(**overrides: Any) -> Settings:
    """Read settings now, turning a validation failure into one clear ConfigError line."""
    from pydantic import ValidationError

    from arena.core.errors import ConfigError

    try:
        return Settings(**overrides)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "configuration"
        raise ConfigError(
            f"bad configuration: {where}: {first['msg']}",
            "fix the environment variable or .env entry (see README, Configuration)",
        ) from None
