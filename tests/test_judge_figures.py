"""Figures in judge requests (issue 36): a question's, its reference's and a response's images
go to the model as base64 image blocks before the prompt's text; a record without images is
asked exactly as before; the images' hashes are part of each call's key; the estimate counts
image tokens. Through the real ``anthropic`` client against the loopback server."""

from __future__ import annotations

import base64
import hashlib
import io
import json
from pathlib import Path

import pytest
from PIL import Image

from conftest import mc_question, question, response, write_jsonl
from physgrade.answers import model_stage
from physgrade.images import check, store_image
from physgrade.importer import import_file
from physgrade.judge import bloom, verdicts
from physgrade.judge.client import connect
from physgrade.judge.figures import image_tokens
from physgrade.judge.pricing import price_for
from physgrade.judge.prompts import Prompts
from physgrade.judge.purposes import run_plan
from physgrade.judge.scope import Scope
from physgrade.project import Project

MODEL = "claude-haiku-4-5"
SIZE = (300, 200)  # 60,000 pixels: 80 tokens


@pytest.fixture(scope="module")
def prompts() -> Prompts:
    return Prompts.load()


def png(color: str = "red", size: tuple[int, int] = SIZE) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, "PNG")
    return out.getvalue()


def data_uri(data: bytes) -> str:
    return f"data:image/png;base64,{base64.b64encode(data).decode()}"


def make(tmp_path: Path, name: str, images: bool) -> Project:
    """q-1 (with a figure, if ``images``) answered by r-1; q-mc, without, answered by r-3."""
    folder = tmp_path / name
    folder.mkdir()
    project = Project.create(folder / "p.physgrade")
    figure = {"images": [data_uri(png())]} if images else {}
    import_file(project, write_jsonl(folder / "q.jsonl", [question(**figure), mc_question()]),
                "questions")
    import_file(project, write_jsonl(folder / "r.jsonl", [
        response(), response("r-3", "q-mc", text="Both are conserved.\nFinal Answer: C")]),
        "responses")
    return project


@pytest.fixture
def pictured(tmp_path):
    with make(tmp_path, "pictured", True) as project:
        yield project


@pytest.fixture
def plain(tmp_path):
    with make(tmp_path, "plain", False) as project:
        yield project


def run(project, prompts, purpose=verdicts):
    plan = purpose.plan(project, MODEL, prompts, Scope(), price_for(MODEL))
    return plan, run_plan(project, connect(), plan, prompts, price_for(MODEL), 2)


def bodies(fake) -> list[dict]:
    return [json.loads(json.dumps(r.body)) for r in fake.message_requests()]


def image_blocks(body: dict) -> list[dict]:
    content = body["messages"][0]["content"]
    return [block for block in content if block["type"] == "image"] \
        if isinstance(content, list) else []


def test_a_figure_goes_as_an_image_block_before_the_text(pictured, plain, prompts, fake):
    run(pictured, prompts)
    sent = bodies(fake)
    [pictured_body] = [b for b in sent if image_blocks(b)]
    content = pictured_body["messages"][0]["content"]
    assert content[0] == {"type": "text", "text": "The question's figures:"}
    assert content[1] == {"type": "image", "source": {
        "type": "base64", "media_type": "image/png", "data": base64.b64encode(png()).decode()}}
    assert content[-1]["type"] == "text" and "A cyclist starts from rest" in content[-1]["text"]
    # The question without images is asked exactly as in a project without any images.
    [without] = [b for b in sent if not image_blocks(b)]
    assert isinstance(without["messages"][0]["content"], str)
    fake.requests.clear()
    plan, _ = run(plain, prompts)
    plain_bodies = bodies(fake)
    assert without in plain_bodies
    assert content[-1]["text"] in [b["messages"][0]["content"] for b in plain_bodies]
    assert plan.prompt_version == verdicts.prompt_version(prompts)
    extra = json.loads(pictured.conn.execute(
        "SELECT extra FROM assessments WHERE response_id = 'r-1'").fetchone()[0])
    assert extra["images"] == [hashlib.sha256(png()).hexdigest()]


