"""Reading a model's answer into a `Decision` (methodology v1 §8): structure and ranges only.

Why it is separate from execution: the parser knows nothing of cash, markets or positions, so
every agent's text goes through the same pure function and a failure here is always a *format*
failure, which the engine retries with the error fed back (§8.5). Whether a market exists, a
side is an outcome of it, or an amount fits the cash is the executor's business: it rejects
single legs with recorded reasons.

Tolerance rules (see the README's methodology notes), each chosen so that an answer whose
intent is unambiguous is used rather than retried:

- **Thinking blocks** (`<think>…</think>`, `<thinking>…</thinking>`, any case, whitespace
  inside the tag allowed), which open-weight reasoning models put before their answer, are set
  aside first (`split_thinking`): the answer outside them is searched, so a draft inside the
  thinking never wins over the final answer. An unclosed opening tag (a truncated response)
  makes the rest thinking; a closing tag with no opening tag before it (servers that strip the
  opening one) makes everything before it thinking. Only when the answer has no object with an
  action and does not even try to write one (no `"action":` key) is the first one inside the
  thinking used, noted in `notes` (`FROM_THINKING_NOTE`); an answer that tries and fails gets
  its own error and a retry, never the draft. A tag inside the JSON's own text is handled by a
  last pass over the whole answer, also noted. The stored raw response keeps everything.
- **Finding the JSON.** The first JSON object, in reading order, that has an `"action"` key is
  the answer. Code fences, prose before or after, wrapping quotes, a wrapper object such as
  `{"decision": {...}}` and a JSON *string* that itself contains the object (up to two levels
  of encoding) are all accepted; an outer object with an action wins over one nested inside
  it, and an example quoted inside an answer's reasoning is never mistaken for the answer.
  Literal newlines inside strings are accepted (JSON's strict mode is off). Duplicate keys:
  the last one wins. A trailing comma before `}` or `]` is tolerated (removed outside
  strings, only when nothing parses without the repair). Python literals (`True`, `None`,
  single quotes) are not JSON and are rejected with a hint.
- **Invisible characters** (zero-width, bidi marks, BOM, tag characters) are removed from the
  whole answer before parsing; they never carry meaning in an answer and hide tricks. Other
  look-alikes are not mapped: fullwidth braces are not JSON, a Cyrillic `ВЕТ` is not `BET`.
- **Limits.** More than 200,000 characters is malformed without being scanned. The scan tries
  only `{"` positions, decodes through an 8 KB window first and has a work budget, so no
  answer can make parsing slow (tens of milliseconds at worst). NaN, Infinity and integers of
  more than 4,300 digits are rejected (numbers are decoded as exact Decimals, never floats).
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

__all__ = [
    "FROM_THINKING_NOTE",
    "MAX_LEGS",
    "MAX_RAW_CHARS",
    "BetLeg",
    "Decision",
    "MalformedResponse",
    "ParseResult",
    "SellLeg",
    "StatedBetLeg",
    "StatedDecision",
    "decision_model",
    "extract_json",
    "parse_decision",
    "retry_feedback",
    "split_thinking",
]

MAX_RAW_CHARS = 200_000
MAX_LEGS = 50
MAX_REASONING_CHARS = 4_000
MAX_MARKET_ID_CHARS = 64
MAX_SIDE_CHARS = 200
MAX_AMOUNT = Decimal("1e12")
MAX_POSITION_ID = 2**63 - 1
MAX_ERROR_CHARS = 400

_SCAN_ATTEMPTS = 5_000  # decode attempts per answer
_SCAN_WORK = 1_000_000  # characters examined per answer, counted conservatively
_WINDOW = 8_192  # characters decoded before trying the rest of the text
_STRING_DEPTH = 2  # a JSON string holding JSON holding a JSON string …

_INVISIBLE = re.compile(
    "[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff"
    "\ufff9-\ufffb\U000e0000-\U000e007f]"
)
_OBJECT_START = re.compile(r'\{\s*"')  # an object that can hold a key; `{}` and `{prose}` cannot
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
# `<think>`, `</thinking >`, `< /THINK>`: bounded whitespace, so no input makes it backtrack.
_THINK_TAG = re.compile(r"<\s{0,16}(/\s{0,16})?think(?:ing)?\s{0,16}>", re.IGNORECASE)
# The answer outside the thinking tries to give an action (`"action":`, `\"action\":`, `'action':`).
_ACTION_KEY = re.compile(r"""["']action\\*["']\s*:""")

FROM_THINKING_NOTE = "decision read from inside the model's thinking: no answer outside it"
ACROSS_TAG_NOTE = "a thinking tag inside the answer's JSON was read as plain text"


class MalformedResponse(ValueError):
    """The answer cannot be read as a decision; the message is fit to show the model."""


class _NotFound(MalformedResponse):
    """The text holds no JSON object with an action (as opposed to a bad one or a spent budget)."""


class _NonFinite(ValueError):
    """NaN or Infinity met while decoding."""


def _reject_constant(name: str) -> Any:
    raise _NonFinite(name)


_DECODER = json.JSONDecoder(parse_float=Decimal, parse_constant=_reject_constant, strict=False)


# ---------------------------------------------------------------- finding the JSON


def _first_with_action(value: Any) -> dict[str, Any] | None:
    """The first dict (pre-order, document order) that has an "action" key."""
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if "action" in item:
                return item
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))
    return None


