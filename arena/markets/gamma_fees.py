"""A Gamma market's `feeSchedule`, read within bounds (extension `book_execution`).

Why apart from `arena.markets.gamma_wire`: the schedule has rules of its own, and the wire
module is near the project's line limit. Gamma sends, on a fee-enabled market, e.g.
`{"exponent": 1, "rate": 0.04, "takerOnly": true, "rebateRate": 0.25}`; the keys are read in
Gamma's camelCase or in the snake_case some feeds and Polymarket's SDKs use.

Bounds, each a fee curve's sane range, checked before anything is computed from a number:
`rate` in [0, 1] (a fee of at most the whole notional), `exponent` in (0, `MAX_EXPONENT`]
(Polymarket's documented curves use 1 and 2; an exponent of `1E+5000` is a 5,001-digit
integer no JSON encoder writes), `rebateRate` in [0, 1] (a share of the fees), each number
at most 64 characters of text (`arena.markets.wire_rules`), `feeType` a label of at most 128.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from arena.core.fees import FeeSchedule
from arena.core.money import ONE, ZERO
from arena.markets.wire_rules import bounded_decimal, read_flag

logger = logging.getLogger("arena.markets.gamma")

MAX_EXPONENT = Decimal(10)
NUMBER_CHARS = 64  # as Gamma's other numbers (`gamma_wire.NUMBER_CHARS`)
FEE_TYPE_CHARS = 128  # as the other labels (`gamma_wire.LABEL_CHARS`)


def _fee_number(value: object) -> Decimal | None:
    """A schedule number (JSON number or numeric string) as an exact Decimal, else None."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        return bounded_decimal(value, NUMBER_CHARS)
    except ValueError:
        return None


def _either(raw: Mapping[str, Any], camel: str, snake: str, default: object = None) -> Any:
    """A schedule key in Gamma's camelCase, else in snake_case, else `default`."""
    return raw[camel] if camel in raw else raw.get(snake, default)


def _shown(value: object) -> str:
    """A value for a log line: its repr, cut to 40 characters."""
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def _schedule_problem(raw: object) -> str | None:
    """Why a `feeSchedule` cannot be read as a fee curve (naming the field), or None."""
    if not isinstance(raw, Mapping):
        return f"feeSchedule is {type(raw).__name__}, not an object"
    rate = _fee_number(raw.get("rate"))
    if rate is None or not ZERO <= rate <= ONE:
        return f"rate {_shown(raw.get('rate'))} is not a number in [0, 1]"
    exponent = _fee_number(raw.get("exponent"))
    if exponent is None or not ZERO < exponent <= MAX_EXPONENT:
        return f"exponent {_shown(raw.get('exponent'))} is not a number in (0, {MAX_EXPONENT}]"
    rebate_raw = _either(raw, "rebateRate", "rebate_rate", 0)
    rebate = _fee_number(rebate_raw)
    if rebate is None or not ZERO <= rebate <= ONE:
        return f"rebateRate {_shown(rebate_raw)} is not a number in [0, 1]"
    return None


def fee_label(value: str | None) -> str | None:
    """Gamma's `feeType` label, None when longer than `FEE_TYPE_CHARS` (a cut label is
    another label)."""
    return value if value is None or len(value) <= FEE_TYPE_CHARS else None


def read_fee_schedule(
    market_id: str, enabled: bool | None, raw: object, fee_type: str | None
) -> FeeSchedule | None:
    """The taker-fee schedule of a fee-enabled market; None when fees are off or unreadable.

    Why tolerant: a fee schedule Gamma garbles must not cost the arena the market; the market
    is kept, fees are taken as off, and the reason is logged with the market and the field.
    Only `feesEnabled` true turns fees on (absent or unknown is off, as Gamma leaves it out on
    fee-free markets). The exponent is kept exactly (a whole one as before, a fractional one
    such as 0.5 as it is).
    """
    if enabled is not True:
        return None
    problem = "feeSchedule is absent" if raw is None else _schedule_problem(raw)
    if problem is not None:
        logger.info("Gamma market %s has fees on but no usable schedule (%s)", market_id, problem)
        return None
    assert isinstance(raw, Mapping)  # _schedule_problem checked it
    taker_only = read_flag(_either(raw, "takerOnly", "taker_only"))
    return FeeSchedule(
        rate=bounded_decimal(raw["rate"], NUMBER_CHARS),
        exponent=_exponent(bounded_decimal(raw["exponent"], NUMBER_CHARS)),
        taker_only=True if taker_only is None else taker_only,
        rebate_rate=bounded_decimal(_either(raw, "rebateRate", "rebate_rate", 0), NUMBER_CHARS),
        fee_type=fee_label(fee_type),
    )


def _exponent(value: Decimal) -> Decimal:
    """A whole exponent without its decimal places (2.0 reads as 2), a fractional one as is."""
    return value.to_integral_value() if value == value.to_integral_value() else value
