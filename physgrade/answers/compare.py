"""Whether a response's final answer matches the reference answer, by answer type, with a reason.

The rules say "not equivalent" only when they are sure; when they cannot tell, they say "not
checked" and why, since a wrong hint misleads the person grading. They are not sure when:

- the answer was picked out of running text that holds other numbers than the ones compared
  (the last of several quantities, one formula among others): it may not be the one meant;
- the reference and the response have different numbers of parts and either the response's
  parts were picked out of such text or a part on either side cannot be read;
- a vector's magnitude matches but its directions cannot be compared: worded outside the rules'
  vocabulary, a compass direction against one measured from a line, different lines, or a
  direction or angle that one side leaves out (:mod:`vector`);
- a reference that is a signed number is answered with a magnitude and a direction.

This runs in-process and is not bounded in time: callers that face untrusted text (every caller
in the app) go through :mod:`physgrade.answers.sandbox`, which runs it in a worker process.
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass
from typing import Callable, Sequence

import sympy

from .. import taxonomy
from . import constants, expr, extract, latex, units, vector
from .latex import Unparseable
from .outcome import Check, Outcome, Settings

ATOMIC_TYPES = ("NV", "EX", "EQ", "IN", "TF", "MC")

#: Constants an answer may keep as a symbol on one side and write as a number on the other
#: (symbol name → SI value; the list is :mod:`constants`).
CONSTANTS = constants.VALUES
_TRUE = frozenset("true t yes y correct right 对 正确 是 真".split())
_FALSE = frozenset("false f no n incorrect wrong 错 错误 否 不对 假".split())
_COUNTED = re.compile(r"([-+]?[\d.]+)\s+[A-Za-z][A-Za-z\s-]*")
_PICKED = "the answer was picked out of running text that holds other numbers too"


@dataclass(frozen=True)
class _Verdict:
    """Whether a part matches, and why. ``sure`` is False where the rules cannot tell: the part
    is then neither a match nor a mismatch, and the reason says what could not be compared."""

    same: bool
    reason: str
    sure: bool = True


def check(gold: str, pred: str, answer_type: str | None = None, unit: str | None = None,
          settings: Settings = Settings()) -> Check:
    """Compare a reference answer with a response (its final answer is found first)."""
    try:
        found = extract.final_answer(pred)
    except Unparseable as error:
        return Check(Outcome.UNPARSEABLE, f"response: {error}")
    if found is None:
        return Check(Outcome.NO_ANSWER, "no final answer found in the response")
    try:
        reference = reference_parts(gold, answer_type, unit)
    except Unparseable as error:
        return Check(Outcome.UNPARSEABLE, f"reference answer: {error}", found.text)
    gold_parts = [part.text for part in reference]
    pred_parts = _pred_parts(found, len(reference), [part.kind for part in reference])
    if len(pred_parts) != len(gold_parts):
        counted = (f"the reference has {len(gold_parts)} answers; the response gives "
                   f"{len(pred_parts)}")
        if doubt := _count_doubt(found, reference, pred_parts, settings):
            return Check(Outcome.NOT_CHECKED, f"{counted}, but {doubt}", found.text,
                         0, len(gold_parts))
        return Check(Outcome.NOT_EQUIVALENT, counted, found.text, 0, len(gold_parts))
    verdicts = []
    for index, (part, pred_part) in enumerate(zip(reference, pred_parts)):
        gold_part, kind, part_unit = part.text, part.kind, part.unit
        try:
            try:
                verdicts.append(_compare(kind, gold_part, pred_part, part_unit, settings, pred))
            except _GoldError:
                inferred = infer_type(gold_part)  # the declared type may be wrong ("IN" for 7)
                if inferred == kind:
                    raise
                verdicts.append(_compare(inferred, gold_part, pred_part, part_unit, settings, pred))
        except Unparseable as error:
            if _same_text(gold_part, pred_part):  # a reaction or a term symbol, written alike
                verdicts.append(_Verdict(True, f"the same text as the reference (not read as "
                                               f"maths: {error})"))
                continue
            whose = "reference" if isinstance(error, _GoldError) else "response"
            return Check(Outcome.UNPARSEABLE, _numbered(index, len(gold_parts),
                                                        f"{whose} answer: {error}"), found.text,
                         sum(v.same and v.sure for v in verdicts), len(gold_parts))
    return _conclusion(verdicts, found, pred_parts)


def _conclusion(verdicts: list[_Verdict], found: extract.Found, used: list[str]) -> Check:
    """Equivalent when every part matches; not equivalent when a part surely differs and the
    answer is not a guess; otherwise not checked, with the reasons the rules could not tell."""
    def reasons(which: list[tuple[int, _Verdict]]) -> str:
        return "; ".join(_numbered(index, len(verdicts), v.reason) for index, v in which)

    numbered = list(enumerate(verdicts))
    # The parts right: those that match (none where the answer may not be the one meant).
    total, right = len(verdicts), sum(v.same and v.sure for v in verdicts)
    if all(v.same for v in verdicts):
        return Check(Outcome.EQUIVALENT, reasons(numbered), found.text, total, total)
    if found.skips_numbers(used):
        return Check(Outcome.NOT_CHECKED, _PICKED, found.text, 0, total)
    if any(v.sure and not v.same for v in verdicts):
        return Check(Outcome.NOT_EQUIVALENT, reasons(numbered), found.text, right, total)
    return Check(Outcome.NOT_CHECKED, reasons([(i, v) for i, v in numbered if not v.sure]),
                 found.text, right, total)


def _count_doubt(found: extract.Found, reference: list[Part], pred_parts: list[str],
                 settings: Settings) -> str | None:
    """Why different numbers of parts may not make a wrong answer, or None if they do."""
    if found.skips_numbers(pred_parts):
        return _PICKED
    for part in reference:
        if not _readable(part.kind, part.text, part.unit, settings):
            return f"the reference's {part.text!r} cannot be read"
    for text in pred_parts:
        try:
            kind = infer_type(latex.clean(text))
        except Unparseable:
            kind = "EX"
        if not _readable(kind, text, None, settings):
            return f"the response's {text!r} cannot be read"
    return None


def _readable(kind: str, text: str, unit: str | None, settings: Settings) -> bool:
    """Whether the rules can read ``text`` as an answer of ``kind`` (compared with itself)."""
    try:
        _compare(kind, text, text, unit, settings)
    except Unparseable:
        return False
    return True


class _GoldError(Unparseable):
    """The reference answer, not the response, could not be read."""


def _same_text(gold: str, pred: str) -> bool:
    try:
        return "".join(gold.split()) == "".join(latex.clean(pred).split())
    except Unparseable:
        return False


def _numbered(index: int, count: int, text: str) -> str:
    return text if count == 1 else f"part {index + 1}: {text}"


@dataclass(frozen=True)
class Part:
    """One answer of a reference: its cleaned text, its atomic type and its unit, if any."""

    text: str
    kind: str
    unit: str | None


def reference_parts(gold: str, answer_type: str | None = None,
                    unit: str | None = None) -> list[Part]:
    """A reference answer split as the checks split it: one part per sub-question."""
    texts = _gold_parts(gold, answer_type)
    return [Part(*fields) for fields in zip(texts, _types(answer_type, texts),
                                            _units(unit, len(texts)))]


def _gold_parts(gold: str, answer_type: str | None) -> list[str]:
    if not gold or not gold.strip():
        raise Unparseable("the reference answer is empty")
    boxes = latex.boxed(gold)
    parts = [latex.clean(box) for box in boxes] if len(boxes) > 1 else [latex.clean(gold)]
    declared = declared_types(answer_type)
    if len(parts) == 1 and declared not in (["IN"], ["MC"]) and not extract.option_letters(parts[0]):
        parts = latex.split_top_level(parts[0])
    return vector.joined([part for part in parts if part])


def declared_types(answer_type: str | None) -> list[str]:
    """The atomic types an answer-type field names ("NV", "EX, NV", "numerical"); [] if none."""
    if not answer_type:
        return []
    codes = []
    for word in re.split(r"[,;/\s]+", answer_type.strip()):
        code = taxonomy.normalize(word, taxonomy.ANSWER_TYPES) if word else None
        if code in ATOMIC_TYPES:
            codes.append(code)
        elif codes and code is None and len(word) > 3:
            break  # prose after the codes ("NV  The final answer is a number")
    return codes


def _types(answer_type: str | None, parts: list[str]) -> list[str]:
    declared = declared_types(answer_type)
    if len(declared) == len(parts):
        return declared
    if len(declared) == 1 and len(parts) > 1 and answer_type and "compound" not in answer_type:
        return declared * len(parts)
    return [infer_type(part) for part in parts]


def infer_type(text: str) -> str:
    """The answer type a reference answer looks like when its record does not say."""
    plain = text.strip()
    if plain.lower() in _TRUE | _FALSE:
        return "TF"
    if extract.option_letters(plain, "ABCDEFGH") and len(plain) <= 12:
        return "MC"
    if re.match(r"^[(\[\]].*[)\[\]]$", plain) and len(latex.split_top_level(plain[1:-1])) == 2:
        return "IN"
    if re.search(r"<|>|\\le|\\ge|\\lt|\\gt", plain):
        return "IN"
    if re.search(r"(?<![<>\\])=|\\approx", plain):
        return "EQ"
    try:
        quantity = units.quantity(plain)
    except Unparseable:
        return "EX"
    if quantity is None or (quantity.unit and "_" in quantity.unit):
        return "EX"  # k_B T: a number times symbols, not a unit
    return "NV"


def _units(unit: str | None, count: int) -> list[str | None]:
    if unit is None or units.is_missing(unit):
        return [None] * count
    unit = latex.clean(unit)
    parts: Sequence[str | None] = latex.split_top_level(unit) if count > 1 else [unit]
    if len(parts) != count:
        parts = [unit] * count if count == 1 else [None] * count
    return [None if units.is_missing(part) else part for part in parts]


def _pred_parts(found: extract.Found, count: int, types: list[str]) -> list[str]:
    if types == ["MC"]:
        return [found.parts[-1]]
    given = vector.joined(list(found.parts))  # "130 m" and "22.6° north of east": one answer
    if len(given) >= count > 1:
        return given[-count:]
    if count == 1:
        return [given[-1]]
    return vector.joined([part for whole in given for part in latex.split_top_level(whole)])


def _compare(kind: str, gold: str, pred: str, unit: str | None, settings: Settings,
             response: str = "") -> _Verdict:
    if kind == "MC":
        return _options(gold, pred, response)
    pred = latex.clean(pred)
    if kind == "TF":
        return _truth(gold, pred)
    if (expected := vector.read(gold)) is not None:
        return _vectors(expected, pred, unit, settings)
    if kind == "IN":
        return _intervals(gold, pred, settings)
    if kind == "EQ":
        return _equations(gold, pred, settings)
    if kind == "NV":
        given = vector.read(pred)
        if given is not None and given.magnitude is not None:
            return _number_against_vector(gold, given.magnitude, given.direction.text, unit,
                                          settings)
        return _numbers(gold, pred, unit, settings)
    return _expressions(gold, pred, settings)


def _gold(function, *args):
    """Run a parse of the reference, reporting its failure as the reference's."""
    try:
        return function(*args)
    except _GoldError:
        raise
    except Unparseable as error:
        raise _GoldError(str(error)) from error


