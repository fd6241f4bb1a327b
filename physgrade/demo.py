"""The bundled demo project: a small, original data set that exercises every screen and report."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import platformdirs

from physgrade.estimation import sample
from physgrade.formats import FormatError
from physgrade.importer import ImportResult, import_file
from physgrade.project import Project, ProjectError
from physgrade.tasks import Task

#: Import order matters: each kind refers to the ones before it.
DEMO_FILES = (("questions", "questions.jsonl"), ("responses", "responses.jsonl"),
              ("verdicts", "verdicts.jsonl"), ("grades", "grades.jsonl"),
              ("judge_reviews", "judge_reviews.jsonl"), ("bloom", "bloom.jsonl"))


#: The records the demo's imports add, as ``info`` names them.
DEMO_TABLES = ("questions", "responses", "assessments", "judge_reviews", "bloom_labels")


#: The estimation sample a new demo project is drawn with: a third of its responses, of which
#: the demo's experts graded most (physgrade.estimation).
DEMO_SAMPLE, DEMO_SAMPLE_SIZE, DEMO_SAMPLE_SEED = "Sample 1", 42, 2026


def demo_data_dir() -> Path:
    return Path(str(resources.files("physgrade_resources") / "demo"))


def default_demo_path() -> Path:
    return Path(platformdirs.user_data_dir("physgrade")) / "demo.physgrade"


def record_counts(project: Project) -> dict[str, int]:
    """How many records of each of :data:`DEMO_TABLES` ``project`` holds: a build that stops
    says what its finished imports added."""
    return {table: project.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in DEMO_TABLES}


def build_demo(path: Path, task: Task | None = None, *,
               estimation_sample: bool = True) -> list[ImportResult]:
    """Create the demo project at ``path``, or bring an existing one up to date, with its
    estimation sample (:data:`DEMO_SAMPLE`) unless told otherwise or it has one already.

    An existing demo keeps the work done in it: the imports are idempotent.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    existing = path.exists()
    project = Project.open(path) if existing else Project.create(path)
    with project:
        try:
            results = [import_file(project, demo_data_dir() / name, kind, task=task)
                       for kind, name in DEMO_FILES]
        except FormatError as exc:
            if not existing:
                raise
            raise ProjectError(f"the demo data bundled with this physgrade differs from the demo "
                               f"project at {path} ({exc}); delete that file to start afresh, "
                               "or give another one with --db") from exc
        if estimation_sample and not sample.samples(project):
            # So that the corrected estimates have a sample to show from the start.
            sample.draw(project, DEMO_SAMPLE, DEMO_SAMPLE_SIZE, DEMO_SAMPLE_SEED)
        return results
