"""The judges' prompts carry each paper's criteria, weights, bands and rules (issue 24
item 5), in our own words: no run of 8 words is shared with the paper's text."""

import re
from pathlib import Path

import pytest

from groundrl.judges import prompts

PAPERS = Path(__file__).resolve().parents[3] / "shared" / "papers"
FILES = {
    "eqa": "000_413ea34afb710b9c.txt",
    "argos": "001_fa9db198f58946eb.txt",
    "eb": "002_15ab450e9dff8cef.txt",
    "proxy": "004_f1d765a6f7883a67.txt",
}
PROMPTS = {
    "eqa": [prompts.EQA_RM_SYSTEM, prompts.EQA_RM_REFERENCE_SYSTEM],
    "argos": [prompts.ARGOS_FRAME_SYSTEM, prompts.ARGOS_SEGMENT_SYSTEM],
    "eb": [prompts.PLANNING_GRM_SYSTEM],
    "proxy": [prompts.PROXY_POLICY_SYSTEM, prompts.PROXY_AGENT_SYSTEM],
}


def _words(text):
    return re.findall(r"[a-z0-9]+", text.lower())


def test_eqa_rm_weights_specificity_consistency_no_extremes():
    p = prompts.EQA_RM_SYSTEM
    assert "60%" in p and "40%" in p and "1 to 10" in p  # [EQA-RM App. D]
    assert "specific" in p and "follow from the trace" in p and "rather than reaching for the ends" in p
    assert "<critique>" in p and "<score>" in p
    ref = prompts.eqa_rm_request("q", "r", "a", reference="gold")
    assert ref[0]["content"] == prompts.EQA_RM_REFERENCE_SYSTEM and "60%" in ref[0]["content"]


def test_embodied_brain_grm_bands_errors_tags_two_decimals():
    p = prompts.PLANNING_GRM_SYSTEM
    for band in ("1.00", "0.90-0.99", "0.75-0.89", "0.50-0.74", "0.25-0.49", "0.00-0.24"):
        assert band in p  # [EmbodiedBrain §9.2.4 scoring rubric]
    for rule in (
        "outside the atomic action set",
        "does not contain",
        "missing essential step",
        "wrong order",
    ):
        assert rule in p  # the five critical-error rules
    assert "broken format" in p
    assert "[Navigate] or [Manipulate]" in p and "exactly two decimals" in p and "<think>" in p


def test_argos_teachers_visible_only_relations_extent_unit_score():
    f, s = prompts.ARGOS_FRAME_SYSTEM, prompts.ARGOS_SEGMENT_SYSTEM
    assert "only what this frame shows" in f and "both must be visible" in f  # [Argos Fig. 11]
    assert "start-to-end span" in s and "small tolerance" in s  # [Argos Fig. 12]
    assert '{"score": 1.0}' in f and '{"score": 0.0}' in s
    req = prompts.segment_request("cup lifted", ["a", "b", "c"])
    assert req[0]["content"] == s and "F1..F3" in req[-1]["content"][-1]["text"]


@pytest.mark.parametrize("paper", list(PROMPTS))
def test_prompts_are_in_our_own_words(paper):
    path = PAPERS / FILES[paper]
    if not path.is_file():
        pytest.skip(f"paper text not present at {path}")
    words = _words(path.read_text())
    grams = {tuple(words[i : i + 8]) for i in range(len(words) - 7)}
    for p in PROMPTS[paper]:
        w = _words(p)
        shared = [" ".join(w[i : i + 8]) for i in range(len(w) - 7) if tuple(w[i : i + 8]) in grams]
        assert not shared, shared[:3]