# -- true/false and options ------------------------------------------------------------------

def _truth_value(text: str) -> bool | None:
    words = re.findall(r"[A-Za-z]+|[\u4e00-\u9fff]+", text.lower())
    values = {word in _TRUE for word in words if word in _TRUE | _FALSE}
    return values.pop() if len(values) == 1 else None


def _truth(gold: str, pred: str) -> _Verdict:
    expected = _truth_value(gold)
    if expected is None:
        raise _GoldError(f"{gold!r} is neither true nor false")
    given = _truth_value(pred)
    if given is None:
        raise Unparseable(f"{pred!r} is neither true nor false")
    return _Verdict(given == expected, f"{_tf(given)} vs {_tf(expected)}")


def _tf(value: bool) -> str:
    return "true" if value else "false"


def _options(gold: str, pred: str, response: str) -> _Verdict:
    expected = extract.option_letters(gold)
    if not expected:
        raise _GoldError(f"{gold!r} names no option letter")
    given = extract.option_letters(pred) or extract.option_in_text(response)
    if not given:
        raise Unparseable(f"{pred!r} names no option letter")
    same = given == expected
    return _Verdict(same, f"option {', '.join(given)} vs {', '.join(expected)}")


# -- numbers ---------------------------------------------------------------------------------

def value_text(text: str) -> str:
    """What an answer comes to: the last side of ``v = \\sqrt{2gh} \\approx 6.3 m/s``, without a
    trailing aside such as "228 s (3.8 min)"."""
    return re.split(r"(?<![<>!\\])=|\\approx|\\simeq", text)[-1].strip()


