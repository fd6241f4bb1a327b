"""Rule-based answer checking: its speed, its robustness on a physics answer set, hostile input.

Targets (issue: rule-based answer checking), each measured in this one run:

1. Speed. 1,000 checks, a mix of the answer set's types (numbers with units, expressions,
   equations, intervals, TF, MC, compound answers; matching and perturbed responses, some inside
   a worked solution), through ``Checker`` with ``os.cpu_count()`` workers in under 30 s, pool
   start-up included.
2. Robustness on a public physics benchmark's answers, in UGPhysics' JSON Lines format. Each
   reference must match itself (at least 98%); rewritten forms must match: numbers in scientific
   notation, a value in a prefixed unit (1.7 kg as 1700 g), terms reordered (summands swapped, or
   a product's factors reversed); perturbed copies must not match: the value x1.05 (or the
   whole expression), x10^3, a flipped sign, and for TF the other truth value and for MC another
   option (target: no false matches). A variant that cannot apply to a reference (nothing to
   rewrite, a zero to negate, an equation with a side that is 0) is skipped and counted.
   Variants are built only for references the parser reads and finds equal to themselves (a
   reference it cannot read still matches an identical copy, as text: counted apart). A compound
   answer is rewritten in every part and perturbed in its first part only. ``--verbose`` lists
   every failure: a self-match, a rewrite that does not match, a perturbation that does or that
   is not read.
3. Hostile input (code, exponent towers, a huge factorial, deep nesting, a megabyte) as the
   response and as the reference: each ends unparseable or timeout in under 3 s, and the code
   never runs (its marker file is never created).

The answer set is ``benchmarks/data/answer_set.jsonl`` (written for this benchmark, not taken
from a dataset) unless ``--answers`` names files; the speed mix is drawn from the same set.
References are split into parts with the checker's own helpers (``compare.reference_parts`` and its
neighbours), so that each variant lines up part by part with what the checker compares.

    python benchmarks/bench_answers.py [--answers FILE_OR_GLOB ...] [--checks 1000]
                                       [--workers N] [--verbose]
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import random
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import sympy
from sympy.core.function import AppliedUndef
from sympy.printing.latex import LatexPrinter

from physgrade.answers import compare, expr, latex, units
from physgrade.answers.compare import Part
from physgrade.answers.latex import Unparseable
from physgrade.answers.sandbox import Checker, Request

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_ANSWERS = ROOT / "benchmarks" / "data" / "answer_set.jsonl"
SPEED_TARGET_S = 30.0
SELF_TARGET = 0.98
HOSTILE_TARGET_S = 3.0
MARKER = Path("/tmp/physgrade-bench-pwned")

REWRITES = ("scientific notation", "prefixed unit", "reordered terms")
PERTURBATIONS = ("value x1.05", "wrong exponent x10^3", "flipped sign", "other TF/MC choice")


# -- the answer set ----------------------------------------------------------------------------

@dataclass
class Record:
    source: str
    line: int
    answers: str
    answer_type: str | None
    unit: str | None

    @property
    def where(self) -> str:
        return f"{self.source}:{self.line}"


def load(patterns: list[str]) -> list[Record]:
    """Records from JSON Lines files (paths or globs), in UGPhysics' fields."""
    paths = []
    for pattern in patterns:
        found = sorted(glob.glob(pattern)) or [pattern]
        paths.extend(Path(path) for path in found)
    records = []
    for path in paths:
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if line.strip():
                    row = json.loads(line)
                    records.append(Record(path.name, number, str(row.get("answers") or ""),
                                          row.get("answer_type"), row.get("unit")))
    return records


def parts_of(record: Record) -> list[Part] | None:
    """The reference's parts, split exactly as ``compare.check`` splits them (None if it can't)."""
    try:
        return compare.reference_parts(record.answers, record.answer_type, record.unit)
    except Unparseable:
        return None


# -- numbers -----------------------------------------------------------------------------------

_RELATION = re.compile(r"(<=|>=|(?<![<>!\\])=|\\approx|\\simeq|\\equiv|\\leqslant|\\geqslant"
                       r"|\\leq?(?![A-Za-z])|\\geq?(?![A-Za-z])|\\lt(?![A-Za-z])|\\gt(?![A-Za-z])"
                       r"|\\neq?(?![A-Za-z])|<|>)")
