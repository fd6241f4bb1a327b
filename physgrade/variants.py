"""Contextual variants checked against their base: the same numbers, units and answer.

A contextual variant retells its base question with the names and places of one world region;
the physics must not move. A *parameter variant* is the base's template with other numbers and
its answer recomputed (SymPyBench's variants): its numbers are meant to differ, so it is no
drift. A variant (``variant_of``) is taken for a parameter variant when it shares its base's
``variant_group`` (the template) and states other quantities than its base; every other variant
is contextual, and only those are checked. Questions of one template with no base among them
have nothing to be checked against and are not listed. Each contextual variant is compared
with its base three ways:

- the quantities its statement states, as multisets of (value, unit): a number with the unit
  written right after it ("2.5 m/s^2", "20 °C", "3.0 × 10^8 m/s", "a 2.0-kg block") or a bare
  number. The same quantity written otherwise matches ("m/s²" and "m/s^2", "0.5" and "0.50",
  "kg" and "kilograms"); 45 m against 4500 cm does not (a variant keeps its base's numbers),
  though the difference says that it is the same quantity in other units;
- the reference answers, through the answer checker (the base's answer is the reference, the
  variant's the answer) with a tolerance of a millionth, and the answers' unit and type fields;
- the options of a multiple-choice item: the same letters, and the same quantities in each.

What is not a quantity, so that retelling the story is not drift: numbers that belong to a name
("Room 12B", "Route 66", "COVID-19", "H2O", "v_0", "#4"), years after a word such as "in" or
"since" ("in 2019"), ordinals ("3rd floor") and numbers written as words ("four times"). A unit
is taken only right after a number and only from a fixed vocabulary of physics units (symbols
with their SI prefixes, and unit names), so prose words that pint also knows as units ("in",
"a", "at", "are", "cup", "mass", "point") never become units.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable, NamedTuple, Sequence

from .answers import latex, units
from .answers.compare import declared_types
from .answers.extract import without_markdown
from .answers.outcome import Outcome, Settings
from .project import Project
from .tasks import Task

#: The answer checker's settings here: a variant keeps its base's answer, not one within 2%.
STRICT = Settings(rtol=1e-6)
#: How often the reading of the variants reports progress (and can be cancelled).
_REPORT_EVERY = 100

# -- quantities in a statement ---------------------------------------------------------------

_EXPONENT = r"(?:\{\s*[-+]?\s*\d+\s*\}|\(\s*[-+]?\s*\d+\s*\)|[-+]?\d+)"
#: A number after :func:`latex.clean`: 2.5, .5, 1.5 \times 10^-3, 3e8, 10^{5}.
_NUMBER = re.compile(
    rf"(?P<sign>[-+])?(?:(?P<ten>10)\s*\^\s*(?P<ten_power>{_EXPONENT})"
    rf"|(?P<mantissa>\d+(?:\.\d+)?|\.\d+)(?:\s*(?:\\times|\\cdot|\*|x)\s*10\s*\^\s*"
    rf"(?P<power>{_EXPONENT})|[eE](?P<e>[-+]?\d+)(?![A-Za-z]))?)")
#: What may stand before a number that belongs to a name, a subscript or a power: v_0, x^{2}.
_ATTACHED = re.compile(r"(?:[\w.#]|[\^_]\s*\{?\s*)$")
#: Words after which a four-digit number is a year: "in 2019", "since 1998".
_YEAR_CUES = frozenset(
    "in since until till by from year circa around before after during spring summer autumn "
    "fall winter january february march april may june july august september october november "
    "december".split())
_WORD_BEFORE = re.compile(r"([A-Za-z][\w'’]*)\s+$")
_SENTENCE_END = re.compile(r"(?:^|[.!?:;(\[\"“])\s*$")

#: The units a number may carry: SI symbols with the prefixes physics uses, other symbols, and
#: unit names (with SI prefixes and plurals). Words outside these are prose, not units.
_PREFIXED_SYMBOLS = ("m|g|s|A|K|mol|N|J|W|V|C|F|H|T|Wb|Pa|Hz|eV|L|l|rad|sr|Bq|Gy|Sv|lm|lx|S|bar|"
                     "cal|t|Wh|\\\\Omega|ohm")
_SYMBOL = re.compile(rf"(?:(?:[TGMkcmnpf]|\\mu\s*)?(?:{_PREFIXED_SYMBOLS})|min|mins|h|hr|hrs|"
                     "sec|secs|yr|yrs|atm|mmHg|torr|psi|ft|mi|yd|lb|lbs|oz|mph|kph|rpm|dB|AU|au|"
                     "ly|pc|erg|dyn|amu|u|hPa|cd|cc|deg)")
_NAME = re.compile(
    "(?:kilo|mega|giga|tera|centi|milli|micro|nano|pico|femto)?"
    "(?:metre|meter|gram|second|ampere|amp|kelvin|mole|candela|newton|joule|watt|volt|coulomb|"
    "farad|henry|henrie|tesla|weber|pascal|hertz|ohm|siemens|electronvolt|litre|liter|radian|"
    "steradian|becquerel|gray|sievert|lumen|lux|calorie|tonne|ton|bar|minute|hour|day|week|year|"
    "degree|revolution|atmosphere|torr|mile|foot|feet|inch|inche|yard|pound|ounce|gallon|knot|"
    "parsec|lightyear|angstrom|gauss|erg|dyne|horsepower|percent|decibel)s?")
_POWER = rf"\s*\^\s*{_EXPONENT}"
#: One unit after a number, in latex.clean's form: a symbol or a name, degrees, a percentage.
_ATOM_BODY = (r"(?:\^\s*\\circ(?:\s*[CF](?![A-Za-z]))?|%|\\AA|degrees?\s+(?:Celsius|Fahrenheit)"
              r"|(?:\\mu\s*)?[A-Za-z]++(?:\\Omega)?|\\Omega)")
_ATOM = rf"{_ATOM_BODY}(?:{_POWER})?"
_POWERED_ATOM = rf"{_ATOM_BODY}{_POWER}"
_GROUP = rf"\(\s*{_ATOM}(?:(?:\s*(?:/|\*|\\cdot)\s*|\s+){_ATOM})*\s*\)"
_JOIN = rf"(?:\s*(?:/|\*|\\cdot)\s*|\s+per\s+|\s+(?={_POWERED_ATOM}))"
#: A unit: atoms and groups joined by /, ·, "per", or a space before a power ("m s^{-1}").
_UNIT = re.compile(rf"(?:-(?=[A-Za-z\\]))?(?:{_ATOM}|{_GROUP})(?:{_JOIN}(?:{_ATOM}|{_GROUP}))*")
_FIRST_ATOM = re.compile(rf"(?:-(?=[A-Za-z\\]))?{_ATOM}")
_WORDS = re.compile(r"(?:\\mu\s*)?[A-Za-z]+(?:\\Omega)?|\\Omega")
_DEGREES = re.compile(r"degrees?\s+(Celsius|Fahrenheit)")
_AMPS = re.compile(r"(?<![A-Za-z])(kilo|milli|micro)?amps?(?![A-Za-z])")
_OPERATORS = re.compile(r"\\(?:cdot|times|circ|AA)(?![A-Za-z])|\bper\b")
_CDOT = re.compile(r"\s*\\cdot\s*")  # a product of units, shown as "kg·K" (not "kg×K")
_BOXED = re.compile(r"\\(?:boxed|fbox)(?![A-Za-z])")
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+")


class UnitSize(NamedTuple):
    """A unit as pint reads it: its dimension and its size in SI (so "kg" is "kilograms")."""

    dimension: str
    size: float


@dataclass(frozen=True, slots=True)
class Stated:
    """A quantity a text states: as written (made readable), its number, its unit (None for a
    bare number) and that unit's text as pint reads it (to convert it; not compared)."""

    shown: str
    value: float
    unit: UnitSize | None
    unit_text: str | None = field(default=None, compare=False)

    @property
    def key(self) -> tuple[float, UnitSize | None]:
        return self.value, self.unit

    @property
    def dimension(self) -> str:
        return self.unit.dimension if self.unit else "dimensionless"

    def si(self) -> float | None:
        """The quantity in SI units (None if pint cannot convert it)."""
        if self.unit_text is None:
            return self.value
        try:
            return float(units.registry().Quantity(self.value, units.parse_unit(self.unit_text))
                         .to_base_units().magnitude)
        except Exception:  # pint raises many kinds for what it cannot convert
            return None


