"""Corrected estimates on simulated studies whose truth is known.

A study of three models answers 120 questions (90 on mechanics, 30 on optics). Every response
has a true P-REFS grade; a lenient judge scores every response, accepting a wrong final answer
a third of the time and rounding other criteria up; an expert grades exactly the responses of
an estimation sample, truthfully. The truth of each model is the mean over all its responses,
which the expert never sees whole.
"""

from __future__ import annotations

import json
import shutil
from itertools import combinations
from pathlib import Path

import numpy as np
import ppi_py
import pytest

from conftest import question, response, write_jsonl
from physgrade.analyses import ALL_MODELS
from physgrade.cli import build_parser, main
from physgrade.estimation import sample as samples
from physgrade.estimation.estimates import MEASURES, Estimates, estimate, plan
from physgrade.importer import import_file
from physgrade.project import Project, ProjectError
from physgrade.raters import judge_label

MODELS = {"alpha": 0.75, "beta": 0.5, "gamma": 0.3}  # each model's share of right answers
TOPICS = ["Mechanics"] * 90 + ["Optics"] * 30
CRITERIA = ("INT", "MOD", "CON", "APP", "CAL", "COH", "COR", "ANS")
MAXIMA = dict.fromkeys(CRITERIA, 1) | {"COR": 2, "ANS": 2}
JUDGE = "lenient [v1]"
EXPERT = "expert-1"


def _simulate(seed: int = 20) -> tuple[list[dict], list[dict], dict, dict]:
    """Questions, responses, and the true and judged scores of each response."""
    rng = np.random.default_rng(seed)
    questions = [question(f"q-{i:03d}", topic=topic) for i, topic in enumerate(TOPICS)]
    responses, truth, judged = [], {}, {}
    for q in questions:
        for model, right in MODELS.items():
            rid = f"{q['id']}@{model}"
            responses.append(response(rid, q["id"], model, "Final Answer: 10 m/s"))
            correct = rng.random() < right
            true = {key: int(rng.random() < (0.85 if correct else 0.4)) * maximum
                    for key, maximum in MAXIMA.items()}
            true["ANS"] = 2 if correct else 0
            truth[rid] = true
            lenient = {key: maximum if value < maximum and rng.random() < 0.35 else value
                       for (key, value), maximum in zip(true.items(), MAXIMA.values())}
            lenient["ANS"] = 2 if (correct and rng.random() < 0.97) or (
                not correct and rng.random() < 0.35) else 0
            judged[rid] = lenient
    return questions, responses, truth, judged


QUESTIONS, RESPONSES, TRUTH, JUDGED = _simulate()


def _measure(scores: dict[str, int], measure: str) -> float:
    if measure == "final_answer_correct":
        return float(scores["ANS"] == 2)
    return sum(scores.values()) / sum(MAXIMA.values())


def _ids(model: str) -> list[str]:
    return [r["id"] for r in RESPONSES if model in (ALL_MODELS, r["model"])]


def _truth(model: str, measure: str) -> float:
    return float(np.mean([_measure(TRUTH[rid], measure) for rid in _ids(model)]))


def import_study(project: Project, folder: Path, judged: dict[str, dict]) -> None:
    """The study's questions and responses, with the lenient judge's ``judged`` verdicts."""
    import_file(project, write_jsonl(folder / "q.jsonl", QUESTIONS), "questions")
    import_file(project, write_jsonl(folder / "r.jsonl", RESPONSES), "responses")
    import_file(project, write_jsonl(folder / "v.jsonl", [
        {"response_id": rid, "judge": "lenient", "prompt_version": "v1", "scores": scores}
        for rid, scores in judged.items()]), "verdicts")


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The study without grades, built once: questions, responses and the judge's verdicts."""
    folder = tmp_path_factory.mktemp("study")
    path = folder / "study.physgrade"
    with Project.create(path) as project:
        import_study(project, folder, JUDGED)
    return path


@pytest.fixture
def study(base: Path, tmp_path: Path) -> Path:
    path = tmp_path / "study.physgrade"
    shutil.copy(base, path)
    return path


