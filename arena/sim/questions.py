"""The question templates of the simulated world, read from `questions.toml`.

Why data: the wording of the simulated questions is content; the file holds it (lists, texts,
the order of each template's draws) and this module only interprets it. A few generators stay
code (people, teams, price and temperature brackets) because they compute, not just pick.

Determinism: a template's `build` draws from the listing's Random in the file's order, exactly
as the world has always drawn them; the same seed gives the same world, text for text.
"""

import random
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from importlib import resources
from itertools import pairwise
from typing import Any, Literal, cast

__all__ = ["ListingKind", "Template", "Text", "date_text", "templates"]

ListingKind = Literal["binary", "named", "group"]
KINDS: tuple[ListingKind, ...] = ("binary", "named", "group")

Lists = Mapping[str, Sequence[Any]]
Env = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Text:
    """What a template writes: the event, one question per market, the alternatives."""

    event_title: str
    questions: tuple[str, ...]  # one per market (one for binary and named listings)
    alternatives: tuple[str, ...]  # binary: Yes, No; named: outcomes; group: item titles
    description: str


def date_text(at: datetime) -> str:
    """'March 3, 2026' — portable (no %-d)."""
    return f"{at:%B} {at.day}, {at.year}"


# ------------------------------------------------------------------------------ generators


def _person(rng: random.Random, lists: Lists) -> str:
    return f"{rng.choice(lists['first'])} {rng.choice(lists['last'])}"


def _people(rng: random.Random, lists: Lists, n: int) -> list[str]:
    """n distinct fictional people (no real person's odds are simulated)."""
    names: list[str] = []
    while len(names) < n:
        name = _person(rng, lists)
        if name not in names:
            names.append(name)
    return names


def _teams(rng: random.Random, lists: Lists, n: int) -> list[str]:
    """n distinct fictional teams from distinct cities."""
    cities = rng.sample(lists["cities"], n)
    return [f"{city} {rng.choice(lists['mascots'])}" for city in cities]


def _asset_level(rng: random.Random, lists: Lists) -> tuple[str, int, int]:
    """An asset, a round price level near its centre, and its bracket step."""
    asset = rng.choice(lists["assets"])
    step: int = asset["step"]
    level = round(asset["centre"] * (1.0 + rng.gauss(0.0, 0.08)) / step) * step
    return asset["name"], max(step, level), step


def _dollars(value: float) -> str:
    return f"${value:,.0f}"


def _bracket_phrase(label: str) -> str:
    """'<$X' reads 'less than $X' in a question; '$X-$Y' reads 'between $X and $Y'."""
    if label.startswith("<"):
        return f"less than {label[1:]}"
    if label.startswith(">"):
        return f"greater than {label[1:]}"
    low, high = label.split("-")
    return f"between {low} and {high}"


def _price_brackets(rng: random.Random, lists: Lists, n: int) -> tuple[str, list[str], list[str]]:
    """n exhaustive price brackets around a level: '<$X', '$X-$Y', …, '>$Z' (and phrases)."""
    asset, level, step = _asset_level(rng, lists)
    low = level - step * (n - 2) // 2
    edges = [low + step * i for i in range(n - 1)]
    labels = [f"<{_dollars(edges[0])}"]
    labels += [f"{_dollars(a)}-{_dollars(b)}" for a, b in pairwise(edges)]
    labels.append(f">{_dollars(edges[-1])}")
    return asset, labels, [_bracket_phrase(label) for label in labels]


def _degree_brackets(base: int, n: int) -> list[str]:
    """n exhaustive 2-degree brackets of a day's high from `base` (no draw)."""
    edges = [base + 2 * i for i in range(n - 1)]
    labels = [f"{edges[0] - 1}°F or below"]
    labels += [f"{a}-{a + 1}°F" for a in edges[:-1]]
    labels.append(f"{edges[-1]}°F or higher")
    return labels


def _generate(rng: random.Random, lists: Lists, spec: Mapping[str, Any], env: Env) -> Any:
    """One `draw = ...` step of a template."""
    name = spec["draw"]
    size = env["n"] if spec.get("size") == "n" else spec.get("size", 0)
    if name == "person":
        return _person(rng, lists)
    if name == "people":
        return _people(rng, lists, size)
    if name == "teams":
        return _teams(rng, lists, size)
    if name == "asset_level":
        return _asset_level(rng, lists)
    if name == "price_brackets":
        return _price_brackets(rng, lists, size)
    if name == "degree_brackets":
        return _degree_brackets(env[spec["from"]], size)
    raise ValueError(f"questions.toml: unknown generator {name!r}")


