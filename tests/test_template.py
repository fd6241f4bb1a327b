"""Tests for physgrade.template: finding the three-part template in real-looking solution texts."""

from __future__ import annotations

import json

import pytest

from physgrade.template import ParsedSolution, Span, from_stored, parse_solution, scan, section_text

# --- fixtures: solution texts as reference authors and models write them ----------------------

CYCLIST = """Problem Formulation:
Given: A cyclist starts from rest and accelerates uniformly at 1.5 m/s^2 for 8 s.
Find: Her final speed and the distance covered.
Approach: Constant-acceleration kinematics.
Assumptions: Straight, level road; air resistance neglected.

Step-by-step Detailed Solution:
Step 1:
Reasoning: With constant acceleration the speed grows linearly in time.
General Formula: v = v0 + a t
Substitution: v = 0 + (1.5 m/s^2)(8 s)
Calculation: v = 12 m/s
Result: The final speed is 12 m/s.

Step 2:
Reasoning: The distance follows from the average speed, or directly from the kinematic equation.
General Formula: d = v0 t + (1/2) a t^2
Substitution: d = 0 + 0.5 (1.5 m/s^2)(8 s)^2
Calculation: d = 0.75 * 64 m = 48 m
Result: She covers 48 m.

Final Answer: v = 12 m/s, d = 48 m
"""

CAPACITOR_MARKDOWN = """## Problem Formulation

**Given:**
- Capacitance $C = 100\\,\\mu\\text{F}$
- Resistance $R = 20\\,\\text{k}\\Omega$
- Supply voltage $V_0 = 9\\,\\text{V}$

**Find:** The voltage across the capacitor after $t = 3\\,\\text{s}$.

**Approach:** Charging of an RC circuit.

**Assumptions:** The capacitor starts uncharged; ideal wires.

---

## Step-by-Step Solution

### Step 1: Time constant
**Reasoning:** The charging rate is set by $\\tau = RC$.
**General Formula:** $\\tau = RC$
**Substitution:** $\\tau = (20\\times10^3)(100\\times10^{-6})$
**Calculation:** $\\tau = 2\\,\\text{s}$
**Result:** $\\tau = 2\\,\\text{s}$

### Step 2: Voltage after 3 s
**Reasoning:** The voltage approaches $V_0$ exponentially.
**General Formula:** $V(t) = V_0\\left(1 - e^{-t/\\tau}\\right)$
**Substitution:** $V(3) = 9\\left(1 - e^{-1.5}\\right)$
**Calculation:** $V(3) = 9(1 - 0.2231) = 6.99\\,\\text{V}$
**Result:** $V \\approx 7.0\\,\\text{V}$

---

#### Final Answer
$V(3\\,\\text{s}) \\approx 7.0\\,\\text{V}$
"""

LENS_LOWER = """problem formulation -
given - object 30 cm in front of a converging lens, f = 10 cm
find - image distance and magnification
approach - thin lens equation

step-by-step solution
step 1 - image distance
general formula: 1/f = 1/d_o + 1/d_i
calculation: 1/d_i = 1/10 - 1/30 = 2/30, so d_i = 15 cm

**Step 2.** magnification
**General Formula**: m = -d_i / d_o
**Result**: m = -0.5 (real, inverted, half size)

final answer: d_i = 15 cm, m = -0.5
"""

GAS_LIST = """Problem Formulation:
Given:
1. Ideal gas, n = 2 mol, T = 300 K
2. Isothermal expansion from 10 L to 20 L
Find: Work done by the gas.

Solution:
1. Work in an isothermal process
   Reasoning: In an isothermal process the work is the area under the p-V curve.
   General Formula: W = nRT ln(V2/V1)
2) Numbers
   Substitution: W = 2 * 8.314 * 300 * ln 2
   Calculation: W = 4988.4 * 0.6931 = 3458 J
   1. a nested item that is not a step

Final Answer: W ≈ 3.46 kJ
"""

PENDULUM_PROSE = """Sure! Let's work through this carefully, using the given data and the standard small-angle result.

Given: L = 0.80 m, g = 9.81 m/s^2
Find: the period T of the pendulum

Detailed Solution:
Step 1: T = 2π sqrt(L/g) = 2π sqrt(0.0815) = 1.79 s

Answer: T ≈ 1.8 s
"""

PROJECTILE_NO_FORMULATION = """Step-by-step solution:
Step 1: The time of flight is t = 2 v sinθ / g = 2(20)(0.5)/9.8 = 2.04 s.
Step 2: The range is R = v cosθ t = 20(0.866)(2.04) = 35.3 m.

Final Answer: R ≈ 35 m
"""