def _without_aside(text: str) -> str | None:
    """``228 s (3.8 min)`` without its parenthesis, or None if it has none."""
    bare = re.sub(r"\s+\([^()]*\)$", "", text)
    return bare if bare != text else None


def _numbers(gold: str, pred: str, unit: str | None, settings: Settings) -> _Verdict:
    try:
        expected = units.quantity(value_text(gold), unit)
    except Unparseable:
        expected = None  # "\\frac{3}{2} k_B T": a number times symbols, not a unit
    if expected is None:
        return _expressions(gold, pred, settings)  # a "numerical" answer written with symbols
    given = _given_quantity(value_text(pred), bool(expected.unit))
    if given is None:
        relation = expr.parse(pred)
        value = relation.value
        if not value.free_symbols:  # a closed form such as \\int_0^1 x^2 dx
            target = sympy.Float(expected.value)
            return _each_reading(expr.Relation((target,), ()), relation,
                                 lambda _expected, given: _same(given.value, target, settings))
        if expected.unit and expected.stated:  # "2 m g h" may be symbols, not metre gram hour
            as_symbols = _expressions(gold, pred, settings)
            if as_symbols.same:
                return as_symbols
        symbols = ", ".join(sorted(str(s) for s in value.free_symbols))
        return _Verdict(False, f"the reference is a number ({expected.shown}); the response "
                               f"gives an expression in {symbols}")
    pair = f"{given.shown} vs {expected.shown}"

    def as_written() -> _Verdict:
        return _close(given.value, expected.value, settings, pair, given.significant)

    def in_si(target: float) -> _Verdict:
        unit = f" {expected.si_unit}" if expected.si_unit else ""
        shown = pair if given.unit == expected.unit else (
            f"{pair} ({given.si:.6g} vs {target:.6g}{unit} in SI)")
        if expected.dimension == "temperature":  # 37 °C vs 38.85 °C is 5%, not 0.6% of 310 K
            apart = abs(given.si - target)
            same = apart <= settings.rtol * abs(expected.value)
            return _Verdict(same, f"{shown}: equal" if apart < 1e-9 else (
                f"{shown}: {apart:.3g} K apart, {'within' if same else 'more than'} "
                f"{settings.rtol * 100:g}% of {expected.shown}"))
        return _close(given.si, target, settings, shown, given.significant)

    if expected.unit and given.unit:
        if expected.dimension != given.dimension:
            return _Verdict(False, f"{pair}: wrong dimension ({given.dimension or 'dimensionless'} "
                                   f"instead of {expected.dimension or 'dimensionless'})")
        return in_si(expected.si)
    if expected.unit and not expected.dimension:  # degrees, radians, percent: either reading
        written = as_written()
        return written if written.same else in_si(expected.si)
    if expected.unit and not expected.stated:  # the unit is a separate field, as in UGPhysics
        written = as_written()
        return _Verdict(written.same, f"{written.reason} (no unit given: read in {expected.unit})")
    if expected.unit:
        matches = "the number matches" if as_written().same else "the number differs too"
        return _Verdict(False, f"{pair}: the unit is missing ({matches})")
    written = as_written()
    if written.same or not given.unit:
        return written
    converted = in_si(expected.value)
    return converted if converted.same else written


