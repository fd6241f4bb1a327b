"""The duplicate audit's figure stage on a real project file: questions imported with drawn
diagrams, where planted copies of one figure (the same bytes, re-encoded and rescaled, cropped)
are found as stage 4 and distinct diagrams, a reference's figure and a question without one
are not; through the core, ``physgrade dedup`` and the Duplicates page."""

from __future__ import annotations

import io
import json
import math
import random
import re
import shutil
from itertools import combinations
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from conftest import question, write_jsonl
from physgrade.cli import main
from physgrade.dedup import figures, pairs
from physgrade.dedup.audit import FIGURE_STAGE, Thresholds
from physgrade.dedup.texts import WITHIN
from physgrade.importer import import_file
from physgrade.project import Project

#: The questions showing one figure: the original, the same file, a copy re-encoded as JPEG at
#: 60% of its size, and one cropped by 4% on every side saved as WebP.
COPIES = ("q-base", "q-same", "q-jpeg", "q-crop")
PLANTED = {tuple(sorted(pair)) for pair in combinations(COPIES, 2)}  # (a, b) in id order
TEXTS = {
    "q-base": "A block of mass 2.0 kg slides down a frictionless incline from a height of 1.5 m. "
              "Find its speed at the bottom.",
    "q-same": "Two resistors of 4 ohm and 6 ohm are connected in parallel across a 12 V battery. "
              "What current does the battery deliver?",
    "q-jpeg": "A pendulum of length 0.80 m swings with small amplitude on the Moon. Compute its "
              "period there.",
    "q-crop": "A converging lens of focal length 10 cm forms an image of an object placed 30 cm "
              "in front of it. Where is the image?",
    "q-other": "A charge of 3 microcoulombs sits 0.2 m from a second charge of -5 microcoulombs. "
               "Find the force between them.",
    "q-third": "A projectile is launched at 20 m/s and 35 degrees above the horizontal. How far "
               "does it travel before landing?",
    "q-plain": "An ideal gas at 300 K doubles its volume at constant pressure. What is its new "
               "temperature?",
}


def diagram(seed: int) -> Image.Image:
    """A line drawing of random parts (a slope, a box, a wheel, arrows), like a problem's."""
    r = random.Random(seed)
    image = Image.new("RGB", (480, 360), "white")
    draw = ImageDraw.Draw(image)
    for _ in range(7):
        x, y = r.uniform(40, 400), r.uniform(40, 280)
        size = r.uniform(30, 90)
        shape = r.choice(("box", "wheel", "arrow", "slope"))
        if shape == "box":
            draw.rectangle([x, y, x + size, y + size * 0.7], outline="black", width=3)
        elif shape == "wheel":
            draw.ellipse([x, y, x + size, y + size], outline="black", width=3)
        elif shape == "arrow":
            angle = r.uniform(0, 2 * math.pi)
            draw.line([(x, y), (x + size * math.cos(angle), y + size * math.sin(angle))],
                      fill=(200, 30, 30), width=4)
        else:
            draw.polygon([(x, y + size), (x + size * 1.5, y + size), (x + size * 1.5, y)],
                         outline="black", width=3)
    return image


def encoded(image: Image.Image, kind: str = "PNG", **options) -> bytes:
    out = io.BytesIO()
    image.save(out, kind, **options)
    return out.getvalue()


def write_figures(folder: Path) -> None:
    base = diagram(1)
    w, h = base.size
    cropped = base.crop((round(w * 0.04), round(h * 0.04), round(w * 0.96), round(h * 0.96)))
    files = {"base.png": encoded(base),
             "jpeg.jpg": encoded(base.resize((round(w * 0.6), round(h * 0.6)),
                                             Image.Resampling.LANCZOS), "JPEG", quality=70),
             "crop.webp": encoded(cropped, "WEBP", quality=80),
             "other.png": encoded(diagram(2)), "third.png": encoded(diagram(3))}
    for name, data in files.items():
        (folder / name).write_bytes(data)


def build(folder: Path, name: str, records: list[dict]) -> Path:
    path = folder / f"{name}.physgrade"
    with Project.create(path) as project:
        import_file(project, write_jsonl(folder / f"{name}.jsonl", records), "questions")
    return path


@pytest.fixture(scope="module")
def figures_project(tmp_path_factory) -> Path:
    """A project of seven questions: four show one figure (planted copies), two others a
    diagram of their own (one with the first figure as its reference's), one has none."""
    folder = tmp_path_factory.mktemp("figures")
    write_figures(folder)
    shown = {"q-base": ["base.png"], "q-same": ["base.png"], "q-jpeg": ["jpeg.jpg"],
             "q-crop": ["crop.webp"], "q-other": ["other.png"], "q-third": ["third.png"]}
    records = [question(qid, question=text, images=shown.get(qid, []),
                        reference_images=["base.png"] if qid == "q-third" else [])
               for qid, text in TEXTS.items()]
    return build(folder, "figures", records)