def quantities(text: str | None) -> list[Stated]:
    """The quantities ``text`` states, in order: numbers with their units, and bare numbers."""
    found: list[Stated] = []
    for line in _plain_lines(text or ""):
        found += _line_quantities(line)
    return found


def _plain_lines(text: str) -> Iterable[str]:
    """The text in latex.clean's plain form, a piece at a time: clean reads at most
    :data:`latex.MAX_LENGTH` characters, and a piece it cannot read is taken as written."""
    text = _BOXED.sub(" ", without_markdown(text))
    for line in text.splitlines():
        for piece in _pieces(line):
            try:
                yield latex.clean(piece)
            except latex.Unparseable:
                yield piece


def _pieces(line: str) -> Iterable[str]:
    """``line`` in pieces short enough for latex.clean, cut between sentences (or words)."""
    if len(line) <= latex.MAX_LENGTH:
        yield line
        return
    piece = ""
    for sentence in _SENTENCE_BREAK.split(line):
        for word in (sentence.split(" ") if len(sentence) > latex.MAX_LENGTH else [sentence]):
            if piece and len(piece) + len(word) + 1 > latex.MAX_LENGTH:
                yield piece
                piece = ""
            piece = f"{piece} {word}" if piece else word[:latex.MAX_LENGTH]
    if piece:
        yield piece