class _Budget:
    """Work allowed for one answer, shared by every pass, so no input can make parsing slow."""

    def __init__(self) -> None:
        self.attempts = 0
        self.work = 0

    def spend(self, characters: int) -> None:
        self.attempts += 1
        self.work += max(characters, 1)
        if self.attempts > _SCAN_ATTEMPTS or self.work > _SCAN_WORK:
            raise MalformedResponse("no usable JSON object found (too much non-JSON text)")


def _decode_at(text: str, start: int, budget: _Budget) -> tuple[Any, int] | None:
    """`raw_decode` at `start`, or None where no JSON value starts there.

    Why a window: a failed decode builds a JSONDecodeError whose line/column count costs
    O(position), so decoding the whole text from every candidate would be quadratic. The
    value is decoded from an 8 KB window first; only a failure the window itself may have
    caused (at its end, or an unterminated string) is retried on the rest of the text, and
    that costly retry is charged in full to the budget.
    """
    ends = (start + _WINDOW, len(text)) if start + _WINDOW < len(text) else (len(text),)
    for chunk_end in ends:
        chunk = text[start:chunk_end]
        try:
            value, end = _DECODER.raw_decode(chunk)
        except json.JSONDecodeError as exc:
            budget.spend(exc.pos + 64 if chunk_end - start <= _WINDOW else len(chunk))
            near_end = exc.pos >= len(chunk) - 8 or exc.msg.startswith("Unterminated string")
            if near_end and chunk_end < len(text):
                continue
            return None
        except _NonFinite as exc:
            raise MalformedResponse(
                f"{exc} is not a valid JSON number; write amounts as plain numbers"
            ) from None
        except ValueError:  # Python refuses integers of more than 4,300 digits
            raise MalformedResponse("a number in the answer has too many digits") from None
        except RecursionError:  # nesting deeper than any answer needs
            budget.spend(len(chunk))
            return None
        budget.spend(end)
        return value, start + end
    return None


def _scan_objects(text: str, budget: _Budget) -> dict[str, Any] | None:
    """Decode from each `{"` in order; the first decoded value holding an action wins.

    A successful decode skips past its object (its insides were searched already); a failed
    one moves on by one character, so an object is found even after broken brace-y prose.
    Braces not followed by a key (`{}`, `{maybe}`) are never tried: they cannot hold one.
    """
    position = 0
    while match := _OBJECT_START.search(text, position):
        decoded = _decode_at(text, match.start(), budget)
        if decoded is None:
            position = match.start() + 1
            continue
        value, position = decoded
        found = _first_with_action(value)
        if found is not None:
            return found
    return None


def _scan_strings(text: str, depth: int, budget: _Budget) -> dict[str, Any] | None:
    """A JSON string whose content is an answer: `"{\\"action\\": \\"HOLD\\"}"`."""
    for match in re.finditer(r'"(?:\s|\\+")*\{', text):  # a string opening with `{` or `\"{`
        decoded = _decode_at(text, match.start(), budget)
        if decoded is None:
            continue
        value, _ = decoded
        if isinstance(value, str) and "action" in value:
            try:
                return _find(value, depth + 1, budget)
            except MalformedResponse:
                continue
    return None


def _strip_trailing_commas(text: str) -> str:
    """Remove commas directly before `}` or `]`, outside JSON strings only (linear time)."""
    out: list[str] = []
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "}]":
            index = len(out) - 1
            while index >= 0 and out[index].isspace():
                index -= 1
            if index >= 0 and out[index] == ",":
                del out[index]
        out.append(char)
    return "".join(out)