#: A number literal, with any "\times 10^{n}" after it; not part of a name or a larger number.
_LITERAL = re.compile(r"(?<![\w.\\])(?P<mantissa>\d+(?:\.\d+)?|\.\d+)"
                      r"(?P<power>\s*\\(?:times|cdot)\s*10\s*\^\s*(?:\{\s*(?P<e1>[-+]?\s*\d+)\s*\}"
                      r"|(?P<e2>[-+]?\d)))?(?![\d.])(?!\s*\^)")


def number_text(value: Decimal) -> str:
    """A decimal as an answer writes it: plain when short, else "m \\times 10^{e}"."""
    value = value.normalize()
    if value == 0:
        return "0"
    exponent = value.adjusted()
    if -4 <= exponent < 6:
        return format(value, "f")
    return scientific(value, exponent)


def scientific(value: Decimal, exponent: int | None = None) -> str:
    exponent = value.adjusted() if exponent is None else exponent
    mantissa = value.scaleb(-exponent).normalize()
    return rf"{format(mantissa, 'f')} \times 10^{{{exponent}}}"


def literal_value(match: re.Match) -> Decimal:
    exponent = match.group("e1") or match.group("e2") or "0"
    return Decimal(match.group("mantissa")).scaleb(int(exponent.replace(" ", "")))


def rewrite_scientific(match: re.Match) -> str:
    """The literal in scientific notation, shifted by one place if it already was (or if the
    plain form is m x 10^0), so the text always changes."""
    value = literal_value(match)
    exponent = value.adjusted()
    if match.group("power") or exponent == 0:
        exponent -= 1
    return scientific(value, exponent)


def _script_positions(text: str) -> set[int]:
    """Indices inside a sub- or superscript (``_{12}``, ``^{-3}``, ``_0``) or a root's index."""
    inside, stack, previous = set(), [], ""
    for index, char in enumerate(text):
        in_script = bool(stack) and stack[-1]
        if char == "{":
            stack.append(in_script or previous in ("^", "_"))
        elif char == "[":
            stack.append(in_script or text[:index].rstrip().endswith(r"\sqrt"))
        elif char in "}]" and stack:
            stack.pop()
        elif in_script or (previous in ("^", "_") and not char.isspace()):
            inside.add(index)
        if not char.isspace():
            previous = char
    return inside


def literals(text: str, wanted=lambda value: True) -> list[re.Match]:
    """Number literals in an expression's text, outside scripts, that ``wanted`` accepts."""
    scripts = _script_positions(text)
    return [m for m in _LITERAL.finditer(text)
            if m.start() not in scripts and wanted(literal_value(m))]


def replace_matches(text: str, matches: list[re.Match], function) -> str:
    for match in reversed(matches):
        text = text[:match.start()] + function(match) + text[match.end():]
    return text


@dataclass(frozen=True)
class Quantity:
    """A reference part read as a literal number with its unit (as text), if it is one."""

    value: Decimal
    unit: str | None          # the unit text, as written in the answer or the unit field
    scientific: bool          # written with "\times 10^{n}"


def quantity(part: Part) -> Quantity | None:
    """An NV part that is a number as written (``1.7``, ``2.4 \\times 10^{-5}``, ``9.8 m/s^2``),
    with its unit; None for closed forms (``\\frac{3}{5}``, ``2\\sqrt{2}``) and anything else."""
    if part.kind != "NV":
        return None
    text = compare.value_text(part.text)
    try:
        prefix = expr.parse_prefix(text)
    except Unparseable:
        return None
    if prefix is None or prefix.significant is None or prefix.value.free_symbols:
        return None
    rest = text[prefix.end:].strip()
    if rest:
        try:
            if units.quantity(text) is None:  # the rest must read as a unit, as the checker reads it
                return None
        except Unparseable:
            return None
    unit = rest or (None if units.is_missing(part.unit) else part.unit)
    written = text[:prefix.end]
    return Quantity(Decimal(f"{float(prefix.value):.15g}"), unit,
                    r"\times" in written or r"\cdot" in written)


def with_unit(value_text: str, unit: str | None) -> str:
    """A number and its unit (none if ``unit`` is None)."""
    return value_text if unit is None else f"{value_text} {unit}"


# -- units -------------------------------------------------------------------------------------