def _line_quantities(line: str) -> list[Stated]:
    found = []
    for number in _NUMBER.finditer(line):
        start, sign = number.start(), number.group("sign")
        before = line[:start]
        if sign and before and (before[-1].isalnum() or before[-1] == ")"):
            if before[-1].isalpha():
                continue  # F-16, COVID-19: a name
            start, sign = start + 1, None  # 10-20 m, (a)-(b): a range or a difference
            before = line[:start]
        if _ATTACHED.search(before):
            continue
        value = _value(number, sign)
        if value is None:
            continue
        after = _unit_after(line, number.end())
        if after is None:
            if line[number.end():number.end() + 1].isalpha():
                continue  # 12B, 3rd, 0.980c: a name, an ordinal or a symbol, not a quantity
            if _is_year(number, before) or _is_name(number, before):
                continue
        end = after[0].end() if after else number.end()
        unit, unit_text = (after[1], _unit_text(after[0])) if after else (None, None)
        shown = units.readable(_CDOT.sub("·", line[start:end]))
        found.append(Stated(shown, value, unit, unit_text))
    return found


def _value(number: re.Match[str], sign: str | None) -> float | None:
    """The number's value, rounded to 12 significant figures (so 0.5 and 0.50 are one)."""
    power_text = number.group("ten_power") or number.group("power") or number.group("e")
    power = int(re.sub(r"[{}()\s]", "", power_text)) if power_text else 0
    if abs(power) > 300:
        return None
    value = (1.0 if number.group("ten") else float(number.group("mantissa"))) * 10.0 ** power
    if not math.isfinite(value):
        return None
    return float(f"{-value if sign == '-' else value:.12g}")


def _unit_after(line: str, end: int) -> tuple[re.Match[str], UnitSize] | None:
    """The unit written right after a number ending at ``end``, if it is one: the whole of a
    compound unit if every word in it is a unit, else its first word alone."""
    gap = len(line[end:]) - len(line[end:].lstrip())
    for pattern in (_UNIT, _FIRST_ATOM):
        match = pattern.match(line, end + gap)
        if match is None or not _all_units(match.group()):
            continue
        unit = _read_unit(_unit_text(match))
        if unit is not None:
            return match, unit
    return None


def _unit_text(match: re.Match[str]) -> str:
    """A unit as pint should read it: "degrees Celsius" is degC, "amps" amperes (pint's "amps"
    are attometres per second)."""
    text = _AMPS.sub(r"\1ampere", match.group().lstrip("-").replace(" per ", "/"))
    return _DEGREES.sub(lambda m: f"deg{m.group(1)[0]}", text)


def _all_units(text: str) -> bool:
    """Whether every word of a unit is in the vocabulary (a prose word is not a unit)."""
    for word in _WORDS.findall(_OPERATORS.sub(" ", _DEGREES.sub(" ", text))):
        if not (_SYMBOL.fullmatch(word) or _NAME.fullmatch(word.lower())):
            return False
    return True


@lru_cache(maxsize=4096)
def _read_unit(text: str) -> UnitSize | None:
    """A unit as pint reads it, or None if it is none."""
    try:
        size = units.registry().Quantity(1, units.parse_unit(text)).to_base_units()
    except Exception:  # pint raises many kinds (even ZeroDivisionError) for non-units
        return None
    return UnitSize(str(size.dimensionality), float(f"{size.magnitude:.9g}"))


def _is_year(number: re.Match[str], before: str) -> bool:
    """A four-digit whole number from 1000 to 2100 after "in", "since", a month…: a year."""
    text = number.group()
    if not (len(text) == 4 and text.isdigit() and 1000 <= int(text) <= 2100):
        return False
    word = _WORD_BEFORE.search(before)
    return word is not None and word.group(1).lower() in _YEAR_CUES


