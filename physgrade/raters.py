"""Raters as people name them on the command line and in dialogs: a judge as ``NAME [VERSION]``
(or by a name it bears under one prompt version only), a reference as ``consensus`` or a
grader's name. Each resolves to the rater label reports use, or is refused with the choices."""

from __future__ import annotations

from physgrade.project import Project
from physgrade.report.options import HUMAN_CONSENSUS, rater_label
from physgrade.scores import HUMAN, is_grader

#: How the human consensus is named as a reference (``--reference consensus``).
CONSENSUS = "consensus"


def judge_label(project: Project, judge: str) -> str:
    """The rater label of a judge given as ``NAME [VERSION]``, or as a name it bears under one
    prompt version only. Raises ValueError naming the project's judges otherwise."""
    raters = project.conn.execute("SELECT name, prompt_version, kind FROM raters").fetchall()
    judges = {rater_label(name, version): name for name, version, kind in raters
              if kind != HUMAN}
    if judge in judges:
        return judge
    same_name = sorted(label for label, name in judges.items() if name == judge)
    if len(same_name) == 1:
        return same_name[0]
    if same_name:
        raise ValueError(f"judge {judge!r} has several prompt versions ({', '.join(same_name)}): "
                         "name one as 'NAME [VERSION]'")
    if any(name == judge and kind == HUMAN for name, _, kind in raters):
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
