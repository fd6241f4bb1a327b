"""Images of questions, references and responses: checked on import, stored once by hash,
refused with file, line and field (changing nothing), written back on export, carried by packs."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import random
import sqlite3
import struct
import tracemalloc
import zlib

import pytest
from PIL import Image, PngImagePlugin

from conftest import older_schema, question, response, write_jsonl
from physgrade.exporter import export_kind
from physgrade.formats import FormatError
from physgrade.images import MAX_PIXELS, images_of
from physgrade.importer import import_file
from physgrade.project import Project, migrations
from physgrade.raters import HUMAN, ensure_rater
from physgrade.team.packs import make_pack


def picture(kind: str = "PNG", size: tuple[int, int] = (4, 3), color: str = "red",
            **options) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, kind, **options)
    return out.getvalue()


def data_uri(data: bytes, media: str = "image/png") -> str:
    return f"data:{media};base64,{base64.b64encode(data).decode()}"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def bomb() -> bytes:
    """A tiny PNG whose header declares 100000 x 100000 pixels (its CRC put right)."""
    data = bytearray(picture())
    ihdr = 8 + 8  # signature, then the IHDR chunk's length and type
    data[ihdr:ihdr + 8] = struct.pack(">II", 100_000, 100_000)
    crc = zlib.crc32(bytes(data[ihdr - 4:ihdr + 13]))
    data[ihdr + 13:ihdr + 17] = struct.pack(">I", crc)
    return bytes(data)


def snapshot(project: Project) -> dict:
    tables = [r[0] for r in project.conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    return {t: project.conn.execute(f"SELECT * FROM {t}").fetchall() for t in tables}


def stored(project: Project) -> dict[str, tuple]:
    return {h: (m, w, ht, n) for h, m, w, ht, n in project.conn.execute(
        "SELECT sha256, media_type, width, height, byte_size FROM images")}


def test_paths_and_data_uris_are_checked_and_stored_once(project, tmp_path):
    png, jpeg = picture(), picture("JPEG", (8, 8), "blue")
    (tmp_path / "figs").mkdir()
    (tmp_path / "figs" / "incline.png").write_bytes(png)
    path = write_jsonl(tmp_path / "q.jsonl", [
        question("q-1", images=["figs/incline.png"], reference_images=[data_uri(jpeg,
                                                                                "image/jpeg")]),
        question("q-2", images=[data_uri(png), "figs/incline.png"])])
    result = import_file(project, path, "questions")
    assert result.added == 2
    assert stored(project) == {sha(png): ("image/png", 4, 3, len(png)),
                               sha(jpeg): ("image/jpeg", 8, 8, len(jpeg))}
    assert [i.sha256 for i in images_of(project.conn, "question", "q-2")] == [sha(png)] * 2
    assert [i.data for i in images_of(project.conn, "reference", "q-1")] == [jpeg]
    assert images_of(project.conn, "reference", "q-2") == []
    assert project.db["questions"].get("q-1")["extra"] is None  # images are not extra fields
    # Responses may carry images too; GIF and WebP are welcome.
    gif, webp = picture("GIF"), picture("WEBP")
    import_file(project, write_jsonl(tmp_path / "r.jsonl", [
        {**response("r-1"), "images": [data_uri(gif, "image/gif"),
                                       data_uri(webp, "image/webp")]}]), "responses")
    assert [i.media_type for i in images_of(project.conn, "response", "r-1")] == [
        "image/gif", "image/webp"]
    # The same file again adds nothing; the same records again are unchanged.
    again = write_jsonl(tmp_path / "q2.jsonl", [json.loads(line) for line in
                                                reversed(path.read_text().splitlines())])
    before = snapshot(project)
    assert import_file(project, again, "questions").unchanged == 2
    assert {t: v for t, v in snapshot(project).items() if t != "imports"} == {
        t: v for t, v in before.items() if t != "imports"}


def traced_import(project, folder, name: str, count: int) -> tuple[int, int]:
    """Import ``count`` questions, each with its own figure of noise (about 77 KB: noise does not
    compress); the peak of Python memory during the import, and the figures' total size."""
    rng = random.Random(name)
    records, total = [], 0
    for number in range(count):
        data = io.BytesIO()
        Image.frombytes("RGB", (160, 160), rng.randbytes(160 * 160 * 3)).save(
            data, "PNG", compress_level=0)
        figure = data.getvalue()
        total += len(figure)
        reference = f"{name}-{number}.png"
        (folder / reference).write_bytes(figure)
        records.append(question(f"{name}-{number}", images=[reference]))
    path = write_jsonl(folder / f"{name}.jsonl", records)
    tracemalloc.start()
    try:
        import_file(project, path, "questions")
        return tracemalloc.get_traced_memory()[1], total
    finally:
        tracemalloc.stop()


