"""The judge-audit figures on a hand-made audit whose every number is worked out here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import PREFS_FULL, question, response, write_jsonl
from physgrade.importer import import_file
from physgrade.project import Project
from physgrade.report.build import build_report
from physgrade.report.options import ReportOptions
from physgrade.report.writers import write_report
from physgrade.selection import ResponseFilter
from physgrade.stats.describe import proportion
from physgrade.validation import blind, figures

A, B = "judge-a [v1]", "judge-b [v1]"
RESPONSES = [f"r-{i:02d}" for i in range(1, 13)]
#: r-01..r-04 come from a small model, so that a filter can leave too few pairs for a test.
SMALL = RESPONSES[:4]

# Per-criterion agreement of each reviewer, response by response.
A_ANS = {"ann": [2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 0, 2],
         "bob": [2, 2, 2, 2, 2, 2, 2, 1, 1, 0, 0, 2]}
B_COR = {"ann": [2] * 12,
         "bob": [1] + [2] * 11}
# Verdict labels; None = reviewed on criteria only, no label.
C, L, S = "correct", "lenient", "strict"
A_VERDICTS = {"ann": [C] * 12,
              "bob": [C] * 10 + [L, S]}
B_VERDICTS = {"ann": [C] * 7 + [L] * 5,
              "bob": [C] * 5 + [L] * 4 + [S] * 2 + [None]}


@pytest.fixture
def audited(project: Project, tmp_path: Path) -> Project:
    import_file(project, write_jsonl(tmp_path / "q.jsonl", [question()]), "questions")
    import_file(project, write_jsonl(tmp_path / "r.jsonl", [
        response(rid, model="m-small" if rid in SMALL else "m-big") for rid in RESPONSES]),
        "responses")
    import_file(project, write_jsonl(tmp_path / "v.jsonl", [
        {"response_id": rid, "judge": judge, "prompt_version": "v1", "scores": PREFS_FULL}
        for judge in ("judge-a", "judge-b") for rid in RESPONSES]), "verdicts")
    reviews = []
    for reviewer in ("ann", "bob"):
        for i, rid in enumerate(RESPONSES):
            reviews.append({"response_id": rid, "judge": "judge-a", "reviewer": reviewer,
                            "criteria": {"ANS": A_ANS[reviewer][i]},
                            "verdict": A_VERDICTS[reviewer][i]})
            b_review = {"response_id": rid, "judge": "judge-b", "reviewer": reviewer,
                        "criteria": {"COR": B_COR[reviewer][i]}}
            if B_VERDICTS[reviewer][i] is not None:
                b_review["verdict"] = B_VERDICTS[reviewer][i]
            reviews.append(b_review)
    import_file(project, write_jsonl(tmp_path / "jr.jsonl", reviews), "judge_reviews")
    return project


@pytest.fixture
def reviews(audited: Project) -> figures.Reviews:
    return figures.read_reviews(audited)


def hand_ac2(first: list[int], second: list[int]) -> float:
    """Gwet's AC2 of two raters with linear weights over 0, 1, 2, from the formula:
    p_a = mean of w(a_i, b_i) with w = 1 - |k - l| / 2; p_e = T_w / (q (q - 1)) * sum_k
    pi_k (1 - pi_k), T_w the sum of all weights (3 + 4 * 0.5 = 5), q = 3, pi_k the share of all
    ratings in category k; AC2 = (p_a - p_e) / (1 - p_e)."""
    n = len(first)
    pa = sum(1 - abs(a - b) / 2 for a, b in zip(first, second)) / n
    ratings = first + second
    pi = [ratings.count(k) / len(ratings) for k in (0, 1, 2)]
    pe = 5 / (3 * 2) * sum(p * (1 - p) for p in pi)
    return (pa - pe) / (1 - pe)


def test_reviewer_agreement_per_judge_and_criterion(reviews: figures.Reviews) -> None:
    rows = {(r.judge, r.criterion): r for r in figures.reviewer_agreement(reviews)}
    assert set(rows) == {(A, "ANS"), (B, "COR")}
    a, b = rows[(A, "ANS")], rows[(B, "COR")]
    assert a.reviewers == b.reviewers == ("ann", "bob")
    assert a.rubric == "P-REFS"
    assert a.n == a.exact.n == a.ac2.n == 12
    assert a.exact.value == pytest.approx(10 / 12)   # differ on r-08 (2/1) and r-10 (1/0)
    # By hand: p_a = 11/12; pi = (3, 4, 17)/24; p_e = 5/6 * 262/576.
    pe = 5 / 6 * 262 / 576
    assert hand_ac2(A_ANS["ann"], A_ANS["bob"]) == pytest.approx((11 / 12 - pe) / (1 - pe))
    assert a.ac2.value == pytest.approx(hand_ac2(A_ANS["ann"], A_ANS["bob"]))
    assert a.ac2.ci95 is not None and a.ac2.ci95[0] <= a.ac2.value <= a.ac2.ci95[1]
    assert b.n == 12 and b.exact.value == pytest.approx(11 / 12)
    assert b.ac2.value == pytest.approx(hand_ac2(B_COR["ann"], B_COR["bob"]))
    assert b.ac2.value > 0.9  # one category dominates, and AC2 stays high where kappa would not


def test_full_agreement_per_reviewer(reviews: figures.Reviews) -> None:
    rows = {(r.judge, r.criterion, r.reviewer): r for r in figures.full_agreement(reviews)}
    expected = {(A, "ANS", "ann"): 9, (A, "ANS", "bob"): 8, (B, "COR", "ann"): 12,
                (B, "COR", "bob"): 11}
    assert set(rows) == set(expected)
    for key, twos in expected.items():
        assert rows[key].n == 12
        assert rows[key].rate == proportion(twos, 12)
        assert rows[key].rate.value == pytest.approx(twos / 12)


def test_verdict_distribution_is_the_mean_over_reviewers(reviews: figures.Reviews) -> None:
    rows = {d.judge: d for d in figures.verdict_distribution(reviews)}
    assert list(rows) == [A, B]
    a, b = rows[A], rows[B]
    assert (a.reviewers, a.n) == (2, 24)
    assert a.correct.value == pytest.approx((12 / 12 + 10 / 12) / 2)
    assert a.lenient.value == pytest.approx((0 + 1 / 12) / 2)
    assert a.strict.value == pytest.approx((0 + 1 / 12) / 2)
    assert a.correct.ci95 == proportion(22, 24).ci95  # Wilson on the pooled counts
    # bob labelled only 11 of judge-b's verdicts: the mean of shares is not the pooled share.
    assert (b.reviewers, b.n) == (2, 23)
    assert b.correct.value == pytest.approx((7 / 12 + 5 / 11) / 2)
    assert b.lenient.value == pytest.approx((5 / 12 + 4 / 11) / 2)
    assert b.strict.value == pytest.approx((0 + 2 / 11) / 2)
    assert b.correct.value != pytest.approx(12 / 23)
    assert b.lenient.ci95 == proportion(9, 23).ci95
    for d in (a, b):
        assert sum(d.share(v).value for v in figures.VERDICTS) == pytest.approx(1.0)


def test_recommendation_with_mcnemar(reviews: figures.Reviews) -> None:
    chosen = figures.recommendation(reviews)
    assert chosen is not None
    assert (chosen.judge, chosen.runner_up) == (A, B)
    # Pairs (reviewer, response) with both labelled: 12 by ann, 11 by bob. judge-a alone is
    # correct on ann's r-08..r-12 and bob's r-06..r-10 (b = 10), judge-b alone never (c = 0).
    assert chosen.pairs == 23
    assert chosen.table == [[12, 10], [0, 1]]
    assert chosen.p_value == pytest.approx(2 * 0.5 ** 10)
    assert chosen.significant is True
    assert chosen.text == (
        f"{A} is recommended: correct on 91.7% of its verdicts (lenient 4.2%), against "
        f"{(7 / 12 + 5 / 11) / 2:.1%} for {B}; the difference is significant (McNemar p = 0.002).")


def test_too_few_pairs_are_not_tested(reviews: figures.Reviews) -> None:
    chosen = figures.recommendation(reviews, ResponseFilter(models=frozenset({"m-small"})))
    assert chosen is not None and chosen.pairs == 8
    assert chosen.p_value is None and chosen.significant is None
    assert "not enough data" in chosen.text


def test_a_filter_narrows_the_reviews_read_without_reading_again(audited: Project) -> None:
    reviews = figures.read_reviews(audited)
    audited.close()  # from here on, any query would fail: a filter change reads nothing

    def full(report_filter: ResponseFilter) -> dict[tuple[str, str, str], tuple[int, int]]:
        return {(r.judge, r.criterion, r.reviewer): (round(r.rate.value * r.n), r.n)
                for r in figures.full_agreement(reviews, report_filter)}

    small, bob = frozenset({"m-small"}), frozenset({"bob"})
    # r-01..r-04: every value is 2 but bob's COR on r-01.
    assert full(ResponseFilter(models=small)) == {
        (A, "ANS", "ann"): (4, 4), (A, "ANS", "bob"): (4, 4), (B, "COR", "ann"): (4, 4),
        (B, "COR", "bob"): (3, 4)}
    # Facets combine with AND (the small model, bob's reviews), values with OR.
    assert full(ResponseFilter(models=small, graders=bob)) == {
        (A, "ANS", "bob"): (4, 4), (B, "COR", "bob"): (3, 4)}
    assert full(ResponseFilter(models=small | {"m-big"})) == full(ResponseFilter())
    assert all(n == 12 for _, n in full(ResponseFilter()).values())
    assert figures.reviewer_agreement(reviews, ResponseFilter(graders=bob)) == []
    only_b = ResponseFilter(judges=frozenset({B}))
    assert [d.judge for d in figures.verdict_distribution(reviews, only_b)] == [B]
    assert {r.judge for r in figures.reviewer_agreement(reviews, only_b)} == {B}
    nothing = ResponseFilter(topics=frozenset({"no such topic"}))
    assert figures.full_agreement(reviews, nothing) == []
    assert figures.recommendation(reviews, nothing) is None
    assert figures.has_reviews(reviews)


def test_ties_go_to_the_less_lenient_judge(project: Project, tmp_path: Path) -> None:
    import_file(project, write_jsonl(tmp_path / "q.jsonl", [question()]), "questions")
    import_file(project, write_jsonl(tmp_path / "r.jsonl", [response("r-1"), response("r-2")]),
                "responses")
    import_file(project, write_jsonl(tmp_path / "v.jsonl", [
        {"response_id": rid, "judge": judge, "scores": PREFS_FULL}
        for judge in ("lenient-one", "strict-one") for rid in ("r-1", "r-2")]), "verdicts")
    import_file(project, write_jsonl(tmp_path / "jr.jsonl", [
        {"response_id": "r-1", "judge": "lenient-one", "reviewer": "ann", "verdict": C},
        {"response_id": "r-2", "judge": "lenient-one", "reviewer": "ann", "verdict": L},
        {"response_id": "r-1", "judge": "strict-one", "reviewer": "ann", "verdict": C},
        {"response_id": "r-2", "judge": "strict-one", "reviewer": "ann", "verdict": S}]),
        "judge_reviews")
    chosen = figures.recommendation(figures.read_reviews(project))
    assert chosen is not None and chosen.judge == "strict-one"
    assert chosen.pairs == 2 and chosen.p_value is None and "not enough data" in chosen.text


def test_blind_aliases_are_revealed(audited: Project) -> None:
    (judge_a,) = audited.conn.execute("SELECT id FROM raters WHERE name = 'judge-a'").fetchone()
    assert blind.aliases(audited, [judge_a]) == {judge_a: "Judge A"}  # the only one: A
    reviews = figures.read_reviews(audited)
    assert figures.judge_names(reviews) == {A: f"Judge A = {A}", B: B}
    assert {d.judge for d in figures.verdict_distribution(reviews)} == {f"Judge A = {A}", B}
    assert figures.recommendation(reviews).text.startswith(f"Judge A = {A} is recommended")


def test_the_report_has_a_judge_audit_section(audited: Project, tmp_path: Path) -> None:
    report = build_report(audited, ReportOptions(resamples=20))
    out = tmp_path / "report"
    write_report(report, out)
    data = json.loads((out / "report.json").read_text(encoding="utf-8"))
    section = next(s for s in data["sections"] if "Judge audit" in s["title"])
    assert "the difference is significant (McNemar p = 0.002)" in section["intro"]
    tables = {t["name"]: t for t in section["tables"]}
    assert set(tables) == {"judge_audit_reviewers", "judge_audit_full_agreement",
                           "judge_audit_verdicts", "judge_recommendation"}
    verdicts = {row[0]: dict(zip(tables["judge_audit_verdicts"]["columns"], row))
                for row in tables["judge_audit_verdicts"]["rows"]}
    assert verdicts[A]["n"] == 24
    assert verdicts[A]["Correct"]["value"] == pytest.approx(11 / 12)
    reviewers = tables["judge_audit_reviewers"]
    ans = next(dict(zip(reviewers["columns"], row)) for row in reviewers["rows"]
               if row[1] == A and row[2] == "ANS (P-REFS)")
    assert ans["Reviewers"] == "ann · bob" and ans["n"] == 12
    assert ans["Gwet AC2"]["value"] == pytest.approx(hand_ac2(A_ANS["ann"], A_ANS["bob"]))
    recommended = tables["judge_recommendation"]["rows"][0]
    assert recommended[0] == A and recommended[6] == pytest.approx(2 * 0.5 ** 10)
    assert (out / "csv" / "judge_audit_verdicts.csv").exists()
    assert "Judge audit" in (out / "report.html").read_text(encoding="utf-8")


def test_no_reviews_no_section(loaded: Project, tmp_path: Path) -> None:
    import_file(loaded, write_jsonl(tmp_path / "v.jsonl", [
        {"response_id": "r-1", "judge": "judge-a", "scores": PREFS_FULL}]), "verdicts")
    reviews = figures.read_reviews(loaded)
    assert not figures.has_reviews(reviews)
    assert figures.recommendation(reviews) is None
    assert figures.reviewer_agreement(reviews) == []
    report = build_report(loaded, ReportOptions(resamples=20))
    assert not any("Judge audit" in s.title for s in report.sections)
