"""Reading a model's answer into a `Decision` (methodology v1 §8): structure and ranges only.

Why it is separate from execution: the parser knows nothing of cash, markets or positions, so
every agent's text goes through the same pure function and a failure here is always a *format*
failure, which the engine retries with the error fed back (§8.5). Whether a market exists, a
side is an outcome of it, or an amount fits the cash is the executor's business: it rejects
single legs with recorded reasons.

Finding the answer's JSON object in free text (thinking blocks, code fences, wrappers,
invisible characters, size limits) is `arena.agents.json_extraction`; this module validates
what it found. Tolerance rules (see the README's methodology notes), each chosen so that an
answer whose intent is unambiguous is used rather than retried:

- **Actions** are case-insensitive (`bet` → `BET`). Legs that do not belong to the action (bets
  on a SELL, sells on a BET, any legs on a HOLD) are dropped unvalidated and noted in `notes`.
  `bets`/`sells` given as a single object are read as a list of one. At most 50 legs.
- **Numbers** are JSON numbers or plain numeric strings (`500`, `"500"`, `"500.5"`, `"5e2"`).
  Units and separators (`"$500"`, `"50%"`, `"1,000"`) are rejected with a hint. Unicode digits
  (e.g. fullwidth `５００`) in strings and ids are read as ASCII (NFKC). `amount` is finite,
  > 0 and at most 1e12 (larger is nonsense, not a bet); `percentage` is in (0, 100] as written
  (0.5 means half a percent); `position_id` is a whole number ≥ 1 (`12`, `"12"`, `12.0`).
- **Ids and sides.** `market_id` is a non-empty string of at most 64 characters (a JSON integer
  is accepted and turned into its digits). `side` is a non-empty string of at most 200
  characters, kept as written apart from surrounding whitespace; the executor matches it.
- **Duplicate legs** are kept; each executes (or is rejected) on its own.
- `reasoning` is free text cut to 4,000 characters; a non-string is stored as its JSON text.
  Unknown keys anywhere are ignored.
- **Stated probability** (protocol extension `stated_probability`, methodology §18): only when
  the cohort runs it (`parse_decision(raw, stated_probability=True)`) is a BET leg's
  `probability` read (`StatedBetLeg`): the model's probability that the side it buys wins, a
  JSON number or plain numeric string in [0, 1] (`0.62`, `"0.62"`, `0`, `1`). A percentage
  (`"62%"`, or `62` meaning 62%), anything outside [0, 1], NaN, true/false, a list or an
  object is malformed, with an error that says how to write it, so the engine's retry feeds it
  back. A leg without `probability` (absent or `null`) is valid: its probability is recorded
  as missing (`None`), never invented, and the leg trades as in v1. Without the extension the
  key is ignored like any unknown key, so v1 reads every answer exactly as before.
"""

import json
import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError

from arena.agents.json_extraction import (
    FROM_THINKING_NOTE,
    INVISIBLE,
    MalformedResponse,
    extract_answer,
)

__all__ = [
    "MAX_LEGS",
    "BetLeg",
    "Decision",
    "ParseResult",
    "SellLeg",
    "StatedBetLeg",
    "StatedDecision",
    "decision_model",
    "parse_decision",
    "retry_feedback",
]

MAX_LEGS = 50
MAX_REASONING_CHARS = 4_000
MAX_MARKET_ID_CHARS = 64
MAX_SIDE_CHARS = 200
MAX_AMOUNT = Decimal("1e12")
MAX_POSITION_ID = 2**63 - 1
MAX_ERROR_CHARS = 400

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)

# ---------------------------------------------------------------- value coercion


def _error(kind: str, message: str) -> PydanticCustomError:
    return PydanticCustomError(kind, message)


def _clean_string(value: str) -> str:
    return INVISIBLE.sub("", value).strip()


def _decimal(value: Any, what: str) -> Decimal:
    """A finite Decimal from a JSON number or a plain numeric string; units are refused."""
    if isinstance(value, bool) or value is None:
        raise _error("number", f"must be {what}")
    if isinstance(value, int | Decimal):
        result = Decimal(value)
    elif isinstance(value, float):
        result = Decimal(repr(value))
    elif isinstance(value, str):
        text = unicodedata.normalize("NFKC", _clean_string(value))
        if not _NUMBER.fullmatch(text):
            hint = ""
            if any(mark in text for mark in "$%,"):
                hint = " (a plain number, without $, % or thousands separators)"
            raise _error("number", f"must be {what}{hint}, got {_show(value)}")
        try:
            result = Decimal(text)
        except InvalidOperation:
            raise _error("number", f"must be {what}, got {_show(value)}") from None
    else:
        raise _error("number", f"must be {what}, got {_kind(value)}")
    if not result.is_finite():
        raise _error("number", f"must be {what} (finite)")
    return result