def test_a_changed_figure_is_a_new_call(pictured, prompts, fake):
    first, summary = run(pictured, prompts)
    assert summary.done == 2
    again, _ = run(pictured, prompts)
    assert again.pending == () and len(fake.message_requests()) == 2
    # The question's figure is replaced (the importer refuses that; the project may change).
    changed = check(png("blue"))
    store_image(pictured.conn, changed)
    pictured.conn.execute("UPDATE image_links SET sha256 = ? WHERE owner_id = 'q-1'",
                          (changed.sha256,))
    pictured.conn.commit()
    fake.requests.clear()
    plan, summary = run(pictured, prompts)
    assert plan.pending == ("r-1",) and plan.prompt_version == first.prompt_version
    assert summary.done == 1
    [body] = bodies(fake)
    assert image_blocks(body)[0]["source"]["data"] == base64.b64encode(png("blue")).decode()
    extra = json.loads(pictured.conn.execute(
        "SELECT extra FROM assessments WHERE response_id = 'r-1'").fetchone()[0])
    assert extra["images"] == [changed.sha256]
    assert pictured.conn.execute("SELECT count(*) FROM assessments").fetchone()[0] == 2
    last, _ = run(pictured, prompts)
    assert last.pending == () and len(fake.message_requests()) == 1


def test_the_estimate_counts_image_tokens(pictured, plain, prompts):
    assert image_tokens(*SIZE) == 80
    assert image_tokens(4000, 3000) == 1600  # scaled down first: at most about 1,600
    for purpose in (verdicts, bloom):
        with_figure = purpose.plan(pictured, MODEL, prompts, Scope(), price_for(MODEL))
        without = purpose.plan(plain, MODEL, prompts, Scope(), price_for(MODEL))
        assert with_figure.estimate.input_tokens - without.estimate.input_tokens == 80


def test_bloom_sends_the_questions_figures(pictured, prompts, fake):
    _, summary = run(pictured, prompts, bloom)
    assert summary.done == 2
    with_image = [b for b in bodies(fake) if image_blocks(b)]
    assert len(with_image) == 1 and "A cyclist" in with_image[0]["messages"][0]["content"][-1][
        "text"]
    again = bloom.plan(pictured, MODEL, prompts, Scope(), price_for(MODEL))
    assert again.pending == ()


def test_the_answer_check_sends_the_questions_figures(pictured, prompts):
    jobs = {job.item_id: job.request.params(MODEL)
            for job in model_stage.jobs(pictured, prompts, ("r-1", "r-3"))}
    assert image_blocks(jobs["r-1"])[0]["source"]["media_type"] == "image/png"
    assert isinstance(jobs["r-3"]["messages"][0]["content"], str)


def test_the_answer_check_keys_its_calls_by_the_questions_figures(tmp_path, prompts, fake):
    from physgrade.cli import main
    path = tmp_path / "answers.physgrade"
    with Project.create(path) as project:
        import_file(project, write_jsonl(tmp_path / "q.jsonl", [
            question(images=[data_uri(png())])]), "questions")
        import_file(project, write_jsonl(tmp_path / "r.jsonl", [
            response(), response("r-4", text="Final Answer: 12 m/s")]), "responses")
    fake.answer = lambda body: {"parts": [{"part": 1, "verdict": "NO", "reason": "differs"}]}
    verify = ["verify", str(path), "--workers", "1", "--model", MODEL]
    assert main(verify) == 0
    [body] = bodies(fake)  # r-1 the rules settle; r-4 goes to the model, with its figure
    assert image_blocks(body)[0]["source"]["data"] == base64.b64encode(png()).decode()
    assert main(verify) == 0 and len(fake.message_requests()) == 1
    with Project.open(path) as project:
        changed = check(png("blue"))
        store_image(project.conn, changed)
        project.conn.execute("UPDATE image_links SET sha256 = ?", (changed.sha256,))
        project.conn.commit()
        shown = model_stage.plan(project, MODEL, prompts, Scope(), price_for(MODEL))
        assert shown.pending == ("r-4",)
        project.conn.execute("DELETE FROM image_links")
        project.conn.commit()
        gone = model_stage.plan(project, MODEL, prompts, Scope(), price_for(MODEL))
        assert gone.pending == ("r-4",)  # asked without the figure it was asked with
        assert shown.estimate.input_tokens - gone.estimate.input_tokens == 80
    assert main(verify) == 0 and len(fake.message_requests()) == 2
    assert isinstance(bodies(fake)[-1]["messages"][0]["content"], str)
    assert main(verify) == 0 and len(fake.message_requests()) == 2