def _find(text: str, depth: int, budget: _Budget) -> dict[str, Any]:
    if depth <= _STRING_DEPTH:
        found = _scan_objects(text, budget)
        if found is None:
            found = _scan_strings(text, depth, budget)
        if found is None and "," in text:
            repaired = _strip_trailing_commas(text)
            if repaired != text:
                found = _scan_objects(repaired, budget)
        if found is not None:
            return found
    hint = ""
    if re.search(r"'action'\s*:", text):
        hint = " (JSON needs double quotes around keys and strings)"
    raise _NotFound(f'no JSON object with an "action" key was found{hint}')


def _split(text: str) -> tuple[str, str] | None:
    """(thinking, answer) of `text`, or None when it has no thinking tag at all (linear time).

    Blocks are not nested: inside a block an opening tag is text and the first closing tag
    ends it. An unclosed block runs to the end. A closing tag before any opening tag makes
    everything before it thinking (only the first such tag: later stray ones are text).
    """
    thinking: list[str] = []
    answer: list[str] = []
    inside = opened = False
    start = 0
    for tag in _THINK_TAG.finditer(text):
        closing = tag.group(1) is not None
        if inside:
            if closing:
                thinking.append(text[start : tag.start()])
                inside, start = False, tag.end()
        elif not closing:
            answer.append(text[start : tag.start()])
            inside = opened = True
            start = tag.end()
        elif not opened:  # the server stripped the opening tag
            thinking.append(text[start : tag.start()])
            opened, start = True, tag.end()
    if not opened:
        return None
    (thinking if inside else answer).append(text[start:])
    return _join(thinking), _join(answer)


def _join(parts: list[str]) -> str:
    return "\n\n".join(part.strip() for part in parts if part.strip())


def split_thinking(raw: str) -> tuple[str, str]:
    """(thinking, answer): the text of every `<think>`/`<thinking>` block, and the rest.

    Without a thinking tag the result is `("", raw)`, unchanged. See the module docstring for
    unclosed blocks and a lone closing tag.
    """
    parts = _split(raw)
    return ("", raw) if parts is None else parts


def _extract(raw: str) -> tuple[dict[str, Any], str | None]:
    """The answer's JSON object and a note saying where it came from when not the plain answer.

    One budget covers every pass: the answer outside the thinking, then (only if the answer
    does not try to give an action) the thinking, then the whole text (a tag inside a JSON
    string). Any error other than "not found" ends the search, as it always has.
    """
    if not isinstance(raw, str):
        raise MalformedResponse("the response is not text")
    if len(raw) > MAX_RAW_CHARS:
        raise MalformedResponse(
            f"the response is too long ({len(raw):,} characters; at most {MAX_RAW_CHARS:,})"
        )
    text = _INVISIBLE.sub("", raw).strip()
    if not text:
        raise MalformedResponse("the response is empty")
    budget = _Budget()
    parts = _split(text)
    if parts is None:
        return _find(text, 0, budget), None
    thinking, answer = parts
    try:
        return _find(answer, 0, budget), None
    except _NotFound as exc:
        answer_error = exc
    attempted = _ACTION_KEY.search(answer) is not None
    if thinking:
        try:
            found = _find(thinking, 0, budget)
        except _NotFound:
            pass
        else:
            if attempted:  # the final answer's own error, never the draft
                raise answer_error
            return found, FROM_THINKING_NOTE
    try:
        return _find(text, 0, budget), ACROSS_TAG_NOTE
    except _NotFound:
        if attempted:
            raise answer_error from None
        raise


def extract_json(raw: str) -> dict[str, Any]:
    """The answer's JSON object, found tolerantly in free text; MalformedResponse if none."""
    return _extract(raw)[0]


# ---------------------------------------------------------------- value coercion


def _error(kind: str, message: str) -> PydanticCustomError:
    return PydanticCustomError(kind, message)


def _clean_string(value: str) -> str:
    return _INVISIBLE.sub("", value).strip()


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
        action = data.get("action")
        if isinstance(action, str):
            action = _clean_string(action).upper()
            data["action"] = action
        if action not in ("BET", "SELL", "HOLD"):
            got = _show(action) if isinstance(action, str) else _kind(action)
            raise _error("action", f"action: must be one of BET, SELL, HOLD, got {got}")
        for key in ("bets", "sells"):
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
        reasoning = data.get("reasoning")
        if reasoning is None:
            reasoning = ""
        elif not isinstance(reasoning, str):
            reasoning = json.dumps(reasoning, default=str, ensure_ascii=False)
        if len(reasoning) > MAX_REASONING_CHARS:
            notes.append(f"reasoning cut from {len(reasoning):,} to {MAX_REASONING_CHARS:,} chars")
            reasoning = reasoning[:MAX_REASONING_CHARS]
        data["reasoning"] = reasoning
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
        data, note = _extract(raw)
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
