"""The simulated models' personas: how each forecasts, sizes, writes and fails, as data.

Why apart: the table is what the demo's families *are*; the behaviour that reads it is
`arena.sim.models`.

Persona table (model ids of the bundled lineup; an unknown model gets `generalist`; a model of
a known provider prefix, e.g. another `openai/…`, gets that provider's persona):

| persona    | model                       |insig|noise|bias|overc|edge|size|legs|look|
|------------|-----------------------------|-----|-----|----|-----|----|----|----|----|
| analyst    | openai/gpt-5.2              |0.60 |0.30 |0.0 |1.0  |0.05|1.2 |5   |150 |
| contrarian | google/gemini-3-pro-preview |0.50 |0.45 |+.25|1.05 |0.06|0.6 |5   |120 |
| gambler    | x-ai/grok-4.1-fast          |0.40 |0.90 |-0.1|1.15 |0.05|0.8 |4   |60  |
| careful    | anthropic/claude-opus-4.5   |0.70 |0.20 |0.0 |0.9  |0.07|1.0 |4   |200 |
| favourite  | deepseek/deepseek-v3.2      |0.50 |0.60 |-0.4|1.05 |0.05|1.0 |4   |100 |
| deliberate | moonshotai/kimi-k2-thinking |0.60 |0.40 |+0.1|1.0  |0.05|1.2 |4   |120 |
| noisy      | qwen/qwen3-235b-a22b-2507   |0.30 |1.20 |+0.1|1.0  |0.10|0.3 |3   |80  |
| generalist | (any other model id)        |0.50 |0.80 |0.0 |1.0  |0.05|1.0 |3   |100 |

| persona    | hold | sell | verbosity | messy | malformed | stubborn | fault | ms    | $/M in/out |
|------------|------|------|-----------|-------|-----------|----------|-------|-------|------------|
| analyst    | 0.05 | 0.30 | normal    | 0.05  | 0.03      | 0.2      | 0.02  | 5-30  | 1.75/14.00 |
| contrarian | 0.05 | 0.20 | verbose   | 0.15  | 0.05      | 0.3      | 0.03  | 10-40 | 2.00/12.00 |
| gambler    | 0.02 | 0.10 | terse     | 0.05  | 0.10      | 0.4      | 0.04  | 0-15  | 0.20/0.50  |
| careful    | 0.15 | 0.40 | verbose   | 0.02  | 0.02      | 0.2      | 0.01  | 20-50 | 5.00/25.00 |
| favourite  | 0.05 | 0.20 | normal    | 0.10  | 0.08      | 0.4      | 0.05  | 10-40 | 0.28/0.42  |
| deliberate | 0.10 | 0.25 | verbose   | 0.20  | 0.15      | 0.6      | 0.03  | 20-50 | 0.60/2.50  |
| noisy      | 0.05 | 0.15 | terse     | 0.10  | 0.12      | 0.5      | 0.03  | 0-30  | 0.08/0.55  |
| generalist | 0.20 | 0.20 | normal    | 0.05  | 0.05      | 0.3      | 0.02  | 5-25  | 1.00/2.00  |

| persona | analyst | contrarian | gambler | careful | favourite | deliberate | noisy | generalist |
|---------|---------|------------|---------|---------|-----------|------------|-------|------------|
| over    | 0.02    | 0.04       | 0.06    | 0.01    | 0.04      | 0.04       | 0.06  | 0.03       |

`over` (overspend) only matters under methodology v2, whose prompt caps the **total** of a
decision's bets at 25% of the cash before it: a persona then scales its legs down to fit that
total (`arena.sim.replies.fit_total`), except, with chance `over` per betting answer, it adds
its plan up wrong and answers bets totalling 10-50% more than the cap
(`arena.sim.replies.overshoot`). The engine refuses such a plan as a whole and asks again,
so the malformed-answer retry path stays exercised at about that rate; the next answer is a
fresh draw. A v1 prompt never draws it (its answers are what they always were).
"""

from dataclasses import dataclass
from typing import Literal