def _given_quantity(text: str, unit_expected: bool) -> units.Quantity | None:
    """The response's quantity, read leniently: "228 s (3.8 min)" is 228 s, "7 bright maxima"
    is 7 when no unit is expected, and "1.05 (\\frac{1}{2} x)" is left to be read as an
    expression (None)."""
    try:
        return units.quantity(text)
    except Unparseable:
        if (bare := _without_aside(text)) is not None:
            try:
                return units.quantity(bare)
            except Unparseable:
                pass
        counted = _COUNTED.fullmatch(text)  # "7 bright maxima": a number of things
        if counted is not None and not unit_expected:
            return units.quantity(counted.group(1))
        expr.parse(text)  # an expression after all? Otherwise the unit's message stands.
        return None


def _close(value: float, target: float, settings: Settings, shown: str,
           significant: int | None = None) -> _Verdict:
    """Two numbers agree within the relative tolerance, or ``value`` rounds ``target`` to its own
    significant figures (at least two: "15.0 m/s" and "15 m/s" agree, "0.012" rounds 0.01234)."""
    if settings.mantissa:
        value, target = _mantissa(value), _mantissa(target)
        shown += " (mantissas only)"
    if target == 0 or value == 0:
        same = abs(value - target) <= 1e-12
        return _Verdict(same, f"{shown}: {'equal' if same else 'different'}")
    if (value > 0) != (target > 0):
        return _Verdict(False, f"{shown}: opposite sign")
    difference = abs(value - target) / abs(target)
    tolerance = f"{settings.rtol * 100:g}%"
    if difference < 1e-9:
        return _Verdict(True, f"{shown}: equal")
    if difference <= settings.rtol * (1 + 1e-9):
        return _Verdict(True, f"{shown}: {_percent(difference)} within {tolerance}")
    if significant and significant >= 2 and _rounds_to(target, value, significant):
        return _Verdict(True, f"{shown}: the reference rounded to {significant} significant figures")
    return _Verdict(False, f"{shown}: {_percent(difference)} off, more than {tolerance}")