#: Unit symbols SI prefixes are used with, and the prefixes tried.
_PREFIXABLE = ("m", "g", "s", "J", "eV", "N", "W", "Pa", "K", "Hz", "V", "A", "C", "T", "ohm",
               "F", "H", "mol", "L", "Wb", "Bq", "Gy", "Sv", "S", "b", "cal", "bar")
#: pint's names that the checker reads only as LaTeX (units.pint_syntax in reverse).
_LATEX_NAMES = {"degC": r"^{\circ}C", "degF": r"^{\circ}F", "degree": r"^{\circ}", "ohm": r"\Omega",
                "bohr_magneton": r"\mu_{B}", "electron_mass": r"m_{e}", "bohr_radius": r"a_{0}",
                "hbar": r"\hbar", "angstrom": r"\AA", "percent": r"\%"}
_PREFIXES = ("G", "M", "k", "c", "m", "u", "n", "p", "f")
_NAME = re.compile(r"[A-Za-z_]+")


def prefixed(value: Decimal, unit_text: str) -> tuple[Decimal, str] | None:
    """The value in the same unit with one SI prefix changed (kg -> g, K -> kK), or None."""
    try:
        syntax = units.pint_syntax(latex.clean(re.sub(r"\\[,;:! ]", " ", unit_text)))
    except Unparseable:
        return None
    # a prefix set apart ("\\mathrm{k}\\Omega") joins its unit, or pint reads k as a constant
    syntax = re.sub(r"(?<![A-Za-z_])([kMG]) (?=[A-Za-z])", r"\1", syntax)
    registry = units.registry()
    try:
        old = registry.parse_units(syntax)
    except Exception:
        return None
    for match in _NAME.finditer(syntax):
        name = match.group()
        if name in _PREFIXABLE:
            current, base = "", name
        elif len(name) > 1 and name[0] in _PREFIXES and name[1:] in _PREFIXABLE:
            current, base = name[0], name[1:]
        else:
            continue
        choices = [""] if current else (["k", "M"] if abs(value) >= 100 else ["m", "u"])
        for prefix in choices + [p for p in ("k", "m") if p != current]:
            new = syntax[:match.start()] + prefix + base + syntax[match.end():]
            try:
                ratio = registry.Quantity(1, old).to(registry.parse_units(new)).magnitude
            except Exception:  # another dimension, or a name pint reads otherwise
                continue
            shift = round(math.log10(ratio)) if ratio > 0 else 0
            if shift and math.isclose(ratio, 10.0 ** shift, rel_tol=1e-9):
                return value.scaleb(shift), _latex_unit(new)
    return None


def _latex_unit(syntax: str) -> str:
    text = re.sub(r"\*\*\s*\(\s*([-+]?\d+(?:\.\d+)?)\s*\)", r"^{\1}", syntax)
    text = text.replace("*", r" \cdot ")
    text = re.sub(r"\bu(?=[A-Za-z])", r"\\mu ", text)
    text = re.sub(r"[A-Za-z_]+", lambda m: _LATEX_NAMES.get(m.group(), m.group()), text)
    text = text.replace("ohm", r"\Omega")
    return rf"\mathrm{{{text}}}"


# -- expressions: reordering -------------------------------------------------------------------

#: Names the parser reads as commands (``\\theta``); any other name is plain letters.
_GREEK = set("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron rho "
             "sigma tau upsilon phi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi "
             "Psi Omega hbar nabla pi".split())


def symbol_latex(name: str) -> str:
    """A symbol's name (``v_0``, ``k_B``, ``m*``, ``v'``, ``theta_1``) as LaTeX the parser reads
    back as the same name."""
    suffix = ""
    while name and name[-1] in "'*":
        suffix = name[-1] + suffix
        name = name[:-1]
    base, _, subscript = name.partition("_")
    text = f"\\{base}" if base in _GREEK else base
    if subscript in ("dot", "ddot"):  # latex.clean writes \dot{x} as x_{dot}
        return rf"\{subscript}{{{text}}}" + suffix.replace("*", "^{*}")
    if subscript:
        text += f"_{{{subscript}}}"
    return text + suffix.replace("*", "^{*}")


