import json

import pytest

from groundrl.curate import decompose


def test_three_step_trajectory():
    out = decompose(
        {"id": "t", "instruction": "do", "actions": ["a", "b", "c"], "observations": ["o0", "o1", "o2"]}
    )
    assert out == [
        {"id": "t/step0", "instruction": "do", "history": [], "observation": "o0", "target": ["a", "b", "c"]},
        {"id": "t/step1", "instruction": "do", "history": ["a"], "observation": "o1", "target": ["b", "c"]},
        {"id": "t/step2", "instruction": "do", "history": ["a", "b"], "observation": "o2", "target": ["c"]},
    ]


def test_observations_optional_terminal_dropped_and_structured_actions():
    acts = [
        {"action_id": 3, "action_name": "find a Apple"},
        {"action_id": 9, "action_name": "pick up the Apple"},
    ]
    out = decompose({"id": 7, "instruction": "go", "actions": acts})
    assert [r["observation"] for r in out] == [None, None] and out[1]["history"] == [acts[0]]
    out = decompose({"id": "e", "actions": ("x", "y"), "observations": ["s0", "s1", "s_end"]})
    assert [(r["observation"], r["history"], r["target"]) for r in out] == [
        ("s0", [], ["x", "y"]),
        ("s1", ["x"], ["y"]),
    ]
    assert out[0]["instruction"] == ""
    assert decompose({"id": "n", "actions": ["x"], "observations": []})[0]["observation"] is None


def test_empty_trajectory():
    assert decompose({"id": "e", "actions": []}) == []
    assert decompose({"id": "e"}) == []


def test_history_and_target_are_new_lists():
    rec = {"id": "t", "actions": ["a", "b"]}
    out = decompose(rec)
    out[0]["target"].append("z")
    assert rec["actions"] == ["a", "b"] and out[1]["target"] == ["b"]


@pytest.mark.parametrize(
    "rec, match",
    [
        ({"id": "t", "actions": ["a"], "observations": ["x", "y", "z"]}, "observations"),
        ({"id": "t", "actions": ["a", "b", "c"], "observations": ["x"]}, "observations"),
        ({"id": "t", "actions": ["a"], "observations": "x"}, "observations"),
        ({"id": "t", "actions": "pick up the apple"}, "actions"),
        (["a", "b"], "mapping"),
    ],
)
def test_undecomposable_records_raise(rec, match):
    with pytest.raises(ValueError, match=match):
        decompose(rec)


def test_on_real_alfred_trajectories(external_data):
    files = sorted((external_data / "embodiedbrain" / "traj_data").glob("*.json"))
    assert files
    for f in files:
        d = json.loads(f.read_text())
        acts = [
            " ".join([s["discrete_action"]["action"], *s["discrete_action"]["args"]])
            for s in d["plan"]["high_pddl"]
        ]
        out = decompose({"id": f.stem, "instruction": d["template"]["task_desc"], "actions": acts})
        assert len(out) == len(acts) and out[-1]["target"] == acts[-1:]
        for t, r in enumerate(out):
            assert (
                r["id"] == f"{f.stem}/step{t}"
                and r["history"] + r["target"] == acts
                and len(r["history"]) == t
            )
