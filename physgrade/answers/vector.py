"""Vector answers: a magnitude with a direction, such as "130 m at 22.6° north of east".

Physics answers give a vector as a magnitude and a direction in words, often with an angle:
"130 m, 22.6° N of E", "4.9 m/s² down the slope", "15 N at 30° above the horizontal". Read as
numbers, the comma makes two answers and the words make none; read here, the magnitude is
compared as a quantity and the direction as a direction. Compass directions become bearings, so
22.6° north of east and 67.4° east of north are one direction; other directions are compared by
their words, after synonyms ("incline" is "slope", "downward" is "down") and filler words ("the",
"due") are set aside. Directions worded in ways this vocabulary does not cover are not compared:
:mod:`compare` then says "not checked" rather than guess. Only strings are handled here.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from . import latex

#: Bearings, clockwise from north in degrees; abbreviations count only where a direction is
#: expected (after an angle or a separator), since "N" is also a newton and "s" a second.
_COMPASS = {"north": 0, "east": 90, "south": 180, "west": 270, "northeast": 45,
            "southeast": 135, "southwest": 225, "northwest": 315}
_ABBREVIATIONS = {"N": "north", "E": "east", "S": "south", "W": "west", "NE": "northeast",
                  "SE": "southeast", "SW": "southwest", "NW": "northwest"}
_NAMES = {bearing: name for name, bearing in _COMPASS.items()}
#: Which way along a line, by canonical word; each sense has an opposite.
_SENSES = {"above": "above", "below": "below", "beneath": "below", "under": "below", "up": "up",
           "upward": "up", "upwards": "up", "down": "down", "downward": "down",
           "downwards": "down", "left": "left", "right": "right", "clockwise": "clockwise",
           "counterclockwise": "counterclockwise", "anticlockwise": "counterclockwise",
           "inward": "inward", "inwards": "inward", "outward": "outward", "outwards": "outward",
           "into": "into", "out": "out"}
_OPPOSITE = {"above": "below", "below": "above", "up": "down", "down": "up", "left": "right",
             "right": "left", "clockwise": "counterclockwise", "counterclockwise": "clockwise",
             "inward": "outward", "outward": "inward", "into": "out", "out": "into"}
#: Lines and surfaces a direction is measured from, by canonical word.
_REFERENCES = {"horizontal": "horizontal", "horizontally": "horizontal", "vertical": "vertical",
               "vertically": "vertical", "slope": "slope", "incline": "slope", "ramp": "slope",
               "plane": "slope", "page": "page", "paper": "page", "screen": "page",
               "ground": "ground", "floor": "ground", "center": "centre", "centre": "centre",
               "normal": "normal", "surface": "surface", "xaxis": "xaxis", "yaxis": "yaxis",
               "zaxis": "zaxis", "minusxaxis": "minusxaxis", "minusyaxis": "minusyaxis",
               "minuszaxis": "minuszaxis"}
#: The two senses of each axis ("along the -x axis" is the opposite of "in the +x direction").
_OPPOSITE_AXES = {"xaxis": "minusxaxis", "minusxaxis": "xaxis", "yaxis": "minusyaxis",
                  "minusyaxis": "yaxis", "zaxis": "minuszaxis", "minuszaxis": "zaxis"}
#: Words relating a direction to its reference, by canonical word ("with" the vertical is
#: "from" it), and words that carry no direction at all.
_RELATIONS = {"of": "of", "from": "from", "with": "from", "relative": "from",
              "perpendicular": "perpendicular", "parallel": "parallel"}
_FILLERS = frozenset("the a an due to toward towards along direction directed pointing its is in "
                     "line straight radially inclined respect measured".split())
_DIRECTIONS = frozenset(_COMPASS) | frozenset(_SENSES) | frozenset(_REFERENCES)

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)"
_DEGREES = r"\s*(?:\^\s*\{?\s*\\circ\s*\}?|°|\\degree(?![A-Za-z])|deg(?:rees?)?\b)"
#: An angle: a number in degrees or radians (not a unit such as rad/s).
_ANGLE = re.compile(rf"(?<![\w.^])(?P<number>{_NUMBER})(?:(?P<degrees>{_DEGREES})|\s*rad(?:ians?)?\b)"
                    r"(?![/^·*]|\s*[/^])")
#: Spellings brought to one word before words are read.
_COMPOUNDS = ((r"\b(north|south)[\s-]*(east|west)\b", r"\1\2"),
              (r"\b(?:counter|anti)[\s-]*clockwise\b", "counterclockwise"),
              (r"\bout\s+of\b", "out"),
              (r"(?:\bnegative\s+|-)([xyz])[\s-]*(?:axis|direction)\b", r" minus\1axis"),
              (r"(?:\bpositive\s+|\+)?\b([xyz])[\s-]*(?:axis|direction)\b", r" \1axis"))
_AXES = frozenset(word for word in _REFERENCES if word.endswith("axis"))
_LINKING = "|".join(sorted(_FILLERS | frozenset(_RELATIONS), key=len, reverse=True))
_NAMED = sorted(_DIRECTIONS - _AXES, key=len, reverse=True)
_AXIS = r"(?:(?:positive|negative)\s+|[+-])?\b[xyz][\s-]*(?:axis|direction)\b"
#: A word that names a direction, as written ("north-east", "x-axis").
_DIRECTION_WORD = (r"(?:\b(?:" + "|".join(_NAMED) + r"|(?:north|south)-(?:east|west)"
                   + rf"|(?:counter|anti)-clockwise)\b|{_AXIS})")
_ANY_WORD = rf"(?:\b(?:{_LINKING})\b|{_DIRECTION_WORD})"
_ABBREVIATION = r"\b(?-i:N|S|E|W|NE|NW|SE|SW)\b"
#: Where a direction starts in an answer: at a word that names one or that leads to one.
_WORD_START = re.compile(
    rf"{_DIRECTION_WORD}|\b(?:north|south)\s+(?:east|west)\b|\b(?:counter|anti)\s+clockwise\b"
    r"|\b(?:out\s+of|toward|towards|perpendicular|parallel|radially)\b", re.IGNORECASE)
#: A compass abbreviation where a separator ("," "at" "@") announces a direction.
_ABBREVIATION_START = re.compile(r"(?:,|@|\bat\b)\s*(?=(?:[NS][EW]?|[EW])\b)")
#: What may stand between a magnitude and its direction: "130 m, 22.6°", "15 N at 30°".
_SEPARATOR_TAIL = re.compile(rf"(?:[\s,;@]|\b(?:at|and|{_LINKING})\b)*$", re.IGNORECASE)
_NUMBER_START = re.compile(r"\s*[-+]?(?:\d|\.\d)")
#: "toward the barn" names a direction, though not in words this vocabulary knows.
_TOWARD = re.compile(r"\btowards?\b", re.IGNORECASE)
_VALUE = re.compile(r"(?<![<>!\\])=|\\approx|\\simeq")
#: A direction in running text, in this vocabulary only, from an angle or a word that names a
#: direction (with up to three linking words before it: "directed to the left") to the last
#: such word: what :mod:`extract` looks for in prose.
PHRASE = re.compile(
    rf"(?i:(?:(?:\b(?-i:N|S)|\bnorth|\bsouth)\s*)?"  # a surveyor's "N 22.6° E"
    rf"{_ANGLE.pattern}\s*(?:(?:{_ANY_WORD}|{_ABBREVIATION})[\s-]+)*"
    rf"(?:{_DIRECTION_WORD}|{_ABBREVIATION})"
    rf"|(?:\b(?:{_LINKING})\b[\s-]+){{0,3}}"
    rf"{_DIRECTION_WORD}(?:(?:[\s-]+{_ANY_WORD})*[\s-]+{_DIRECTION_WORD})?)")


@dataclass(frozen=True)
class Direction:
    """A direction as written ("22.6° north of east"), its angle in degrees if it has one, and its
    canonical words. A compass direction also has its bearing and, when an angle is measured from
    a compass point, the frame it is measured in: (from bearing, towards bearing)."""

    text: str
    angle: float | None
    words: tuple[str, ...]
    bearing: float | None = None
    frame: tuple[int, int] | None = None

    def turned_round(self) -> tuple[str, ...] | None:
        """The words of the opposite direction, or None if they name nothing to turn round: "up
        the slope" for "down the slope", and where no angle is measured from an axis, "-x axis"
        for "+x axis" (30° from the +x axis is not the opposite of 30° from the -x axis)."""
        if (opposite := _turned_round(self.words, _OPPOSITE)) is not None or self.angle is not None:
            return opposite
        return _turned_round(self.words, _OPPOSITE_AXES)


@dataclass(frozen=True)
class Vector:
    """A magnitude as written ("130 m"; None for a direction alone) and a direction."""

    magnitude: str | None
    direction: Direction


def read(text: str) -> Vector | None:
    """The vector an answer states, or None if it names no direction (or is not one answer)."""
    try:
        text = latex.clean(text)
    except latex.Unparseable:
        return None
    start = _direction_start(text)
    if start is None:
        return None
    magnitude = _VALUE.split(_SEPARATOR_TAIL.sub("", text[:start]))[-1].strip()
    if magnitude and not _NUMBER_START.match(magnitude):
        return None
    direction = _direction(text[start:])
    if direction is None:
        return None
    return Vector(magnitude or None, direction)


def is_angle(text: str) -> bool:
    """Whether ``text`` is an angle alone ("22.6°"): a direction's number without its words."""
    return _ANGLE.fullmatch(text.strip()) is not None


