"""Raters: who they are, how SQL tells them apart, how reports name them, and how people name
them on the command line and in dialogs.

A rater is a person (kind ``human``), a language model under a prompt version (``llm``) or the
rule checker under its settings (``rules``). This is the one place that knows who is a person:
SQL that asks "is this rater a person?" uses :func:`is_person`, :func:`is_grader` or
:func:`is_named_person`, so the condition is written once. Rater rows are made here
(:func:`ensure_rater`); the scores they give are written by :mod:`physgrade.scores`.

Reports name a judge ``NAME [VERSION]`` (:func:`rater_label`: a judge under another prompt
version is another rater, and so is a further run of it under a run label, ``NAME [VERSION,
run LABEL]``, so that two runs can be compared as two raters) and merge the people's grades
into one :data:`HUMAN_CONSENSUS` rater. People name a judge as its label (or by a name it bears
under one prompt version and run only), a reference as ``consensus`` or a grader's name;
:func:`judge_label` and :func:`reference_label` resolve each to the rater label reports use, or
refuse it with the choices.
"""

from __future__ import annotations

from physgrade.changes import NOTHING, Changes, RecordKind
from physgrade.project import Project, ProjectError

#: The kinds of rater: a person, a language model (per prompt version), the rule checker.
HUMAN, LLM, RULES = "human", "llm", "rules"
RATER_KINDS = (HUMAN, LLM, RULES)
#: The rater that stands for the people's agreed grade (see :func:`physgrade.scoring.tables.select`).
HUMAN_CONSENSUS = "human consensus"
#: The rater kind of the human consensus in a report's tables (no stored rater has it).
CONSENSUS_KIND = "consensus"
#: How the human consensus is named as a reference (``--reference consensus``).
CONSENSUS = "consensus"
#: A rater was made: a change of the raters alone, of no response or question.
NEW_RATER = Changes.of(RecordKind.RATERS, responses=(), questions=())


def check_kind(kind: str) -> str:
    """``kind`` if it is one of :data:`RATER_KINDS`; raises ProjectError otherwise."""
    if kind not in RATER_KINDS:
        raise ProjectError(f"rater kind must be one of {', '.join(RATER_KINDS)}, not {kind!r}")
    return kind


def rater_label(name: str, prompt_version: str, run: str = "") -> str:
    """How a rater is named in reports: a judge under another prompt version is another rater,
    and so is another run of it (the default run ``''`` is not named)."""
    parts = [part for part in (prompt_version, f"run {run}" if run else "") if part]
    return f"{name} [{', '.join(parts)}]" if parts else name


def check_run(run: str) -> str:
    """``run`` stripped, if it can label a run: a bracket or comma would make its rater label
    ambiguous. Raises ProjectError otherwise."""
    label = run.strip()
    if any(char in label for char in "[],"):
        raise ProjectError(f"a run label cannot contain '[', ']' or ',': {run!r}")
    return label


# -- who is a person, in SQL --------------------------------------------------------------------


def is_kind(kind: str, alias: str = "r") -> str:
    """The SQL condition "rater ``alias`` is of ``kind``" (one of :data:`RATER_KINDS`)."""
    return f"{alias}.kind = '{check_kind(kind)}'"


def is_person(alias: str = "r") -> str:
    """The SQL condition "rater ``alias`` is a person"."""
    return is_kind(HUMAN, alias)


def is_grader(alias: str = "r") -> str:
    """The SQL condition "rater ``alias`` is a person who grades": a rater of kind human
    without a prompt version."""
    return f"{is_person(alias)} AND {alias}.prompt_version = ''"


def is_named_person(alias: str = "r") -> str:
    """The SQL condition "rater ``alias`` is the person named ``?``" (one parameter: the name)."""
    return f"{alias}.name = ? AND {is_grader(alias)}"


# -- rater rows ---------------------------------------------------------------------------------


