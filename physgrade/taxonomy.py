"""The closed vocabularies of the domain (question kinds, topics, Bloom's taxonomy, regions).

Imported files spell these in many ways; ``normalize`` maps a spelling to the canonical term
so that filters and reports group correctly.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Iterable

#: What a question asks for: a problem to solve, or a conceptual question.
QUESTION_KINDS = ("problem", "conceptual")
TOPICS = ("Introduction", "Mechanics", "Electricity & Magnetism", "Thermodynamics",
          "Waves & Acoustics", "Optics", "Modern Physics")
BLOOM_COGNITIVE = ("Remember", "Understand", "Apply", "Analyze", "Evaluate", "Create")
BLOOM_KNOWLEDGE = ("Factual", "Conceptual", "Procedural", "Metacognitive")
REGIONS = ("Asia", "Africa", "South America/Oceania")
ANSWER_TYPES = ("NV", "EX", "EQ", "IN", "TF", "MC", "compound")


def _key(text: str) -> str:
    return "".join(ch for ch in text.casefold() if ch.isalnum())


_ALIASES: dict[tuple[str, ...], dict[str, str]] = {
    QUESTION_KINDS: {"problemsolving": "problem", "numerical": "problem",
                     "theory": "conceptual", "concept": "conceptual"},
    TOPICS: {**dict.fromkeys(("electricityandmagnetism", "electromagnetism", "em",
                              "electrodynamics", "electricity", "magnetism", "electrostatics",
                              "circuits"), "Electricity & Magnetism"),
             **dict.fromkeys(("wavesandacoustics", "waves", "acoustics", "sound",
                              "oscillationsandwaves"), "Waves & Acoustics"),
             **dict.fromkeys(("thermal", "heat", "statisticalmechanics",
                              "thermodynamicsandstatisticalmechanics",
                              "thermodynamicsandstatisticalphysics"), "Thermodynamics"),
             **dict.fromkeys(("modern", "relativity", "quantummechanics", "atomicphysics",
                              "nuclearphysics", "particlephysics", "solidstatephysics",
                              "semiconductorphysics"), "Modern Physics"),
             **dict.fromkeys(("classicalmechanics", "theoreticalmechanics", "fluidmechanics",
                              "kinematics", "dynamics"), "Mechanics"),
             **dict.fromkeys(("geometricaloptics", "waveoptics"), "Optics")},
    BLOOM_COGNITIVE: {"remembering": "Remember", "understanding": "Understand",
                      "applying": "Apply", "analyse": "Analyze", "analyzing": "Analyze",
                      "analysing": "Analyze", "evaluating": "Evaluate", "creating": "Create"},
    BLOOM_KNOWLEDGE: {},
    ANSWER_TYPES: {"numerical": "NV", "numeric": "NV", "expression": "EX", "equation": "EQ",
                   "interval": "IN", "truefalse": "TF", "multiplechoice": "MC"},
}


@lru_cache(maxsize=4096)  # imports ask the same few spellings thousands of times
def normalize(value: str, vocabulary: tuple[str, ...]) -> str | None:
    """The canonical term for ``value``, or None if it is not a spelling of any."""
    key = _key(value)
    for term in vocabulary:
        if _key(term) == key:
            return term
    return _ALIASES.get(vocabulary, {}).get(key)


def in_vocabulary_order(values: Iterable[str], vocabulary: tuple[str, ...]) -> list[str]:
    """``values`` in the vocabulary's own order (Introduction before Mechanics, Remember before
    Apply), then any others by name."""
    present = set(values)
    return [term for term in vocabulary if term in present] + sorted(present - set(vocabulary))