@pytest.fixture(scope="module")
def embedder():
    from physgrade.dedup.engine import Embedder
    from physgrade.dedup.models import resolve

    return Embedder(resolve())


@pytest.fixture(scope="module")
def audited(figures_project: Path, embedder, tmp_path_factory) -> Path:
    """A copy of the project audited within itself at the default thresholds."""
    from physgrade.dedup.run import audit_project

    path = tmp_path_factory.mktemp("audited") / "audited.physgrade"
    shutil.copy(figures_project, path)
    with Project.open(path) as project:
        audit_project(project, embedder)
    return path


def stored(path: Path) -> dict[tuple[str, str], pairs.StoredPair]:
    with Project.open(path) as project:
        return {(p.a, p.b): p for p in pairs.stored_pairs(project, WITHIN)}


def test_planted_copies_are_found_by_the_figure_stage_alone(audited):
    found = stored(audited)
    by_figures = {key for key, p in found.items() if FIGURE_STAGE in p.stages}
    assert by_figures == PLANTED  # distinct diagrams, a reference's figure, no figure: none
    for key in PLANTED:
        pair = found[key]
        assert pair.stages == (FIGURE_STAGE,)  # the texts differ: neither text stage flags it
        assert 0 <= pair.jaccard < 0.1 and -1 <= pair.cosine < 0.78  # still scored
        assert pair.figure_distance is not None
        assert pair.figure_distance <= figures.DEFAULT_FIGURE_BITS
        assert pair.same_image == (key == ("q-base", "q-same"))
    assert found["q-base", "q-same"].figure_distance == 0
    with Project.open(audited) as project:
        audit = pairs.last_audit(project, WITHIN)
    assert audit is not None and audit["figure_bits"] == figures.DEFAULT_FIGURE_BITS
    summary = audit["summary"]
    assert summary["with_figures"] == 6
    assert summary["default"]["added_by_figures"] == 4
    assert summary["default"]["joint"] == 4


def test_distinct_diagrams_are_far_apart_and_copies_close(figures_project):
    folder = figures_project.parent
    hashes = {name: figures.perceptual_hash((folder / name).read_bytes())
              for name in ("base.png", "jpeg.jpg", "crop.webp", "other.png", "third.png")}
    for copy in ("jpeg.jpg", "crop.webp"):
        assert figures.distance(hashes["base.png"], hashes[copy]) <= figures.DEFAULT_FIGURE_BITS
    for first, second in combinations(("base.png", "other.png", "third.png"), 2):
        assert figures.distance(hashes[first], hashes[second]) > 2 * figures.DEFAULT_FIGURE_BITS
    # A transparent background is read as the page shows it: on white.
    base = Image.open(folder / "base.png").convert("RGBA")
    base.putalpha(Image.eval(base.convert("L"), lambda v: 0 if v > 250 else 255))
    assert figures.distance(figures.perceptual_hash(encoded(base)), hashes["base.png"]) <= 2


def test_hashes_are_kept_and_a_stricter_threshold_keeps_only_the_same_image(
        audited, embedder, tmp_path, monkeypatch):
    from physgrade.dedup.run import audit_project

    path = tmp_path / "strict.physgrade"
    shutil.copy(audited, path)
    with Project.open(path) as project:
        kept = project.conn.execute("SELECT count(*) FROM image_hashes WHERE method = ?",
                                    (figures.METHOD,)).fetchone()[0]
        assert kept == 5  # the questions' distinct images; the reference's is not hashed
        monkeypatch.setattr(figures, "perceptual_hash", _never)
        audit = audit_project(project, embedder, thresholds=Thresholds(figure=0))
    flagged = {(p.a, p.b) for p in audit.result.pairs if FIGURE_STAGE in p.stages}
    assert flagged == {("q-base", "q-same")}  # one image in common, whatever the threshold


def _never(data: bytes) -> bytes:
    raise AssertionError("a kept hash was computed again")


