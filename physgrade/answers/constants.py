"""The physical constants the answer rules know, listed once.

Each constant has the name the expression reader gives its symbol (``\\mu_B`` and ``\\mu_{B}``
are both read as ``mu_B``), the LaTeX spellings answers use, its value in SI units (CODATA 2018;
exact where the SI defines it) and, where pint knows it as a unit, pint's name for it.

They are used three ways: a constant kept as a symbol on one side and written out as a number on
the other gets its value on both (:mod:`compare`); UGPhysics' convention removes them from
expressions and equations (``Settings.drop_constants``); and those pint knows may stand in a
unit ("eV/\\mu_B", "m_e c^2") (:mod:`units`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Constant:
    symbol: str                 # the symbol's name as :mod:`expr` reads it
    latex: tuple[str, ...]      # how answers write it
    value: float                # in SI units
    unit: str                   # its SI unit, "" if dimensionless
    meaning: str
    pint: str | None = None     # pint's unit name, where an answer may use it as a unit


#: The constants, one each (``k`` and ``m_0`` are other spellings, kept as such).
CONSTANTS: tuple[Constant, ...] = (
    Constant("c", ("c",), 299792458.0, "m/s", "speed of light in vacuum"),
    Constant("G", ("G",), 6.67430e-11, "m^3/(kg s^2)", "Newtonian constant of gravitation"),
    Constant("h", ("h",), 6.62607015e-34, "J s", "Planck constant"),
    Constant("hbar", (r"\hbar", "ℏ", r"\hslash"), 1.054571817e-34, "J s",
             "reduced Planck constant", pint="hbar"),
    Constant("k_B", ("k_B", "k_{B}", "k"), 1.380649e-23, "J/K", "Boltzmann constant"),
    Constant("e", ("e",), 1.602176634e-19, "C", "elementary charge"),
    Constant("m_e", ("m_e", "m_{e}", "m_0", "m_{0}"), 9.1093837015e-31, "kg", "electron mass",
             pint="electron_mass"),
    Constant("m_p", ("m_p", "m_{p}"), 1.67262192369e-27, "kg", "proton mass"),
    Constant("m_n", ("m_n", "m_{n}"), 1.67492749804e-27, "kg", "neutron mass"),
    Constant("epsilon_0", (r"\epsilon_0", r"\varepsilon_0", r"\epsilon_{0}", r"\varepsilon_{0}"),
             8.8541878128e-12, "F/m", "vacuum electric permittivity"),
    Constant("mu_0", (r"\mu_0", r"\mu_{0}"), 1.25663706212e-6, "N/A^2",
             "vacuum magnetic permeability"),
    Constant("mu_B", (r"\mu_B", r"\mu_{B}"), 9.2740100783e-24, "J/T", "Bohr magneton",
             pint="bohr_magneton"),
    Constant("mu_N", (r"\mu_N", r"\mu_{N}"), 5.0507837461e-27, "J/T", "nuclear magneton"),
    Constant("a_0", ("a_0", "a_{0}"), 5.29177210903e-11, "m", "Bohr radius", pint="bohr_radius"),
    Constant("alpha", (r"\alpha",), 7.2973525693e-3, "", "fine-structure constant"),
    Constant("R_infty", (r"R_\infty", r"R_{\infty}"), 10973731.568160, "1/m", "Rydberg constant"),
    Constant("N_A", ("N_A", "N_{A}"), 6.02214076e23, "1/mol", "Avogadro constant"),
    Constant("R", ("R",), 8.314462618, "J/(mol K)", "molar gas constant"),
    Constant("sigma", (r"\sigma",), 5.670374419e-8, "W/(m^2 K^4)", "Stefan–Boltzmann constant"),
    Constant("g", ("g",), 9.81, "m/s^2", "standard gravity (as textbooks round it)"),
)

#: Symbol name → value, for every name the reader may give a constant (``k`` and ``m_0`` too).
VALUES: dict[str, float] = {c.symbol: c.value for c in CONSTANTS} | {"k": 1.380649e-23,
                                                                       "m_0": 9.1093837015e-31}


def unit_patterns() -> tuple[tuple[str, str], ...]:
    """(regular expression, pint name) for each LaTeX spelling of a constant that pint knows as
    a unit, written with the subscripts pint's names do not have (``\\mu_{B}``, ``m_e``)."""
    found = []
    for constant in CONSTANTS:
        if constant.pint is None:
            continue
        for spelling in constant.latex:
            if not spelling.isascii() or "{" in spelling:
                continue  # the braced spelling is matched by the plain one's pattern
            base, _, sub = spelling.partition("_")
            pattern = (r"\b" if base[0].isalpha() else "") + re.escape(base)
            if sub:
                pattern += r"_\{?\s*" + re.escape(sub) + r"\s*\}?"
            elif base.startswith("\\"):
                pattern += r"(?![A-Za-z])"
            found.append((pattern, f" {constant.pint} "))
    return tuple(found)