SPRING_NO_FINAL = """Problem Formulation:
Given: k = 200 N/m, m = 0.5 kg
Find: the period of oscillation

Step-by-step Detailed Solution:
Step 1:
General Formula: T = 2π sqrt(m/k)
Calculation: T = 2π sqrt(0.0025) = 0.314 s
"""

FALL_OUT_OF_ORDER = """Final Answer: t = 2.0 s

Problem Formulation:
Given: h = 19.6 m, dropped from rest
Find: time to reach the ground

Step-by-step Detailed Solution:
Step 1: h = g t^2 / 2, so t = sqrt(2h/g) = sqrt(4) = 2.0 s
"""

WIRE_LATEX = """Problem Formulation:
Given: a straight wire carries $I = 5\\,\\text{A}$; the field point is at $r = 2\\,\\text{cm}$.
Find: the magnetic field magnitude $B$.

Step-by-step Detailed Solution:
Step 1:
General Formula:
$$
B := \\frac{\\mu_0 I}{2\\pi r}, \\quad \\mu_0 := 4\\pi \\times 10^{-7}\\,\\text{T m/A}
$$
Substitution:
$$
B = \\frac{(4\\pi\\times10^{-7})(5)}{2\\pi (0.02)} \\quad \\text{ratio } 1:2
$$
Result: $B = 5\\times10^{-5}\\,\\text{T}$

Final Answer: $$B = 5.0\\times10^{-5}\\,\\text{T}$$
"""

THERMAL_UNICODE = """Problem Formulation:
Given: ΔT = 40 °C, α = 1.2×10⁻⁵ /°C, L₀ = 25 m — the rail in Zürich 🚆
Find: the expansion ΔL of the steel rail, written 𝛥𝐿
Approach: linear thermal expansion

Step-by-step Detailed Solution:
Step 1:
General Formula: ΔL = α L₀ ΔT
Result: ΔL = 1.2×10⁻⁵ · 25 · 40 = 0.012 m

Final Answer: ΔL ≈ 1.2 cm 🚆
"""

MID_SENTENCE = """We start from the given data: a ball of 0.2 kg moving at 3 m/s.
The answer: it has 0.9 J of kinetic energy, and the final answer: 0.9 J.
Given this, the result is clear.
"""

ALL_FIXTURES = [
    CYCLIST,
    CAPACITOR_MARKDOWN,
    LENS_LOWER,
    GAS_LIST,
    PENDULUM_PROSE,
    PROJECTILE_NO_FORMULATION,
    SPRING_NO_FINAL,
    FALL_OUT_OF_ORDER,
    WIRE_LATEX,
    THERMAL_UNICODE,
    MID_SENTENCE,
    CYCLIST.replace("\n", "\r\n"),
    "",
]


def texts(text: str, parsed: ParsedSolution) -> dict[str, object]:
    """Everything the parser found, as text, so expectations read like the solution itself."""
    return {
        "formulation": section_text(text, parsed.formulation),
        "parts": {k: section_text(text, v) for k, v in parsed.formulation_parts.items()},
        "solution": section_text(text, parsed.solution),
        "steps": [
            (s.number, section_text(text, s.span), {k: section_text(text, v) for k, v in s.parts.items()})
            for s in parsed.steps
        ],
        "final": section_text(text, parsed.final_answer),
    }


# --- the canonical template --------------------------------------------------------------------


def test_canonical_template_every_part_found() -> None:
    parsed = parse_solution(CYCLIST)
    found = texts(CYCLIST, parsed)
    assert parsed.compliant
    assert found["formulation"].startswith("Given: A cyclist starts from rest")
    assert found["formulation"].endswith("air resistance neglected.")
    assert found["parts"] == {
        "given": "A cyclist starts from rest and accelerates uniformly at 1.5 m/s^2 for 8 s.",
        "find": "Her final speed and the distance covered.",
        "approach": "Constant-acceleration kinematics.",
        "assumptions": "Straight, level road; air resistance neglected.",
    }
    assert found["solution"].startswith("Step 1:\nReasoning: With constant")
    assert found["solution"].endswith("Result: She covers 48 m.")
    assert [n for n, _, _ in found["steps"]] == [1, 2]
    assert found["steps"][0][2] == {
        "reasoning": "With constant acceleration the speed grows linearly in time.",
        "general_formula": "v = v0 + a t",
        "substitution": "v = 0 + (1.5 m/s^2)(8 s)",
        "calculation": "v = 12 m/s",
        "result": "The final speed is 12 m/s.",
    }
    assert found["steps"][1][1].startswith("Reasoning: The distance follows")
    assert found["steps"][1][2]["calculation"] == "d = 0.75 * 64 m = 48 m"
    assert found["final"] == "v = 12 m/s, d = 48 m"