def test_cli_json_shows_the_figure_stage_within_and_against_a_project(figures_project, audited,
                                                                      tmp_path, capsys):
    path = tmp_path / "again.physgrade"
    shutil.copy(audited, path)
    assert main(["dedup", str(path), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    figure_pairs = {(p["a"], p["b"]): p for p in found["pairs"] if FIGURE_STAGE in p["stages"]}
    assert set(figure_pairs) == PLANTED
    assert figure_pairs["q-base", "q-same"]["same_image"] is True
    assert figure_pairs["q-base", "q-same"]["figure_distance"] == 0
    jpeg = figure_pairs["q-base", "q-jpeg"]
    assert jpeg["same_image"] is False and 0 < jpeg["figure_distance"] <= 36
    assert jpeg["stages"] == [FIGURE_STAGE]
    # Another project's question showing the cropped copy is found against it.
    shutil.copy(figures_project.parent / "crop.webp", tmp_path / "crop.webp")
    other = build(tmp_path, "pool", [question("pool-1", question="Describe how a lever works "
                                              "and name its parts.", images=["crop.webp"])])
    assert main(["dedup", str(path), "--against", str(other)]) == 0
    out = capsys.readouterr().out
    assert "more by figures (of 6 with figures)" in out
    with Project.open(path) as project:
        against = pairs.stored_pairs(project, str(other.resolve()), stage=FIGURE_STAGE)
    assert {p.a for p in against} == set(COPIES) and {p.b for p in against} == {"pool-1"}


def test_questions_without_figures_audit_as_before(tmp_path, capsys):
    path = build(tmp_path, "plain", [question(qid, question=text)
                                     for qid, text in TEXTS.items()])
    assert main(["dedup", str(path)]) == 0
    out = capsys.readouterr().out
    assert "figures" not in out and "candidate pair" in out
    with Project.open(path) as project:
        assert project.conn.execute("SELECT count(*) FROM image_hashes").fetchone()[0] == 0
        assert all(p.figure_distance is None for p in pairs.stored_pairs(project))


@pytest.mark.usefixtures("app_settings")
def test_the_duplicates_page_shows_the_figure_stage(audited, tmp_path, qtbot):
    pytest.importorskip("pytestqt")
    from PySide6.QtCore import QUrl
    from PySide6.QtGui import QTextDocument

    from conftest import grading_window, shot
    from physgrade_ui import duplicates

    path = tmp_path / "page.physgrade"
    shutil.copy(audited, path)
    window = grading_window(qtbot, path, 1280, 800)
    window.duplicates_action.trigger()
    page = window.duplicates
    page.stage.setCurrentIndex(page.stage.findData(FIGURE_STAGE))
    model = page.model
    titles = [title for title, _ in duplicates.COLUMNS]
    rows = {(model.index(r, 0).data(), model.index(r, 1).data()): r
            for r in range(model.rowCount())}
    assert set(rows) == PLANTED

    def cell(pair: tuple[str, str], title: str) -> str:
        return model.index(rows[pair], titles.index(title)).data()

    assert not page.table.isColumnHidden(titles.index("Figure"))
    assert cell(("q-base", "q-same"), "Figure") == "same image"
    assert cell(("q-base", "q-jpeg"), "Figure").endswith(" bits")
    assert {cell(pair, "Stages") for pair in PLANTED} == {"4"}
    page.select_row(rows["q-base", "q-jpeg"])
    scores = page.comparison.scores.text()
    assert " bits apart " in scores and scores.endswith("flagged by stage 4 (figures)")
    for pane in (page.comparison.a, page.comparison.b):  # each question's figure under its text
        names = re.findall(r'src="(figure:[0-9a-f]{64})"', pane.text.toHtml())
        assert len(names) == 1 and "Figure 1 · " in pane.text.toPlainText()
        assert not pane.text.document().resource(QTextDocument.ResourceType.ImageResource,
                                                  QUrl(names[0])).isNull()
    assert f"figures ≤ {figures.DEFAULT_FIGURE_BITS} bits" in page.details.text()
    assert "more by figures" in page.summary.text()
    qtbot.waitUntil(lambda: page.table.viewport().width() > 0)
    assert not page.table.horizontalScrollBar().isVisible()  # every column fits at 1280 px
    shot(window, "duplicates-figures-1280.png")


def test_a_questions_files_figures_are_read_and_checked(figures_project, audited, tmp_path,
                                                       capsys):
    path = tmp_path / "against.physgrade"
    shutil.copy(audited, path)
    shutil.copy(figures_project.parent / "jpeg.jpg", tmp_path / "jpeg.jpg")
    pool = write_jsonl(tmp_path / "pool.jsonl", [
        {"id": "pool-1", "question": "Why is the sky blue?", "images": ["jpeg.jpg"]},
        {"id": "pool-2", "question": "State Ohm's law."}])
    assert main(["dedup", str(path), "--against", str(pool), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)["pairs"]
    assert {(p["a"], p["b"]) for p in found if FIGURE_STAGE in p["stages"]} == {
        (qid, "pool-1") for qid in COPIES}
    before = stored(path)
    bad = write_jsonl(tmp_path / "bad.jsonl", [
        {"id": "pool-1", "question": "Why is the sky blue?"},
        {"id": "pool-2", "question": "State Ohm's law.", "images": ["absent.png"]}])
    assert main(["dedup", str(path), "--against", str(bad)]) == 1
    assert "bad.jsonl line 2, field 'images[0]': absent.png: no such file" in \
        capsys.readouterr().err
    assert stored(path) == before