def _grade(project: Project, ids: list[str], folder: Path, grader: str = EXPERT) -> None:
    """The expert's true grades of ``ids``."""
    import_file(project, write_jsonl(folder / f"grades-{grader}.jsonl", [
        {"response_id": rid, "grader": grader, "scores": TRUTH[rid]} for rid in ids]), "grades")


def _drawn(path: Path, folder: Path, size: int = 150, strata: tuple[str, ...] = (),
           name: str = "estimation") -> dict[str, float]:
    """Draw a sample, grade all of it, and return its inclusion probabilities."""
    with Project.open(path) as project:
        drawn = samples.draw(project, name, size, seed=7, strata=strata)
        probability = samples.inclusion(project, drawn)
        _grade(project, list(probability), folder)
    return probability


def _arrays(model: str, measure: str, graded: set[str]):
    """What ppi_py is given: the truth and the judge on the graded responses of ``model``,
    the judge on the rest."""
    ids = _ids(model)
    labelled = [rid for rid in ids if rid in graded]
    y = np.array([_measure(TRUTH[rid], measure) for rid in labelled])
    y_hat = np.array([_measure(JUDGED[rid], measure) for rid in labelled])
    unlabelled = np.array([_measure(JUDGED[rid], measure) for rid in ids if rid not in graded])
    return labelled, y, y_hat, unlabelled


def _estimates(path: Path, **options) -> Estimates:
    with Project.open(path) as project:
        return estimate(project, JUDGE, options.pop("sample", "estimation"), **options)


# -- the numbers ---------------------------------------------------------------------------


def test_corrected_estimates_match_ppi_py(study: Path, tmp_path: Path) -> None:
    graded = set(_drawn(study, tmp_path))
    found = _estimates(study)
    assert found.models() == [*MODELS, ALL_MODELS]
    for model in found.models():
        for measure in MEASURES:
            row = found.row(model, measure)
            labelled, y, y_hat, unlabelled = _arrays(model, measure, graded)
            assert row.corrected is not None
            assert row.corrected.n == len(labelled) and row.unlabeled == len(unlabelled)
            assert row.corrected.value == pytest.approx(
                float(ppi_py.ppi_mean_pointestimate(y, y_hat, unlabelled)[0]), abs=1e-9)
            low, high = ppi_py.ppi_mean_ci(y, y_hat, unlabelled, alpha=0.05)
            assert row.corrected.ci95 == pytest.approx((low[0], high[0]), abs=1e-9)
            assert row.corrected.value == pytest.approx(float(ppi_py.ppi_mean_pointestimate(
                y, y_hat, unlabelled, lam=row.corrected.lam)[0]), abs=1e-9)
            assert 0 <= row.corrected.lam <= 1
            assert row.experts_only.value == pytest.approx(y.mean())
            assert row.experts_only.ci95 == pytest.approx(  # shown cut to 0..1
                np.clip(ppi_py.classical_mean_ci(y, alpha=0.05), 0, 1), abs=1e-9)
            everything = [_measure(JUDGED[rid], measure) for rid in _ids(model)]
            assert row.judge_only.value == pytest.approx(np.mean(everything))
            assert row.judge_only.n == len(everything) and row.judge_only.ci95 is None


def test_corrected_beats_the_judge_covers_the_truth_and_is_narrower(study: Path,
                                                                    tmp_path: Path) -> None:
    _drawn(study, tmp_path)
    found = _estimates(study)
    for row in found.rows:
        truth = _truth(row.model, row.measure)
        assert row.corrected is not None
        low, high = row.corrected.ci95
        assert low <= truth <= high, (row.model, row.measure)
        assert abs(row.corrected.value - truth) < abs(row.judge_only.value - truth), row
        assert row.judge_only.value > truth  # the judge is lenient
        assert row.experts_only.ci95 is not None
        assert high - low < row.experts_only.ci95[1] - row.experts_only.ci95[0]
        assert row.corrected.effective_n > row.corrected.n