def test_sections_are_separate_and_ordered() -> None:
    parsed = parse_solution(CYCLIST)
    assert parsed.formulation and parsed.solution and parsed.final_answer
    assert parsed.formulation.end < parsed.solution.start < parsed.solution.end < parsed.final_answer.start
    assert parsed.steps[0].span.end < parsed.steps[1].span.start


# --- real model output: markdown, bold, case, separators, numbering ---------------------------


def test_markdown_headings_bold_labels_and_rules() -> None:
    parsed = parse_solution(CAPACITOR_MARKDOWN)
    found = texts(CAPACITOR_MARKDOWN, parsed)
    assert parsed.compliant
    assert found["parts"]["given"] == (
        "- Capacitance $C = 100\\,\\mu\\text{F}$\n"
        "- Resistance $R = 20\\,\\text{k}\\Omega$\n"
        "- Supply voltage $V_0 = 9\\,\\text{V}$"
    )
    assert found["parts"]["find"] == "The voltage across the capacitor after $t = 3\\,\\text{s}$."
    # the "---" between sections belongs to neither side
    assert found["parts"]["assumptions"] == "The capacitor starts uncharged; ideal wires."
    assert found["formulation"].endswith("ideal wires.")
    assert found["solution"].endswith("**Result:** $V \\approx 7.0\\,\\text{V}$")
    assert [(n, body.split("\n")[0]) for n, body, _ in found["steps"]] == [
        (1, "Time constant"),
        (2, "Voltage after 3 s"),
    ]
    assert found["steps"][0][2] == {
        "reasoning": "The charging rate is set by $\\tau = RC$.",
        "general_formula": "$\\tau = RC$",
        "substitution": "$\\tau = (20\\times10^3)(100\\times10^{-6})$",
        "calculation": "$\\tau = 2\\,\\text{s}$",
        "result": "$\\tau = 2\\,\\text{s}$",
    }
    assert found["final"] == "$V(3\\,\\text{s}) \\approx 7.0\\,\\text{V}$"


def test_lower_case_dash_separators_and_step_styles() -> None:
    parsed = parse_solution(LENS_LOWER)
    found = texts(LENS_LOWER, parsed)
    assert parsed.compliant
    assert found["parts"] == {
        "given": "object 30 cm in front of a converging lens, f = 10 cm",
        "find": "image distance and magnification",
        "approach": "thin lens equation",
    }
    assert [(n, body.split("\n")[0]) for n, body, _ in found["steps"]] == [
        (1, "image distance"),
        (2, "magnification"),
    ]
    assert found["steps"][0][2] == {
        "general_formula": "1/f = 1/d_o + 1/d_i",
        "calculation": "1/d_i = 1/10 - 1/30 = 2/30, so d_i = 15 cm",
    }
    assert found["steps"][1][2] == {
        "general_formula": "m = -d_i / d_o",
        "result": "m = -0.5 (real, inverted, half size)",
    }
    assert found["final"] == "d_i = 15 cm, m = -0.5"


def test_numbered_list_items_are_steps_only_inside_the_solution() -> None:
    parsed = parse_solution(GAS_LIST)
    found = texts(GAS_LIST, parsed)
    assert parsed.compliant
    # "1." and "2." under Given are data, not steps; the indented "1." is a sub-item
    assert found["parts"]["given"] == ("1. Ideal gas, n = 2 mol, T = 300 K\n"
                                       "2. Isothermal expansion from 10 L to 20 L")
    assert [n for n, _, _ in found["steps"]] == [1, 2]
    assert found["steps"][0][2] == {
        "reasoning": "In an isothermal process the work is the area under the p-V curve.",
        "general_formula": "W = nRT ln(V2/V1)",
    }
    assert found["steps"][1][2]["calculation"] == (
        "W = 4988.4 * 0.6931 = 3458 J\n   1. a nested item that is not a step"
    )
    assert found["final"] == "W ≈ 3.46 kJ"


def test_list_items_ignored_when_step_labels_exist() -> None:
    text = (
        "Problem Formulation:\nGiven: x\nFind: y\n\nSolution:\nStep 1: first\n1. a point\n2. another point\n"
        "Step 2: second\n\nFinal Answer: z\n"
    )
    parsed = parse_solution(text)
    assert [(s.number, section_text(text, s.span)) for s in parsed.steps] == [
        (1, "first\n1. a point\n2. another point"),
        (2, "second"),
    ]


