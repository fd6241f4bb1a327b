"""What a judge run will cost: tokens estimated from text length before the run, counted from
the API's usage reports during it, and priced from ``resources/pricing.json``."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

#: Characters per token for English physics text with formulas (a deliberately low guess, so
#: estimates err on the expensive side).
CHARS_PER_TOKEN = 3.5
#: The Message Batches API bills half the standard price.
BATCH_DISCOUNT = 0.5


@dataclass(frozen=True, slots=True)
class Price:
    """US dollars per million tokens."""

    input: float
    output: float


@dataclass(slots=True)
class Usage:
    """Tokens used, as the API reports them."""

    input_tokens: int = 0
    output_tokens: int = 0

    def add(self, other: "Usage") -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens

    def cost(self, price: Price | None, batch: bool = False) -> float | None:
        if price is None:
            return None
        dollars = (self.input_tokens * price.input + self.output_tokens * price.output) / 1e6
        return dollars * (BATCH_DISCOUNT if batch else 1.0)


@lru_cache(maxsize=1)
def _table() -> dict[str, tuple[float, float]]:
    text = (resources.files("physgrade_resources") / "pricing.json").read_text(encoding="utf-8")
    return {name: (float(i), float(o)) for name, (i, o) in json.loads(text)["models"].items()}


def price_for(model: str, input_price: float | None = None,
              output_price: float | None = None) -> Price | None:
    """The price of ``model``: the given prices, else the table's longest matching prefix,
    else None (unknown, and reported as such rather than guessed)."""
    if input_price is not None and output_price is not None:
        return Price(input_price, output_price)
    for name in sorted(_table(), key=len, reverse=True):
        if model.startswith(name):
            return Price(*_table()[name])
    return None


def tokens_for(characters: int) -> int:
    """An estimate of the tokens ``characters`` of text will take."""
    return math.ceil(characters / CHARS_PER_TOKEN)


def dollars(amount: float | None) -> str:
    if amount is None:
        return "unknown (no price for this model)"
    return f"${amount:,.2f}" if amount >= 0.1 else f"${amount:,.4f}"


def known_models() -> list[str]:
    """The model names the price table knows, for suggestions."""
    return sorted(_table())
