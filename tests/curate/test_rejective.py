import pytest

from groundrl.curate import read_score, rejective_filter


def rec(gt, scores):
    return {"id": "x", "gt_score": gt, "evaluations": [{"critique": "c", "score": s} for s in scores]}


def test_eq1_strict_threshold():
    # |7-6| = 1 < 2 kept; |7-9| = 2 is not < 2; "7" parses to 7; a missing score is incorrect
    assert rejective_filter(rec(7, [6, 9, "7", None])) == {"id": "x", "kept": [0, 2], "reason": "kept"}
    # |7-5| = 2, |7-5.5| = 1.5
    assert rejective_filter(rec(7, [5, 5.5, 10]))["kept"] == [1]
    assert rejective_filter(rec(7, [5, 5.5, 10]), tau=3)["kept"] == [0, 1]
    assert rejective_filter(rec(7, [6.5, 8]), tau=0.5) == {"id": "x", "kept": [], "reason": "none_correct"}


def test_too_easy_and_none_correct():
    assert rejective_filter(rec(7, [7, 8, 6])) == {"id": "x", "kept": [], "reason": "too_easy"}
    assert rejective_filter(rec(7, [7])) == {"id": "x", "kept": [], "reason": "too_easy"}
    assert rejective_filter(rec(7, [1, "bad", 10])) == {"id": "x", "kept": [], "reason": "none_correct"}
    # no evaluations at all is not "none correct": it is an error record saying so
    assert rejective_filter(rec(7, [])) == {
        "id": "x",
        "kept": [],
        "reason": "error",
        "error": "`evaluations` is empty: nothing to keep or reject",
    }
    assert rejective_filter({"id": "x", "gt_score": 7}) == {
        "id": "x",
        "kept": [],
        "reason": "error",
        "error": "no `evaluations` list: expected [{critique, score}, …]",
    }


def test_float_rounding_does_not_move_the_boundary():
    # 9.1 - 7.1 = 1.9999999999999991 in floats; mathematically it is τ, so not < τ
    assert rejective_filter(rec(7.1, [9.1, 7.0]))["kept"] == [1]
    assert rejective_filter(rec(7.1, [9.09, 0]))["kept"] == [0]


def test_score_forms():
    # a <score> tag in the score field: the last tag counts
    assert rejective_filter(rec(7, ["<critique>ok</critique><score>8</score>", 0]))["kept"] == [0]
    assert rejective_filter(rec(7, ["<score>2</score> then <score>8</score>", 0]))["kept"] == [0]
    # no score field: the critique's <score> tag
    r = {
        "id": "y",
        "gt_score": 5,
        "evaluations": [{"critique": "so <score>5</score>"}, {"critique": "no tag"}],
    }
    assert rejective_filter(r) == {"id": "y", "kept": [0], "reason": "kept"}
    # a present but unparseable score decides: the critique is not consulted
    r = {
        "id": "z",
        "gt_score": 5,
        "evaluations": [{"critique": "<score>5</score>", "score": "five"}, {"score": 5}],
    }
    assert rejective_filter(r)["kept"] == [1]
    # text around a plain number, booleans, NaN and a bad tag content are not scores
    assert rejective_filter(rec(7, ["score: 7", True, float("nan"), "<score>7/10</score>", 7]))["kept"] == [4]


def test_ground_truth_forms():
    assert rejective_filter(rec("7", [6, 1]))["kept"] == [0]
    assert rejective_filter(rec("<score>7</score>", [6, 1]))["kept"] == [0]
    none = rejective_filter(rec(None, [6, 1]))
    assert none["reason"] == "error" and none["error"] == "`gt_score` missing or not a number: None"
    assert rejective_filter(rec("n/a", [6, 1]))["error"] == "`gt_score` missing or not a number: 'n/a'"


def test_total_on_malformed_records():
    assert rejective_filter({"id": 3, "gt_score": 7, "evaluations": "7"}) == {
        "id": 3,
        "kept": [],
        "reason": "error",
        "error": "`evaluations` must be a list of {critique, score}, got str",
    }
    assert rejective_filter({"gt_score": 7, "evaluations": [None, 7, "<score>1</score>"]}) == {
        "id": None,
        "kept": [1],
        "reason": "kept",
    }
    assert rejective_filter("not a record") == {
        "id": None,
        "kept": [],
        "reason": "error",
        "error": "a record must be a JSON object, got str",
    }


@pytest.mark.parametrize("tau", [0, -1, float("nan"), float("inf"), True, "2"])
def test_bad_tau_raises(tau):
    with pytest.raises(ValueError, match="tau"):
        rejective_filter(rec(1, [1]), tau=tau)


def test_read_score():
    assert [read_score(v) for v in (7, "7.5", " 3 ", "<score> 4 </score>", None, "x", False)] == [
        7.0,
        7.5,
        3.0,
        4.0,
        None,
        None,
        None,
    ]