def _percent(fraction: float) -> str:
    if fraction >= 10:
        return f"a factor of {fraction + 1:.3g}"
    return f"{fraction * 100:.2g}%" if fraction < 0.1 else f"{fraction * 100:.0f}%"


def _rounds_to(exact: float, rounded: float, figures: int) -> bool:
    digits = figures - 1 - math.floor(math.log10(abs(exact)))
    return math.isclose(round(exact, digits), rounded, rel_tol=1e-9)


def _mantissa(value: float) -> float:
    if value == 0:
        return 0.0
    return value / 10 ** math.floor(math.log10(abs(value)))


# -- vectors: a magnitude and a direction --------------------------------------------------

def _vectors(expected: vector.Vector, pred: str, unit: str | None,
             settings: Settings) -> _Verdict:
    """Magnitude and direction compared apart; a wrong magnitude is wrong whatever the rest."""
    given = vector.read(pred)
    if given is None:
        if expected.magnitude is None:
            return _Verdict(False, f"the reference is a direction ({expected.direction.text}); "
                                   "the response's answer gives none", sure=False)
        if vector.is_angle(pred):  # "\boxed{22.6°} north of east": its words were left out
            return _Verdict(False, f"the response's answer is an angle alone "
                                   f"({vector.readable(pred)})", sure=False)
        magnitude = _numbers(expected.magnitude, pred, unit, settings)
        if not magnitude.same:
            return _Verdict(False, f"magnitude: {magnitude.reason}", magnitude.sure)
        return _Verdict(False, f"the response's answer gives no direction (magnitude: "
                               f"{magnitude.reason})", sure=False)
    parts = []
    if expected.magnitude is not None and given.magnitude is None:
        parts.append(_Verdict(False, "the response's answer gives no magnitude", sure=False))
    elif expected.magnitude is not None and given.magnitude is not None:
        magnitude = _numbers(expected.magnitude, given.magnitude, unit, settings)
        parts.append(_Verdict(magnitude.same, f"magnitude: {magnitude.reason}", magnitude.sure))
    direction = _directions(expected.direction, given.direction, settings)
    parts.append(_Verdict(direction.same, f"direction: {direction.reason}", direction.sure))
    same = all(part.same for part in parts)
    sure = same or any(part.sure and not part.same for part in parts)
    unsure_first = sorted(parts, key=lambda part: part.sure)  # why it was not checked leads
    return _Verdict(same, "; ".join(part.reason for part in (parts if sure else unsure_first)),
                    sure)


def _directions(expected: vector.Direction, given: vector.Direction,
                settings: Settings) -> _Verdict:
    """Compass directions by bearing, in the frame the reference measures its angle in; other
    directions by their words, and their angles where the words agree."""
    shown = f"{given.text} vs {expected.text}"
    if expected.bearing is not None and given.bearing is not None:
        frame = expected.frame or given.frame
        if frame is None:
            same = math.isclose(given.bearing, expected.bearing)
            return _Verdict(same, f"{shown}: {'the same' if same else 'a different'} direction")
        angle, target = vector.angle_in(frame, given.bearing), vector.angle_in(frame, expected.bearing)
        if given.frame != frame or given.angle is None or expected.angle is None:
            shown += f" ({angle:.4g}° vs {target:.4g}° {vector.frame_words(frame)})"
        return _close(angle, target, settings, shown)
    if expected.bearing is not None or given.bearing is not None:
        return _Verdict(False, f"{shown}: a compass direction against one that is not; the "
                               "rules do not compare these", sure=False)
    if given.words == expected.words:
        if given.angle is not None and expected.angle is not None:
            return _close(given.angle, expected.angle, settings, shown)
        if given.angle is None and expected.angle is None:
            return _Verdict(True, f"{shown}: the same direction")
        missing = "the response" if given.angle is None else "the reference"
        return _Verdict(False, f"{shown}: {missing} gives no angle", sure=False)
    if given.turned_round() == expected.words:
        if given.angle == expected.angle == 0:
            return _Verdict(True, f"{shown}: the same direction (at 0°)")
        return _Verdict(False, f"{shown}: the opposite direction")
    return _Verdict(False, f"{shown}: directions worded differently, which the rules do not "
                           "compare", sure=False)


