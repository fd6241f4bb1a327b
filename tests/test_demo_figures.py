"""The demo's figures: drawn by the script beside them, shipped with the package, and stored
and linked to their questions in a new demo project."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sqlite3
import tomllib
from fnmatch import fnmatch
from pathlib import Path

from PIL import Image

from physgrade import images
from physgrade.demo import demo_data_dir

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "resources" / "demo"
#: Each demo question with figures: its own, and its reference solution's.
EXPECTED = {"q-0007": (["figures/q-0007-ramp.png"], []),
            "q-0012": (["figures/q-0012-circuit.png"], []),
            "q-0013": (["figures/q-0013-rod.png"], []),
            "q-0027": (["figures/q-0027-lens.png"], ["figures/q-0027-rays.png"])}


def named_by_questions() -> dict[str, tuple[list[str], list[str]]]:
    found = {}
    for line in (DEMO / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("images") or record.get("reference_images"):
            found[record["id"]] = (record.get("images", []), record.get("reference_images", []))
    return found


def test_the_questions_name_the_drawn_figures_and_nothing_else() -> None:
    spec = importlib.util.spec_from_file_location("draw_figures", DEMO / "draw_figures.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    files = {path.name for path in (DEMO / "figures").iterdir()}
    named = {Path(path).name for own, reference in EXPECTED.values() for path in own + reference}
    assert named_by_questions() == EXPECTED
    assert set(script.DRAWINGS) == files == named


def test_every_figure_is_packaged_sharp_and_small() -> None:
    """A figure the package data leaves out would be missing from a wheel and the bundle."""
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "tool"]["setuptools"]["package-data"]["physgrade_resources"]
    for path in sorted((DEMO / "figures").iterdir()):
        relative = path.relative_to(DEMO.parent).as_posix()
        assert any(fnmatch(relative, pattern) for pattern in patterns), relative
        with Image.open(path) as image:
            assert image.format == "PNG" and image.width >= 900, path.name  # about 2x
        assert path.stat().st_size < 80_000, path.name


def test_a_new_demo_stores_each_figure_once_linked_to_its_question(demo: Path) -> None:
    conn = sqlite3.connect(demo)
    try:
        for question, (own, reference) in EXPECTED.items():
            for kind, paths in (("question", own), ("reference", reference)):
                stored = images.images_of(conn, kind, question)
                assert [image.sha256 for image in stored] == [
                    hashlib.sha256((demo_data_dir() / path).read_bytes()).hexdigest()
                    for path in paths], (question, kind)
                assert all(image.media_type == "image/png" for image in stored)
        owners = conn.execute("SELECT owner_kind, owner_id FROM image_links "
                              "ORDER BY owner_id, owner_kind").fetchall()
        assert owners == [("question", "q-0007"), ("question", "q-0012"),
                          ("question", "q-0013"), ("question", "q-0027"),
                          ("reference", "q-0027")]
        assert conn.execute("SELECT count(*) FROM images").fetchone()[0] == 5
        statements = dict(conn.execute("SELECT id, question FROM questions WHERE id IN "
                                       "('q-0007', 'q-0012', 'q-0013', 'q-0027')").fetchall())
        assert all("figure" in text for text in statements.values())
    finally:
        conn.close()
