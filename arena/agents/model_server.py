"""A simulated, OpenAI-compatible model server: personas that read the real prompt and trade.

What it is: a real HTTP server on a loopback port (`POST /v1/chat/completions`,
`GET /v1/models`) that answers the decision prompts `arena.agents.prompts` builds as one of
several *personas*, chosen by the request's `model` field. The project's own `ChatClient`,
parser and retry code talk to it exactly as they talk to OpenRouter or a local vLLM, so the
offline demo exercises the whole LLM path. Everything it serves is simulated: every answer
says `provider: "simulated"`, and no real model is ever asked.

**How a persona decides.** The server parses the user message: the `Date: … UTC` line (the
decision instant), cash and bet limits, open positions and the market lines
(`id|question|category|prices|volume|close`). For each side of the first `look` markets (its
attention) its belief starts at the market price and moves `insig` (insight) of the way, on
the logit scale, toward the simulated world's hidden probability at that instant
(`SimulatedWorld.hidden_probability`, which the oracle baseline bets on in full: insight 1, no
noise). The belief is then moved by a favourite/longshot bias (`bias × (1 − 2·price)`: > 0
lifts longshots, < 0 lifts favourites), plus Gaussian noise (`noise`, logit sd), times an
overconfidence factor (`overc` > 1 pushes beliefs away from 1/2). It sells a position whose
belief fell below its price (with chance `sell`), otherwise bets the sides whose edge (belief −
price) is at least `edge`, best first, at most `legs` of them, each `min(1, size × edge)` of
the 25% cap on the cash left; nothing worth it, or a drawn HOLD (chance `hold`), is a HOLD. The
`reasoning` is written from the markets' questions and prices, at the persona's verbosity.

**Instant and hidden probability.** The instant is read from the prompt's `Date:` line (the
prompt always states it, to the minute; the world's paths are hourly). A request without one
may send an `X-Arena-At` header (ISO-8601); with neither, or without a world, or for a market
the world does not know, the belief starts from the market price instead (no information).

**Stated probability** (protocol extension `stated_probability`, methodology §18). When the
system prompt asks for it (its `STATED PROBABILITY` section), every BET leg also carries
`"probability"`: the persona's belief that the side wins as it reports it, to 2 decimals —
the belief it traded on plus reporting noise (logit sd `noise`, drawn per market, side and
instant: a second, independent look), so a noisy persona sometimes states a probability its
own bet contradicts (at or below the price) while a careful one rarely does. Personas fail at it
as they fail at formats: among the malformed answers (chance `malformed`, `stubborn` on a
retry) a third write a bad probability (`"62%"`, `62` or `"likely"`, which the parser rejects
with an error fed back), and with chance `malformed` + `messy` (a sloppy answer) a valid one
leaves the last leg's probability out (recorded as missing). A v1 prompt gets exactly the
answers it always got: no draw is spent on probabilities unless the prompt asks.

**Format and transport behaviour.** With chance `messy` a valid answer is wrapped (a ```json
fence, or prose around the JSON; the parser accepts both); with chance `malformed` it is one the
parser rejects (a wrong field name, or invalid JSON: cut short or Python-quoted). On a format
retry (the conversation already holds an assistant turn) the persona repeats a malformed answer
with chance `stubborn`, so some decisions end as `fallback_hold`. With chance `fault` a request
fails in transport instead: 429 with `Retry-After`, 500, or an answer held back `slow_seconds`
(beyond a client timeout shorter than that). Latency is drawn in the `ms` range.

**Determinism.** Behaviour draws (hold, sell, format, fault, latency) come from an RNG keyed by
sha256(seed, model, sha256 of the messages, attempt seq), where the attempt seq counts earlier
identical requests (same model and messages) to this server; beliefs come from an RNG keyed by
(seed, model, market id, instant), so a persona's view of a market does not change between
retries. No global random state: the same requests in the same order give the same bodies.

**Sampling streams (replicates).** A request whose body names a `user` (the engine sends one
per agent only in a replicated cohort, `arena:<family>:r<k>`) is one sampling stream: its
behaviour draws are keyed by the stream too, its attempt seq counts only its own identical
requests, and its beliefs get a per-stream jitter (`SAMPLING_SHARE` of the persona's noise,
fixed per market and instant) on top of the persona's: replicates of one model share what it
knows and differ as independent samples of it. Without `user` nothing changes.

**Usage and cost.** `usage.prompt_tokens` / `completion_tokens` are the project's token estimate
(`estimate_tokens`, 4 characters a token); `usage.cost` (USD, from the persona's price per million
input/output tokens: approximate public list prices, as data) is sent only when the request asks
OpenRouter-style with `"usage": {"include": true}`.

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

Use: `with ModelServer(seed=7, world=world) as server:` then point a `ChatClient` at
`server.base_url`; `server.log` holds one `LoggedRequest` per chat request (model, sha256 of the
messages as `messages_sha256` computes it, status, fault, attempt seq). From the shell:
`arena model-server --port P --seed S`.

Public API: `ModelServer` (the HTTP server) over `SimulatedModels` (the personas as a pure
function returning a `Served` response), the persona table (`Persona`, `PERSONAS`,
`DEFAULT_PERSONA`, `persona_for`), the prompt reader (`parse_prompt` → `PromptView`), the request
log (`LoggedRequest`, `messages_sha256`), and `chat_completion`, the body of a 200 answer (for
any other fake that must answer in the same shape).
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import ROUND_DOWN, Decimal, InvalidOperation
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

from arena.agents.prompts import STATED_PROBABILITY_HEADING, estimate_tokens

__all__ = [
    "DEFAULT_PERSONA",
    "PERSONAS",
    "LoggedRequest",
    "ModelServer",
    "Persona",
    "PromptView",
    "Served",
    "SimulatedModels",
    "asks_probability",
    "chat_completion",
    "messages_sha256",
    "parse_prompt",
    "persona_for",
]

PROVIDER = "simulated"
AT_HEADER = "X-Arena-At"
CENT = Decimal("0.01")

Verbosity = Literal["terse", "normal", "verbose"]
Fault = Literal["429", "500", "slow"]
HiddenProbability = Callable[[str, str, datetime], float]


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


PERSONAS: tuple[Persona, ...] = (
    Persona("analyst", ("openai/gpt-5.2",), "openai", 0.60, 0.30, 0.0, 1.0, 0.05, 1.2, 5, 150,
            0.05, 0.30, "normal", 0.05, 0.03, 0.2, 0.02, (5, 30), 1.75, 14.0),
    Persona("contrarian", ("google/gemini-3-pro-preview",), "google", 0.50, 0.45, 0.25, 1.05, 0.06,
            0.6, 5, 120, 0.05, 0.20, "verbose", 0.15, 0.05, 0.3, 0.03, (10, 40), 2.0, 12.0),
    Persona("gambler", ("x-ai/grok-4.1-fast",), "x-ai", 0.40, 0.90, -0.1, 1.15, 0.05, 0.8, 4, 60,
            0.02, 0.10, "terse", 0.05, 0.10, 0.4, 0.04, (0, 15), 0.20, 0.50),
    Persona("careful", ("anthropic/claude-opus-4.5",), "anthropic", 0.70, 0.20, 0.0, 0.9, 0.07, 1.0,
            4, 200, 0.15, 0.40, "verbose", 0.02, 0.02, 0.2, 0.01, (20, 50), 5.0, 25.0),
    Persona("favourite", ("deepseek/deepseek-v3.2",), "deepseek", 0.50, 0.60, -0.4, 1.05, 0.05, 1.0,
            4, 100, 0.05, 0.20, "normal", 0.10, 0.08, 0.4, 0.05, (10, 40), 0.28, 0.42),
    Persona("deliberate", ("moonshotai/kimi-k2-thinking",), "moonshotai", 0.60, 0.40, 0.1, 1.0,
            0.05, 1.2, 4, 120, 0.10, 0.25, "verbose", 0.20, 0.15, 0.6, 0.03, (20, 50), 0.60, 2.50),
    Persona("noisy", ("qwen/qwen3-235b-a22b-2507",), "qwen", 0.30, 1.20, 0.1, 1.0, 0.10, 0.3, 3, 80,
            0.05, 0.15, "terse", 0.10, 0.12, 0.5, 0.03, (0, 30), 0.08, 0.55),
)  # fmt: skip
DEFAULT_PERSONA = Persona("generalist", (), "simulated", 0.50, 0.80, 0.0, 1.0, 0.05, 1.0, 3, 100,
                          0.20, 0.20, "normal", 0.05, 0.05, 0.3, 0.02, (5, 25), 1.0,
                          2.0)  # fmt: skip

_BY_MODEL = {model: persona for persona in PERSONAS for model in persona.models}
_BY_PREFIX = {persona.owned_by: persona for persona in PERSONAS}


def persona_for(model: str) -> Persona:
    """The persona serving `model`: exact id, else its provider prefix, else the default."""
    if model in _BY_MODEL:
        return _BY_MODEL[model]
    return _BY_PREFIX.get(model.split("/", 1)[0], DEFAULT_PERSONA)


def messages_sha256(messages: Sequence[Mapping[str, Any]]) -> str:
    """The hash the request log keys on: sha256 of the messages as compact, sorted JSON."""
    canonical = json.dumps(
        [dict(m) for m in messages], sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def chat_completion(
    content: Any,
    *,
    model: str,
    completion_id: str = "gen-0",
    created: int = 0,
    provider: str | None = None,
    system_fingerprint: str | None = None,
    usage: Mapping[str, Any] | None = None,
    finish_reason: str | None = "stop",
    **message_extra: Any,
) -> dict[str, Any]:
    """A `chat.completion` body with one assistant choice, as this server sends it.

    `provider` and `usage` (with `cost`) are OpenRouter's additions; None leaves a field out.
    `message_extra` goes into the message beside `content` (e.g. `reasoning`).
    """
    body: dict[str, Any] = {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": model,
    }
    if provider is not None:
        body["provider"] = provider
    if system_fingerprint is not None:
        body["system_fingerprint"] = system_fingerprint
    message = {"role": "assistant", "content": content, **message_extra}
    body["choices"] = [{"index": 0, "finish_reason": finish_reason, "message": message}]
    if usage is not None:
        body["usage"] = dict(usage)
    return body


# A sampling stream's extra belief noise, as a share of the persona's `noise` (logit scale).
SAMPLING_SHARE = 0.5


def _rng(*parts: object) -> random.Random:
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))


# ---------------------------------------------------------------- reading the prompt


@dataclass(frozen=True)
class PromptMarket:
    market_id: str
    question: str
    market_type: Literal["binary", "named"]
    sides: tuple[tuple[str, Decimal], ...]  # side as the answer names it, and its price


@dataclass(frozen=True)
class PromptPosition:
    position_id: int
    market_id: str
    question: str
    side: str
    avg_entry: Decimal
    now: Decimal


@dataclass(frozen=True)
class PromptView:
    """What the server reads from a decision prompt (None/empty for whatever is not there)."""

    at: datetime | None
    cash: Decimal
    min_bet: Decimal
    max_bet: Decimal
    positions: tuple[PromptPosition, ...]
    markets: tuple[PromptMarket, ...]

    @property
    def cap_fraction(self) -> Decimal:
        """The per-bet cap as a fraction of cash (25% under methodology v1)."""
        if self.cash <= 0:
            return Decimal("0.25")
        return min(Decimal(1), (self.max_bet + CENT) / self.cash).quantize(Decimal("0.0001"))


_DATE = re.compile(r"^Date: (\d{4}-\d{2}-\d{2} \d{2}:\d{2}) UTC", re.M)
_CASH = re.compile(r"^Cash: (-?\$[\d,]+\.\d\d)", re.M)
_LIMITS = re.compile(r"^Bet limits now: minimum (\$[\d,]+\.\d\d), maximum (\$[\d,]+\.\d\d)", re.M)
_POSITION = re.compile(
    r"^position_id (\d+) \| market (\S+) ?(.*?) \| side (.+?) \| [\d,.]+ shares \| "
    r"avg entry ([\d.]+) \| now ([\d.]+) \|",
    re.M,
)
_MARKETS = re.compile(r"^MARKETS \((\d+)\)$", re.M)
_NAMED_PRICE = re.compile(r'("(?:[^"\\]|\\.)*"|[^;]+?) (\d+(?:\.\d+)?)(?:; |$)')


def _money(text: str) -> Decimal:
    return Decimal(text.replace("$", "").replace(",", ""))


def _name(text: str) -> str:
    """An outcome name as the prompt shows it: JSON-quoted names decoded."""
    if text.startswith('"'):
        try:
            value = json.loads(text)
        except ValueError:
            return text
        return value if isinstance(value, str) else text
    return text


def _market_line(line: str) -> PromptMarket | None:
    head = line.split("|", 3)
    tail = line.rsplit("|", 2)
    if len(head) < 4 or len(tail) < 3:
        return None
    market_id, question = head[0], head[1]
    prices = head[3].rsplit("|", 2)[0]
    try:
        if prices.startswith("YES "):
            yes = Decimal(prices[4:])
            return PromptMarket(market_id, question, "binary", (("YES", yes), ("NO", 1 - yes)))
        sides = tuple(
            (_name(m.group(1)), Decimal(m.group(2))) for m in _NAMED_PRICE.finditer(prices)
        )
    except InvalidOperation:
        return None
    return PromptMarket(market_id, question, "named", sides) if sides else None


def parse_prompt(text: str) -> PromptView:
    """The decision state in a user prompt built by `arena.agents.prompts.user_prompt`."""
    date = _DATE.search(text)
    at = datetime.strptime(date.group(1), "%Y-%m-%d %H:%M").replace(tzinfo=UTC) if date else None
    cash_match = _CASH.search(text)
    cash = _money(cash_match.group(1)) if cash_match else Decimal(0)
    limits = _LIMITS.search(text)
    min_bet, max_bet = (
        (_money(limits.group(1)), _money(limits.group(2))) if limits else (Decimal(1), cash / 4)
    )
    positions = tuple(
        PromptPosition(
            int(m.group(1)), m.group(2), m.group(3), _name(m.group(4)),
            Decimal(m.group(5)), Decimal(m.group(6)),
        )
        for m in _POSITION.finditer(text)
    )  # fmt: skip
    markets: list[PromptMarket] = []
    header = _MARKETS.search(text)
    if header:
        lines = text[header.end() :].split("\n")[2:]  # skip the rest of the line and the legend
        for line in lines[: int(header.group(1))]:
            market = _market_line(line)
            if market is not None:
                markets.append(market)
    return PromptView(at, cash, min_bet, max_bet, positions, tuple(markets))


def asks_probability(messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the system prompt is the `stated_probability` extension's (it asks each BET leg
    for its probability)."""
    return any(
        m.get("role") == "system" and STATED_PROBABILITY_HEADING in str(m.get("content", ""))
        for m in messages
    )