def joined(parts: list[str]) -> list[str]:
    """Answer parts with each magnitude and the bare direction after it made one vector answer:
    "130 m", "22.6° north of east" are one answer, not two."""
    result: list[str] = []
    for part in parts:
        after = read(part)
        if (result and after is not None and after.magnitude is None
                and _NUMBER_START.match(result[-1]) and read(result[-1]) is None):
            result[-1] = f"{result[-1]}, {part}"
        else:
            result.append(part)
    return result


def angle_in(frame: tuple[int, int], bearing: float) -> float:
    """A bearing as an angle measured from ``frame``'s first compass point towards its second,
    in (-180, 180]: 67.4 is 22.6 in the frame "north of east"."""
    angle = ((bearing - frame[0]) * _turn(frame)) % 360
    return angle - 360 if angle > 180 else angle


def _turn(frame: tuple[int, int]) -> int:
    """1 where a frame turns clockwise (east of north), -1 where it turns the other way."""
    return 1 if (frame[1] - frame[0]) % 360 == 90 else -1


def frame_words(frame: tuple[int, int]) -> str:
    """How people name a frame: "north of east" for (east, north)."""
    return f"{_NAMES[frame[1]]} of {_NAMES[frame[0]]}"


def _direction_start(text: str) -> int | None:
    starts = [match.start() for match in (_ANGLE.search(text), _WORD_START.search(text))
              if match is not None]
    if abbreviation := _ABBREVIATION_START.search(text):
        starts.append(abbreviation.end())
    return min(starts, default=None)