class _Printer(LatexPrinter):
    """sympy's LaTeX, with names, exponentials and inverse functions written as the parser reads
    them (``e^{2}`` would be the elementary charge squared; ``asinh`` is not a name it knows)."""

    def __init__(self) -> None:
        super().__init__({"inv_trig_style": "full", "full_prec": False})

    def _print_Symbol(self, value, style="plain"):
        return symbol_latex(value.name)

    def _print_exp(self, value, exp=None):
        text = rf"\exp\left({self._print(value.args[0])}\right)"
        return text if exp is None else rf"\left({text}\right)^{{{exp}}}"

    def _print_Exp1(self, value, exp=None):
        return r"\exp\left(1\right)" if exp is None else rf"\exp\left({exp}\right)"

    def _print_Function(self, value, exp=None):
        name = type(value).__name__
        if isinstance(value, AppliedUndef):
            arguments = ", ".join(self._print(a) for a in value.args)
            text = (rf"\langle {arguments} \rangle" if name == "mean"
                    else f"{symbol_latex(name)}\\left({arguments}\\right)")
            return text if exp is None else rf"\left({text}\right)^{{{exp}}}"
        if name in ("asinh", "acosh", "atanh"):
            text = rf"\operatorname{{ar{name[1:]}}}\left({self._print(value.args[0])}\right)"
            return text if exp is None else rf"\left({text}\right)^{{{exp}}}"
        return super()._print_Function(value, exp)


_PRINTER = _Printer()


def to_latex(value: sympy.Expr) -> str:
    return _PRINTER.doprint(value)


def _factor_latex(value: sympy.Expr) -> str:
    text = to_latex(value)
    return rf"\left({text}\right)" if value.is_Add else text


def reversed_factors(value: sympy.Expr) -> str | None:
    """A product with its factors in reverse order, joined by \\cdot, or None if not a product."""
    if not value.is_Mul:
        return None
    sign = ""
    coefficient, rest = value.as_coeff_Mul()
    if coefficient.is_negative:
        sign, value = "-", -value
    factors = value.as_ordered_factors()
    if len(factors) < 2:
        return None
    return sign + r" \cdot ".join(_factor_latex(f) for f in reversed(factors))


_UNARY_BEFORE = re.compile(r"(?:[-+*/^_=<>,(\[{]|\\(?:times|cdot|div|pm|mp|ast|le|ge|leq|geq|lt|gt"
                           r"|approx|ne|neq|frac|sqrt))$|\d[eE]$")


def summands(text: str) -> list[tuple[str, str]] | None:
    """The text's top-level summands with their signs, split as written, or None if the text has
    bars or integrals (where a split by characters could cut through them)."""
    if re.search(r"\||\\lvert|\\int|\\sum|\\pm|\\mp", text):
        return None
    terms, depth, start, sign = [], 0, 0, "+"
    for index, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char in "+-" and depth == 0:
            before = text[:index].rstrip()
            if before and not _UNARY_BEFORE.search(before):
                terms.append((sign, text[start:index].strip()))
                sign, start = char, index + 1
    terms.append((sign, text[start:].strip()))
    normalised = []
    for sign, body in terms:
        if body.startswith(("-", "+")):
            sign = "-" if (sign == "-") != (body[0] == "-") else "+"
            body = body[1:].strip()
        if not body:
            return None
        normalised.append((sign, body))
    return normalised


def reorder_side(text: str) -> str | None:
    """One expression with its summands reversed as written, or its factors reversed."""
    terms = summands(text)
    if terms and len(terms) >= 2:
        reordered = list(reversed(terms))
        first_sign, first = reordered[0]
        return ("-" if first_sign == "-" else "") + first + "".join(
            f" {sign} {body}" for sign, body in reordered[1:])
    try:
        value = expr.parse(text).value
    except Unparseable:
        return None
    return reversed_factors(value)


def sides(text: str) -> tuple[list[str], list[str]] | None:
    """An equation's sides and relations as written, if they split as the parser reads them."""
    pieces = _RELATION.split(text)
    found, relations = [p.strip() for p in pieces[0::2]], pieces[1::2]
    try:
        if len(expr.parse(text).sides) != len(found):
            return None
    except Unparseable:
        return None
    return found, relations


def join_sides(found: list[str], relations: list[str]) -> str:
    text = found[0]
    for relation, side in zip(relations, found[1:]):
        text += f" {relation} {side}"
    return text