def _is_name(number: re.Match[str], before: str) -> bool:
    """A whole number after a capitalised word inside a sentence: Room 12, Route 66, Table 2."""
    if not number.group().isdigit():
        return False
    word = _WORD_BEFORE.search(before)
    if word is None or not word.group(1)[0].isupper():
        return False
    return not _SENTENCE_END.search(before[:word.start()])


# -- comparing --------------------------------------------------------------------------------


#: The kinds of variant: a retelling with its base's numbers, or the template's other numbers.
CONTEXTUAL, PARAMETER = "contextual", "parameter"


@dataclass(frozen=True, slots=True)
class VariantCheck:
    """One variant against its base: whether it kept its base's numbers, units and answer. A
    parameter variant is not checked: it is ``ok`` with no differences."""

    id: str
    base: str
    ok: bool
    differences: list[str]
    kind: str = CONTEXTUAL

    def as_dict(self) -> dict:
        return {"id": self.id, "base": self.base, "kind": self.kind, "ok": self.ok,
                "differences": list(self.differences)}

    def text(self) -> str:
        """"q-0101 (variant of q-0005): faithful" or its differences, one per line."""
        if self.kind == PARAMETER:
            return f"{self.id} (parameter variant of {self.base}): other numbers, not drift"
        head = f"{self.id} (variant of {self.base})"
        if self.ok:
            return f"{head}: faithful"
        return "\n".join([f"{head}: drifted", *(f"  {line}" for line in self.differences)])


@dataclass(frozen=True, slots=True)
class _Question:
    id: str
    question: str
    answer: str | None
    answer_type: str | None
    unit: str | None
    options: dict[str, str] | None
    variant_group: str | None


_COLUMNS = "id, question, answer, answer_type, unit, options, variant_group"
_VARIANTS = (f"SELECT v.variant_of, {', '.join('v.' + c for c in _COLUMNS.split(', '))} "
             "FROM questions v WHERE v.variant_of IS NOT NULL ORDER BY v.id")


def check_variants(project: Project, task: Task | None = None) -> list[VariantCheck]:
    """Every variant of the project against its base, in id order (parameter variants listed
    as such, unchecked).

    The statements and fields are compared in this process; the answers that are not written
    alike go to the answer checker's worker processes (started only then) in one batch."""
    conn = project.conn
    rows = conn.execute(_VARIANTS).fetchall()
    bases = {row[0]: _question(row) for row in conn.execute(
        f"SELECT {_COLUMNS} FROM questions WHERE id IN "
        "(SELECT variant_of FROM questions WHERE variant_of IS NOT NULL)")}
    stated: dict[str, list[Stated]] = {}  # a base's quantities, read once for all its variants
    found: list[tuple[str, str, list[str], str]] = []
    to_check: list[tuple[int, _Question, _Question]] = []
    for index, (base_id, *fields) in enumerate(rows):
        if task is not None and index % _REPORT_EVERY == 0:
            task.report(index, len(rows), "Comparing variants with their bases")
        variant = _question(fields)
        base = bases.get(base_id)
        if base is None:
            found.append((variant.id, base_id, [f"base: {base_id} is not in the project"],
                          CONTEXTUAL))
            continue
        if base.id not in stated:
            stated[base.id] = quantities(base.question)
        mine = quantities(variant.question)
        if _of_one_template(base, variant) and _keys(mine) != _keys(stated[base.id]):
            found.append((variant.id, base_id, [], PARAMETER))
            continue
        differences = _compared("statement", stated[base.id], mine)
        differences += _fields(base, variant) + _options(base, variant)
        if _differ(base.answer, variant.answer):
            if base.answer and variant.answer:
                to_check.append((len(found), base, variant))
            else:
                differences.append(f"answer: {_or_none(base.answer)} in the base, "
                                   f"{_or_none(variant.answer)} in the variant")
        found.append((variant.id, base_id, differences, CONTEXTUAL))
    for index, line in _answer_checks(to_check, task):
        found[index][2].append(line)
    return [VariantCheck(vid, base_id, not lines, lines, kind)
            for vid, base_id, lines, kind in found]


def _question(row: Sequence[Any]) -> _Question:
    qid, text, answer, answer_type, unit, options, variant_group = row
    return _Question(qid, text or "", answer, answer_type, unit,
                     json.loads(options) if options else None, variant_group)


def _of_one_template(base: _Question, variant: _Question) -> bool:
    return variant.variant_group is not None and variant.variant_group == base.variant_group


