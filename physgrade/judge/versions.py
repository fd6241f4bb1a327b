"""The prompt versions of a project: which exist, and the texts each was built from.

A version is a digest (:meth:`physgrade.judge.prompts.Prompts.version`), which says that two
prompts differ but not how. physgrade therefore records the texts of every version it sends
requests under, the first time it does, so that a version can be listed and shown later, and a
refined prompt run again, whatever has become of the bundled templates since. Versions that
only came in with imported verdicts are listed too, without texts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping

from physgrade.judge.prompts import Prompts
from physgrade.project import Project, now_iso
from physgrade.raters import LLM, is_kind, rater_label


@dataclass(frozen=True, slots=True)
class PromptVersion:
    """One prompt version: what recorded it (None for a version only imported verdicts
    name), and the judges that answered under it with how many verdicts each."""

    version: str
    purpose: str | None
    base: str | None
    texts: Mapping[str, str] | None
    examples: tuple[str, ...]
    created_at: str | None
    judges: tuple[tuple[str, int], ...]

    @property
    def stored(self) -> bool:
        return self.texts is not None

    def prompts(self) -> Prompts | None:
        """The prompts to build this version's requests again (None when not stored)."""
        return Prompts.stored(self.texts) if self.texts is not None else None

    def as_dict(self, texts: bool = False) -> dict:
        """The version as JSON, with its texts when ``texts`` (None where not stored): a
        listing leaves them out, as they run to pages."""
        found: dict[str, Any] = {
            "version": self.version, "purpose": self.purpose, "base": self.base,
            "stored": self.stored, "examples": list(self.examples), "created_at": self.created_at,
            "judges": [{"judge": name, "verdicts": n} for name, n in self.judges]}
        if texts:
            found["texts"] = dict(self.texts) if self.texts is not None else None
        return found


def record(project: Project, purpose: str, version: str, texts: Mapping[str, str],
           base: str | None = None, examples: tuple[str, ...] = ()) -> None:
    """Store the texts of ``version`` unless they are stored already (a version's texts never
    change: the version is their digest)."""
    with project.transaction():
        project.conn.execute(
            "INSERT OR IGNORE INTO prompt_versions (version, purpose, base, texts, examples, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (version, purpose, base, json.dumps(dict(texts), ensure_ascii=False),
             json.dumps(list(examples)), now_iso()))


def find(project: Project, version: str) -> PromptVersion | None:
    """One version, recorded or named by a judge's verdicts; None if the project has neither."""
    row = project.conn.execute("SELECT purpose, base, texts, examples, created_at FROM "
                               "prompt_versions WHERE version = ?", (version,)).fetchone()
    judges = _judges(project, version).get(version, [])
    if row is None:
        return PromptVersion(version, None, None, None, (), None, tuple(judges)) if judges \
            else None
    return _version((version, *row), judges)


def listing(project: Project) -> list[PromptVersion]:
    """Every version recorded or named by a language-model judge, oldest recorded first (a
    refined version after its base: a refinement records both, the base first), then the
    imported ones by name."""
    judges = _judges(project)
    found = [_version(row, judges.pop(row[0], [])) for row in project.conn.execute(
        "SELECT version, purpose, base, texts, examples, created_at FROM prompt_versions "
        "ORDER BY created_at, rowid")]
    found += [PromptVersion(version, None, None, None, (), None, tuple(named))
              for version, named in sorted(judges.items())]
    return found


def _judges(project: Project, version: str | None = None) -> dict[str, list[tuple[str, int]]]:
    """Version → the judges that answered under it, with their good verdicts (of ``version``
    only, when given)."""
    found: dict[str, list[tuple[str, int]]] = {}
    for name, named, run, verdicts in project.conn.execute(
            "SELECT r.name, r.prompt_version, r.run, (SELECT count(*) FROM assessments a WHERE "
            f"a.rater_id = r.id AND a.status = 'ok') FROM raters r WHERE {is_kind(LLM)} "
            "AND r.prompt_version != '' AND (? IS NULL OR r.prompt_version = ?) "
            "ORDER BY r.name, r.run", (version, version)):
        found.setdefault(named, []).append((rater_label(name, "", run), verdicts))
    return found


def _version(row: tuple[Any, ...], judges: list[tuple[str, int]]) -> PromptVersion:
    """A recorded version from its row (version, purpose, base, texts, examples, created_at)."""
    version, purpose, base, texts, examples, created = row
    return PromptVersion(version, purpose, base, json.loads(texts), tuple(json.loads(examples)),
                         created, tuple(judges))


def text(version: PromptVersion) -> str:
    """A version shown whole: what it is, then each of its texts under its name."""
    lines = [f"prompt version {version.version}"]
    if version.purpose:
        lines.append(f"purpose: {version.purpose}; recorded {version.created_at}")
    if version.base:
        lines.append(f"refined from {version.base} with {len(version.examples)} examples: "
                     f"{', '.join(version.examples)}")
    for name, verdicts in version.judges:
        lines.append(f"judge {name}: {verdicts:,} verdicts")
    if version.texts is None:
        lines.append("its texts are not stored: its verdicts were imported, or made before "
                     "physgrade recorded prompt versions")
        return "\n".join(lines)
    for name, body in version.texts.items():
        lines += ["", f"===== {name} =====", body.rstrip("\n")]
    return "\n".join(lines)