def interval_ends(text: str) -> tuple[str, list[str], str] | None:
    if len(text) >= 2 and text[0] in "([]" and text[-1] in ")[]" and r"\cup" not in text:
        ends = latex.split_top_level(text[1:-1], ",")
        if len(ends) == 2:
            return text[0], ends, text[-1]
    return None


def _is_zero(text: str) -> bool | None:
    try:
        value = expr.parse(text).value
    except Unparseable:
        return None
    return value == 0


def _is_number(text: str) -> bool:
    try:
        return not expr.parse(text).value.free_symbols
    except Unparseable:
        return False


# -- variants ----------------------------------------------------------------------------------

def _each_side(part: Part, function) -> str | None:
    """``function`` applied to each side of an equation, each end of an interval, or the whole;
    None if it applies to none of them."""
    if part.kind == "IN" and (ends := interval_ends(part.text)):
        opening, pair, closing = ends
        new = [function(end) for end in pair]
        if all(n is None for n in new):
            return None
        return opening + ", ".join(n or old for n, old in zip(new, pair)) + closing
    split = sides(part.text)
    if split is None and _RELATION.search(part.text):
        return None  # an equation whose sides cannot be told apart as written
    if split and len(split[0]) > 1:
        found, relations = split
        new = [function(side) for side in found]
        if all(n is None for n in new):
            return None
        return join_sides([n or old for n, old in zip(new, found)], relations)
    return function(part.text)


def scientific_part(part: Part) -> str | None:
    if part.kind in ("TF", "MC"):
        return None
    if (found := quantity(part)) is not None:
        if found.value == 0:
            return None
        exponent = found.value.adjusted()
        if found.scientific or exponent == 0:
            exponent -= 1
        return with_unit(scientific(found.value, exponent), _stated_unit(part))

    def rewrite(text: str) -> str | None:
        matches = literals(text, lambda v: v != v.to_integral_value() or v >= 10)
        if not matches:
            return None
        return replace_matches(text, matches, lambda m: rf"\left({rewrite_scientific(m)}\right)")

    return _each_side(part, rewrite)


def _stated_unit(part: Part) -> str | None:
    """The unit as the reference states it in its text (None if only the unit field has it)."""
    text = compare.value_text(part.text)
    prefix = expr.parse_prefix(text)
    rest = text[prefix.end:].strip() if prefix else ""
    return rest or None


def prefixed_part(part: Part) -> str | None:
    found = quantity(part)
    if found is None or found.unit is None:
        return None
    converted = prefixed(found.value, found.unit)
    if converted is None:
        return None
    value, unit = converted
    return f"{number_text(value)} {unit}"


def reordered_part(part: Part) -> str | None:
    if (part.kind in ("TF", "MC") or quantity(part) is not None
            or re.search(r"\\circ|%", part.text)):  # 30° as π/6 is a conversion, not an order
        return None
    return _each_side(part, reorder_side)


def _scaled(part: Part, literal_change, expression_change,
            numbers_only: bool = False) -> str | None:
    """A perturbed part: a literal number changed exactly; else the last side of an equation
    (none of its sides may be 0: "f = 0" scaled or negated is the same equation), or one end
    of an interval, or the whole expression changed by ``expression_change``."""
    if part.kind in ("TF", "MC"):
        return None
    if (found := quantity(part)) is not None:
        changed = literal_change(found.value)
        if changed is None:
            return None
        return with_unit(number_text(changed), found.unit)  # stated, as most responses do

    def eligible(text: str) -> bool:
        zero = _is_zero(text)
        if zero is None or zero or re.fullmatch(r"-?\\infty", text.strip()):
            return False
        return _is_number(text) if numbers_only else True

    if part.kind == "IN" and (ends := interval_ends(part.text)):
        opening, pair, closing = ends
        for index in (1, 0):
            if eligible(pair[index]):
                pair = list(pair)
                pair[index] = expression_change(pair[index])
                return opening + ", ".join(pair) + closing
        return None
    split = sides(part.text)
    if split is None and _RELATION.search(part.text):
        return None
    if split and len(split[0]) > 1:
        found, relations = split
        if part.kind != "IN" and any(_is_zero(side) is not False for side in found):
            return None
        # an equation or inequality is compared whole; any other type by its value, the last side
        candidates = range(len(found) - 1, -1, -1) if part.kind in ("EQ", "IN") else [len(found) - 1]
        for index in candidates:
            if eligible(found[index]):
                found = list(found)
                found[index] = expression_change(found[index])
                return join_sides(found, relations)
        return None
    return expression_change(part.text) if eligible(part.text) else None