def test_an_import_holds_no_image_bytes_once_they_are_checked(project, tmp_path):
    """Each image is stored as soon as it is checked, so an import's memory does not grow with
    its images: a file of 5,000 figures is imported without holding them all. Twice the figures,
    the same peak. (Paths only: with data: URIs the file itself grows, and reading it costs
    memory of its own.)"""
    traced_import(project, tmp_path, "warm", 2)  # loads the modules an import needs
    peak, _ = traced_import(project, tmp_path, "some", 16)
    twice, total = traced_import(project, tmp_path, "more", 32)
    assert len(stored(project)) == 2 + 16 + 32
    assert twice - peak < total / 8, (f"{peak:,} bytes at most for 16 figures, {twice:,} for "
                                      f"32 ({total:,} bytes)")


def test_a_png_with_html_in_a_text_chunk_is_only_a_png(project, tmp_path):
    info = PngImagePlugin.PngInfo()
    info.add_text("Comment", "<html><script>alert('x')</script></html>")
    png = picture(pnginfo=info)
    (tmp_path / "page.png").write_bytes(png)
    import_file(project, write_jsonl(tmp_path / "q.jsonl", [question(images=["page.png"])]),
                "questions")
    [image] = images_of(project.conn, "question", "q-1")
    assert image.media_type == "image/png" and image.data == png  # kept byte for byte


REFUSALS = {
    "svg file": ("fig.svg", b'<svg xmlns="http://www.w3.org/2000/svg"><script/></svg>', "SVG"),
    "svg named png": ("fig.png", b'<?xml version="1.0"?><svg></svg>', "SVG"),
    "svg data uri": (None, data_uri(b"<svg></svg>", "image/svg+xml"), "SVG"),
    "bmp": ("fig.bmp", picture("BMP"), "not a PNG, JPEG, GIF or WebP"),
    "text": ("fig.png", b"<html>not an image</html>", "not a PNG, JPEG, GIF or WebP"),
    "missing": ("absent.png", None, "no such file"),
    "truncated": ("fig.png", picture(size=(64, 64), color="green")[:-30], "cannot be decoded"),
    "bad base64": (None, "data:image/png;base64,@@@@", "base64"),
    "not base64": (None, "data:image/png,rawbytes", "base64"),
    "lying data uri": (None, data_uri(picture("GIF"), "image/png"), "holds image/gif"),
    "url": (None, "https://example.org/fig.png", "URL"),
    "bomb": ("bomb.png", bomb(), f"at most {MAX_PIXELS:,}"),
}


@pytest.mark.parametrize("case", REFUSALS)
def test_refusals_name_file_line_and_field_and_change_nothing(project, tmp_path, case):
    name, content, words = REFUSALS[case]
    if name is None:
        reference = content
    else:
        reference = name
        if content is not None:
            (tmp_path / name).write_bytes(content)
    (tmp_path / "good.png").write_bytes(picture())
    before = snapshot(project)
    path = write_jsonl(tmp_path / "q.jsonl", [
        question("q-1", images=["good.png"]),
        question("q-2", images=["good.png"], reference_images=["good.png", reference])])
    with pytest.raises(FormatError) as caught:
        import_file(project, path, "questions")
    error = caught.value
    assert (error.source, error.line, error.field) == ("q.jsonl", 2, "reference_images[1]")
    assert words in error.message
    assert str(error).startswith("q.jsonl line 2, field 'reference_images[1]': ")
    assert snapshot(project) == before


def test_responses_refusals_are_located_too(project, tmp_path):
    import_file(project, write_jsonl(tmp_path / "q.jsonl", [question()]), "questions")
    before = snapshot(project)
    with pytest.raises(FormatError) as caught:
        import_file(project, write_jsonl(tmp_path / "r.jsonl", [
            {**response(), "images": "missing.gif"}]), "responses")
    assert (caught.value.line, caught.value.field) == (1, "images[0]")
    assert snapshot(project) == before


def test_export_writes_images_beside_the_records_and_reimport_keeps_the_hashes(
        project, tmp_path):
    png, jpeg = picture(), picture("JPEG")
    (tmp_path / "a.png").write_bytes(png)
    import_file(project, write_jsonl(tmp_path / "q.jsonl", [
        question("q-1", images=["a.png", data_uri(jpeg, "image/jpeg")],
                 reference_images=["a.png"]), question("q-2")]), "questions")
    import_file(project, write_jsonl(tmp_path / "r.jsonl", [
        {**response(), "images": ["a.png"]}]), "responses")
    out = tmp_path / "out"
    out.mkdir()
    export_kind(project, "questions", out / "questions.jsonl")
    export_kind(project, "responses", out / "responses.jsonl")
    records = [json.loads(line) for line in (out / "questions.jsonl").read_text().splitlines()]
    assert records[0]["images"] == [f"images/{sha(png)}.png", f"images/{sha(jpeg)}.jpg"]
    assert records[0]["reference_images"] == [f"images/{sha(png)}.png"]
    assert "images" not in records[1] and "reference_images" not in records[1]
    assert sorted(p.name for p in (out / "images").iterdir()) == sorted(
        [f"{sha(png)}.png", f"{sha(jpeg)}.jpg"])
    assert (out / "images" / f"{sha(png)}.png").read_bytes() == png
    with Project.create(tmp_path / "again.physgrade") as again:
        import_file(again, out / "questions.jsonl", "questions")
        import_file(again, out / "responses.jsonl", "responses")
        for kind, owner in (("question", "q-1"), ("reference", "q-1"), ("response", "r-1")):
            assert images_of(again.conn, kind, owner) == images_of(project.conn, kind, owner)
        assert stored(again) == stored(project)