def test_the_intervals_cover_the_truth_in_at_least_90_percent_of_samples(
        base: Path, tmp_path: Path) -> None:
    """The whole way, from drawing to estimating, over 40 seeded samples (ppi's own tests run
    100 simulations on plain arrays)."""
    covered = dict.fromkeys(((m, measure) for m in [*MODELS, ALL_MODELS] for measure in MEASURES),
                            0)
    for seed in range(40):
        path = tmp_path / f"study-{seed}.physgrade"
        shutil.copy(base, path)
        with Project.open(path) as project:
            drawn = samples.draw(project, "estimation", 150, seed=seed)
            _grade(project, list(samples.inclusion(project, drawn)), tmp_path)
            found = estimate(project, JUDGE, "estimation")
        for row in found.rows:
            assert row.corrected is not None
            low, high = row.corrected.ci95
            covered[row.model, row.measure] += low <= _truth(row.model, row.measure) <= high
    assert min(covered.values()) >= 36, covered


def test_differences_between_every_pair_of_models(study: Path, tmp_path: Path) -> None:
    _drawn(study, tmp_path)
    found = _estimates(study)
    pairs = [(d.measure, d.models) for d in found.differences]
    assert pairs == [(m, pair) for m in MEASURES for pair in combinations(MODELS, 2)]
    for difference in found.differences:
        a, b = (found.row(model, difference.measure).corrected for model in difference.models)
        assert a is not None and b is not None
        assert difference.estimate.value == pytest.approx(a.value - b.value)
        half = 1.959964 * np.hypot(a.se, b.se)
        assert difference.estimate.ci95 == pytest.approx(np.clip(
            (a.value - b.value - half, a.value - b.value + half), -1, 1), abs=1e-5)
    # alpha answers right far more often than gamma: the interval says so.
    alpha_gamma = next(d for d in found.differences if d.models == ("alpha", "gamma"))
    assert alpha_gamma.estimate.ci95 is not None and alpha_gamma.estimate.ci95[0] > 0


def test_a_stratified_sample_is_weighted_by_its_inclusion_probabilities(
        study: Path, tmp_path: Path) -> None:
    # 30 from the 270 mechanics responses, 30 from the 90 optics ones: optics drawn 3x as densely.
    probability = _drawn(study, tmp_path, size=60, strata=("topic",))
    assert sorted(set(probability.values())) == pytest.approx([30 / 270, 30 / 90])
    found = _estimates(study)
    assert any("stratified by topic" in note for note in found.notes)
    topic = {r["id"]: q["topic"] for q in QUESTIONS for r in RESPONSES if r["question_id"] == q["id"]}
    for model in found.models():
        for measure in MEASURES:
            labelled, y, y_hat, unlabelled = _arrays(model, measure, set(probability))
            weights = np.array([1 / probability[rid] for rid in labelled])
            # The judge-only responses stand for their topic's responses: all / judge-only.
            rest = [rid for rid in _ids(model) if rid not in probability]
            everyone = [topic[rid] for rid in _ids(model)]
            w_unlabeled = np.array([everyone.count(topic[rid]) /
                                    sum(topic[other] == topic[rid] for other in rest)
                                    for rid in rest])
            row = found.row(model, measure)
            assert row.corrected is not None
            assert row.corrected.value == pytest.approx(float(ppi_py.ppi_mean_pointestimate(
                y, y_hat, unlabelled, w=weights, w_unlabeled=w_unlabeled)[0]), abs=1e-9)
            low, high = ppi_py.ppi_mean_ci(y, y_hat, unlabelled, alpha=0.05, w=weights,
                                           w_unlabeled=w_unlabeled)
            assert row.corrected.ci95 == pytest.approx((low[0], high[0]), abs=1e-9)
            assert row.experts_only.ci95 == pytest.approx(
                np.clip(ppi_py.classical_mean_ci(y, w=weights, alpha=0.05), 0, 1), abs=1e-9)
    # The weights matter: unweighted, the experts' share over all models would differ.
    _, y, _, _ = _arrays(ALL_MODELS, "score_share", set(probability))
    assert found.row(ALL_MODELS, "score_share").experts_only.value != pytest.approx(y.mean())