def times_105(part: Part) -> str | None:
    return _scaled(part, lambda v: v * Decimal("1.05") if v else None, lambda t: rf"1.05 \left({t}\right)")


def times_1000(part: Part) -> str | None:
    return _scaled(part, lambda v: v.scaleb(3) if v else None,
                   lambda t: rf"10^{{3}} \left({t}\right)", numbers_only=True)


def negated(part: Part) -> str | None:
    if part.kind == "IN":
        return None
    return _scaled(part, lambda v: -v if v else None, lambda t: rf"-\left({t}\right)")


_OPPOSITE = {"true": "false", "yes": "no", "correct": "incorrect", "right": "wrong", "t": "f",
             "y": "n", "对": "错", "正确": "错误", "是": "否", "真": "假"}
_OPPOSITE.update({v: k for k, v in list(_OPPOSITE.items())})


def other_choice(part: Part) -> str | None:
    if part.kind == "TF":
        word = re.sub(r"\\text\{|\}|\s", "", part.text)
        flipped = _OPPOSITE.get(word.lower())
        if flipped is None:
            return None
        return flipped.capitalize() if word[:1].isupper() else flipped
    if part.kind == "MC":
        from physgrade.answers import extract
        letters = extract.option_letters(part.text) or ()
        others = [letter for letter in "ABCDE" if letter not in letters]
        if not letters or not others:
            return None
        other = others[0]
        return other.lower() if part.text.strip("()[] ").islower() else other
    return None


REWRITE_PARTS = {"scientific notation": scientific_part, "prefixed unit": prefixed_part,
                 "reordered terms": reordered_part}
PERTURB_PARTS = {"value x1.05": times_105, "wrong exponent x10^3": times_1000,
                 "flipped sign": negated, "other TF/MC choice": other_choice}


BUILD_ERRORS: Counter = Counter()


def variant(parts: list[Part], function, every: bool) -> str | None:
    """The response with ``function`` applied to every part it applies to (a rewrite) or to the
    first one only (a perturbation); None if it applies to none."""
    new = []
    changed = False
    for part in parts:
        result = None
        if every or not changed:
            try:
                result = function(part)
            except Exception as error:  # a reference the variant cannot be built for: a skip
                BUILD_ERRORS[f"{type(error).__name__}: {error}"[:120]] += 1
                result = None
        changed = changed or result is not None
        new.append(result if result is not None else part.text)
    return rf"\boxed{{{', '.join(new)}}}" if changed else None


@dataclass
class Variant:
    record: Record
    kind: str
    response: str
    rewrite: bool


def variants(record: Record) -> tuple[list[Variant], Counter]:
    """Every variant of a reference, and how many kinds were skipped."""
    skipped = Counter()
    parts = parts_of(record)
    found = []
    for table, rewrite in ((REWRITE_PARTS, True), (PERTURB_PARTS, False)):
        for kind, function in table.items():
            response = variant(parts, function, rewrite) if parts else None
            if response is None:
                skipped[kind] += 1
            else:
                found.append(Variant(record, kind, response, rewrite))
    return found, skipped


# -- the three measurements --------------------------------------------------------------------

def request(record: Record, response: str) -> Request:
    return Request(record.answers, response, record.answer_type, record.unit)


def readable(parts: list[Part] | None) -> bool:
    """Whether the parser reads every part (variants of unreadable text are noise)."""
    if not parts:
        return False
    for part in parts:
        try:
            if part.kind == "IN":
                compare.intervals(part.text)
            elif part.kind not in ("TF", "MC") and quantity(part) is None:
                expr.parse(part.text)
        except Unparseable:
            return False
    return True


_SOLUTION = ("Problem Formulation:\nGiven: the quantities in the statement.\nFind: the answer.\n"
             "Step-by-step Detailed Solution:\nStep 1:\nReasoning: Apply the governing law and "
             "keep the units consistent.\nGeneral Formula: $F = m a$\nResult: see below\n"
             "Final Answer: {answer}\n")


