"""Gamma's wire format as Pydantic models: what the API sends, decoded and tolerated.

`GammaMarket` mirrors one object of `/markets`, `/markets/keyset` or `/markets/{id}` and
`GammaEvent` one entry of its `events[]`, with snake_case fields aliased to Gamma's camelCase
keys. Every field reads through a `mode="before"` validator, so the models take Gamma as it
really is (the recorded payloads are in tests/fixtures/gamma/):

- **JSON in strings.** `outcomes`, `outcomePrices`, `clobTokenIds`, `umaResolutionStatuses`
  are JSON-encoded strings (`"[\\"Yes\\", \\"No\\"]"`); real lists are accepted too.
- **Numbers as strings.** `volume` is a string, `volumeNum` a number; either form is read, as
  a finite float. Unreadable, infinite or boolean numbers become None.
- **Missing, null, blank.** Optional fields default to None; Gamma's "" means absent.
- **Flags.** A bool or a "true"/"false" string; anything else is None (unknown), and
  `to_parsed` applies the defaults (active, not closed, not negRisk unless the event says so).
- **Timestamps.** `...Z` with or without fractions, `YYYY-MM-DD HH:MM:SS+00` and date-only,
  as aware UTC; unreadable ones become None.

Only three things make a payload unusable, checked in this order: no id, no question, and
outcomes that are not a list of at least two distinct non-empty strings. Each raises a
`PydanticCustomError` of type `UNUSABLE` whose context names the market and the reason, which
`parse_market` turns into a `MarketParseError`. Prices that cannot be trusted (not a list, a
count different from the outcomes, unparseable or outside [0, 1]) do not reject the market:
`outcome_prices` is None and the reason is logged. Likewise a fee-enabled market
(`feesEnabled` true) whose `feeSchedule` is absent, unreadable or outside its bounds keeps the
market with `fee_schedule` None (fees off) and the reason logged (`arena.markets.gamma_fees`);
the fee fields are read in Gamma's camelCase or in the snake_case some feeds and Polymarket's
SDKs use (`fees_enabled`, `fee_type`, `fee_schedule` with `taker_only`, `rebate_rate`). Prices
stay exact Decimals (a leftover 0.99999995 must not round to 1 and look like a resolution).
Any other error a field raises (a Decimal operation, an overflow) makes that one market
unusable, never the page (`parse_market`).

**Lengths.** Every text stored from Gamma has a rule here, so no INSERT meets a value its
column refuses (`markets`, `positions.side`, `decision_books.token_id`): a market whose id is
over 64 characters or not printable ASCII, or with an outcome name over 256 (a position's
side) or more than 100 outcomes, is unusable, as a cut id or outcome would be another one;
`clobTokenIds` must be 1-96 of `[0-9A-Za-z_-]` each (else None); a slug (256 of
`[0-9A-Za-z_-]`), category, UMA status and fee type (128; the category is indexed) beyond its
rule is dropped (None: a sync then keeps the known value); free text for people is cut with a
visible marker (`wire_rules.clipped`): the question at 1,000 characters (every prompt shows
it), the description at 20,000, event and group titles at 500. Numbers are read from at most
64 characters of text (real prices run to 41), timestamps from at most 64.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Annotated, Any, TypeVar

from pydantic import (
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic_core import PydanticCustomError

from arena.core.errors import ArenaError
from arena.core.money import ONE, ZERO
from arena.core.text import storable
from arena.markets.gamma_fees import read_fee_schedule
from arena.markets.types import ParsedMarket, classify_outcomes
from arena.markets.wire_rules import (
    PRINTABLE_ID,
    WORD_ID,
    bounded_decimal,
    bounded_text,
    clipped,
    read_flag,
)

# The client's logger: skips, unusable prices and unreadable timestamps are logged where they
# always were.
logger = logging.getLogger("arena.markets.gamma")

UNUSABLE = "gamma_unusable_market"
LOGGED_VALUE_CHARS = 200
# The width of each text Gamma sends that is stored (module docstring, "Lengths").
ID_CHARS = 64  # markets.id, markets.event_id: String(64)
OUTCOME_CHARS = 256  # positions.side, trades.side, resolution_outcome: String(256)
MAX_OUTCOMES = 100  # Gamma's markets have two; the simulated world's named ones a handful
TOKEN_CHARS = 96  # decision_books.token_id: String(96)
QUESTION_CHARS = 1_000  # shown in every prompt; real questions are under 300
DESCRIPTION_CHARS = 20_000  # the resolution rules; real ones are a few thousand
TITLE_CHARS = 500  # event_title, group_item_title
SLUG_CHARS = 256  # slug, event_slug: an identifier in Polymarket's URLs
LABEL_CHARS = 128  # category (indexed: a B-tree row has a size limit), UMA statuses
TIMESTAMP_CHARS = 64  # longer than any ISO 8601 form
# Gamma's numbers are stored as JSON text or floats (no column width), and real prices run to
# 41 characters ("0.00000004364303498046286702037228176483457"): a wider cap than the CLOB's.
NUMBER_CHARS = 64
# The fields a market needs before anything else about it is worth reading (validation order).
ESSENTIALS = ("id", "question", "outcomes")


class MarketParseError(ArenaError):
    """One market payload cannot be understood; the caller skips it (never fatal to a page)."""

    def __init__(self, market_id: str, reason: str) -> None:
        super().__init__(f"Gamma market {market_id}: {reason}")
        self.market_id = market_id
        self.reason = reason


# --------------------------------------------------------------------------------------------
# Tolerant readers (the before-validators; each returns None for what it cannot read)
# --------------------------------------------------------------------------------------------


def decode_list(value: object) -> list[Any] | None:
    """A list from a real list or a JSON-encoded string of one (how Gamma sends arrays)."""
    if isinstance(value, list):
        return value
    if isinstance(value, str):
        try:
            decoded = json.loads(value)
        except ValueError:
            return None
        return decoded if isinstance(decoded, list) else None
    return None


def parse_timestamp(value: object) -> datetime | None:
    """Any Gamma timestamp form as aware UTC; None when absent, unreadable or longer than
    `TIMESTAMP_CHARS`.

    Seen forms: `2026-08-22T08:29:12.385396Z`, `2020-11-20T00:00:00Z`,
    `2024-11-06 15:17:41+00` (Postgres style) and date-only `2024-11-05` (taken as 00:00 UTC).
    """
    if not isinstance(value, str) or not value.strip() or len(value) > TIMESTAMP_CHARS:
        return None
    text = value.strip()
    if text[-1] in "Zz":
        text = text[:-1] + "+00:00"
    try:
        instant = datetime.fromisoformat(text)
    except ValueError:
        logger.debug("unreadable Gamma timestamp %r", value[:LOGGED_VALUE_CHARS])
        return None
    if instant.tzinfo is None:
        instant = instant.replace(tzinfo=UTC)
    return instant.astimezone(UTC)


def read_text(value: object) -> str | None:
    """A stripped non-empty string, else None (Gamma sends "" where it means absent)."""
    if isinstance(value, str) and value.strip():
        return storable(value.strip())
    return None


def read_id(value: object) -> str | None:
    """An id as a stripped string; ints are accepted, booleans and blanks are not, nor an id
    over `ID_CHARS` or holding spaces or control characters (None)."""
    try:
        return bounded_text(value, "id", ID_CHARS, PRINTABLE_ID)
    except ValueError:
        return None


def read_rule(
    max_chars: int, pattern: re.Pattern[str] | None = None
) -> Callable[[object], str | None]:
    """A reader of an optional label or identifier: the text within its rule, else None.
    Why None and not cut: a cut slug, category or status is another one."""

    def read(value: object) -> str | None:
        text = read_text(value)
        if text is None or len(text) > max_chars:
            return None
        return text if pattern is None or pattern.fullmatch(text) else None

    return read


def read_clipped(max_chars: int) -> Callable[[object], str | None]:
    """A reader of free text for people: cut to `max_chars` with a marker (`clipped`)."""
    return lambda value: clipped(read_text(value), max_chars)


def read_number(value: object) -> float | None:
    """A finite number (string or number) as a float; None for anything else."""
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(bounded_decimal(value, NUMBER_CHARS))
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def read_string_list(value: object) -> list[str] | None:
    """A (JSON-in-string) list of strings, or None when it is anything else."""
    items = decode_list(value)
    if items is None or not all(isinstance(item, str) for item in items):
        return None
    return items


Text = Annotated[str | None, BeforeValidator(read_text)]
Identifier = Annotated[str | None, BeforeValidator(read_id)]
Slug = Annotated[str | None, BeforeValidator(read_rule(SLUG_CHARS, WORD_ID))]
Label = Annotated[str | None, BeforeValidator(read_rule(LABEL_CHARS))]
Title = Annotated[str | None, BeforeValidator(read_clipped(TITLE_CHARS))]
Description = Annotated[str | None, BeforeValidator(read_clipped(DESCRIPTION_CHARS))]
Number = Annotated[float | None, BeforeValidator(read_number)]
Flag = Annotated[bool | None, BeforeValidator(read_flag)]
Timestamp = Annotated[datetime | None, BeforeValidator(parse_timestamp)]
StringList = Annotated[list[str] | None, BeforeValidator(read_string_list)]


T = TypeVar("T")


def _as_dict(value: Mapping[str, Any]) -> dict[str, Any]:
    """A Mapping as the dict Pydantic validates a model from (a dict as it is)."""
    return value if isinstance(value, dict) else dict(value)


def first_known(*values: T | None) -> T | None:
    """The first value that is not None (None when all are)."""
    return next((value for value in values if value is not None), None)


def known_or(value: T | None, default: T) -> T:
    """`value` unless it is None (unknown), else `default`."""
    return default if value is None else value


# --------------------------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------------------------


class _Wire(BaseModel):
    """Read by alias (Gamma's own keys) only; unknown keys are ignored; read-only."""

    model_config = ConfigDict(frozen=True, extra="ignore")


class GammaEvent(_Wire):
    """One entry of a market's `events[]`: the event it belongs to."""

    id: Identifier = None
    slug: Slug = None
    title: Title = None
    category: Label = None
    neg_risk: Flag = Field(default=None, alias="negRisk")


class GammaMarket(_Wire):
    """One Gamma market as sent; `to_parsed` makes the source-independent ParsedMarket.

    Field order is validation order: the essentials come first, so each later validator can
    see (in `info.data`) whether the market is usable so far.
    """

    id: str = Field(default=None, validate_default=True)
    question: str = Field(default=None, validate_default=True)
    outcomes: list[str] = Field(default=None, validate_default=True)
    outcome_prices: list[Decimal] | None = Field(default=None, alias="outcomePrices")
    clob_token_ids: StringList = Field(default=None, alias="clobTokenIds")
    slug: Slug = None
    description: Description = None
    events: list[GammaEvent | None] = Field(default_factory=list)
    group_item_title: Title = Field(default=None, alias="groupItemTitle")
    category: Label = None
    volume_num: Number = Field(default=None, alias="volumeNum")
    volume: Number = None
    liquidity_num: Number = Field(default=None, alias="liquidityNum")
    liquidity: Number = None
    end_date: Timestamp = Field(default=None, alias="endDate")
    end_date_iso: Timestamp = Field(default=None, alias="endDateIso")
    active: Flag = None
    closed: Flag = None
    neg_risk: Flag = Field(default=None, alias="negRisk")
    uma_resolution_status: Label = Field(default=None, alias="umaResolutionStatus")
    uma_resolution_statuses: StringList = Field(default=None, alias="umaResolutionStatuses")
    closed_time: Timestamp = Field(default=None, alias="closedTime")
    updated_at: Timestamp = Field(default=None, alias="updatedAt")
    fees_enabled: Flag = Field(
        default=None, validation_alias=AliasChoices("feesEnabled", "fees_enabled")
    )
    fee_type: Label = Field(default=None, validation_alias=AliasChoices("feeType", "fee_type"))
    fee_schedule_raw: Any = Field(
        default=None, validation_alias=AliasChoices("feeSchedule", "fee_schedule")
    )

    # ---- the essentials: a market without them is skipped -----------------------------------

    @field_validator("id", mode="before")
    @classmethod
    def _require_id(cls, value: object, info: ValidationInfo) -> str:
        """An id within `markets.id`'s 64 characters, of printable characters: refused, not
        cut, as a cut id is another market's."""
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise unusable(info, "no id")
        try:
            market_id = bounded_text(value, "id", ID_CHARS, PRINTABLE_ID)
        except ValueError as exc:
            raise unusable(info, str(exc)) from None
        if market_id is None:
            raise unusable(info, "no id")
        return market_id

    @field_validator("question", mode="before")
    @classmethod
    def _require_question(cls, value: object, info: ValidationInfo) -> str:
        question = clipped(read_text(value), QUESTION_CHARS)
        if question is None:
            raise unusable(info, "no question")
        return question

    @field_validator("outcomes", mode="before")
    @classmethod
    def _require_outcomes(cls, value: object, info: ValidationInfo) -> list[str]:
        """At least two distinct non-empty outcome names, in source order."""
        outcomes = decode_list(value)
        if outcomes is None:
            raise unusable(info, "outcomes are not a list")
        if not all(isinstance(name, str) and name.strip() for name in outcomes):
            raise unusable(info, "outcomes are not all non-empty strings")
        if len(outcomes) > MAX_OUTCOMES:
            raise unusable(info, f"{len(outcomes)} outcomes; at most {MAX_OUTCOMES} are read")
        names = [storable(name.strip()) for name in outcomes]
        if len(names) < 2:
            raise unusable(info, f"{len(names)} outcome(s); at least 2 are needed")
        if any(len(name) > OUTCOME_CHARS for name in names):
            # an outcome is a position's side: a cut name could merge two outcomes
            raise unusable(info, f"an outcome name is over {OUTCOME_CHARS} characters")
        if len(set(names)) != len(names):
            raise unusable(info, "duplicate outcome names")
        return names

    # ---- prices: kept only when they can be trusted -----------------------------------------

    @field_validator("outcome_prices", mode="before")
    @classmethod
    def _aligned_prices(cls, value: object, info: ValidationInfo) -> list[Decimal] | None:
        """Exact prices aligned with the outcomes, or None (the reason logged) when not."""
        if value is None or not all(name in info.data for name in ESSENTIALS):
            return None  # absent, or the market is skipped anyway
        count = len(info.data["outcomes"])
        items = decode_list(value)
        reason: str | None = None
        prices: list[Decimal] = []
        if items is None:
            reason = "outcomePrices is not a list"
        elif len(items) != count:
            reason = f"{len(items)} prices for {count} outcomes"
        else:
            for item in items:
                try:
                    number = bounded_decimal(item, NUMBER_CHARS)
                except ValueError:
                    reason = "an unparseable price"
                    break
                if not ZERO <= number <= ONE:
                    reason = "a price outside [0, 1]"
                    break
                prices.append(number)
        if reason is not None:
            logger.info("Gamma market %s has unusable prices (%s)", info.data["id"], reason)
            return None
        return prices

    @field_validator("events", mode="before")
    @classmethod
    def _event_objects(cls, value: object) -> list[Mapping[str, Any] | None]:
        """The entries of `events[]` that are objects; others stay as None (positions hold)."""
        if not isinstance(value, list):
            return []
        return [_as_dict(event) if isinstance(event, Mapping) else None for event in value]

    # ---- the parsed market ------------------------------------------------------------------

    @property
    def outcome_tokens(self) -> list[str] | None:
        """`clobTokenIds` when it names one token per outcome, each 1-96 characters of
        `[0-9A-Za-z_-]` (`decision_books.token_id`; real ones are decimals), else None."""
        tokens = self.clob_token_ids
        if tokens is None or len(tokens) != len(self.outcomes):
            return None
        cleaned = [str(token).strip() for token in tokens]
        if all(len(token) <= TOKEN_CHARS and WORD_ID.fullmatch(token) for token in cleaned):
            return cleaned
        logger.info("Gamma market %s has unusable clobTokenIds (an id breaks its rule)", self.id)
        return None

    @property
    def event(self) -> GammaEvent:
        """The first event (a market belongs to one), or an empty one."""
        first = self.events[0] if self.events else None
        return first if first is not None else NO_EVENT

    def to_parsed(self) -> ParsedMarket:
        """The source-independent market: defaults applied, `...Num` and `endDate` preferred."""
        event = self.event
        return ParsedMarket(
            id=self.id,
            question=self.question,
            market_type=classify_outcomes(self.outcomes),
            outcomes=self.outcomes,
            prices=self.outcome_prices,
            slug=self.slug,
            description=self.description,
            event_id=event.id,
            event_slug=event.slug,
            event_title=event.title,
            group_item_title=self.group_item_title,
            category=first_known(self.category, event.category),
            volume=first_known(self.volume_num, self.volume),
            liquidity=first_known(self.liquidity_num, self.liquidity),
            end_date=first_known(self.end_date, self.end_date_iso),
            active=known_or(self.active, True),
            closed=known_or(self.closed, False),
            neg_risk=known_or(first_known(self.neg_risk, event.neg_risk), False),
            uma_resolution_status=self.uma_resolution_status,
            closed_time=self.closed_time,
            updated_at=self.updated_at,
            source="gamma",
            clob_token_ids=self.outcome_tokens,
            fee_schedule=read_fee_schedule(
                self.id, self.fees_enabled, self.fee_schedule_raw, self.fee_type
            ),
        )


NO_EVENT = GammaEvent()


def unusable(info: ValidationInfo, reason: str) -> PydanticCustomError:
    """The error that makes a payload unusable, naming the market (when its id is known)."""
    market_id = info.data.get("id") or "?"
    return PydanticCustomError(UNUSABLE, "{reason}", {"market_id": market_id, "reason": reason})


# --------------------------------------------------------------------------------------------
# Parsing (the public entry points)
# --------------------------------------------------------------------------------------------


# What a reader deep in a field can raise beyond Pydantic's ValidationError (a Decimal
# operation, an int too long to convert, a recursion in nested JSON): one market's problem.
_UNFORESEEN = (ArithmeticError, ValueError, TypeError, RecursionError)


def parse_market(raw: Mapping[str, Any]) -> ParsedMarket:
    """One Gamma market dict as a ParsedMarket; MarketParseError if it cannot be understood.

    Why every error is caught here: a sync reads hundreds of markets, and one market's
    unreadable field must cost that market only (`parse_page` skips it, naming the market and
    the field), never the page or the sync."""
    if not isinstance(raw, Mapping):
        raise MarketParseError("?", "payload is not an object")
    try:
        wire = GammaMarket.model_validate(_as_dict(raw))
    except ValidationError as exc:
        raise _parse_error(raw, exc) from None
    except _UNFORESEEN as exc:
        raise MarketParseError(read_id(raw.get("id")) or "?", _unforeseen(exc)) from None
    try:
        return wire.to_parsed()
    except ValidationError as exc:  # defensive: a field the checks above did not foresee
        raise MarketParseError(wire.id, f"invalid field {_where(exc)}") from None
    except _UNFORESEEN as exc:
        raise MarketParseError(wire.id, _unforeseen(exc)) from None


def _where(exc: ValidationError) -> str:
    """The first failing field of a ValidationError, by its path (`feeSchedule`, `events.0`)."""
    first = exc.errors(include_url=False)[0]
    where = ".".join(str(part) for part in first.get("loc", ())) or "payload"
    return f"{where[:LOGGED_VALUE_CHARS]} ({exc.error_count()} error(s))"


def _unforeseen(exc: BaseException) -> str:
    """An unforeseen error of one field as a short reason (its type and first words)."""
    text = " ".join(str(exc).split())[:LOGGED_VALUE_CHARS]
    return f"an unreadable field ({type(exc).__name__}: {text})"


def _parse_error(raw: Mapping[str, Any], exc: ValidationError) -> MarketParseError:
    """The first reason a payload is unusable (errors come in field order: id, question, ...)."""
    first = exc.errors(include_url=False)[0]
    context = first.get("ctx") or {}
    if first["type"] == UNUSABLE:
        return MarketParseError(str(context["market_id"]), str(context["reason"]))
    market_id = read_id(raw.get("id")) or "?"  # defensive: no other error is expected
    return MarketParseError(market_id, f"invalid field {_where(exc)}")


def parse_page(items: list[Any]) -> list[ParsedMarket]:
    """Every understandable market of a page, in order; the others are logged and skipped."""
    parsed: list[ParsedMarket] = []
    for item in items:
        try:
            parsed.append(parse_market(item))
        except MarketParseError as exc:
            logger.warning("skipping Gamma market %s: %s", exc.market_id, exc.reason)
    return parsed
