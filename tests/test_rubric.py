import pytest

from physgrade.rubric import CONCEPTUAL, PREFS, ScoreError, detect_rubric, rubric_for_kind


def test_prefs_is_out_of_ten_with_the_study_stages():
    assert PREFS.maximum == 10
    assert PREFS.keys == ("INT", "MOD", "CON", "APP", "CAL", "COR", "COH", "ANS")
    stage_max = {}
    for c in PREFS.criteria:
        stage_max[c.stage] = stage_max.get(c.stage, 0) + c.maximum
    assert stage_max == {"Problem formulation": 2, "Step-by-step solution": 6, "Final answer": 2}


def test_conceptual_is_out_of_five_and_na_leaves_four():
    assert CONCEPTUAL.maximum == 5
    scores = CONCEPTUAL.validate({"SET": 1, "CON": 1, "EXE": None, "COH": 0, "ANS": 1})
    assert scores["EXE"] is None
    assert CONCEPTUAL.total(scores) == (3, 4)


def test_values_outside_the_rubric_are_refused_with_the_criterion_named():
    with pytest.raises(ScoreError, match="CAL = 2 is outside the rubric") as err:
        PREFS.validate_one("CAL", 2)
    assert err.value.field == "CAL"
    with pytest.raises(ScoreError, match="whole number"):
        PREFS.validate_one("COR", 1.5)
    with pytest.raises(ScoreError, match="not a criterion"):
        PREFS.validate_one("XYZ", 1)
    with pytest.raises(ScoreError, match="no N/A"):
        PREFS.validate_one("INT", None)
    with pytest.raises(ScoreError, match="missing criteria"):
        PREFS.validate({"INT": 1})


def test_multiple_choice_final_answer_is_all_or_nothing():
    assert PREFS.validate_one("ANS", 2, multiple_choice=True) == 2
    with pytest.raises(ScoreError, match="all or nothing"):
        PREFS.validate_one("ANS", 1, multiple_choice=True)
    assert PREFS.validate_one("ANS", 1) == 1


def test_text_values_from_spreadsheets_are_accepted():
    assert PREFS.validate_one("COR", "2") == 2
    assert CONCEPTUAL.validate_one("EXE", "N/A") is None


def test_errors_are_the_criteria_below_maximum():
    scores = dict(INT=1, MOD=0, CON=1, APP=1, CAL=1, COR=1, COH=1, ANS=2)
    assert PREFS.errors(scores) == ["MOD", "COR"]
    assert PREFS.total(scores) == (8, 10)


def test_rubric_detection_and_kind():
    assert detect_rubric({"INT", "ANS"}) is PREFS
    assert detect_rubric({"SET", "EXE"}) is CONCEPTUAL
    assert detect_rubric({"CON", "COH"}) is None
    assert rubric_for_kind("conceptual") is CONCEPTUAL
    assert rubric_for_kind("problem") is PREFS


def test_choices_add_na_where_a_criterion_may_not_apply():
    assert PREFS.criterion("COR").choices() == (0, 1, 2)
    assert PREFS.criterion("ANS").choices(multiple_choice=True) == (0, 2)
    assert CONCEPTUAL.criterion("EXE").choices() == (0, 1, None)


def test_out_of_is_the_maximum_less_what_does_not_apply_scored_or_not():
    assert PREFS.out_of({}) == 10
    assert PREFS.out_of({"INT": 1, "COR": 1}) == 10
    assert PREFS.total({"INT": 1, "COR": 1}) == (2, 3)
    assert CONCEPTUAL.out_of({"EXE": None}) == 4
    assert CONCEPTUAL.out_of({"EXE": 0}) == 5