def test_a_densely_drawn_stratum_does_not_bias_the_corrected_estimate(tmp_path: Path) -> None:
    # A judge right about everything, whose answers differ by topic alone: a weighted estimate
    # is exact. Optics is drawn 3x as densely, so it is scarcer among the judge-only responses
    # than in the study; counted as they come, they would pull the estimate towards mechanics.
    path = tmp_path / "topics.physgrade"
    scores = {r["id"]: dict(MAXIMA) | {"ANS": 2 if TOPICS[int(r["question_id"][2:])] ==
                                         "Mechanics" else 0} for r in RESPONSES}
    with Project.create(path) as project:
        import_study(project, tmp_path, scores)
        drawn = samples.draw(project, "estimation", 60, seed=7, strata=("topic",))
        import_file(project, write_jsonl(tmp_path / "g.jsonl", [
            {"response_id": rid, "grader": EXPERT, "scores": scores[rid]}
            for rid in samples.inclusion(project, drawn)]), "grades")
        found = estimate(project, JUDGE, "estimation")
    row = found.row(ALL_MODELS, "final_answer_correct")
    assert row.corrected is not None and row.corrected.lam > 0
    assert row.corrected.value == pytest.approx(TOPICS.count("Mechanics") / len(TOPICS),
                                                abs=1e-12)

def test_a_partly_graded_sample_says_how_far_it_is_and_why_a_part_is_missing(
        study: Path, tmp_path: Path) -> None:
    with Project.open(study) as project:
        drawn = samples.draw(project, "estimation", 90, seed=3)
        ids = list(samples.inclusion(project, drawn))
        # Every sampled alpha and beta response, one gamma response, and one outside the sample.
        chosen = [rid for rid in ids if not rid.endswith("@gamma")]
        chosen += [next(rid for rid in ids if rid.endswith("@gamma"))]
        chosen += [next(rid for rid in TRUTH if rid not in ids)]
        _grade(project, chosen, tmp_path)
        found = estimate(project, "lenient", "estimation")
    graded = len(chosen) - 1
    assert f"{graded} of 90 sampled responses graded by human consensus so far" in "\n".join(
        found.notes)
    assert any("1 response graded by human consensus outside the sample not used" in note
               for note in found.notes)
    gamma = found.row("gamma", "final_answer_correct")
    assert gamma.corrected is None and gamma.reason and "needs 10" in gamma.reason
    assert gamma.experts_only.n == 1 and gamma.experts_only.ci95 is None
    shown = gamma.as_dict()["corrected"]
    assert shown["value"] is None and shown["lambda"] is None and "needs 10" in shown["reason"]
    assert found.row("alpha", "final_answer_correct").corrected is not None
    beta_gamma = next(d for d in found.differences if d.models == ("beta", "gamma"))
    assert beta_gamma.estimate.value is None
    assert beta_gamma.estimate.reason == "no corrected estimate for gamma"
    assert found.row(ALL_MODELS, "score_share").corrected is not None


def test_a_hand_picked_sample_is_refused_unless_assumed_random(study: Path,
                                                               tmp_path: Path) -> None:
    picked = [rid for rid in TRUTH][:60]
    ids = write_jsonl(tmp_path / "picked.jsonl", [{"response_id": rid} for rid in picked])
    with Project.open(study) as project:
        samples.register(project, "picked", ids)
        _grade(project, picked, tmp_path)
        with pytest.raises(ValueError, match="picked by hand, not drawn at random"):
            estimate(project, JUDGE, "picked")
        with pytest.raises(ValueError, match="picked by hand"):
            plan(project, JUDGE, "picked", 0.05)
        found = estimate(project, JUDGE, "picked", assume_random=True)
    assert "assume it was drawn at random" in found.notes[0]
    assert found.row(ALL_MODELS, "final_answer_correct").corrected is not None
    assert found.as_dict()["sample"]["method"] == samples.HAND_PICKED


def test_the_json_has_the_issues_shape(study: Path, tmp_path: Path) -> None:
    _drawn(study, tmp_path)
    shown = json.loads(json.dumps(_estimates(study).as_dict()))
    assert {"estimates", "differences", "judge", "reference", "sample", "notes"} <= set(shown)
    assert shown["judge"] == JUDGE and shown["reference"] == "human consensus"
    assert len(shown["estimates"]) == len(MEASURES) * (len(MODELS) + 1)
    for row in shown["estimates"]:
        assert row["measure"] in MEASURES and row["model"] in [*MODELS, ALL_MODELS]
        assert {"value", "n"} <= set(row["judge_only"])
        assert {"value", "ci95", "n"} <= set(row["experts_only"])
        assert {"value", "ci95", "n", "lambda", "effective_n", "n_unlabeled"} <= set(
            row["corrected"])
        assert len(row["corrected"]["ci95"]) == 2 and row["corrected"]["reason"] is None
    assert len(shown["differences"]) == len(MEASURES) * 3
    assert {"measure", "models", "value", "ci95", "n"} <= set(shown["differences"][0])


