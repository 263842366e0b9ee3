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
(`feesEnabled` true) whose `feeSchedule` is absent or unreadable keeps the market with
`fee_schedule` None (fees off) and the reason logged (`read_fee_schedule`); the fee fields are
read in Gamma's camelCase or in the snake_case some feeds and Polymarket's SDKs use
(`fees_enabled`, `fee_type`, `fee_schedule` with `taker_only`, `rebate_rate`). Prices stay
exact Decimals (a leftover 0.99999995 must not round to 1 and look like a resolution).
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping
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
from arena.core.fees import FeeSchedule
from arena.core.money import ONE, ZERO, to_decimal
from arena.core.text import storable
from arena.markets.types import ParsedMarket, classify_outcomes

# The client's logger: skips, unusable prices and unreadable timestamps are logged where they
# always were.
logger = logging.getLogger("arena.markets.gamma")

UNUSABLE = "gamma_unusable_market"
LOGGED_VALUE_CHARS = 200
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
    """Any Gamma timestamp form as aware UTC; None when absent or unreadable.

    Seen forms: `2026-08-22T08:29:12.385396Z`, `2020-11-20T00:00:00Z`,
    `2024-11-06 15:17:41+00` (Postgres style) and date-only `2024-11-05` (taken as 00:00 UTC).
    """
    if not isinstance(value, str) or not value.strip():
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
    """An id as a stripped string; ints are accepted, booleans and blanks are not."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    return read_text(value)


def read_number(value: object) -> float | None:
    """A finite number (string or number) as a float; None for anything else."""
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(to_decimal(value))
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def read_flag(value: object) -> bool | None:
    """A boolean from a bool or a "true"/"false" string; None (unknown) for anything else."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in {"true", "false"}:
        return value.strip().lower() == "true"
    return None


def read_string_list(value: object) -> list[str] | None:
    """A (JSON-in-string) list of strings, or None when it is anything else."""
    items = decode_list(value)
    if items is None or not all(isinstance(item, str) for item in items):
        return None
    return items


Text = Annotated[str | None, BeforeValidator(read_text)]
Identifier = Annotated[str | None, BeforeValidator(read_id)]
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
    slug: Text = None
    title: Text = None
    category: Text = None
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
    slug: Text = None
    description: Text = None
    events: list[GammaEvent | None] = Field(default_factory=list)
    group_item_title: Text = Field(default=None, alias="groupItemTitle")
    category: Text = None
    volume_num: Number = Field(default=None, alias="volumeNum")
    volume: Number = None
    liquidity_num: Number = Field(default=None, alias="liquidityNum")
    liquidity: Number = None
    end_date: Timestamp = Field(default=None, alias="endDate")
    end_date_iso: Timestamp = Field(default=None, alias="endDateIso")
    active: Flag = None
    closed: Flag = None
    neg_risk: Flag = Field(default=None, alias="negRisk")
    uma_resolution_status: Text = Field(default=None, alias="umaResolutionStatus")
    uma_resolution_statuses: StringList = Field(default=None, alias="umaResolutionStatuses")
    closed_time: Timestamp = Field(default=None, alias="closedTime")
    updated_at: Timestamp = Field(default=None, alias="updatedAt")
    fees_enabled: Flag = Field(
        default=None, validation_alias=AliasChoices("feesEnabled", "fees_enabled")
    )
    fee_type: Text = Field(default=None, validation_alias=AliasChoices("feeType", "fee_type"))
    fee_schedule_raw: Any = Field(
        default=None, validation_alias=AliasChoices("feeSchedule", "fee_schedule")
    )

    # ---- the essentials: a market without them is skipped -----------------------------------

    @field_validator("id", mode="before")
    @classmethod
    def _require_id(cls, value: object, info: ValidationInfo) -> str:
        market_id = read_id(value)
        if market_id is None:
            raise unusable(info, "no id")
        return market_id

    @field_validator("question", mode="before")
    @classmethod
    def _require_question(cls, value: object, info: ValidationInfo) -> str:
        question = read_text(value)
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
        names = [storable(name.strip()) for name in outcomes]
        if len(names) < 2:
            raise unusable(info, f"{len(names)} outcome(s); at least 2 are needed")
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
                    number = to_decimal(item)
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
        """`clobTokenIds` when it names one non-empty token per outcome, else None."""
        tokens = self.clob_token_ids
        if tokens is None or len(tokens) != len(self.outcomes):
            return None
        cleaned = [str(token).strip() for token in tokens]
        return cleaned if all(cleaned) else None

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