def _show(value: Any) -> str:
    """A short quoted rendering of a bad value for an error message."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "…"


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "true/false"}
    if value is None:
        return "null"
    return names.get(type(value), type(value).__name__)


# ---------------------------------------------------------------- the models


class BetLeg(BaseModel):
    """One purchase: `amount` dollars of `side` in `market_id`."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    market_id: str
    side: str
    amount: Decimal

    @field_validator("market_id", mode="before")
    @classmethod
    def _market_id(cls, value: Any) -> str:
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            raise _error("market_id", f"must be a string (the id shown), got {_kind(value)}")
        text = unicodedata.normalize("NFKC", _clean_string(value))
        if not text:
            raise _error("market_id", "must not be empty")
        if len(text) > MAX_MARKET_ID_CHARS:
            raise _error("market_id", f"must be at most {MAX_MARKET_ID_CHARS} characters")
        return text

    @field_validator("side", mode="before")
    @classmethod
    def _side(cls, value: Any) -> str:
        if not isinstance(value, str):
            raise _error(
                "side", f"must be a string (YES, NO or an outcome name), got {_kind(value)}"
            )
        text = _clean_string(value)
        if not text:
            raise _error("side", "must not be empty")
        if len(text) > MAX_SIDE_CHARS:
            raise _error("side", f"must be at most {MAX_SIDE_CHARS} characters")
        return text

    @field_validator("amount", mode="before")
    @classmethod
    def _amount(cls, value: Any) -> Decimal:
        amount = _decimal(value, "a number of dollars > 0")
        if amount <= 0:
            raise _error("amount", f"must be a number of dollars > 0, got {amount}")
        if amount > MAX_AMOUNT:
            raise _error("amount", f"must be at most {MAX_AMOUNT:,.0f} dollars")
        return amount


class StatedBetLeg(BetLeg):
    """A BET leg of a `stated_probability` cohort: `probability` that `side` wins, or None
    when the model gave none (recorded as missing, never invented)."""

    probability: Decimal | None = None

    @field_validator("probability", mode="before")
    @classmethod
    def _probability(cls, value: Any) -> Decimal | None:
        if value is None:
            return None
        what = "your probability that this side wins, a plain number from 0 to 1 such as 0.62"
        if isinstance(value, str) and "%" in value:
            raise _error("probability", f"must be {what}, not a percentage, got {_show(value)}")
        number = _decimal(value, what)
        if not 0 <= number <= 1:
            hint = f" ({number}% is written {number / 100})" if 2 <= number <= 100 else ""
            raise _error("probability", f"must be {what}, got {number}{hint}")
        return number


class SellLeg(BaseModel):
    """One sale: `percentage` percent of the shares of position `position_id`."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    position_id: int
    percentage: Decimal

    @field_validator("position_id", mode="before")
    @classmethod
    def _position_id(cls, value: Any) -> int:
        what = "a whole number (the position_id shown in your portfolio)"
        try:
            number = _decimal(value, what)
        except PydanticCustomError:
            raise _error("position_id", f"must be {what}, got {_show(value)}") from None
        if number != number.to_integral_value() or not 1 <= number <= MAX_POSITION_ID:
            raise _error("position_id", f"must be {what}, got {_show(value)}")
        return int(number)

    @field_validator("percentage", mode="before")
    @classmethod
    def _percentage(cls, value: Any) -> Decimal:
        what = "a number greater than 0 and at most 100"
        number = _decimal(value, what)
        if not 0 < number <= 100:
            raise _error("percentage", f"must be {what}, got {number}")
        return number


Action = Literal["BET", "SELL", "HOLD"]
_LEGS = {"BET": "bets", "SELL": "sells"}


class Decision(BaseModel):
    """A validated decision; only the legs of its own action are kept."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    action: Action
    bets: list[BetLeg] = Field(default_factory=list)
    sells: list[SellLeg] = Field(default_factory=list)
    reasoning: str = ""
    notes: list[str] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, data: Any) -> Any:
        """Upper-case the action, drop other actions' legs, list-ify single legs, cut text."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        notes = list(data.get("notes") or []) if isinstance(data.get("notes"), list) else []
        action = _normalise_action(data)
        for key in ("bets", "sells"):
            _normalise_legs(data, key, action, notes)
        data["reasoning"] = _normalise_reasoning(data.get("reasoning"), notes)
        data["notes"] = notes
        return data

    @model_validator(mode="after")
    def _legs_present(self) -> "Decision":
        key = _LEGS.get(self.action)
        if key is None:
            return self
        legs = self.bets if key == "bets" else self.sells
        if not legs:
            raise _error("legs", f'{key}: {self.action} needs at least one leg in "{key}"')
        if len(legs) > MAX_LEGS:
            raise _error("legs", f"{key}: at most {MAX_LEGS} legs per decision, got {len(legs)}")
        return self


def _normalise_action(data: dict[str, Any]) -> str:
    """The action upper-cased (written back into `data`); an error unless BET, SELL or HOLD."""
    action = data.get("action")
    if isinstance(action, str):
        action = _clean_string(action).upper()
        data["action"] = action
    if action not in ("BET", "SELL", "HOLD"):
        got = _show(action) if isinstance(action, str) else _kind(action)
        raise _error("action", f"action: must be one of BET, SELL, HOLD, got {got}")
    return str(action)


def _normalise_legs(data: dict[str, Any], key: str, action: str, notes: list[str]) -> None:
    """`data[key]` as a list when the action uses it (one object: a list of one), dropped
    (noted) when it does not."""
    legs = data.get(key)
    if _LEGS.get(action) == key:
        if legs is None:
            legs = []
        elif isinstance(legs, dict):
            legs = [legs]
            notes.append(f"{key} was a single object; read as a list of one")
        data[key] = legs
    else:
        if legs:
            count = len(legs) if isinstance(legs, list) else 1
            notes.append(f"ignored {count} {key} leg(s): the action is {action}")
        data.pop(key, None)


def _normalise_reasoning(reasoning: Any, notes: list[str]) -> str:
    """The reasoning as text (a non-string as its JSON), cut to MAX_REASONING_CHARS (noted)."""
    if reasoning is None:
        reasoning = ""
    elif not isinstance(reasoning, str):
        reasoning = json.dumps(reasoning, default=str, ensure_ascii=False)
    if len(reasoning) > MAX_REASONING_CHARS:
        notes.append(f"reasoning cut from {len(reasoning):,} to {MAX_REASONING_CHARS:,} chars")
        reasoning = reasoning[:MAX_REASONING_CHARS]
    return reasoning


class StatedDecision(Decision):
    """A decision of a `stated_probability` cohort: its BET legs may state a probability."""

    bets: list[StatedBetLeg] = Field(default_factory=list)  # type: ignore[assignment]


def decision_model(stated_probability: bool = False) -> type[Decision]:
    """The decision model a cohort's answers are read with: v1's, or the extension's."""
    return StatedDecision if stated_probability else Decision


