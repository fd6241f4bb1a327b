"""Quantities in answers: a number and a unit, read with pint and converted to SI.

Units are written many ways (``m/s``, ``\\mathrm{m\\,s^{-1}}``, ``\\text{MeV}/c^{2}``, ``\\mu b``,
``^\\circ C``); they are rewritten into pint's syntax here, checked against a narrow alphabet (so
pint never sees an exponent tower or anything but names, small integers and operators), and then
looked up in pint's registry. pint parses with its own tokenizer and builds units from its
definitions; it does not run the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import pint
import sympy

from . import constants, expr
from .latex import Unparseable, braced

#: Names pint reads otherwise than physics answers mean them.
_DEFINITIONS = ("si_gauss = 1e-4 * tesla",)  # pint's gauss belongs to the Gaussian system
#: Names pint reads otherwise than physics answers mean them: G is a gauss, AU a distance.
_RENAMED = ((r"\b(?:G|Gs|gauss)\b", "si_gauss"), (r"\b(?:AU|au)\b", "astronomical_unit"))
#: Constants used as units, written with subscripts pint's names do not have (the list of
#: constants is :mod:`constants`).
_CONSTANT_UNITS = constants.unit_patterns()
_UNIT_ALPHABET = re.compile(r"[A-Za-z_0-9*/()\s.\-+]*")
_NONE = re.compile(r"[\s\"',]*(?:none|null|n/?a|-|)[\s\"',]*", re.IGNORECASE)


@lru_cache(maxsize=1)
def registry() -> pint.UnitRegistry:
    """pint's registry with the few corrections above; built once per process (about 0.3 s)."""
    units: pint.UnitRegistry = pint.UnitRegistry(autoconvert_offset_to_baseunit=True)
    for definition in _DEFINITIONS:
        units.define(definition)
    return units


@dataclass(frozen=True)
class Quantity:
    """A number as written, its unit as written (None if bare) and its value in SI base units."""

    written: str          # the number as the answer wrote it, made readable ("3.2×10^-19")
    value: float          # the number as written
    unit: str | None      # the unit as written, made readable ("m/s")
    si: float             # the value in SI base units (the number itself if there is no unit)
    si_unit: str          # the SI unit ("m/s"), "" if dimensionless
    dimension: str        # the dimension ("length/time"), "" if dimensionless
    significant: int | None
    stated: bool = True   # the unit is written in the answer, not only in a separate field

    @property
    def shown(self) -> str:
        if not self.unit:
            return self.written
        return f"{self.written}{'' if self.unit.startswith('°') else ' '}{self.unit}"


def is_missing(unit: str | None) -> bool:
    """Whether a unit field says "no unit" (None, "", "None", "\\mathrm{None}", "N/A")."""
    if unit is None:
        return True
    plain = re.sub(r"\\(?:text|mathrm)\{([^{}]*)\}", r"\1", unit).replace("$", "")
    return bool(_NONE.fullmatch(plain))


def pint_syntax(text: str) -> str:
    """A cleaned unit (LaTeX or plain) in pint's syntax, or :class:`Unparseable` if it is not one."""
    unit = re.sub(r"_\{\s*([A-Za-z0-9]+)\s*\}", r"_\1", text.strip())
    unit = re.sub(r"\^\s*\{?\s*\\circ\s*\}?\s*([CF])\b", r" deg\1 ", unit)
    unit = re.sub(r"\^\s*\{?\s*\\circ\s*\}?", " degree ", unit)
    for pattern, name in _CONSTANT_UNITS + _RENAMED:
        unit = re.sub(pattern, name, unit)
    unit = re.sub(r"\b([kMGmunp])\s*\\Omega", r"\1ohm", unit)  # \mathrm{k}\Omega
    unit = re.sub(r"\\mu\s*", "u", unit)
    unit = unit.replace(r"\Omega", "ohm").replace(r"\AA", "angstrom").replace("%", " percent ")
    unit = re.sub(r"\\(?:cdot|times|ast|cdotp)(?![A-Za-z])", "*", unit)
    while (match := re.search(r"\\frac\s*(?=\{)", unit)):
        numerator, end = braced(unit, match.end())
        denominator, end = braced(unit, end)
        unit = f"{unit[:match.start()]}({numerator})/({denominator}){unit[end:]}"
    unit = re.sub(r"\^\s*\{\s*([-+]?\s*\d+(?:\.\d+)?)\s*\}", r"**(\1)", unit)
    unit = re.sub(r"\^\s*(?:\(\s*([-+]?\s*\d+)\s*\)|([-+]?\s*\d+))", r"**(\1\2)", unit)
    unit = unit.replace("{", " ").replace("}", " ")
    if (not _UNIT_ALPHABET.fullmatch(unit) or re.search(r"\d{3,}", unit)
            or re.search(r"\*\*\s*\(?[-+\d\s.]*\)?\s*\*\*", unit)):
        raise Unparseable(f"{text.strip()!r} is not a unit")
    return " ".join(unit.split())


def parse_unit(text: str) -> pint.Unit:
    """The unit ``text`` names, or :class:`Unparseable` naming it."""
    try:
        parsed = registry().parse_units(pint_syntax(text))
    except Exception as error:  # pint raises many kinds (even ZeroDivisionError) for non-units
        raise Unparseable(f"{text.strip()!r} is not a unit") from error
    return parsed


def quantity(text: str, unit: str | None = None) -> Quantity | None:
    """The quantity a cleaned answer states ("15.0 m/s", or "15.0" with ``unit="m/s"``).

    None when ``text`` does not begin with a number free of symbols (it is an expression); a
    number followed by something that is not a unit raises :class:`Unparseable`.
    """
    prefix = expr.parse_prefix(text)
    if prefix is None or prefix.value.free_symbols:
        return None
    try:
        value = complex(prefix.value.evalf())
    except (OverflowError, ValueError, TypeError) as error:
        raise Unparseable("the number cannot be computed (too large?)") from error
    if value.imag or not sympy.Float(value.real).is_finite:
        return None
    rest = text[prefix.end:].strip()
    written_unit = rest or (None if unit is None or is_missing(unit) else unit.strip())
    written = readable(text[:prefix.end]) if prefix.significant else f"{value.real:.6g}"
    if written_unit is None:
        return Quantity(written, value.real, None, value.real, "", "", prefix.significant)
    if rest.startswith("/"):
        written_unit = "1" + rest
    parsed = parse_unit(written_unit)
    si = registry().Quantity(value.real, parsed).to_base_units()
    dimension = "" if si.dimensionless else _dimension(si.dimensionality)
    si_unit = "" if si.dimensionless else f"{si.units:~C}"
    return Quantity(written, value.real, readable(written_unit), float(si.magnitude), si_unit,
                    dimension, prefix.significant, stated=bool(rest))


def _dimension(dimensionality) -> str:
    """pint's dimensionality as a person writes it: "length/time**2"."""
    return f"{dimensionality:C}".replace("[", "").replace("]", "")


def readable(text: str) -> str:
    """LaTeX of a number or unit made plain for a reason: ``3.2 \\times 10^{-19}`` is 3.2×10^-19."""
    text = re.sub(r"\s*\\(?:times|cdot)\s*", "×", text)
    text = re.sub(r"\^\s*\{?\s*\\circ\s*\}?\s*", "°", text)
    text = text.replace(r"\mu ", "µ").replace(r"\mu", "µ").replace(r"\Omega", "Ω")
    return " ".join(text.replace("{", "").replace("}", "").split())