def _fee_number(value: object) -> Decimal | None:
    """A schedule number (JSON number or numeric string) as an exact Decimal, else None."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        return to_decimal(value)
    except ValueError:
        return None


def _either(raw: Mapping[str, Any], camel: str, snake: str, default: object = None) -> Any:
    """A schedule key in Gamma's camelCase, else in snake_case, else `default`."""
    return raw[camel] if camel in raw else raw.get(snake, default)


def _schedule_problem(raw: object) -> str | None:
    """Why a `feeSchedule` cannot be read as a fee curve, or None when it can."""
    if not isinstance(raw, Mapping):
        return f"feeSchedule is {type(raw).__name__}, not an object"
    rate = _fee_number(raw.get("rate"))
    if rate is None or not ZERO <= rate <= ONE:
        return f"rate {raw.get('rate')!r} is not a number in [0, 1]"
    exponent = _fee_number(raw.get("exponent"))
    if exponent is None or exponent <= 0:
        return f"exponent {raw.get('exponent')!r} is not a positive number"
    rebate_raw = _either(raw, "rebateRate", "rebate_rate", 0)
    rebate = _fee_number(rebate_raw)
    if rebate is None or rebate < 0:
        return f"rebateRate {rebate_raw!r} is not a non-negative number"
    return None


def read_fee_schedule(
    market_id: str, enabled: bool | None, raw: object, fee_type: str | None
) -> FeeSchedule | None:
    """The taker-fee schedule of a fee-enabled market; None when fees are off or unreadable.

    Why tolerant: a fee schedule Gamma garbles must not cost the arena the market; the market
    is kept, fees are taken as off, and the reason is logged. Only `feesEnabled` true turns
    fees on (absent or unknown is off, as Gamma leaves it out on fee-free markets). The
    exponent is kept exactly (a whole one as before, a fractional one such as 0.5 as it is).
    """
    if enabled is not True:
        return None
    problem = "feeSchedule is absent" if raw is None else _schedule_problem(raw)
    if problem is not None:
        logger.info("Gamma market %s has fees on but no usable schedule (%s)", market_id, problem)
        return None
    assert isinstance(raw, Mapping)  # _schedule_problem checked it
    return FeeSchedule(
        rate=to_decimal(raw["rate"]),
        exponent=_exponent(to_decimal(raw["exponent"])),
        taker_only=known_or(read_flag(_either(raw, "takerOnly", "taker_only")), True),
        rebate_rate=to_decimal(_either(raw, "rebateRate", "rebate_rate", 0)),
        fee_type=fee_type,
    )


def _exponent(value: Decimal) -> Decimal:
    """A whole exponent without its decimal places (2.0 reads as 2), a fractional one as is."""
    return value.to_integral_value() if value == value.to_integral_value() else value


def unusable(info: ValidationInfo, reason: str) -> PydanticCustomError:
    """The error that makes a payload unusable, naming the market (when its id is known)."""
    market_id = info.data.get("id") or "?"
    return PydanticCustomError(UNUSABLE, "{reason}", {"market_id": market_id, "reason": reason})


# --------------------------------------------------------------------------------------------
# Parsing (the public entry points)
# --------------------------------------------------------------------------------------------


def parse_market(raw: Mapping[str, Any]) -> ParsedMarket:
    """One Gamma market dict as a ParsedMarket; MarketParseError if it cannot be understood."""
    if not isinstance(raw, Mapping):
        raise MarketParseError("?", "payload is not an object")
    try:
        wire = GammaMarket.model_validate(_as_dict(raw))
    except ValidationError as exc:
        raise _parse_error(raw, exc) from None
    try:
        return wire.to_parsed()
    except ValidationError as exc:  # defensive: a field the checks above did not foresee
        raise MarketParseError(wire.id, f"invalid field ({exc.error_count()} error(s))") from None


def _parse_error(raw: Mapping[str, Any], exc: ValidationError) -> MarketParseError:
    """The first reason a payload is unusable (errors come in field order: id, question, ...)."""
    first = exc.errors(include_url=False)[0]
    context = first.get("ctx") or {}
    if first["type"] == UNUSABLE:
        return MarketParseError(str(context["market_id"]), str(context["reason"]))
    market_id = read_id(raw.get("id")) or "?"  # defensive: no other error is expected
    return MarketParseError(market_id, f"invalid field ({exc.error_count()} error(s))")


def parse_page(items: list[Any]) -> list[ParsedMarket]:
    """Every understandable market of a page, in order; the others are logged and skipped."""
    parsed: list[ParsedMarket] = []
    for item in items:
        try:
            parsed.append(parse_market(item))
        except MarketParseError as exc:
            logger.warning("skipping Gamma market %s: %s", exc.market_id, exc.reason)
    return parsed
