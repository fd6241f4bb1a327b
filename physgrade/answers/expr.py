"""Answer text (plain or LaTeX, after :func:`latex.clean`) parsed into sympy without ``eval``.

Why a grammar of our own: answers are untrusted, and the parsers sympy offers either run Python
(``sympify``, ``parse_expr``) or read physics the mathematician's way. latex2sympy2, for one,
lowercases symbols (k_B becomes k_b), takes I for the imaginary unit, reads ``1.5e-3`` as E - 3
and refuses ``m_e c^2``. Here every node is built by hand from a small grammar that covers what
final answers contain: numbers in any notation, symbols with subscripts and primes, implicit
products, fractions, roots, powers, the usual functions, integrals, absolute values and
equations. Anything else is refused with a reason.

Sizes are bounded before sympy evaluates anything: a number may not exceed 10^300, an exponent
of a symbol 1000, a factorial 170!, and brackets nest at most 60 deep. So ``9^{9^{9^9}}`` and
``factorial(10^9)`` are refused at once rather than computed.

Reading conventions, applied alike to the reference and the response:
- a run of letters is a product of one-letter symbols (``mgh`` is m g h) unless it is a known
  name (``sin``, ``omega``, ``hbar``); subscripts and primes belong to the symbol (``v_0``,
  ``k_{B}``, ``v'``);
- ``e`` is the elementary charge, except ``e^{x}`` with anything but a positive whole exponent,
  which is the exponential; ``I`` and ``i`` are symbols (currents and indices), not sqrt(-1);
- implicit and explicit products and quotients are read left to right (``1/2 m v^2``), except
  that a slash takes the implicit product right after it as its denominator, as physics texts
  write ``\\hbar/mc`` for hbar/(m c): the rule, and the slashes it leaves with two readings, are
  set out in :meth:`_Parser.divisor`;
- a symbol keeps all its marks in one name, subscripts first and dots last: ``L^{*}_{1}`` and
  ``L_1^*`` are "L_1*", ``\\dot{y}_{1}`` and ``\\dot{y_1}`` are "y_1_dot";
- ``\\prod`` and ``\\sum`` with limits are unevaluated products and sums whose index is renamed to
  one dummy (with the subscripts that name it), so ``\\prod_{i=1}^{n} x_i`` is
  ``\\prod_{j=1}^{n} x_j``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import sympy

from .latex import Unparseable

MAX_DIGITS = 300
MAX_EXPONENT = 1000
MAX_FACTORIAL = 170
MAX_DEPTH = 60

_FUNCTIONS = {
    "sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan, "cot": sympy.cot, "sec": sympy.sec,
    "csc": sympy.csc, "sinh": sympy.sinh, "cosh": sympy.cosh, "tanh": sympy.tanh,
    "coth": sympy.coth, "arcsin": sympy.asin, "arccos": sympy.acos, "arctan": sympy.atan,
    "asin": sympy.asin, "acos": sympy.acos, "atan": sympy.atan, "arsinh": sympy.asinh,
    "arcosh": sympy.acosh, "artanh": sympy.atanh, "exp": sympy.exp, "ln": sympy.log,
    "log": sympy.log, "lg": lambda x: sympy.log(x, 10), "sqrt": sympy.sqrt, "abs": sympy.Abs,
    "factorial": lambda x: _factorial(x),
}
_INVERSES = {"sin": sympy.asin, "cos": sympy.acos, "tan": sympy.atan, "sinh": sympy.asinh,
             "cosh": sympy.acosh, "tanh": sympy.atanh}
_GREEK = frozenset(
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron rho sigma "
    "tau upsilon phi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega"
    .split())
_SAME_LETTER = {"varepsilon": "epsilon", "vartheta": "theta", "varphi": "phi", "varrho": "rho",
                "varsigma": "sigma", "varpi": "pi", "ell": "l", "partial": "d", "hslash": "hbar"}
#: Words a run of plain letters is not split into single letters for.
_WORDS = frozenset(_FUNCTIONS) | _GREEK | {"hbar", "pi", "infty", "inf", "nabla"}
_MULTIPLY = frozenset({r"\cdot", r"\times", r"\ast", "*", r"\cdotp"})
#: What stands alone as a denominator after a slash, or makes a slash before it doubtful.
_COMPOSITE = frozenset(_FUNCTIONS) | {"frac", "sqrt", "binom", "int", "prod", "sum", "langle",
                                      "lvert"}
_RELATIONS = {"=": "=", r"\approx": "=", r"\simeq": "=", r"\equiv": "=", r"\cong": "=",
              "<": "<", ">": ">", r"\lt": "<", r"\gt": ">", r"\le": "<=", r"\leq": "<=",
              r"\leqslant": "<=", r"\ge": ">=", r"\geq": ">=", r"\geqslant": ">=", r"\ne": "!=",
              r"\neq": "!="}

_TOKEN = re.compile(r"""
    (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+(?![A-Za-z_]))?)
  | (?P<command>\\[A-Za-z]+|\\[{}|%])
  | (?P<word>[A-Za-z]+)
  | (?P<op>\^|_|'|[-+*/=<>()\[\]{}|!,%])
  | (?P<space>\s+)
""", re.VERBOSE)


@dataclass(frozen=True)
class Token:
    kind: str   # number, name, command, op, end
    text: str
    start: int


def _words(word: str) -> list[str]:
    """A run of letters as names: known words whole, everything else letter by letter.

    Four unknown letters in a row make a word, not a product (``system``, ``meters``): the run
    is returned whole, for the parser to refuse or to leave to the unit that follows a number.
    """
    names, index = [], 0
    while index < len(word):
        for length in range(min(len(word) - index, 9), 1, -1):
            if word[index:index + length] in _WORDS:
                names.append(word[index:index + length])
                index += length
                break
        else:
            names.append(word[index])
            index += 1
            if len(names) >= 4 and all(len(name) == 1 for name in names[-4:]):
                return [word]
    return names


def tokens(text: str) -> list[Token]:
    """The tokens of cleaned answer text; an unknown character makes the text unparseable."""
    found, position = [], 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            raise Unparseable(f"unexpected character {text[position]!r}")
        kind = match.lastgroup
        assert kind is not None  # every alternative of _TOKEN is a named group
        if kind == "word":
            offset = match.start()
            names = _words(match.group())
            if names == [match.group()] and match.group() not in _WORDS and len(names[0]) > 1:
                found.append(Token("word", match.group(), offset))
                names = []
            for name in names:
                found.append(Token("name", name, offset))
                offset += len(name)
        elif kind != "space":
            found.append(Token(kind, match.group(), match.start()))
        position = match.end()
    found.append(Token("end", "", len(text)))
    return found


@dataclass(frozen=True)
class Relation:
    """Sides joined by relations: ``E = m c^2`` is ([E, m*c**2], ["="]); a lone expression has none."""

    sides: tuple[sympy.Expr, ...]
    relations: tuple[str, ...]
    #: Where a slash has two plausible readings (``1/2mv^2``): the slash as written, and the
    #: text read the other way (left to right); this relation is the denominator-binding reading.
    ambiguity: str | None = None
    alternative: Relation | None = None

    @property
    def value(self) -> sympy.Expr:
        """The last side: what an answer written as ``v = \\sqrt{2gh} \\approx 6.3`` comes to."""
        return self.sides[-1]


@dataclass(frozen=True)
class Prefix:
    """A numeric value read from the front of a text, and where the rest (a unit) begins."""

    value: sympy.Expr
    end: int
    significant: int | None   # significant figures of a literal (with any "x 10^n"), else None


def symbol(name: str) -> sympy.Symbol:
    """The symbol for a name; physical quantities are taken as positive reals, as probing does."""
    return sympy.Symbol(name, positive=True)


def parse(text: str) -> Relation:
    """The expression or relation ``text`` states; raises :class:`Unparseable` with a reason."""
    parser = _Parser(tokens(text))
    relation = parser.relation()
    parser.expect_end()
    if not parser.ambiguous:
        return relation
    other = _Parser(tokens(text), loose=True)
    alternative = other.relation()
    other.expect_end()
    start, end = parser.ambiguous[0]
    return Relation(relation.sides, relation.relations, text[start:end].strip(),
                    Relation(alternative.sides, alternative.relations))


def parse_prefix(text: str) -> Prefix | None:
    """The number at the front of a quantity ("3.2 \\times 10^{-19} J"), or None if none is."""
    parser = _Parser(tokens(text), numeric=True)
    if not parser.starts_factor():
        return None
    try:
        value = parser.sum()
    except Unparseable:
        return None  # a symbol inside a fraction or root: an expression, not a number
    return Prefix(value, parser.peek().start, _significant(parser.tokens[:parser.position]))


def _significant(used: list[Token]) -> int | None:
    """Significant figures of ``1.50`` or ``1.50 \\times 10^{3}``; None for other expressions."""
    if used and used[0].text == "-":
        used = used[1:]
    if not used or used[0].kind != "number" or (len(used) > 1 and not _times_ten(used[1:])):
        return None
    mantissa = used[0].text.lower().split("e")[0]
    digits = mantissa.replace(".", "").lstrip("0") if "." in mantissa else mantissa.strip("0")
    return max(len(digits), 1)


def _times_ten(rest: list[Token]) -> bool:
    """Whether ``rest`` (the tokens after a mantissa) is "x 10^{n}" and nothing else."""
    if len(rest) < 4 or rest[0].text not in _MULTIPLY or rest[1].text != "10" or rest[2].text != "^":
        return False
    exponent = [t.text if t.kind != "number" else "#" for t in rest[3:]]
    return exponent in (["#"], ["-", "#"], ["{", "#", "}"], ["{", "-", "#", "}"],
                        ["{", "+", "#", "}"])


class _Parser:
    """Recursive descent over tokens; ``numeric`` stops at the first symbol (the unit's start)."""

    def __init__(self, found: list[Token], numeric: bool = False, loose: bool = False) -> None:
        self.tokens = found
        self.position = 0
        self.numeric = numeric
        self.loose = loose           # ambiguous slashes read left to right
        self.ambiguous: list[tuple[int, int]] = []   # their text spans
        self.depth = 0
        self.abs_open = 0
        self.integrand = 0

    # -- token stream -------------------------------------------------------------------------
    def peek(self, ahead: int = 0) -> Token:
        return self.tokens[min(self.position + ahead, len(self.tokens) - 1)]

    def take(self) -> Token:
        token = self.peek()
        self.position += 1
        return token

    def accept(self, *texts: str) -> Token | None:
        if self.peek().kind != "end" and self.peek().text in texts and self.peek().kind != "number":
            return self.take()
        return None

    def expect(self, text: str) -> None:
        if not self.accept(text):
            found = self.peek().text or "the end"
            raise Unparseable(f"expected {text!r} but found {found!r}")

    def expect_end(self) -> None:
        if self.peek().kind != "end":
            raise Unparseable(f"unexpected {self.peek().text!r}")

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise Unparseable(f"brackets nest more than {MAX_DEPTH} deep")

    # -- grammar ------------------------------------------------------------------------------
    def relation(self) -> Relation:
        sides, relations = [self.sum()], []
        while self.peek().text in _RELATIONS and self.peek().kind in ("op", "command"):
            relations.append(_RELATIONS[self.take().text])
            sides.append(self.sum())
        return Relation(tuple(sides), tuple(relations))

    def sum(self) -> sympy.Expr:
        total = self.term()
        while (sign := self.peek().text) in ("+", "-") and self.peek().kind == "op":
            if self.numeric and not self._factor_follows(1):
                break
            self.take()
            right = self.term()
            total = total + right if sign == "+" else total - right
        return total

    def term(self) -> sympy.Expr:
        first = self.peek().start
        product = self.factor()
        while True:
            token = self.peek()
            if token.text in _MULTIPLY or (token.text in ("/", r"\div") and token.kind != "number"):
                if self.numeric and not self._factor_follows(1):
                    break
                self.take()
                if token.text in ("/", r"\div"):
                    product = product / self.divisor(product, first)
                else:
                    product = product * self.factor()
            elif self._differential_ahead():
                break
            elif self.starts_factor(implicit=True):
                saved = self.position
                try:
                    product = product * self.factor()
                except Unparseable:
                    if not self.numeric:
                        raise
                    self.position = saved  # "2 \\frac{m}{s^2}": the unit starts here
                    return product
            else:
                return product
        return product

    def divisor(self, numerator: sympy.Expr, first: int) -> sympy.Expr:
        """The denominator after a slash (already taken) whose numerator is ``numerator``.

        The rule: the denominator is the factor after the slash and every factor juxtaposed to it
        (an implicit product, no operator between), up to the next operator: ``\\hbar/mc`` is
        hbar/(m c), ``E/cB`` is E/(c B), ``\\hbar^2/2m`` is hbar^2/(2 m), ``\\mu_0 I/2\\pi r`` is
        mu_0 I/(2 pi r), ``kT/mc^2`` is k T/(m c^2). Spaces between symbols do not count, since
        LaTeX shows ``\\hbar/m c`` as it shows ``\\hbar/mc``. Left to right, by contrast:

        - an explicit ``*``, ``\\cdot``, ``\\times`` or a second slash ends the denominator:
          ``\\hbar/m \\cdot c`` is (hbar/m) c;
        - a number followed by a space: ``1/2 m v^2`` and ``g/2 t^2`` are (1/2) m v^2 and (g/2) t^2;
        - a bracketed group, a fraction, a root or a function right after the slash is the
          denominator by itself: ``(a+b)/(c+d) x`` is x (a+b)/(c+d).

        Two readings, both plausible (:func:`parse` gives both, and a check that gets different
        results from them says "not checked"): a number over a number run straight into what
        follows (``1/2mv^2``, ``1/2\\pi``); a power followed by a space (``kq/r^2 \\hat{r}``: the
        hat of a unit vector is gone by the time the parser sees it); and a denominator followed
        by a bracket, a fraction, a root or a function (``a/b (c+d)``, ``v/c \\sin\\theta``).
        Numbers read at the front of a quantity (``numeric``) keep the left-to-right reading,
        but a number over a number run into what follows (``1/2\\pi``) is not taken as one.
        """
        opening = self.peek()
        start = self.position
        value = self.factor()
        if not self._juxtaposed():
            return value
        follower, last = self.peek(), self.tokens[self.position - 1]
        spaced = follower.start > last.start + len(last.text)
        if self.numeric:
            if value.is_Number and numerator.is_Number and not spaced:
                raise Unparseable("a slash with two readings is not one number")  # 1/2\pi
            return value
        if opening.text in ("(", "[", "{", "|") or opening.text.lstrip("\\") in _COMPOSITE:
            return value
        if value.is_Number and spaced:
            return value
        doubtful = (
            (value.is_Number and numerator.is_Number)
            or (spaced and any(t.text == "^" for t in self.tokens[start:self.position]))
            or follower.text in ("(", "[", "{", "|")
            or follower.text.lstrip("\\") in _COMPOSITE)
        if doubtful and self.loose:
            return value
        while self._juxtaposed():
            value = value * self.factor()
        if doubtful:
            last = self.tokens[self.position - 1]
            self.ambiguous.append((first, last.start + len(last.text)))
        return value

    def _juxtaposed(self) -> bool:
        """Whether an implicit product continues here (not an integral's closing ``dx``)."""
        return not self._differential_ahead() and self.starts_factor(implicit=True)

    def factor(self) -> sympy.Expr:
        if self.accept("-"):
            return -self.factor()
        if self.accept("+"):
            return self.factor()
        return self.power()

    def power(self) -> sympy.Expr:
        base = self.postfix()
        if self._degrees():
            return base * sympy.pi / 180
        if self.numeric and r"\circ" in (self.peek(1).text, self.peek(2).text):
            return base  # "25^{\\circ}C": the unit reads the degree sign
        if self.peek().text == "^" and not (self.numeric and not self._factor_follows(1)):
            self.take()
            return _power(base, self.exponent())
        return base

    def _degrees(self) -> bool:
        """``^\\circ`` or ``^{\\circ}`` after a value: degrees, read as radians (units read them
        in a quantity, where ``^\\circ C`` is a temperature)."""
        if self.numeric:
            return False
        ahead = [self.peek(k).text for k in range(4)]
        if ahead[:2] == ["^", r"\circ"]:
            self.position += 2
            return True
        if ahead == ["^", "{", r"\circ", "}"]:
            self.position += 4
            return True
        return False

    def enclosed(self, closing: str) -> sympy.Expr:
        """The expression up to ``closing`` (its opening already taken), nesting counted; an
        integral outside does not reach in, so ``\\int (x\\,dx) dy`` keeps its inner dx."""
        self.enter()
        saved, self.integrand = self.integrand, 0
        value = self.sum()
        self.integrand = saved
        self.expect(closing)
        self.depth -= 1
        return value

    def exponent(self) -> sympy.Expr:
        if self.accept("{"):
            return self.enclosed("}")
        if self.peek().text in ("-", "+"):
            return self.factor()
        return self.power()

    def postfix(self) -> sympy.Expr:
        value = self.primary()
        while self.peek().text in ("!", "%") and self.peek().kind == "op":
            if self.take().text == "%":
                value = value / 100
            else:
                value = _factorial(value)
        return value

    def starts_factor(self, implicit: bool = False) -> bool:
        """Whether the next token can begin a factor (and so an implicit product continues)."""
        token = self.peek()
        if token.kind == "number":
            return True
        if token.kind == "name":
            return not self.numeric or token.text in ("pi",)
        if token.kind == "word":
            return not self.numeric
        if token.kind == "command":
            name = token.text[1:]
            if self.numeric:
                return name in ("frac", "sqrt", "pi") or name in _FUNCTIONS
            return (name in ("frac", "sqrt", "binom", "int", "prod", "sum", "langle", "infty", "pi", "hbar",
                             "nabla", "lvert", "{") or name in _FUNCTIONS or name in _GREEK
                    or name in _SAME_LETTER)
        if token.text in ("(", "[", "{"):
            return True
        if token.text in ("-", "+") and not implicit:
            return True
        if token.text == "|":
            return not implicit or self.abs_open == 0
        return False

    def _factor_follows(self, ahead: int) -> bool:
        saved = self.position
        self.position += ahead
        try:
            return self.starts_factor()
        finally:
            self.position = saved

    def _differential_ahead(self) -> bool:
        """Inside an integral, ``d x`` closes the integrand."""
        return (self.integrand > 0 and self.peek().kind == "name" and self.peek().text == "d"
                and self.peek(1).kind in ("name", "command") and self.peek(1).text not in ("d",))

    def primary(self) -> sympy.Expr:
        token = self.peek()
        if token.kind == "number":
            self.take()
            return _number(token.text)
        if token.kind == "name":
            return self.name()
        if token.kind == "command":
            return self.command()
        if token.kind == "word":
            raise Unparseable(f"{token.text!r} is a word, not a formula")
        if token.text in ("(", "[", "{"):
            return self.enclosed({"(": ")", "[": "]", "{": "}"}[self.take().text])
        if token.text == "|":
            self.take()
            self.enter()
            self.abs_open += 1
            value = self.sum()
            self.abs_open -= 1
            self.expect("|")
            self.depth -= 1
            return sympy.Abs(value)
        found = token.text or "the end"
        raise Unparseable(f"expected a number or a symbol but found {found!r}")

    def name(self) -> sympy.Expr:
        text = self.take().text
        if text in _FUNCTIONS:
            return self.function(text)
        if text in ("pi",):
            return sympy.pi
        if text in ("infty", "inf"):
            return sympy.oo
        return self.symbol_named(_SAME_LETTER.get(text, text))

    def symbol_named(self, name: str) -> sympy.Expr:
        """A symbol with its subscripts and primes, or the exponential for ``e^{...}``.

        Marks may come in any order (``L^{*}_{1}``, ``L_1^*``, ``\\dot{y}_{1}`` cleaned to
        ``y_{dot}_{1}``): the name is the letter, its subscripts with a dot last, then primes and
        stars, so each way of writing one quantity gives one name.
        """
        subscripts, marks = [], ""
        while True:
            if mark := self._starred():
                marks += mark
            elif self.accept("_"):
                subscripts.append(self.subscript())
            elif self.accept("'"):
                marks += "'"
            else:
                break
        subscripts.sort(key=lambda text: text in ("dot", "ddot"))
        name = "_".join([name, *subscripts]) + marks
        if self.peek().text == "(" and self._arguments_ahead():
            return sympy.Function(name)(*self.arguments())
        if name == "e" and self.peek().text == "^":
            saved = self.position
            self.take()
            exponent = self.exponent()
            if not (exponent.is_Integer and exponent > 0):
                return sympy.exp(exponent)
            self.position = saved
        return symbol(name)

    def _arguments_ahead(self) -> bool:
        """Whether the parenthesis ahead holds a comma-separated list: ``\\kappa(p, T)``."""
        depth = 0
        for token in self.tokens[self.position:]:
            if token.text in ("(", "[", "{"):
                depth += 1
            elif token.text in (")", "]", "}"):
                depth -= 1
                if depth == 0:
                    return False
            elif token.text == "," and depth == 1:
                return True
        return False

    def arguments(self) -> list[sympy.Expr]:
        self.expect("(")
        self.enter()
        values = [self.sum()]
        while self.accept(","):
            values.append(self.sum())
        self.expect(")")
        self.depth -= 1
        return values

    def _starred(self) -> str:
        """``m^*`` or ``m^{*}`` (an effective mass, "*") or ``x^{\\prime}``, ``x^{\\prime\\prime}``
        (primes): the mark, taken as part of the name; "" if none follows."""
        if self.peek().text != "^":
            return ""
        marks = {"*": "*", r"\ast": "*", r"\prime": "'"}
        if self.peek(1).text in marks:
            self.position += 2
            return marks[self.peek(-1).text]
        if self.peek(1).text != "{":
            return ""
        found, ahead = "", 2
        while self.peek(ahead).text in marks:
            found += marks[self.peek(ahead).text]
            ahead += 1
        if not found or self.peek(ahead).text != "}":
            return ""
        self.position += ahead + 1
        return found

    def subscript(self) -> str:
        """A subscript as plain text: ``_{\\max}`` is "max", ``_0`` is "0"."""
        if self.accept("{"):
            parts, depth = [], 1
            while True:
                token = self.take()
                if token.kind == "end":
                    raise Unparseable("unbalanced braces in a subscript")
                depth += {"{": 1, "}": -1}.get(token.text, 0) if token.kind == "op" else 0
                if depth == 0:
                    break
                parts.append(token.text.lstrip("\\"))
            return "".join(parts)
        token = self.take()
        if token.kind == "number":
            # LaTeX takes one character: v_10 is v_1 times 0, which no one means; keep it whole.
            return token.text
        if token.kind in ("name", "command"):
            return token.text.lstrip("\\")
        raise Unparseable(f"a subscript was expected after '_' but found {token.text!r}")

    def command(self) -> sympy.Expr:
        text = self.take().text
        name = text[1:]
        if name == "frac":
            numerator = self.group()
            return numerator / self.group()
        if name == "binom":
            top, bottom = self.group(), self.group()
            if top.is_Number and abs(top) > MAX_FACTORIAL:
                raise Unparseable(f"a binomial is read for whole numbers up to {MAX_FACTORIAL}")
            return sympy.binomial(top, bottom)
        if name == "sqrt":
            index = None
            if self.accept("["):
                index = self.sum()
                self.expect("]")
            radicand = self.group()
            return sympy.sqrt(radicand) if index is None else _power(radicand, 1 / index)
        if name in _FUNCTIONS:
            return self.function(name)
        if name in ("pi",):
            return sympy.pi
        if name == "infty":
            return sympy.oo
        if name == "int":
            return self.integral()
        if name in ("prod", "sum"):
            return self.big(sympy.Product if name == "prod" else sympy.Sum)
        if name == "langle":
            return sympy.Function("mean")(self.enclosed(r"\rangle"))
        if name == "lvert":
            return sympy.Abs(self.enclosed(r"\rvert"))
        if name == "{":
            return self.enclosed(r"\}")
        if name in _GREEK or name in _SAME_LETTER or name in ("hbar", "nabla"):
            return self.symbol_named(_SAME_LETTER.get(name, name))
        raise Unparseable(f"{text} is not supported in answers")

    def group(self) -> sympy.Expr:
        """A command's argument: a brace group, or a single token as in ``\\frac12``."""
        if self.accept("{"):
            return self.enclosed("}")
        token = self.peek()
        if token.kind == "number" and len(token.text) > 1 and token.text.isdigit():
            # \frac12: each argument is one digit.
            self.tokens[self.position] = Token("number", token.text[1:], token.start + 1)
            return sympy.Integer(token.text[0])
        return self.primary()

    def function(self, name: str) -> sympy.Expr:
        """``\\sin x``, ``\\sin(x)``, ``\\sin^2 x``, ``\\sin^{-1} x``, ``\\log_{10} x``."""
        base = None
        if name in ("log", "ln") and self.accept("_"):
            base = _number(self.subscript()) if self.peek(-1).kind else None
        exponent = None
        if self.peek().text == "^":
            self.take()
            exponent = self.exponent()
        argument = self.primary() if self.peek().text in ("(", "[", "{") else self.function_argument()
        function = _FUNCTIONS[name]
        if exponent == -1 and name in _INVERSES:
            return _INVERSES[name](argument)
        value = sympy.log(argument, base) if base is not None else function(argument)
        return value if exponent is None else _power(value, exponent)

    def function_argument(self) -> sympy.Expr:
        """An argument without brackets: one factor, or a number and one factor (``\\sin 2\\theta``).

        Taking one factor keeps ``u \\sin\\theta e_r`` and ``u e_r \\sin\\theta`` the same product;
        write ``\\sin(\\omega t)`` for a product argument.
        """
        self.enter()
        value = self.power()
        if value.is_Number and self.peek().kind in ("name", "command") and self.starts_factor(True):
            value = value * self.power()
        self.depth -= 1
        return value

    def limit(self) -> sympy.Expr:
        """An integral's limit: a brace group or one signed primary (``_0^\\infty``, ``_{-a}``)."""
        if self.accept("{"):
            return self.enclosed("}")
        if self.accept("-"):
            return -self.postfix()
        return self.postfix()

    def big(self, kind: type[sympy.Product] | type[sympy.Sum]) -> sympy.Expr:
        """``\\prod_{i=1}^{n} x_i`` or ``\\sum_{k=0}^{N} a_k`` (both limits needed), unevaluated;
        the index becomes one dummy, and so do the subscripts that name it (x_i is x_•)."""
        if not self.accept("_"):
            raise Unparseable(f"a {kind.__name__.lower()} needs its limits")
        self.expect("{")
        self.enter()
        index = self.primary()
        if not isinstance(index, sympy.Symbol):
            raise Unparseable("the index of a product or a sum must be a symbol")
        self.expect("=")
        lower = self.sum()
        self.expect("}")
        self.depth -= 1
        self.expect("^")
        upper = self.limit()
        self.enter()
        body = self.term()
        self.depth -= 1
        dummy = sympy.Symbol("•", integer=True)
        suffix = "_" + index.name
        renamed = {index: dummy}
        for free in body.free_symbols - {index}:
            if isinstance(free, sympy.Symbol) and suffix in free.name:
                renamed[free] = symbol(free.name.replace(suffix, "_•"))
        return kind(body.xreplace(renamed), (dummy, lower, upper))

    def integral(self) -> sympy.Expr:
        """``\\int_a^b f(x) dx`` as an unevaluated integral (probing evaluates it numerically)."""
        lower = upper = None
        for _ in range(2):
            if self.accept("_"):
                lower = self.limit()
            elif self.accept("^"):
                upper = self.limit()
        self.enter()
        self.integrand += 1
        body = self.term()
        self.integrand -= 1
        self.depth -= 1
        if not (self.peek().text == "d" and self.peek().kind == "name"):
            raise Unparseable("an integral needs its differential (dx)")
        self.take()
        variable = self.primary()
        if not isinstance(variable, sympy.Symbol):
            raise Unparseable("the integration variable must be a symbol")
        if (lower is None) != (upper is None):
            raise Unparseable("an integral needs both limits or neither")
        limits = (variable,) if lower is None else (variable, lower, upper)
        return sympy.Integral(body, limits)


def _number(text: str) -> sympy.Expr:
    try:
        if re.fullmatch(r"\d+", text):
            if len(text) > MAX_DIGITS:
                raise Unparseable("the number is too large")
            return sympy.Integer(text)
        value = sympy.Float(text)
    except (ValueError, TypeError) as error:
        raise Unparseable(f"{text!r} is not a number") from error
    if float(value) != 0.0 and abs(math.log10(abs(float(value)))) > MAX_DIGITS:
        raise Unparseable("the number is too large")
    return value


def _power(base: sympy.Expr, exponent: sympy.Expr) -> sympy.Expr:
    """``base ** exponent``, refused before sympy computes a number beyond 10^300."""
    if exponent.is_Number:
        magnitude = abs(float(exponent)) if abs(exponent) < 10**6 else math.inf
        if base.is_Number:
            if base not in (0, 1, -1) and magnitude * abs(math.log10(abs(float(base)))) > MAX_DIGITS:
                raise Unparseable("the number is too large")
        elif magnitude > MAX_EXPONENT:
            raise Unparseable(f"an exponent above {MAX_EXPONENT} is not an answer")
    return sympy.Pow(base, exponent)


def _factorial(value: sympy.Expr) -> sympy.Expr:
    if value.is_Number and (not value.is_Integer or value > MAX_FACTORIAL or value < 0):
        raise Unparseable(f"a factorial is read for whole numbers up to {MAX_FACTORIAL}")
    return sympy.factorial(value)