def speed_requests(records: list[Record], count: int) -> list[Request]:
    """``count`` checks: each record against itself and its variants, some as bare answers,
    some stated in a sentence, some inside a worked solution; shuffled with a fixed seed."""
    rng = random.Random(2025)
    pool = []
    for record in records:
        pool.append((record, record.answers))
        if readable(parts_of(record)):
            pool.extend((record, v.response) for v in variants(record)[0])
    rng.shuffle(pool)
    requests = []
    for index in range(count):
        record, response = pool[index % len(pool)]
        style = index % 3
        if style == 1:
            response = f"Combining the two results, the final answer is {response}."
        elif style == 2:
            response = _SOLUTION.format(answer=response)
        requests.append(request(record, response))
    return requests


def measure_speed(records: list[Record], count: int, workers: int, time_limit: float) -> None:
    requests = speed_requests(records, count)
    kinds = Counter()
    for item in requests:
        declared = compare.declared_types(item.answer_type)
        kinds["compound" if len(declared) > 1 else (declared[0] if declared else "?")] += 1
    started = time.perf_counter()
    with Checker(workers=workers, time_limit=time_limit) as checker:
        first = None
        outcomes = Counter()
        for _, check in checker.map(requests):
            first = first or time.perf_counter() - started
            outcomes[check.outcome.value] += 1
        total = time.perf_counter() - started
    mix = ", ".join(f"{k} {v}" for k, v in kinds.most_common())
    print(f"1. speed: {count:,} checks with {workers} workers ({mix})")
    print(f"   total {total:.1f} s including pool start-up (first result after {first:.2f} s); "
          f"{count / total:.0f} checks/s; target {SPEED_TARGET_S:.0f} s, ratio "
          f"{total / SPEED_TARGET_S:.2f} of the budget")
    print(f"   outcomes: {', '.join(f'{k} {v}' for k, v in outcomes.most_common())}")


@dataclass
class Tally:
    applied: int = 0
    equivalent: int = 0
    skipped: int = 0
    outcomes: Counter = field(default_factory=Counter)


def _rate(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole * 100:.1f}%)" if whole else f"{part}/0"


TEXT_ONLY = "the same text as the reference"


def measure_robustness(records: list[Record], workers: int, time_limit: float,
                       verbose: bool, label: str) -> None:
    failures = []
    with Checker(workers=workers, time_limit=time_limit) as checker:
        started = time.perf_counter()
        selves = [check for _, check in checker.map(request(r, r.answers) for r in records)]
        equivalent = [check.outcome == "equivalent" for check in selves]
        # a part the parser cannot read still matches an identical text: equivalent, not parsed
        parsed = [same and TEXT_ONLY not in check.reason for same, check in zip(equivalent, selves)]
        for record, check, read in zip(records, selves, parsed):
            if not read:
                failures.append((record, "self" if check.outcome != "equivalent"
                                 else "self (identical text only)", record.answers, check))
        tallies = {kind: Tally() for kind in REWRITES + PERTURBATIONS}
        built = []
        for record, read in zip(records, parsed):
            if not read:
                continue
            found, skipped = variants(record)
            built.extend(found)
            for kind, n in skipped.items():
                tallies[kind].skipped += n
        for (_, check), item in zip(checker.map(request(v.record, v.response) for v in built),
                                    built):
            tally = tallies[item.kind]
            tally.applied += 1
            tally.outcomes[check.outcome.value] += 1
            if check.outcome == "equivalent":
                tally.equivalent += 1
            expected = "equivalent" if item.rewrite else "not_equivalent"
            if check.outcome != expected:  # a miss, a false match, or a perturbation not read
                failures.append((item.record, item.kind, item.response, check))
        elapsed = time.perf_counter() - started
    others = Counter(check.outcome.value for check in selves if check.outcome != "equivalent")
    print(f"2. robustness: {len(records)} references from {label}; "
          f"{len(records) + len(built):,} checks in {elapsed:.1f} s")
    print(f"   parsed and equivalent to itself: {_rate(sum(parsed), len(records))}; target "
          f"{SELF_TARGET:.0%}")
    print(f"   equivalent to itself at all:     {_rate(sum(equivalent), len(records))}"
          f" ({sum(equivalent) - sum(parsed)} only as identical unparsed text"
          + (f"; the rest {_outcomes(others)}" if others else "") + ")")
    print("   rewritten forms that must match (equivalent / applied; skipped where n/a):")
    for kind in REWRITES:
        tally = tallies[kind]
        other = {k: v for k, v in tally.outcomes.items() if k != "equivalent"}
        print(f"     {kind:<22} {_rate(tally.equivalent, tally.applied):>18}   skipped "
              f"{tally.skipped:>3}" + (f"   misses: {_outcomes(other)}" if other else ""))
    print("   perturbed copies that must not match (false matches / applied; target 0):")
    for kind in PERTURBATIONS:
        tally = tallies[kind]
        other = {k: v for k, v in tally.outcomes.items()
                 if k not in ("equivalent", "not_equivalent")}
        print(f"     {kind:<22} {_rate(tally.equivalent, tally.applied):>18}   skipped "
              f"{tally.skipped:>3}" + (f"   not read: {_outcomes(other)}" if other else ""))
    if BUILD_ERRORS:
        print(f"   variants not built because of an error: {sum(BUILD_ERRORS.values())} "
              f"({'; '.join(f'{k} x{v}' for k, v in BUILD_ERRORS.most_common(3))})")
    print(f"   failures: {len(failures)}" + ("" if verbose or not failures
                                              else " (list them with --verbose)"))
    if verbose:
        for record, kind, response, check in failures:
            print(f"   - {record.where} [{record.answer_type!r}, unit {record.unit!r}] {kind}")
            print(f"       reference: {record.answers}")
            if not kind.startswith("self"):
                print(f"       response:  {response}")
            print(f"       {check.outcome.value}: {check.reason}")


