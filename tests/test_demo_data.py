"""The demo's texts as written: no LaTeX command lost to a JSON escape."""

from __future__ import annotations

import json
from pathlib import Path

DEMO = Path(__file__).resolve().parent.parent / "resources" / "demo"
#: What a LaTeX command written with one backslash in JSON becomes: \text and \theta a tab,
#: \beta a backspace, \frac a form feed, \rho a carriage return.
ESCAPED = {"\t": r"\t", "\b": r"\b", "\f": r"\f", "\r": r"\r"}


def strings(value: object, path: str):
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from strings(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from strings(item, f"{path}[{index}]")


def test_no_demo_text_holds_a_latex_command_eaten_by_a_json_escape() -> None:
    found = [f"{file.name} line {number}{path}: {ESCAPED[char]}{text.split(char, 1)[1][:12]!r}"
             for file in sorted(DEMO.glob("*.jsonl"))
             for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1)
             for path, text in strings(json.loads(line), "")
             for char in ESCAPED if char in text]
    assert found == []