def ensure_rater(project: Project, name: str, kind: str, prompt_version: str = "",
                 run: str = "") -> tuple[int, Changes]:
    """The id of a rater, created on first use (then the changes are :data:`NEW_RATER`). A
    name keeps the kind it was made with; only a language model has runs."""
    check_kind(kind)
    if not name.strip():
        raise ProjectError("a rater needs a name")
    run = check_run(run)
    if run and kind != LLM:
        raise ProjectError(f"only a language model judge has runs, not a rater of kind {kind!r}")
    known = existing_rater(project, name, kind, prompt_version, run)
    if known is not None:
        return known, NOTHING
    # The default run is written and read without naming the column, as before runs were
    # recorded: an upgrade of an older project reads and makes its raters through here.
    columns, values = ("name, kind, prompt_version", (name, kind, prompt_version)) if not run \
        else ("name, kind, prompt_version, run", (name, kind, prompt_version, run))
    created = project.conn.execute(
        f"INSERT INTO raters ({columns}) VALUES ({', '.join('?' * len(values))})",
        values).lastrowid
    assert created is not None  # an INSERT sets it
    return created, NEW_RATER


def existing_rater(project: Project, name: str, kind: str, prompt_version: str = "",
                   run: str = "") -> int | None:
    """The id of the rater ``name`` if there is one, without making one; refuses one of
    another kind than ``kind`` (a name keeps the kind it was made with), so that a plan can
    refuse before it writes what :func:`ensure_rater` would refuse."""
    # Every run of the name and version, told apart here: a project of an older schema being
    # upgraded (whose raters have no run column, all of the default run) reads them too.
    cursor = project.conn.execute("SELECT * FROM raters WHERE name = ? AND prompt_version = ?",
                                  (name, prompt_version))
    columns = [column[0] for column in cursor.description]
    row = next(((found["id"], found["kind"]) for found in (dict(zip(columns, values))
                                                         for values in cursor)
                if found.get("run", "") == run), None)
    if row is None:
        return None
    if row[1] != kind:
        raise ProjectError(f"{name!r} is already a rater of kind {row[1]!r}, not {kind!r}")
    return row[0]


def rater_id(project: Project, name: str, kind: str, prompt_version: str = "", run: str = "") -> int:
    """The id of a rater, created on first use. A name keeps the kind it was made with."""
    return ensure_rater(project, name, kind, prompt_version, run)[0]


def person_id(project: Project, name: str) -> int | None:
    """A person's rater id, without making one (reading creates no rater)."""
    row = project.conn.execute(f"SELECT r.id FROM raters r WHERE {is_named_person()}",
                               (name,)).fetchone()
    return row[0] if row else None


# -- raters as people name them -----------------------------------------------------------------


def judge_label(project: Project, judge: str) -> str:
    """The rater label of a judge given as its label (``NAME [VERSION]``, ``NAME [VERSION, run
    LABEL]``), or as a name it bears under one prompt version and run only. Raises ValueError
    naming the project's judges otherwise."""
    raters = project.conn.execute("SELECT name, prompt_version, kind, run FROM raters").fetchall()
    judges = {rater_label(name, version, run): name for name, version, kind, run in raters
              if kind != HUMAN}
    if judge in judges:
        return judge
    same_name = sorted(label for label, name in judges.items() if name == judge)
    if len(same_name) == 1:
        return same_name[0]
    if same_name:
        raise ValueError(f"judge {judge!r} has several prompt versions ({', '.join(same_name)}): "
                         "name one as 'NAME [VERSION]' (or 'NAME [VERSION, run LABEL]')")
    if any(name == judge and kind == HUMAN for name, _, kind, _ in raters):
        raise ValueError(f"{judge!r} is a person, not a judge")
    raise ValueError(f"no judge {judge!r} in this project (its judges: "
                     f"{', '.join(sorted(judges)) or 'none'})")


def reference_label(project: Project, reference: str) -> str:
    """The rater label of ``reference``: the human consensus, or a grader by name."""
    if reference.strip().casefold() in (CONSENSUS, HUMAN_CONSENSUS):
        return HUMAN_CONSENSUS
    graders = [name for (name,) in project.conn.execute(
        f"SELECT r.name FROM raters r WHERE {is_grader('r')} ORDER BY r.name")]
    if reference not in graders:
        raise ValueError(f"the reference must be {CONSENSUS!r} or a grader of this project "
                         f"({', '.join(graders) or 'nobody has graded'}), not {reference!r}")
    return reference