__all__ = ["DEFAULT_PERSONA", "PERSONAS", "Persona", "Verbosity", "persona_for"]

Verbosity = Literal["terse", "normal", "verbose"]


@dataclass(frozen=True)
class Persona:
    """How one simulated model forecasts, sizes, writes and fails (see the module table)."""

    name: str
    models: tuple[str, ...]
    owned_by: str
    insight: float  # share of the hidden signal it perceives (logit scale, 0 = price only)
    noise: float
    bias: float
    overconf: float
    edge: float
    size: float
    legs: int
    attention: int
    hold: float
    sell: float
    verbosity: Verbosity
    messy: float
    malformed: float
    stubborn: float
    fault: float
    latency_ms: tuple[int, int]
    price_in: float  # USD per million prompt tokens
    price_out: float  # USD per million completion tokens
    overspend: float  # v2: chance a betting answer's legs add up to more than the total cap


PERSONAS: tuple[Persona, ...] = (
    Persona("analyst", ("openai/gpt-5.2",), "openai", 0.60, 0.30, 0.0, 1.0, 0.05, 1.2, 5, 150,
            0.05, 0.30, "normal", 0.05, 0.03, 0.2, 0.02, (5, 30), 1.75, 14.0, 0.02),
    Persona("contrarian", ("google/gemini-3-pro-preview",), "google", 0.50, 0.45, 0.25, 1.05, 0.06,
            0.6, 5, 120, 0.05, 0.20, "verbose", 0.15, 0.05, 0.3, 0.03, (10, 40), 2.0, 12.0, 0.04),
    Persona("gambler", ("x-ai/grok-4.1-fast",), "x-ai", 0.40, 0.90, -0.1, 1.15, 0.05, 0.8, 4, 60,
            0.02, 0.10, "terse", 0.05, 0.10, 0.4, 0.04, (0, 15), 0.20, 0.50, 0.06),
    Persona("careful", ("anthropic/claude-opus-4.5",), "anthropic", 0.70, 0.20, 0.0, 0.9, 0.07, 1.0,
            4, 200, 0.15, 0.40, "verbose", 0.02, 0.02, 0.2, 0.01, (20, 50), 5.0, 25.0, 0.01),
    Persona("favourite", ("deepseek/deepseek-v3.2",), "deepseek", 0.50, 0.60, -0.4, 1.05, 0.05, 1.0,
            4, 100, 0.05, 0.20, "normal", 0.10, 0.08, 0.4, 0.05, (10, 40), 0.28, 0.42, 0.04),
    Persona("deliberate", ("moonshotai/kimi-k2-thinking",), "moonshotai", 0.60, 0.40, 0.1, 1.0,
            0.05, 1.2, 4, 120, 0.10, 0.25, "verbose", 0.20, 0.15, 0.6, 0.03, (20, 50), 0.60, 2.50,
            0.04),
    Persona("noisy", ("qwen/qwen3-235b-a22b-2507",), "qwen", 0.30, 1.20, 0.1, 1.0, 0.10, 0.3, 3, 80,
            0.05, 0.15, "terse", 0.10, 0.12, 0.5, 0.03, (0, 30), 0.08, 0.55, 0.06),
)  # fmt: skip
DEFAULT_PERSONA = Persona("generalist", (), "simulated", 0.50, 0.80, 0.0, 1.0, 0.05, 1.0, 3, 100,
                          0.20, 0.20, "normal", 0.05, 0.05, 0.3, 0.02, (5, 25), 1.0,
                          2.0, 0.03)  # fmt: skip

_BY_MODEL = {model: persona for persona in PERSONAS for model in persona.models}
_BY_PREFIX = {persona.owned_by: persona for persona in PERSONAS}


def persona_for(model: str) -> Persona:
    """The persona serving `model`: exact id, else its provider prefix, else the default."""
    if model in _BY_MODEL:
        return _BY_MODEL[model]
    return _BY_PREFIX.get(model.split("/", 1)[0], DEFAULT_PERSONA)