def _number_against_vector(gold: str, magnitude: str, direction: str, unit: str | None,
                           settings: Settings) -> _Verdict:
    """A number answered with a magnitude and a direction ("15 m/s downward"): the magnitude
    answers it, unless the reference's sign stands for a direction."""
    if value_text(gold).startswith("-"):
        return _Verdict(False, f"the reference is a signed number ({gold}); the response gives a "
                               f"magnitude with a direction ({direction})", sure=False)
    verdict = _numbers(gold, magnitude, unit, settings)
    return _Verdict(verdict.same, f"{verdict.reason} (the response adds the direction "
                                  f"{direction!r})", verdict.sure)


# -- expressions and equations ---------------------------------------------------------------

def _expressions(gold: str, pred: str, settings: Settings) -> _Verdict:
    expected = _gold(expr.parse, gold)
    given = expr.parse(pred)
    return _each_reading(expected, given, lambda e, g: _same(g.value, e.value, settings))


def _each_reading(expected: expr.Relation, given: expr.Relation,
                  compare: Callable[[expr.Relation, expr.Relation], _Verdict]) -> _Verdict:
    """``compare`` under every reading of a slash that reads two ways (:meth:`expr._Parser.divisor`):
    its verdict where the readings agree, else "not checked", naming the readings."""
    def ways(relation: expr.Relation) -> list[expr.Relation]:
        return [relation] if relation.alternative is None else [relation, relation.alternative]

    verdicts = [compare(e, g) for e in ways(expected) for g in ways(given)]
    if all(verdict.same == verdicts[0].same for verdict in verdicts):
        return verdicts[0]
    doubts = [f"the {whose}'s {relation.ambiguity!r} reads two ways, as "
              f"{_show(relation.value)} or as {_show(relation.alternative.value)}"
              for whose, relation in (("reference", expected), ("response", given))
              if relation.alternative is not None]
    return _Verdict(False, f"{'; '.join(doubts)}; the answers match under one reading only",
                    sure=False)


#: A named quantity on an equation's left: ``B``, ``v_0``, ``L^{*}``, ``B(r)``, ``\\kappa(p, T)``.
_NAMED = re.compile(r"\s*(?P<name>\\?[A-Za-z]+(?:\s*_\s*(?:\{[^{}]*\}|\\?[A-Za-z0-9]+))?"
                    r"(?:\s*(?:'|\^\s*\{?\s*(?:\*|\\ast|\\prime)\s*\}?))*)\s*(?:\([^()]*\))?\s*")


def _named_side(gold: str) -> sympy.Expr | None:
    """The quantity a reference equation's left-hand side names (``B`` for ``B(r) = ...``), or
    None if that side is not a name, with or without its arguments."""
    left = re.split(r"(?<![<>!\\])=", gold, maxsplit=1)[0]
    if (match := _NAMED.fullmatch(left)) is None:
        return None
    try:
        name = expr.parse(match.group("name")).value
    except Unparseable:
        return None
    return name if isinstance(name, sympy.Symbol) else None


def _equations(gold: str, pred: str, settings: Settings) -> _Verdict:
    """Equations as equations, except that where the reference names a quantity on its left
    (``B(r) = ...``, ``v = ...``), an expression or an equation with that left-hand side (``B(r)``
    or ``B``) is compared by its right-hand side."""
    expected = _gold(expr.parse, gold)
    if len(expected.sides) < 2:
        return _expressions(gold, pred, settings)
    given = expr.parse(pred)
    named = _named_side(gold)
    if named is None and isinstance(expected.sides[0], sympy.Symbol):
        named = expected.sides[0]
    return _each_reading(expected, given, lambda e, g: _equation(e, g, named, settings))


def _equation(expected: expr.Relation, given: expr.Relation, named: sympy.Expr | None,
              settings: Settings) -> _Verdict:
    left, right = expected.sides[0], expected.sides[-1]
    if len(given.sides) < 2:
        if named is not None:
            verdict = _same(given.value, right, settings)
            return _Verdict(verdict.same, f"against the right-hand side: {verdict.reason}",
                            verdict.sure)
        return _Verdict(False, "the reference is an equation; the response gives an expression")
    if named is not None and given.sides[0] in (left, named):
        return _same(given.sides[-1], right, settings)
    return _proportional(given.sides[0] - given.sides[-1], left - right, settings)


