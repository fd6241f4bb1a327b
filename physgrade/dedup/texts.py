"""The texts an audit compares: a project's questions, another project's, or a questions file.

A question is audited as its statement followed by its options, the way a reader meets it:
two multiple-choice items with one stem and different options are different problems. The
figures of another set (its questions' images, for the figure stage) are read with its texts.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

from physgrade import formats
from physgrade.project import Project

if TYPE_CHECKING:  # the figures bring numpy; reading pairs needs none
    from physgrade.dedup.figures import FigureSet

WITHIN = ""  #: the source name of an audit of a project's questions against each other


@dataclass(frozen=True, slots=True)
class TextSet:
    """Ids and texts, in the same order; ``source`` is :data:`WITHIN` or the other set's path."""

    source: str
    ids: list[str]
    texts: list[str]
    #: The set's question figures, when read from another set (None: none were read).
    figures: FigureSet | None = None

    def __len__(self) -> int:
        return len(self.ids)


def question_text(question: str, options: Mapping[str, str] | None) -> str:
    if not options:
        return question
    return question + "\n" + "\n".join(f"{letter}. {text}" for letter, text in options.items())


def project_questions(project: Project) -> TextSet:
    return TextSet(WITHIN, *_rows(project.conn))


def load_set(path: str | Path, mapping: Mapping[str, str] | None = None) -> TextSet:
    """The questions of another project file, or of a questions file (JSON Lines, JSON or CSV
    with ``id``, ``question`` and optional ``options``; ``mapping`` renames a file's own fields
    as an import's does). Bad input raises :class:`FormatError` naming the file, line and
    field. The questions' figures come along: a project's, or a file's ``images`` (paths
    relative to the file, or data: URIs, checked as an import checks them)."""
    from physgrade.dedup.figures import FigureSet, file_figures, record_figure

    path = Path(path)
    with path.open("rb") as handle:
        is_sqlite = handle.read(16) == b"SQLite format 3\x00"
    source = str(path.resolve())
    if is_sqlite:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            ids, texts = _rows(conn)
            return TextSet(source, ids, texts, file_figures(conn, ids))
        except sqlite3.DatabaseError as exc:
            raise formats.FormatError(path.name, None, None,
                                      f"not a physgrade project ({exc})") from None
        finally:
            conn.close()
    ids, texts = [], []
    figures: list[tuple[int, str, bytes]] = []
    hashed: dict[str, tuple[str, bytes]] = {}  # by path or data: URI
    seen: dict[str, int] = {}
    for record in formats.read_file(path, mapping).records:
        qid = formats.id_field(record, "id")
        if qid in seen:
            raise record.error("id", f"{qid!r} is already used on line {seen[qid]}")
        seen[qid] = record.line
        ids.append(qid)
        texts.append(question_text(formats.text_field(record, "question", required=True),
                                   formats.options_field(record)))
        for index, reference in enumerate(formats.image_list(record, "images")):
            if reference not in hashed:  # a figure several records show is read once
                hashed[reference] = record_figure(record, index, reference, path.parent)
            figures.append((len(ids) - 1, *hashed[reference]))
    return TextSet(source, ids, texts, FigureSet.of(figures))


def _rows(conn: sqlite3.Connection) -> tuple[list[str], list[str]]:
    ids, texts = [], []
    for qid, question, options in conn.execute(
            "SELECT id, question, options FROM questions ORDER BY id"):
        ids.append(qid)
        texts.append(question_text(question, json.loads(options) if options else None))
    return ids, texts