# The decision executed when no answer was valid after the retries (status `fallback_hold`):
# the engine executes it, and the replay verifier replays it.
FALLBACK = Decision(action="HOLD", reasoning="fallback: no valid answer after retries")


# ---------------------------------------------------------------- the entry points


@dataclass(frozen=True)
class ParseResult:
    """Either `ok` (a Decision) or `error` (a short message to feed back), never both."""

    ok: Decision | None = None
    error: str | None = None

    @property
    def is_ok(self) -> bool:
        return self.ok is not None

    @property
    def from_thinking(self) -> bool:
        """The decision was read from inside a thinking block (noted in `ok.notes`)."""
        return self.ok is not None and FROM_THINKING_NOTE in self.ok.notes


def _location(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


_PLAIN_MESSAGES = {
    "missing": "is required",
    "list_type": "must be a list",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "dict_type": "must be an object",
    "string_type": "must be a string",
}


def _describe(exc: ValidationError) -> str:
    """The first three problems, as `bets[1].amount: must be a number of dollars > 0`."""
    parts = []
    for error in exc.errors():
        loc = _location(tuple(error["loc"]))
        message = _PLAIN_MESSAGES.get(error["type"], error["msg"])
        if error["type"] in ("action", "legs"):
            parts.append(message)  # already names its field
        else:
            parts.append(f"{loc}: {message}" if loc else message)
    text = "; ".join(parts[:3])
    if len(parts) > 3:
        text += f" (and {len(parts) - 3} more)"
    return text


def parse_decision(raw: str, *, stated_probability: bool = False) -> ParseResult:
    """Find, decode and validate a decision; every failure becomes a short error, never raises.

    `stated_probability`: the cohort runs that protocol extension, so BET legs' `probability`
    is read and validated (`StatedBetLeg`); otherwise it is ignored, as in v1.
    """
    try:
        data, note = extract_answer(raw)
        data = dict(data)
        data.pop("notes", None)  # notes are the parser's, never the model's
        if note is not None:
            data["notes"] = [note]
        return ParseResult(ok=decision_model(stated_probability).model_validate(data))
    except MalformedResponse as exc:
        return ParseResult(error=_cap(str(exc)))
    except ValidationError as exc:
        return ParseResult(error=_cap(_describe(exc)))
    except Exception as exc:  # a parser bug must not end a cohort run: report, retry, HOLD
        return ParseResult(error=_cap(f"the response could not be read ({type(exc).__name__})"))


def _cap(message: str) -> str:
    return message if len(message) <= MAX_ERROR_CHARS else message[: MAX_ERROR_CHARS - 1] + "…"


def retry_feedback(error: str) -> str:
    """The user message that asks for a corrected answer after a malformed one (§8.5)."""
    reason = error.strip().rstrip(".") or "it was malformed"
    return (
        f"Your previous answer could not be used: {reason}. "
        "Answer again with ONE JSON object in one of the three formats."
    )