def _keys(stated: list[Stated]) -> Counter[tuple[float, UnitSize | None]]:
    """The quantities as a multiset (how they are written aside)."""
    return Counter(quantity.key for quantity in stated)


def _differ(a: str | None, b: str | None) -> bool:
    return " ".join((a or "").split()) != " ".join((b or "").split())


def _or_none(text: str | None) -> str:
    return " ".join(text.split()) if text and text.strip() else "none"


def _compared(where: str, base: list[Stated], variant: list[Stated]) -> list[str]:
    """The quantities of one multiset missing from the other, paired where they are one
    quantity changed (the same unit, then the same dimension, then the same number)."""
    left = _keys(variant)
    dropped = []
    for quantity in base:
        if left[quantity.key]:
            left[quantity.key] -= 1
        else:
            dropped.append(quantity)
    added = []
    for quantity in variant:
        if left[quantity.key]:
            left[quantity.key] -= 1
            added.append(quantity)
    lines = []
    for same in (lambda a, b: a.unit == b.unit, lambda a, b: a.dimension == b.dimension,
                 lambda a, b: a.value == b.value):
        for quantity in list(dropped):
            partner = next((other for other in added if same(quantity, other)), None)
            if partner is not None:
                dropped.remove(quantity)
                added.remove(partner)
                lines.append(f"{where}: {quantity.shown} in the base, {partner.shown} in the "
                             f"variant{_same_in_si(quantity, partner)}")
    lines += [f"{where}: {q.shown} in the base, missing from the variant" for q in dropped]
    lines += [f"{where}: {q.shown} in the variant, not in the base" for q in added]
    return lines


def _same_in_si(a: Stated, b: Stated) -> str:
    if a.unit == b.unit or a.dimension != b.dimension:
        return ""
    first, second = a.si(), b.si()
    if first is None or second is None or not math.isclose(first, second, rel_tol=1e-6):
        return ""
    return " (the same quantity in other units)"


def _fields(base: _Question, variant: _Question) -> list[str]:
    """The answer's unit and type fields: the same unit however written, the same types."""
    lines = []
    if _unit_field(base.unit) != _unit_field(variant.unit):
        lines.append(f"unit of the answer: {_or_none(base.unit)} in the base, "
                     f"{_or_none(variant.unit)} in the variant")
    if _type_field(base.answer_type) != _type_field(variant.answer_type):
        lines.append(f"answer type: {_or_none(base.answer_type)} in the base, "
                     f"{_or_none(variant.answer_type)} in the variant")
    return lines


def _unit_field(unit: str | None) -> object:
    if units.is_missing(unit):
        return None
    assert unit is not None
    try:
        return _read_unit(latex.clean(unit)) or " ".join(unit.split())
    except latex.Unparseable:
        return " ".join(unit.split())


def _type_field(answer_type: str | None) -> object:
    return declared_types(answer_type) or " ".join((answer_type or "").lower().split())


def _options(base: _Question, variant: _Question) -> list[str]:
    """A multiple-choice item keeps its letters and the quantities of each option (an
    option's words may be retold)."""
    if base.options is None and variant.options is None:
        return []
    mine, theirs = base.options or {}, variant.options or {}
    if set(mine) != set(theirs):
        return [f"options: {_letters(mine)} in the base, {_letters(theirs)} in the variant"]
    lines = []
    for letter in mine:
        lines += _compared(f"option {letter}", quantities(str(mine[letter])),
                           quantities(str(theirs[letter])))
    return lines


def _letters(options: dict[str, str]) -> str:
    return ", ".join(options) if options else "none"


def _answer_checks(pairs: list[tuple[int, _Question, _Question]],
                   task: Task | None) -> Iterable[tuple[int, str]]:
    """The answers written differently, checked in the answer checker's sandbox: the line to
    add for each that is not the same answer."""
    if not pairs:
        return
    from .answers.sandbox import Checker, Request  # worker processes: only when needed

    requests = [Request(base.answer or "", variant.answer or "",
                        "MC" if base.options else base.answer_type, base.unit)
                for _, base, variant in pairs]
    with Checker(STRICT) as checker:
        checks = checker.map(requests, task, len(requests))
        for (index, base, variant), (_, check) in zip(pairs, checks):
            if check.outcome is Outcome.EQUIVALENT:
                continue
            why = ("rules" if check.outcome is Outcome.NOT_EQUIVALENT
                   else "the rules could not compare them")
            yield index, (f"answer: {_or_none(base.answer)} in the base, "
                          f"{_or_none(variant.answer)} in the variant ({why}: {check.reason})")