def _user_prompt(messages: Sequence[Mapping[str, Any]]) -> str:
    """The decision prompt: the first user message listing markets, else the first user one."""
    users = [str(m.get("content", "")) for m in messages if m.get("role") == "user"]
    return next((u for u in users if "\nMARKETS (" in u), users[0] if users else "")


# ---------------------------------------------------------------- deciding


def _logit(p: float) -> float:
    p = min(0.99, max(0.01, p))
    return math.log(p / (1 - p))


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def _price(value: Decimal) -> str:
    text = format(value.quantize(Decimal("0.001")), "f").rstrip("0").rstrip(".")
    return text or "0"


def _quote(question: str, limit: int = 90) -> str:
    return f"'{question if len(question) <= limit else question[: limit - 1] + '…'}'"


@dataclass(frozen=True)
class Served:
    """One simulated HTTP response: status, JSON body, headers, delay before sending it."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    fault: Fault | None = None
    form: str = "clean"  # clean, fenced, prose, wrong_field, invalid_json, bad_probability


@dataclass(frozen=True)
class _Leg:
    market: PromptMarket
    side: str
    price: Decimal
    belief: float
    amount: Decimal


class SimulatedModels:
    """The personas as a pure function: (model, messages, attempt seq) → response.

    `world` is anything with `hidden_probability(market_id, outcome, at)` (a SimulatedWorld).
    """

    def __init__(
        self,
        seed: int = 0,
        world: Any = None,
        *,
        slow_seconds: float = 2.0,
        retry_after: int = 1,
        latency_scale: float = 1.0,
    ) -> None:
        self.seed = seed
        self.world = world
        self.slow_seconds = slow_seconds
        self.retry_after = retry_after
        self.latency_scale = latency_scale

    # --- beliefs ---------------------------------------------------------------------------

    def _hidden(self, market: PromptMarket, side: str, at: datetime | None) -> float | None:
        if self.world is None or at is None:
            return None
        outcome = (
            {"YES": "Yes", "NO": "No"}.get(side, side) if market.market_type == "binary" else side
        )
        try:
            return float(self.world.hidden_probability(market.market_id, outcome, at))
        except (KeyError, ValueError, IndexError):
            return None

    def beliefs(
        self,
        model: str,
        view: PromptView,
        markets: Sequence[PromptMarket] | None = None,
        stream: str | None = None,
    ) -> dict[tuple[str, str], float]:
        """The persona's probability for each side of the markets it looks at (a sampling
        `stream` adds its own jitter)."""
        persona = persona_for(model)
        chosen = view.markets[: persona.attention] if markets is None else markets
        out: dict[tuple[str, str], float] = {}
        for market in chosen:
            rng = _rng("belief", self.seed, model, market.market_id, view.at)
            sides = market.sides[:1] if market.market_type == "binary" else market.sides
            for side, price in sides:
                base = self._hidden(market, side, view.at)
                start = _logit(float(price))
                if (
                    base is not None
                ):  # sees `insig` (insight) of the way from the price to the truth
                    start += persona.insight * (_logit(base) - start)
                shift = persona.bias * (1 - 2 * float(price))
                noise = rng.gauss(0, persona.noise)
                if stream is not None:
                    sample = _rng("sample", self.seed, model, stream, market.market_id, view.at)
                    noise += sample.gauss(0, persona.noise * SAMPLING_SHARE)
                belief = _sigmoid(persona.overconf * (start + shift + noise))
                out[(market.market_id, side)] = belief
            if market.market_type == "binary":
                out[(market.market_id, "NO")] = 1 - out[(market.market_id, "YES")]
        return out

    # --- one answer ------------------------------------------------------------------------

    def respond(
        self,
        model: str,
        messages: Sequence[Mapping[str, Any]],
        attempt: int = 0,
        *,
        at: datetime | None = None,
        include_cost: bool = False,
        stream: str | None = None,
    ) -> Served:
        """The response to one chat request; `attempt` = earlier identical requests (of the
        same sampling `stream`, the request's `user`, if it names one)."""
        persona = persona_for(model)
        digest = messages_sha256(messages)
        keys = (digest, attempt) if stream is None else (stream, digest, attempt)
        rng = _rng("answer", self.seed, model, *keys)
        delay = rng.uniform(*persona.latency_ms) / 1000 * self.latency_scale
        if rng.random() < persona.fault:
            kind: Fault = rng.choice(("429", "500", "slow"))
            if kind == "429":
                error = {"error": {"message": "Rate limit exceeded (simulated)", "code": 429}}
                return Served(429, error, {"Retry-After": str(self.retry_after)}, delay, kind)
            if kind == "500":
                error = {"error": {"message": "Internal server error (simulated)", "code": 500}}
                return Served(500, error, {}, delay, kind)
            delay = max(delay, self.slow_seconds)
            fault: Fault | None = kind
        else:
            fault = None
        view = parse_prompt(_user_prompt(messages))
        if view.at is None and at is not None:
            view = PromptView(
                at, view.cash, view.min_bet, view.max_bet, view.positions, view.markets
            )
        stated = asks_probability(messages)
        decision = self._decide(persona, model, view, rng, stated, stream)
        retrying = any(m.get("role") == "assistant" for m in messages)
        chance = persona.stubborn if retrying else persona.malformed
        form = "clean"
        betting = stated and "bets" in decision
        if rng.random() < chance:
            broken = ("wrong_field", "invalid_json")
            form = rng.choice((*broken, "bad_probability") if betting else broken)
        elif rng.random() < persona.messy:
            form = rng.choice(("fenced", "prose"))
        sloppy = persona.malformed + persona.messy
        if betting and form != "bad_probability" and rng.random() < sloppy:
            decision["bets"][-1].pop("probability", None)  # stated by none: recorded missing
        content = _render(decision, form, rng)
        prompt_tokens = estimate_tokens("".join(str(m.get("content", "")) for m in messages))
        completion_tokens = estimate_tokens(content)
        usage: dict[str, Any] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        if include_cost:
            cost = (prompt_tokens * persona.price_in + completion_tokens * persona.price_out) / 1e6
            usage["cost"] = round(cost, 8)
        body = chat_completion(
            content,
            model=model,
            completion_id="gen-sim-"
            + hashlib.sha256(f"{digest}:{attempt}:{model}".encode()).hexdigest()[:24],
            created=int(view.at.timestamp()) if view.at else 0,
            provider=PROVIDER,
            system_fingerprint=f"sim-{persona.name}",
            usage=usage,
        )
        return Served(200, body, {}, delay, fault, form)

    def _decide(
        self,
        persona: Persona,
        model: str,
        view: PromptView,
        rng: random.Random,
        stated: bool = False,
        stream: str | None = None,
    ) -> dict[str, Any]:
        considered = view.markets[: persona.attention]
        beliefs = self.beliefs(model, view, considered, stream)
        if rng.random() < persona.hold:
            return {"action": "HOLD", "reasoning": _hold_text(persona, considered, beliefs, True)}
        if view.positions and rng.random() < persona.sell:
            sells = []
            for position in view.positions:
                belief = beliefs.get((position.market_id, position.side))
                if belief is None:  # a market it does not look at now: the truth or the price
                    kind: Literal["binary", "named"] = (
                        "binary" if position.side in ("YES", "NO") else "named"
                    )
                    market = PromptMarket(position.market_id, position.question, kind, ())
                    hidden = self._hidden(market, position.side, view.at)
                    belief = float(position.now) if hidden is None else hidden
                if belief < float(position.now) - persona.edge / 2:
                    sells.append((position, belief))
            if sells:
                return {
                    "action": "SELL",
                    "sells": [{"position_id": p.position_id, "percentage": 100} for p, _ in sells],
                    "reasoning": _sell_text(persona, sells),
                }
        held = {(p.market_id, p.side) for p in view.positions}
        edges: list[tuple[float, int, PromptMarket, str, Decimal]] = []
        for index, market in enumerate(considered):
            for side, price in market.sides:
                belief = beliefs.get((market.market_id, side))
                if belief is None or not Decimal(0) < price < Decimal(1):
                    continue
                if (market.market_id, side) in held:
                    continue
                edge = belief - float(price)
                if edge >= persona.edge:
                    edges.append((edge, -index, market, side, price))
        edges.sort(key=lambda row: (row[0], row[1]), reverse=True)
        cash, fraction, legs = view.cash, view.cap_fraction, []
        for edge, _, market, side, price in edges[: persona.legs]:
            cap = (cash * fraction).quantize(CENT, ROUND_DOWN)
            share = Decimal(str(round(min(1.0, persona.size * edge), 4)))
            amount = min(cap, (cap * share).quantize(CENT, ROUND_DOWN))
            if amount < view.min_bet:
                continue
            legs.append(_Leg(market, side, price, beliefs[(market.market_id, side)], amount))
            cash -= amount
        if not legs:
            return {"action": "HOLD", "reasoning": _hold_text(persona, considered, beliefs, False)}
        return {
            "action": "BET",
            "bets": [
                {
                    "market_id": leg.market.market_id,
                    "side": leg.side,
                    "amount": float(leg.amount),
                    **({"probability": self._stated(persona, model, view, leg)} if stated else {}),
                }
                for leg in legs
            ],
            "reasoning": _bet_text(persona, legs, view),
        }

    def _stated(self, persona: Persona, model: str, view: PromptView, leg: _Leg) -> float:
        """The probability the persona states for a leg: its belief, reported with noise."""
        rng = _rng("stated", self.seed, model, leg.market.market_id, leg.side, view.at)
        reported = _logit(leg.belief) + rng.gauss(0, persona.noise)
        return round(_sigmoid(reported), 2)


# ---------------------------------------------------------------- writing the answer


def _bet_text(persona: Persona, legs: list[_Leg], view: PromptView) -> str:
    first = legs[0]
    if persona.verbosity == "terse":
        question = _quote(first.market.question, 60)
        return f"{first.side} on {question} looks cheap at {_price(first.price)}."
    sentences = [
        f"{_quote(leg.market.question)} trades at {leg.side} {_price(leg.price)}; I put it "
        f"nearer {leg.belief:.2f}, so I buy {leg.side} for ${leg.amount:,.2f}."
        for leg in legs
    ]
    if persona.verbosity == "verbose":
        spent = sum((leg.amount for leg in legs), Decimal(0))
        sentences.insert(
            0,
            f"With ${view.cash:,.2f} of cash and {len(view.positions)} open "
            f"position{'' if len(view.positions) == 1 else 's'}, "
            f"I looked for markets where my estimate and the price disagree.",
        )
        sentences.append(
            f"That commits ${spent:,.2f}, sized by how large each edge is; the other markets "
            "look fairly priced to me."
        )
    return " ".join(sentences)


def _sell_text(persona: Persona, sells: list[tuple[PromptPosition, float]]) -> str:
    position = sells[0][0]
    if persona.verbosity == "terse":
        return f"Exiting {position.side} on {_quote(position.question or position.market_id, 60)}."
    sentences = [
        f"{_quote(p.question or p.market_id)}: {p.side} bought at {_price(p.avg_entry)} now "
        f"trades at {_price(p.now)}, above my estimate of {b:.2f}, so I close the position."
        for p, b in sells
    ]
    if persona.verbosity == "verbose":
        sentences.append("Taking the price now is better than waiting for resolution.")
    return " ".join(sentences)


def _hold_text(
    persona: Persona,
    markets: Sequence[PromptMarket],
    beliefs: Mapping[tuple[str, str], float],
    drawn: bool,
) -> str:
    if persona.verbosity == "terse" or not markets:
        return "Nothing worth trading this week."
    best = max(
        (
            (beliefs.get((m.market_id, s), float(p)) - float(p), m, s, p)
            for m in markets
            for s, p in m.sides
        ),
        key=lambda row: row[0],
    )
    edge, market, side, price = best
    text = (
        f"The closest call is {_quote(market.question)} at {side} {_price(price)}, an edge of "
        f"{edge:+.2f} by my estimate"
    )
    text += ", but I prefer to keep my powder dry this week." if drawn else ", too small to act on."
    if persona.verbosity == "verbose":
        text += f" I reviewed {len(markets)} markets and my current portfolio stays as it is."
    return text


def _render(decision: dict[str, Any], form: str, rng: random.Random) -> str:
    text = json.dumps(decision, ensure_ascii=False)
    if form == "fenced":
        return f"```json\n{json.dumps(decision, ensure_ascii=False, indent=2)}\n```"
    if form == "prose":
        return f"Here is my decision for this week.\n{text}\nI will revisit it next week."
    if form == "wrong_field":
        wrong = dict(decision)
        if "bets" in wrong:
            wrong["bets"] = [
                {("stake" if k == "amount" else k): v for k, v in leg.items()}
                for leg in wrong["bets"]
            ]
        else:
            wrong["decision"] = wrong.pop("action")
        return json.dumps(wrong, ensure_ascii=False)
    if form == "bad_probability":
        wrong = dict(decision)
        first = dict(wrong["bets"][0])
        percent = round(float(first.get("probability", 0.5)) * 100)
        first["probability"] = rng.choice((f"{percent}%", max(2, percent), "likely"))
        wrong["bets"] = [first, *wrong["bets"][1:]]
        return json.dumps(wrong, ensure_ascii=False)
    if form == "invalid_json":
        if rng.random() < 0.5:
            return text[: max(10, len(text) // 2)]
        return repr(decision)  # Python literal: single quotes, not JSON
    return text


# ---------------------------------------------------------------- the HTTP server


@dataclass(frozen=True)
class LoggedRequest:
    """One chat request as served: to match one-to-one with `decision_attempts`.

    `status` is what the server sent; a `slow` fault is sent as 200 after `slow_seconds`, which a
    client with a shorter timeout records as a timeout (status None).
    """

    seq: int  # position in the log (0-based)
    model: str
    messages_sha256: str
    attempt: int  # earlier identical requests (same model and messages) before this one
    status: int
    fault: Fault | None
    form: str | None


class ModelServer:
    """The personas behind a real OpenAI-compatible HTTP server on a loopback port.

    Use as a context manager (`with ModelServer(seed=7, world=world) as server:`) or with
    `start()` / `stop()`. `port=0` lets the OS choose; `base_url` ends in `/v1`.
    """

    def __init__(
        self,
        seed: int = 0,
        world: Any = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        slow_seconds: float = 2.0,
        retry_after: int = 1,
        latency_scale: float = 1.0,
    ) -> None:
        self.models = SimulatedModels(
            seed, world, slow_seconds=slow_seconds, retry_after=retry_after,
            latency_scale=latency_scale,
        )  # fmt: skip
        self.log: list[LoggedRequest] = []
        self._counts: dict[tuple[str, str | None, str], int] = {}
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer((host, port), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def origin(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL to give a ChatClient."""
        return f"{self.origin}/v1"

    @property
    def model_ids(self) -> list[str]:
        return [model for persona in PERSONAS for model in persona.models]

    def start(self) -> ModelServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def serve_forever(self) -> None:
        """Serve in the calling thread until `shutdown()` from another thread."""
        self._httpd.serve_forever(poll_interval=0.2)

    def shutdown(self) -> None:
        self._httpd.shutdown()

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- request handling ------------------------------------------------------------------

    def handle(self, method: str, path: str, headers: Mapping[str, str], body: bytes) -> Served:
        route = path.split("?", 1)[0].rstrip("/")
        if method == "GET" and route in ("/v1/models", "/models"):
            data = [
                {"id": model, "object": "model", "created": 0, "owned_by": persona.owned_by}
                for persona in PERSONAS
                for model in persona.models
            ]
            return Served(200, {"object": "list", "data": data})
        if method != "POST" or route not in ("/v1/chat/completions", "/chat/completions"):
            return Served(404, {"error": {"message": f"no route {method} {route}", "code": 404}})
        try:
            request = json.loads(body)
        except ValueError:
            request = None
        messages = request.get("messages") if isinstance(request, dict) else None
        model = request.get("model") if isinstance(request, dict) else None
        if not isinstance(model, str) or not isinstance(messages, list) or not messages:
            error = {"message": "the body needs a 'model' and a non-empty 'messages'", "code": 400}
            return Served(400, {"error": error})
        usage = request.get("usage")
        include_cost = isinstance(usage, dict) and usage.get("include") is True
        at = _header_instant(headers)
        digest = messages_sha256(messages)
        user = request.get("user")
        stream = user if isinstance(user, str) and user else None
        with self._lock:
            attempt = self._counts.get((model, stream, digest), 0)
            self._counts[(model, stream, digest)] = attempt + 1
            served = self.models.respond(
                model, messages, attempt, at=at, include_cost=include_cost, stream=stream
            )
            self.log.append(
                LoggedRequest(len(self.log), model, digest, attempt, served.status, served.fault,
                              served.form if served.status == 200 else None)
            )  # fmt: skip
        return served


def _header_instant(headers: Mapping[str, str]) -> datetime | None:
    value = next((v for k, v in headers.items() if k.lower() == AT_HEADER.lower()), None)
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def _handler_for(server: ModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True
        server_version = "ArenaSimulatedModels/1"

        def _handle(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            served = server.handle(method, self.path, dict(self.headers.items()), body)
            if served.delay > 0:
                time.sleep(served.delay)
            payload = json.dumps(served.body).encode()
            try:
                self.send_response(served.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in served.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (it timed out on a slow answer)

        def do_GET(self) -> None:
            self._handle("GET")

        def do_POST(self) -> None:
            self._handle("POST")

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: the request log is `ModelServer.log`."""

    return Handler