def test_another_reference_and_the_names_it_refuses(study: Path, tmp_path: Path) -> None:
    probability = _drawn(study, tmp_path, size=60)
    with Project.open(study) as project:
        # A second grader who marks every final answer wrong: as reference, the share is 0.
        import_file(project, write_jsonl(tmp_path / "harsh.jsonl", [
            {"response_id": rid, "grader": "harsh", "scores": TRUTH[rid] | {"ANS": 0}}
            for rid in probability]), "grades")
        harsh = estimate(project, JUDGE, "estimation", reference="harsh")
        assert harsh.reference == "harsh"
        assert harsh.row(ALL_MODELS, "final_answer_correct").experts_only.value == 0
        with pytest.raises(ValueError, match="a grader of this project .*expert-1, harsh"):
            estimate(project, JUDGE, "estimation", reference="someone")
        with pytest.raises(ValueError, match=r"no judge 'arbiter' .*lenient \[v1\]"):
            estimate(project, "arbiter", "estimation")
        with pytest.raises(ValueError, match="is a person, not a judge"):
            estimate(project, EXPERT, "estimation")
        with pytest.raises(ProjectError, match="no estimation sample 'other'"):
            estimate(project, JUDGE, "other")
        import_file(project, write_jsonl(tmp_path / "v2.jsonl", [
            {"response_id": RESPONSES[0]["id"], "judge": "lenient", "prompt_version": "v2",
             "scores": JUDGED[RESPONSES[0]["id"]]}]), "verdicts")
        with pytest.raises(ValueError, match=r"several prompt versions \(lenient \[v1\], "):
            judge_label(project, "lenient")
        assert judge_label(project, "lenient [v2]") == "lenient [v2]"


# -- planning --------------------------------------------------------------------------------


def test_plan_needs_fewer_grades_corrected_than_from_experts_alone(study: Path,
                                                                   tmp_path: Path) -> None:
    _drawn(study, tmp_path)
    with Project.open(study) as project:
        planned = plan(project, JUDGE, "estimation", 0.03)
        loose = plan(project, JUDGE, "estimation", 0.4)
        for wrong in (0, 1, -0.1, 1.5):
            with pytest.raises(ValueError, match="half-width"):
                plan(project, JUDGE, "estimation", wrong)
    assert len(planned.rows) == len(MEASURES) * (len(MODELS) + 1)
    for row in planned.rows:
        assert row.needed is not None and row.why is None
        assert row.needed.corrected is not None and row.needed.experts_only is not None
        assert row.needed.corrected < row.needed.experts_only
        assert row.more_corrected == max(0, row.needed.corrected - row.graded)
        assert row.left == 0  # the sample is graded whole
    assert sum(row.graded for row in planned.rows if row.model != ALL_MODELS) == 2 * 150
    everything = next(r for r in planned.rows if r.model == ALL_MODELS)
    assert everything.more_experts_only and everything.more_experts_only > 0
    assert all(row.more_corrected == 0 and row.more_experts_only == 0 for row in loose.rows)
    shown = json.loads(json.dumps(planned.as_dict()))
    assert shown["half_width"] == 0.03 and len(shown["plans"]) == len(planned.rows)
    assert {"model", "measure", "graded", "left_in_sample", "corrected", "experts_only",
            "reason"} <= set(shown["plans"][0])
    assert any("cannot give all the grades needed" in note for note in planned.notes)


# -- the command line ------------------------------------------------------------------------