def test_unnumbered_steps_get_running_count_and_heading_titles() -> None:
    text = (
        "# Formulation\nGiven: a\n\n## Solution using energy conservation\n"
        "**Step:** energy in\nStep: energy out\n\n### Final answer\n3 J\n"
    )
    parsed = parse_solution(text)
    assert parsed.compliant
    assert section_text(text, parsed.solution).startswith("**Step:** energy in")
    steps = [(s.number, section_text(text, s.span)) for s in parsed.steps]
    assert steps == [(1, "energy in"), (2, "energy out")]
    assert section_text(text, parsed.final_answer) == "3 J"


def test_leading_prose_and_formulation_from_given_find() -> None:
    parsed = parse_solution(PENDULUM_PROSE)
    found = texts(PENDULUM_PROSE, parsed)
    assert parsed.compliant
    assert found["formulation"] == "Given: L = 0.80 m, g = 9.81 m/s^2\nFind: the period T of the pendulum"
    assert found["parts"] == {"given": "L = 0.80 m, g = 9.81 m/s^2", "find": "the period T of the pendulum"}
    assert found["steps"] == [(1, "T = 2π sqrt(L/g) = 2π sqrt(0.0815) = 1.79 s", {})]
    assert found["final"] == "T ≈ 1.8 s"  # a bare "Answer:" at the end counts


def test_bare_answer_label_not_at_the_end_is_not_the_final_answer() -> None:
    text = "Problem Formulation:\nGiven: a\nSolution:\nStep 1:\nAnswer: 4 N\nStep 2: more work\n"
    parsed = parse_solution(text)
    assert parsed.final_answer is None
    assert "Answer: 4 N" in section_text(text, parsed.steps[0].span)


def test_repeated_label_right_after_empty_heading_is_merged() -> None:
    text = "Problem Formulation:\nGiven: a\nSolution:\nStep 1: b\n## Final Answer\n**Final Answer:** 7 kg\n"
    parsed = parse_solution(text)
    assert section_text(text, parsed.final_answer) == "7 kg"
    assert parsed.compliant


def test_bold_wrapping_the_whole_label_line_is_not_content() -> None:
    text = "Problem Formulation:\nGiven: a\nSolution:\nStep 1: b\n**Final Answer: $v = 3$ m/s**\n"
    assert section_text(text, parse_solution(text).final_answer) == "$v = 3$ m/s"


# --- compliance --------------------------------------------------------------------------------


def test_missing_formulation_is_not_compliant() -> None:
    parsed = parse_solution(PROJECTILE_NO_FORMULATION)
    assert parsed.formulation is None
    assert len(parsed.steps) == 2
    assert section_text(PROJECTILE_NO_FORMULATION, parsed.final_answer) == "R ≈ 35 m"
    assert not parsed.compliant


def test_missing_final_answer_is_not_compliant() -> None:
    parsed = parse_solution(SPRING_NO_FINAL)
    assert parsed.formulation is not None and parsed.solution is not None
    assert parsed.final_answer is None
    assert parsed.steps[0].parts.keys() == {"general_formula", "calculation"}
    assert not parsed.compliant


def test_sections_out_of_order_are_not_compliant() -> None:
    parsed = parse_solution(FALL_OUT_OF_ORDER)
    assert section_text(FALL_OUT_OF_ORDER, parsed.final_answer) == "t = 2.0 s"
    assert parsed.formulation is not None and parsed.solution is not None
    assert not parsed.compliant


def test_empty_section_is_not_compliant() -> None:
    text = "Problem Formulation:\n\nStep-by-step Detailed Solution:\nStep 1: x = 1\nFinal Answer: 1\n"
    parsed = parse_solution(text)
    assert parsed.formulation is not None and parsed.formulation.start == parsed.formulation.end
    assert not parsed.compliant


def test_steps_without_solution_heading_are_kept_but_not_compliant() -> None:
    text = "Problem Formulation:\nGiven: a\nFind: b\nStep 1: c\nStep 2: d\nFinal Answer: e\n"
    parsed = parse_solution(text)
    assert section_text(text, parsed.formulation) == "Given: a\nFind: b"
    assert [section_text(text, s.span) for s in parsed.steps] == ["c", "d"]
    assert parsed.solution is None
    assert not parsed.compliant


def test_only_final_answer() -> None:
    parsed = parse_solution("Final Answer: 5 m/s")
    assert parsed.final_answer == Span(14, 19)
    assert (parsed.formulation, parsed.solution, parsed.steps) == (None, None, ())
    assert not parsed.compliant


def test_empty_text() -> None:
    parsed = parse_solution("")
    assert parsed == ParsedSolution(None, {}, None, (), None)
    assert not parsed.compliant
    assert section_text("", parsed.final_answer) == ""