def _substituted(given: sympy.Expr, expected: sympy.Expr,
                 settings: Settings = Settings()) -> tuple[sympy.Expr, sympy.Expr]:
    """Constants written as a symbol on one side only get their SI value on both; under
    ``settings.drop_constants`` (UGPhysics' convention) every constant is removed from both
    instead, by setting it to 1, so ``m c^2`` and ``m`` agree."""
    if settings.drop_constants:
        ones = {s: sympy.Integer(1) for s in given.free_symbols | expected.free_symbols
                if s.name in CONSTANTS}
        return given.xreplace(ones), expected.xreplace(ones)
    names_given = {s.name: s for s in given.free_symbols}
    names_expected = {s.name: s for s in expected.free_symbols}
    unmatched = set(names_given) ^ set(names_expected)
    if not unmatched or not unmatched <= set(CONSTANTS):
        return given, expected  # only when constants explain every difference in symbols
    values = {names_given.get(name) or names_expected[name]: sympy.Float(CONSTANTS[name])
              for name in unmatched}
    return given.xreplace(values), expected.xreplace(values)


def _points(symbols: list[sympy.Symbol], settings: Settings,
            *values: sympy.Expr) -> list[dict[sympy.Symbol, sympy.Expr]]:
    """Random points; a symbol in the limits of a product or a sum in ``values`` (the n of
    ``\\prod_{i=1}^{n}``) gets a whole number from 1 to 6, so the product can be evaluated."""
    counts = {free for value in values for big in value.atoms(sympy.Product, sympy.Sum)
              for limit in big.limits for free in sympy.Tuple(*limit[1:]).free_symbols}
    generator = random.Random(settings.seed)
    return [{s: sympy.Integer(generator.randint(1, 6)) if s in counts
             else sympy.Float(generator.uniform(0.5, 2.5)) for s in symbols}
            for _ in range(settings.probes)]


def _at(value: sympy.Expr, point: dict) -> complex | None:
    try:
        number = complex(value.evalf(15, subs=point))
    except (TypeError, ValueError, ZeroDivisionError, OverflowError):
        return None
    if not (math.isfinite(number.real) and math.isfinite(number.imag)):
        return None
    return number


def _agree(a: complex, b: complex, rtol: float) -> bool:
    """Relative agreement only: an absolute floor would let 1e-20 match 2.3e-28."""
    return abs(a - b) <= rtol * max(abs(a), abs(b))