def test_physics_r1_records_are_read_with_the_field_mapping(project, tmp_path):
    png = picture()
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "p1.png").write_bytes(png)
    record = {"messages": [{"role": "user", "content": "<image>A block slides down the incline "
                            "shown. Find its acceleration."}],
              "images": ["images/p1.png"], "solution": "a = g sin(30°) = 4.9 m/s^2",
              "modality": "image+text", "native_difficulty": "hard"}
    path = write_jsonl(tmp_path / "physics_r1.jsonl", [record])
    import_file(project, path, "questions",
                {"@line": "id", "solution": "reference_solution"})
    row = project.db["questions"].get("physics_r1:1")
    assert row["question"].startswith("<image>A block slides")
    assert row["reference_solution"] == "a = g sin(30°) = 4.9 m/s^2"
    assert json.loads(row["extra"]) == {"modality": "image+text", "native_difficulty": "hard"}
    assert [i.data for i in images_of(project.conn, "question", "physics_r1:1")] == [png]
    # A transcript with more than the question in it is kept whole.
    chat = [{"role": "system", "content": "Think step by step."},
            {"role": "user", "content": [{"type": "image"},
                                         {"type": "text", "text": "Find the tension."}]}]
    import_file(project, write_jsonl(tmp_path / "chat.jsonl", [{"id": "c-1", "messages": chat}]),
                "questions")
    row = project.db["questions"].get("c-1")
    assert row["question"] == "Find the tension."
    assert json.loads(row["extra"]) == {"messages": chat}


def test_a_pack_carries_the_images_of_its_questions_and_responses(project, tmp_path):
    shown, other, answer = picture(), picture(color="blue"), picture("GIF")
    for name, data in (("q.png", shown), ("other.png", other), ("r.gif", answer)):
        (tmp_path / name).write_bytes(data)
    import_file(project, write_jsonl(tmp_path / "q.jsonl", [
        question("q-1", images=["q.png"], reference_images=["q.png"]),
        question("q-2", images=["other.png"])]), "questions")
    import_file(project, write_jsonl(tmp_path / "r.jsonl", [
        {**response("r-1"), "images": ["r.gif"]}, response("r-2", "q-2")]), "responses")
    with project.transaction():
        grader, _ = ensure_rater(project, "expert-1", HUMAN)
        project.conn.execute("INSERT INTO assignments (grader_id, response_id) VALUES (?, ?)",
                             (grader, "r-1"))
    out = tmp_path / "pack.physgrade"
    make_pack(project, "expert-1", out)
    with Project.open(out) as pack:
        assert set(stored(pack)) == {sha(shown), sha(answer)}  # not q-2's
        assert [i.data for i in images_of(pack.conn, "question", "q-1")] == [shown]
        assert [i.data for i in images_of(pack.conn, "reference", "q-1")] == [shown]
        assert [i.data for i in images_of(pack.conn, "response", "r-1")] == [answer]


def test_a_project_of_schema_18_keeps_its_images_when_they_move_to_a_rowid_table(tmp_path):
    """Version 19 rebuilds ``images`` with rowids (the bytes out of the hash's B-tree): every
    image, its links and their foreign key survive, and a link to no image is still refused."""
    older = older_schema(tmp_path / "schema18", 18)
    png, gif = picture(), picture("GIF")
    path = tmp_path / "old.physgrade"
    with Project.create(path, older) as old:
        import_file(old, write_jsonl(tmp_path / "q.jsonl", [
            question("q-1", images=[data_uri(png), data_uri(gif, "image/gif")])]), "questions")
        assert "WITHOUT ROWID" in old.conn.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'images'").fetchone()[0]
    with Project.open(path) as upgraded:
        conn = upgraded.conn
        assert upgraded.schema_version == len(migrations()) >= 19
        assert "WITHOUT ROWID" not in conn.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'images'").fetchone()[0]
        assert [i.data for i in images_of(conn, "question", "q-1")] == [png, gif]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):
            with upgraded.transaction():
                conn.execute("INSERT INTO image_links VALUES ('question', 'q-1', 2, 'nothing')")
