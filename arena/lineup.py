"""The lineup: which model families compete, read from a TOML file (contract §3)."""

import tomllib
from datetime import date, datetime
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from arena.core.errors import ConfigError

FamilyKind = Literal["llm", "baseline"]
BASELINE_STRATEGIES = ("cash", "favorite", "random", "oracle")


class FamilySpec(BaseModel):
    """One competing family as configured; `id` is the stable join key."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    display_name: str = Field(min_length=1, max_length=128)
    provider: str = Field(min_length=1, max_length=128)
    model: str = Field(min_length=1, max_length=256)
    kind: FamilyKind = "llm"
    base_url: str | None = None
    strategy: str | None = None
    enabled: bool = True
    # The last day the model's training data may know (TOML date): the late-entry guard
    # refuses a past cohort whose week starts on or before it (methodology §20.2).
    knowledge_cutoff: date | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    reasoning_budget: int | None = Field(default=None, ge=0)
    # List prices in USD per million prompt (input) and completion (output) tokens: data, used
    # to cost an attempt whose server reports no `usage.cost` (local servers, the simulated
    # model server). A reported cost (OpenRouter) always wins.
    # Finite only: TOML spells inf and nan, and an infinite price would cost every attempt inf.
    price_in: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    price_out: float | None = Field(default=None, ge=0, allow_inf_nan=False)

    def cost_usd(self, tokens_in: int, tokens_out: int) -> float:
        """What `tokens_in` prompt and `tokens_out` completion tokens cost at the list prices."""
        return ((self.price_in or 0.0) * tokens_in + (self.price_out or 0.0) * tokens_out) / 1e6

    @field_validator("base_url")
    @classmethod
    def _http(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("base_url must start with http:// or https://")
        return value.rstrip("/") if value else value

    @field_validator("knowledge_cutoff", mode="before")
    @classmethod
    def _toml_date(cls, value: object) -> date | None:
        """Only a TOML date (`2025-06-30`, unquoted). Anything else pydantic would coerce:
        an integer as Unix seconds (`0` is 1970-01-01, which admits every cohort), a string,
        a float. A TOML date-time is refused too: the guard compares days, and an instant
        (with an offset, or local to no zone) names a day only once someone picks a zone."""
        if value is None or (isinstance(value, date) and not isinstance(value, datetime)):
            return value
        kind = "a date-time" if isinstance(value, datetime) else f"{type(value).__name__} {value!r}"
        raise ValueError(f"must be a TOML date such as 2025-06-30 (unquoted), not {kind}")

    def model_post_init(self, _context: object) -> None:
        if self.kind == "baseline" and self.strategy not in BASELINE_STRATEGIES:
            raise ValueError(
                f"baseline family {self.id!r} needs a strategy: "
                f"one of {', '.join(BASELINE_STRATEGIES)}"
            )


class Lineup(BaseModel):
    """An ordered, id-unique list of families."""

    families: list[FamilySpec]

    def enabled(self) -> list[FamilySpec]:
        return [family for family in self.families if family.enabled]

    def get(self, family_id: str) -> FamilySpec:
        for family in self.families:
            if family.id == family_id:
                return family
        raise KeyError(family_id)


def parse_lineup(text: str, source: str = "lineup") -> Lineup:
    """Parse lineup TOML text; any problem becomes one ConfigError naming the source."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not valid TOML ({exc})", "fix the lineup file") from None
    entries = raw.get("family")
    if not isinstance(entries, list) or not entries:
        raise ConfigError(f"{source}: no [[family]] entries", "add at least one [[family]] table")
    families: list[FamilySpec] = []
    for index, entry in enumerate(entries, start=1):
        try:
            families.append(FamilySpec.model_validate(entry))
        except (ValidationError, ValueError) as exc:
            detail = _first_error(exc)
            raise ConfigError(
                f"{source}: family #{index}{_named(entry)}: {detail}",
                "fix the lineup file (README, Lineup)",
            ) from None
    seen: set[str] = set()
    for family in families:
        if family.id in seen:
            raise ConfigError(
                f"{source}: family id {family.id!r} appears twice", "ids must be unique"
            )
        seen.add(family.id)
    return Lineup(families=families)


def load_lineup(path: Path | None = None) -> Lineup:
    """The lineup at `path`, or the bundled default (seven v1 families plus baselines)."""
    if path is None:
        text = resources.files("arena.data").joinpath("lineup.toml").read_text(encoding="utf-8")
        return parse_lineup(text, "bundled lineup")
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(
            f"cannot read lineup file {path}: {exc.strerror}", "set ARENA_LINEUP to a readable TOML"
        ) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"lineup file {path} is not UTF-8 text (byte {exc.start} cannot be read)",
            "set ARENA_LINEUP to a TOML lineup file",
        ) from None
    return parse_lineup(text, str(path))


def _named(entry: object) -> str:
    """` (id 'x')` for an entry that names its id, so the error points at the family."""
    family_id = entry.get("id") if isinstance(entry, dict) else None
    return f" (id {family_id!r})" if isinstance(family_id, str) and family_id else ""


def _first_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        message = str(error["msg"]).removeprefix("Value error, ")
        return f"{where}: {message}" if where else message
    return str(exc)