# --- labels only at line starts ----------------------------------------------------------------


def test_words_mid_sentence_are_not_labels() -> None:
    parsed = parse_solution(MID_SENTENCE)
    assert parsed == ParsedSolution(None, {}, None, (), None)


def test_prose_line_starting_with_label_word_is_not_a_label() -> None:
    text = "Problem Formulation:\nGiven: a\nFind the speed first.\nSolution:\nStep 1: b\nFinal Answer: c\n"
    parsed = parse_solution(text)
    assert section_text(text, parsed.formulation_parts["given"]) == "a\nFind the speed first."
    assert "find" not in parsed.formulation_parts


# --- awkward text ------------------------------------------------------------------------------


def test_latex_blocks_with_colons_and_definitions() -> None:
    parsed = parse_solution(WIRE_LATEX)
    found = texts(WIRE_LATEX, parsed)
    assert parsed.compliant
    assert found["parts"]["given"].endswith("$r = 2\\,\\text{cm}$.")
    step = found["steps"][0][2]
    assert step["general_formula"] == (
        "$$\nB := \\frac{\\mu_0 I}{2\\pi r}, \\quad \\mu_0 := 4\\pi \\times 10^{-7}\\,\\text{T m/A}\n$$"
    )
    assert step["substitution"].endswith("\\text{ratio } 1:2\n$$")
    assert step["result"] == "$B = 5\\times10^{-5}\\,\\text{T}$"
    assert found["final"] == "$$B = 5.0\\times10^{-5}\\,\\text{T}$$"


def test_crlf_line_endings_give_the_same_sections() -> None:
    crlf = CYCLIST.replace("\n", "\r\n")
    parsed = parse_solution(crlf)
    assert parsed.compliant
    lf_found = texts(CYCLIST, parse_solution(CYCLIST))
    crlf_found = texts(crlf, parsed)

    def normalise(value: object) -> object:
        return json.loads(json.dumps(value).replace("\\r\\n", "\\n"))

    assert normalise(crlf_found) == normalise(lf_found)
    assert not section_text(crlf, parsed.final_answer).endswith("\r")


def test_non_ascii_text_offsets_are_character_offsets() -> None:
    parsed = parse_solution(THERMAL_UNICODE)
    found = texts(THERMAL_UNICODE, parsed)
    assert parsed.compliant
    assert found["parts"]["given"] == "ΔT = 40 °C, α = 1.2×10⁻⁵ /°C, L₀ = 25 m — the rail in Zürich 🚆"
    assert found["parts"]["find"] == "the expansion ΔL of the steel rail, written 𝛥𝐿"
    assert found["steps"][0][2]["result"] == "ΔL = 1.2×10⁻⁵ · 25 · 40 = 0.012 m"
    assert found["final"] == "ΔL ≈ 1.2 cm 🚆"


# --- invariants over every fixture ---------------------------------------------------------------


def all_spans(parsed: ParsedSolution) -> list[Span]:
    spans = [s for s in (parsed.formulation, parsed.solution, parsed.final_answer) if s is not None]
    spans += parsed.formulation_parts.values()
    for step in parsed.steps:
        spans.append(step.span)
        spans += step.parts.values()
    return spans


@pytest.mark.parametrize("text", ALL_FIXTURES)
def test_spans_slice_the_original_text_to_stripped_content(text: str) -> None:
    parsed = parse_solution(text)
    for span in all_spans(parsed):
        assert 0 <= span.start <= span.end <= len(text)
        piece = text[span.start : span.end]
        assert piece == piece.strip()


@pytest.mark.parametrize("text", ALL_FIXTURES)
def test_stored_labels_rebuild_the_same_parse(text: str) -> None:
    stored, compliant = scan(text)
    parsed = parse_solution(text)
    assert from_stored(text, stored) == parsed
    assert compliant == parsed.compliant
    assert len(stored) % 12 == 0 and len(stored) <= len(text)  # offsets only, no copied text


def test_nothing_stored_for_a_text_without_labels() -> None:
    assert scan("The answer is clearly 5 m/s.") == (b"", False)
    assert from_stored("", b"") == ParsedSolution(None, {}, None, (), None)


def test_stored_labels_other_than_the_outline_are_ignored() -> None:
    """A store written with part labels in it (an older layout) reads the same as a fresh one."""
    from array import array
    stored, _ = scan(CYCLIST)
    extra = array("I", [6, CYCLIST.index("Approach"), CYCLIST.index("Approach") + 9])  # approach
    assert from_stored(CYCLIST, stored + extra.tobytes()) == parse_solution(CYCLIST)