def test_cli_estimate_and_plan(study: Path, tmp_path: Path, capsys) -> None:
    # help texts are %-formatted ("95%%"); argparse wraps them (at a hyphen too) to a width
    # that depends on the longest command's name
    listed = " ".join(build_parser().format_help().split()).replace("- ", "-")
    assert "95% intervals" in listed and "95% interval of a given half-width" in listed
    _drawn(study, tmp_path)
    assert main(["estimate", str(study), "--judge", JUDGE, "--sample", "estimation"]) == 0
    text = capsys.readouterr().out
    for words in ("Final answer correct", "Mean score share", "judge alone", "experts alone",
                  "corrected", "effective n", "alpha", "all models", "alpha − beta",
                  "150 of 150 sampled responses graded"):
        assert words in text, words
    assert main(["estimate", str(study), "--judge", "lenient", "--sample", "estimation",
                 "--reference", EXPERT, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["reference"] == EXPERT and len(shown["estimates"]) == 8

    assert main(["plan", str(study), "--judge", JUDGE, "--sample", "estimation",
                 "--half-width", "0.05"]) == 0
    text = capsys.readouterr().out
    assert "±5.0" in text and "experts alone" in text and "gamma" in text
    assert main(["plan", str(study), "--judge", JUDGE, "--sample", "estimation",
                 "--half-width", "0.05", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["half_width"] == 0.05
    assert main(["plan", str(study), "--judge", JUDGE, "--sample", "estimation",
                 "--half-width", "5"]) == 1
    assert "half-width" in capsys.readouterr().err


def test_cli_refuses_a_hand_picked_sample_without_assume_random(study: Path, tmp_path: Path,
                                                                 capsys) -> None:
    picked = list(TRUTH)[::6]
    ids = write_jsonl(tmp_path / "picked.jsonl", [{"response_id": rid} for rid in picked])
    with Project.open(study) as project:
        samples.register(project, "picked", ids)
        _grade(project, picked, tmp_path)
    assert main(["estimate", str(study), "--judge", JUDGE, "--sample", "picked"]) == 1
    err = capsys.readouterr().err
    assert "picked by hand" in err and "--assume-random" in err and err.count("\n") == 1
    assert main(["estimate", str(study), "--judge", JUDGE, "--sample", "picked",
                 "--assume-random"]) == 0
    assert "assume it was drawn at random" in capsys.readouterr().out


def test_the_demo_project(demo: Path, capsys) -> None:
    """Real small data: two people graded parts of the project, not by any sample."""
    with Project.open(demo) as project:
        samples.draw(project, "demo sample", 40, seed=1, strata=("model",))
        found = estimate(project, "arbiter-mini", "demo sample")
        planned = plan(project, "arbiter-large [prefs-v1]", "demo sample", 0.1,
                       reference="expert-2")
    assert found.judge == "arbiter-mini [prefs-v1]"
    assert len(found.rows) == len(MEASURES) * len(found.models())
    for row in found.rows:
        assert (row.corrected is None) == (row.reason is not None)
        assert row.judge_only.value is not None
        if row.corrected is not None:
            # What readers see is the estimator's interval cut to 0..1, where a share lies.
            assert row.corrected_estimate().ci95 == pytest.approx(
                np.clip(row.corrected.ci95, 0, 1))
    assert any(row.corrected is not None and row.corrected.ci95[1] > 1 for row in found.rows)
    assert any("outside the sample not used" in note for note in found.notes)
    json.dumps(found.as_dict())
    json.dumps(planned.as_dict())
    assert main(["estimate", str(demo), "--judge", "arbiter-large", "--sample",
                 "demo sample"]) == 0
    assert "sampled responses graded" in capsys.readouterr().out


def test_responses_added_after_the_draw_are_pointed_out(study: Path, tmp_path: Path) -> None:
    with Project.open(study) as project:
        samples.draw(project, "estimation", 90, seed=3)
        before = estimate(project, "lenient", "estimation")
        import_file(project, write_jsonl(tmp_path / "late.jsonl", [
            response("late@alpha", QUESTIONS[0]["id"], "alpha", "Final Answer: 10 m/s")]),
            "responses")
        after = estimate(project, "lenient", "estimation")
    assert not any("had no chance to be drawn" in note for note in before.notes)
    assert any(f"holds {len(RESPONSES) + 1:,} responses now, {len(RESPONSES):,} when sample "
               "'estimation' was drawn" in note for note in after.notes)