def _direction(text: str) -> Direction | None:
    """The direction ``text`` states, or None if it names none or holds another number."""
    angle_match = _ANGLE.search(text)
    before, after = (text[:angle_match.start()], text[angle_match.end():]) if angle_match else (text, "")
    if re.search(r"\d", before + after):
        return None  # another number: not one direction
    leading, trailing = _words(before), _words(after)
    words = leading + trailing
    if not any(word in _DIRECTIONS for word in words) and not _TOWARD.search(text):
        return None
    shown = readable(text)
    if angle_match is None:
        if len(words) == 1 and words[0] in _COMPASS:
            return Direction(shown, None, words, _COMPASS[words[0]])
        return Direction(shown, None, words)
    angle = float(angle_match.group("number"))
    if not angle_match.group("degrees"):
        angle = math.degrees(angle)
    frame = _compass_frame(leading, trailing)
    if frame is not None:
        return Direction(shown, angle, words, (frame[0] + angle * _turn(frame)) % 360, frame)
    if angle < 0 and (opposite := _turned_round(words, _OPPOSITE)) is not None:
        angle, words = -angle, opposite  # -30° above is 30° below
    return Direction(shown, angle, words)


def _turned_round(words: tuple[str, ...], opposites: dict[str, str]) -> tuple[str, ...] | None:
    """``words`` with their one word that has an opposite turned round; None unless just one."""
    if sum(word in opposites for word in words) != 1:
        return None
    return tuple(opposites.get(word, word) for word in words)


def _compass_frame(leading: tuple[str, ...], trailing: tuple[str, ...]) -> tuple[int, int] | None:
    """(from, towards) for "θ north of east", "θ from east north" or "N θ E" (a surveyor's)."""
    if not leading and len(trailing) == 3 and trailing[1] in ("of", "from"):
        towards, start = trailing[0], trailing[2]
    elif not leading and len(trailing) == 3 and trailing[0] == "from":
        start, towards = trailing[1], trailing[2]
    elif len(leading) == 1 and len(trailing) == 1:
        start, towards = leading[0], trailing[0]
    else:
        return None
    cardinal = ("north", "east", "south", "west")
    if start not in cardinal or towards not in cardinal:
        return None
    frame = (_COMPASS[start], _COMPASS[towards])
    return frame if (frame[1] - frame[0]) % 180 == 90 else None


def _words(text: str) -> tuple[str, ...]:
    """Canonical direction words: synonyms merged, fillers dropped, unknown words kept."""
    for pattern, replacement in _COMPOUNDS:
        text = re.sub(pattern, replacement, text, flags=re.IGNORECASE)
    words = []
    for written in re.findall(r"[A-Za-z]+", text):
        word = _ABBREVIATIONS.get(written) or written.lower()  # "N of E", not a car's "s"
        if word in _FILLERS:
            continue
        words.append(_SENSES.get(word) or _REFERENCES.get(word) or _RELATIONS.get(word) or word)
    if "vertical" in words and any(word in ("up", "down") for word in words):
        words.remove("vertical")  # "vertically downward" is "down"
    return tuple(words)


def readable(text: str) -> str:
    """An answer's angle and words as people write them: "22.6° north of east"."""
    text = re.sub(r"\s*\^\s*\{?\s*\\circ\s*\}?\s*", "° ", text)
    return " ".join(text.replace(r"\degree", "°").split()).replace(" °", "°")