def _outcomes(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))


HOSTILE = {
    "code (__import__)": "__import__('os').system('touch /tmp/physgrade-bench-pwned')",
    "9**9**9**9": "9**9**9**9",
    "factorial(10**9)": "factorial(10**9)",
    "10,000 nested brackets": "(" * 10_000 + "1" + ")" * 10_000,
    "900 nested brackets": "(" * 900 + "1" + ")" * 900,   # under the 2,000-character limit
    "1 MB string": "9" * 1_000_000,
}


def measure_hostile(workers: int, time_limit: float) -> None:
    existed = MARKER.exists()
    if existed:
        MARKER.unlink()
    print(f"3. hostile input (target: each under {HOSTILE_TARGET_S:.0f} s, unparseable or "
          "timeout):")
    ok = True
    with Checker(workers=workers, time_limit=time_limit) as checker:
        checker.check(Request("1", "1"))  # start the pool outside the timings
        for name, text in HOSTILE.items():
            cells = []
            for role, item in (("response", Request("42", text, "NV")),
                               ("reference", Request(text, "42", "NV"))):
                started = time.perf_counter()
                check = checker.check(item)
                seconds = time.perf_counter() - started
                good = (check.outcome in ("unparseable", "timeout")
                        and seconds < HOSTILE_TARGET_S)
                ok = ok and good
                reason = check.reason if len(check.reason) < 60 else check.reason[:57] + "..."
                cells.append(f"as {role}: {check.outcome.value} in {seconds:.2f} s ({reason})"
                             + ("" if good else " MISSED"))
            print(f"   {name}")
            for cell in cells:
                print(f"     {cell}")
    created = MARKER.exists()
    print(f"   marker file {MARKER}: {'CREATED (code ran)' if created else 'not created'}"
          + (" (an old one was removed first)" if existed else "")
          + f"; all within target: {'yes' if ok and not created else 'no'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", action="append",
                        help="a UGPhysics-style JSON Lines file or glob (repeatable); default: "
                             "benchmarks/data/answer_set.jsonl")
    parser.add_argument("--checks", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--time-limit", type=float, default=2.0)
    parser.add_argument("--verbose", action="store_true", help="list every failure")
    args = parser.parse_args()

    patterns = args.answers or [str(DEFAULT_ANSWERS)]
    records = load(patterns)
    label = ", ".join(patterns) if args.answers else "benchmarks/data/answer_set.jsonl"
    types = Counter("compound" if len(compare.declared_types(r.answer_type)) > 1
                    else (compare.declared_types(r.answer_type) or ["?"])[0] for r in records)
    print(f"answer set: {len(records)} references ({', '.join(f'{k} {v}' for k, v in types.most_common())})")
    measure_speed(records, args.checks, args.workers, args.time_limit)
    measure_robustness(records, args.workers, args.time_limit, args.verbose, label)
    measure_hostile(args.workers, args.time_limit)


if __name__ == "__main__":
    main()