def _step(rng: random.Random, lists: Lists, spec: Mapping[str, Any], env: Env) -> None:
    """Run one draw and bind its `let` name(s) in `env`."""
    if "choice" in spec:
        value: Any = rng.choice(_named(spec["choice"], lists, env))
    elif "sample" in spec:
        size = env["n"] if spec["size"] == "n" else spec["size"]
        value = rng.sample(_named(spec["sample"], lists, env), size)
    else:
        value = _generate(rng, lists, spec, env)
    names = spec["let"]
    if isinstance(names, str):
        env[names] = value
    else:
        env.update(zip(names, value, strict=True))


def _named(ref: str | Sequence[Any], lists: Lists, env: Env) -> Sequence[Any]:
    """A sequence given inline, or by name: a variable drawn before, else a [lists] entry."""
    if not isinstance(ref, str):
        return ref
    return cast(Sequence[Any], env[ref] if ref in env else lists[ref])


# ------------------------------------------------------------------------------ templates


@dataclass(frozen=True, slots=True)
class Template:
    """A kind of question: its category, shape, typical lifetime and wording (as data)."""

    kind: ListingKind
    category: str
    sizes: tuple[int, int]  # number of alternatives, inclusive range
    days: tuple[float, float]  # lifetime range in days
    spec: Mapping[str, Any]  # the template's table in questions.toml
    lists: Lists
    description: str  # the kind's description, around {condition} or {rule}

    def build(self, rng: random.Random, end: datetime, size: int) -> Text:
        """Draw the template's variables from `rng` and write its texts."""
        env: Env = {"when": date_text(end), "month": f"{end:%B}", "year": end.year, "n": size}
        for step in self.spec["draws"]:
            _step(rng, self.lists, step, env)
        return _WRITERS[self.kind](self, env)


def _write_binary(template: Template, env: Env) -> Text:
    question = template.spec["question"].format(**env)
    condition = template.spec["condition"].format(**env)
    return Text(
        event_title=question,
        questions=(question,),
        alternatives=("Yes", "No"),
        description=template.description.format(condition=condition),
    )


def _write_named(template: Template, env: Env) -> Text:
    question = template.spec["question"].format(**env)
    outcomes = template.spec["outcomes"]
    if isinstance(outcomes, str):
        alternatives = tuple(_named(outcomes, template.lists, env))
    else:
        alternatives = tuple(text.format(**env) for text in outcomes)
    return Text(
        event_title=question,
        questions=(question,),
        alternatives=alternatives,
        description=template.description.format(rule=template.spec["rule"].format(**env)),
    )


def _write_group(template: Template, env: Env) -> Text:
    items = tuple(_named(template.spec["items"], template.lists, env))
    each = {
        name: _named(ref, template.lists, env)
        for name, ref in template.spec.get("each", {}).items()
    }
    questions = tuple(
        template.spec["question"].format(
            **env, item=item, **{name: values[i] for name, values in each.items()}
        )
        for i, item in enumerate(items)
    )
    return Text(
        event_title=template.spec["title"].format(**env),
        questions=questions,
        alternatives=items,
        description=template.description.format(rule=template.spec["rule"].format(**env)),
    )


_WRITERS: dict[ListingKind, Callable[[Template, Env], Text]] = {
    "binary": _write_binary,
    "named": _write_named,
    "group": _write_group,
}


def parse_templates(data: Mapping[str, Any]) -> dict[ListingKind, tuple[Template, ...]]:
    """The templates of a parsed questions.toml, by kind, in the file's order."""
    lists: Lists = data["lists"]
    return {
        kind: tuple(
            Template(
                kind=kind,
                category=spec["category"],
                sizes=(spec["sizes"][0], spec["sizes"][1]),
                days=(spec["days"][0], spec["days"][1]),
                spec=spec,
                lists=lists,
                description=data["text"][kind],
            )
            for spec in data[kind]
        )
        for kind in KINDS
    }


@cache
def templates() -> dict[ListingKind, tuple[Template, ...]]:
    """The bundled templates (read once per process)."""
    text = resources.files("arena.sim").joinpath("questions.toml").read_text(encoding="utf-8")
    return parse_templates(tomllib.loads(text))