def _same(given: sympy.Expr, expected: sympy.Expr, settings: Settings) -> _Verdict:
    """Two expressions are equal where they are defined: by value, probing, or sympy."""
    given, expected = _substituted(given, expected, settings)
    if given.has(sympy.oo, -sympy.oo, sympy.zoo) or expected.has(sympy.oo, -sympy.oo, sympy.zoo):
        same = given == expected
        return _Verdict(same, f"{_show(given)} vs {_show(expected)}")
    symbols = sorted(given.free_symbols | expected.free_symbols, key=lambda s: s.name)
    if not symbols:
        a, b = _at(given, {}), _at(expected, {})
        if a is None or b is None:
            raise Unparseable("the value cannot be computed")
        shown = f"{_complex(a)} vs {_complex(b)}"
        if a.imag or b.imag:
            return _Verdict(_agree(a, b, settings.rtol), shown)
        return _close(a.real, b.real, settings, shown)
    missing = sorted(s.name for s in expected.free_symbols - given.free_symbols)
    extra = sorted(s.name for s in given.free_symbols - expected.free_symbols)
    checked = 0
    for point in _points(symbols, settings, given, expected):
        a, b = _at(given, point), _at(expected, point)
        if a is None or b is None:
            continue
        checked += 1
        if not _agree(a, b, settings.rtol):
            where = ", ".join(f"{s}={float(v):.3g}" for s, v in point.items())
            detail = ""
            if missing or extra:
                detail = "; " + "; ".join(
                    text for text in (missing and f"the response lacks {', '.join(missing)}",
                                      extra and f"the response adds {', '.join(extra)}") if text)
            return _Verdict(False, f"different: at {where} the response gives {_complex(a)} and "
                                   f"the reference {_complex(b)}{detail}")
    if checked >= max(3, settings.probes // 2):
        return _Verdict(True, f"equal at {checked} random points")
    difference = sympy.simplify(given - expected)
    if difference == 0:
        return _Verdict(True, "equal symbolically")
    raise Unparseable("the expressions cannot be evaluated at sample points")


def _proportional(given: sympy.Expr, expected: sympy.Expr, settings: Settings) -> _Verdict:
    """Two equations ``f = 0`` and ``g = 0`` are the same if f / g is one non-zero constant."""
    given, expected = _substituted(given, expected, settings)
    symbols = sorted(given.free_symbols | expected.free_symbols, key=lambda s: s.name)
    ratios = []
    for point in _points(symbols, settings, given, expected):
        a, b = _at(given, point), _at(expected, point)
        if a is None or b is None or abs(b) < 1e-12:
            continue
        ratios.append(a / b)
    if len(ratios) < max(3, settings.probes // 2):
        raise Unparseable("the equations cannot be evaluated at sample points")
    first = ratios[0]
    if abs(first) > 1e-12 and all(_agree(r, first, settings.rtol / 10) for r in ratios):
        scale = "" if _agree(first, 1, 1e-9) else f" (scaled by {_complex(first)})"
        return _Verdict(True, f"the same equation{scale}, checked at {len(ratios)} random points")
    return _Verdict(False, "different equations: they disagree at random points")


def _complex(value: complex) -> str:
    return f"{value.real:.4g}" if abs(value.imag) < 1e-12 else f"{value:.4g}"


def _show(value: sympy.Expr) -> str:
    return sympy.sstr(value, full_prec=False).replace("zoo", "∞").replace("oo", "∞")


# -- intervals -------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Interval:
    left_closed: bool
    low: sympy.Expr
    high: sympy.Expr
    right_closed: bool

    def __str__(self) -> str:
        return (f"{'[' if self.left_closed else '('}{_show(self.low)}, {_show(self.high)}"
                f"{']' if self.right_closed else ')'}")


def intervals(text: str) -> list[_Interval]:
    """``(0, \\pi/2]``, ``]0, 1[``, ``[0, 1) \\cup (2, \\infty)`` or ``0 < x \\le 1`` as intervals."""
    pieces = re.split(r"\\cup|∪", text)
    return [_interval(piece.strip()) for piece in pieces]


def _interval(text: str) -> _Interval:
    if len(text) >= 2 and text[0] in "([]" and text[-1] in ")[]":
        ends = latex.split_top_level(text[1:-1], ",")
        if len(ends) != 2:
            raise Unparseable(f"{text!r} is not an interval of two ends")
        low, high = (expr.parse(end).value for end in ends)
        return _Interval(text[0] == "[", low, high, text[-1] == "]")
    relation = expr.parse(text)
    if len(relation.sides) == 3 and set(relation.relations) <= {"<", "<="}:
        low, _, high = relation.sides
        return _Interval(relation.relations[0] == "<=", low, high, relation.relations[1] == "<=")
    if len(relation.sides) == 2 and relation.relations[0] in ("<", "<=", ">", ">="):
        closed = relation.relations[0].endswith("=")
        left, right = relation.sides
        bound, upper = (right, relation.relations[0].startswith("<"))
        if isinstance(right, sympy.Symbol) and not isinstance(left, sympy.Symbol):
            bound, upper = left, not upper
        if upper:
            return _Interval(False, -sympy.oo, bound, closed)
        return _Interval(closed, bound, sympy.oo, False)
    raise Unparseable(f"{text!r} is not an interval")


def _start(interval: _Interval) -> float:
    try:
        return float(interval.low)
    except TypeError:
        return math.inf  # symbolic ends sort last, in the order written


def _intervals(gold: str, pred: str, settings: Settings) -> _Verdict:
    expected = _gold(intervals, gold)
    given = intervals(pred)
    shown = f"{' ∪ '.join(map(str, given))} vs {' ∪ '.join(map(str, expected))}"
    if len(given) != len(expected):
        return _Verdict(False, f"{shown}: a different number of intervals")
    given, expected = sorted(given, key=_start), sorted(expected, key=_start)
    for one, other in zip(given, expected):
        if (one.left_closed, one.right_closed) != (other.left_closed, other.right_closed):
            return _Verdict(False, f"{shown}: the brackets differ")
        for end, target in ((one.low, other.low), (one.high, other.high)):
            if not _same(end, target, settings).same:
                return _Verdict(False, f"{shown}: the ends differ")
    return _Verdict(True, f"{shown}: the same ends and brackets")
