"""Issue 41: the hostile shapes that were still quadratic, one family each, tested by
behaviour on a megabyte — never by wall-clock time (the timings, and the fitted exponent
per (function, shape), live in ``bench/adversarial.py --only growth``).

Each megabyte case puts the hostile run *before* a real mention, so the right answer
needs the whole text read. On the old patterns the points, blanks, teacher-score, fence
and unclosed-<answer> cases grew with the square of the run (measured before the fix:
4-55 s at 32 KB), i.e. an hour or more at 1 MB, far past the suite's 300 s per-test
timeout; now each is milliseconds. The think-pair case was linear but slow to grow (a
list of every closer; k 1.5 between 100 KB and 1 MB): here it is a behaviour check, its
timing is the bench's. The rewritten patterns are checked against the patterns as read
(kept here) on random text: same matches.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundrl.benchmarks import protocols
from groundrl.benchmarks.protocols import released_verdict
from groundrl.judges import papers
from groundrl.judges.papers import parse_binary_score
from groundrl.parse import answers, grounding, structured, tags
from groundrl.parse.grounding import extract_points, extract_temporal_mentions
from groundrl.rewards import grounding as rgrounding
from groundrl.rewards.grounding import spatial, spatial_video
from groundrl.rewards.outcome import outcome
from groundrl.rewards.perception import counting_reward, detection_reward
from groundrl.rewards.planning import load_action_map, reinforced_accuracy, reinforced_format
from groundrl.verify.verifier import AgenticVerifier, ParsedResponse

MB = 1_000_000
SETTINGS = settings(
    derandomize=True, max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def _run(unit: str, size: int = MB) -> str:
    return unit * (size // len(unit))


# --- the patterns as read (before issue 41), the reference for the rewritten ones ----

PLAIN = {
    "attr": re.compile(r"""([A-Za-z_][\w-]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))"""),
    "fence": re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\r?\n?(.*?)```", re.DOTALL),
    "score key": re.compile(r'\bscore"?\s*[:=]\s*"?\s*([01](?:\.\d+)?|\.\d+)\b', re.IGNORECASE),
    "frame num": re.compile(r"\bframe\s*#?\s*(\d+)\b(?!\s*(?:-|–|to\b|through\b))", re.IGNORECASE),
    "seconds": re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*(?:seconds?|secs?|s)\b", re.IGNORECASE),
}
NEW = {
    "attr": grounding._ATTR_RE,
    "fence": structured._FENCE_RE,
    "score key": papers._SCORE_KEY_RE,
    "frame num": rgrounding._FRAME_NUM_RE,
    "seconds": rgrounding._SECONDS_RE,
}
TOKENS = st.sampled_from(
    [
        "a", "x1", "Y", "_", "-", "1", "12", "é", "٣", "=", " ", "  ", "\t", "\n", '"', "'", ">", "<",
        "alt", "x", "y", "points", "```", "json", "JSON", "\r", "{", "}", "score", "Score", ":", "0",
        "0.5", ".5", "frame", "FRAME", "#", "to", "through", "–", "s", "sec", "seconds", ".", "v2",
    ]
)  # fmt: skip
TEXT = st.one_of(st.lists(TOKENS, max_size=30).map("".join), st.text(max_size=40))


def _matches(pattern: re.Pattern[str], text: str) -> list[tuple[object, ...]]:
    return [m.groups() for m in pattern.finditer(text)]


@pytest.mark.parametrize("name", sorted(PLAIN))
@SETTINGS
@given(TEXT)
def test_rewritten_patterns_match_as_the_patterns_as_read(name, text):
    # the attribute pattern now starts where a word run starts; the values it reads are
    # the groups, which must be the same
    assert _matches(NEW[name], text) == _matches(PLAIN[name], text)


_ANSWER_RE = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)
ANSWER_TOKENS = st.lists(
    st.sampled_from(["<answer>", "</answer>", "<answer", "answer>", "1", "2", " ", "\n", "x"]), max_size=20
).map("".join)


@SETTINGS
@given(ANSWER_TOKENS)
def test_released_tag_read_is_the_scripts_regex(text):
    m = _ANSWER_RE.search(text)
    assert protocols._tag_content(text) == (m.group(1) if m else None)


THINK_TOKENS = st.lists(
    st.sampled_from(["<think>", "</think>", "</ THINK >", "</thin", "<answer>", "</answer>", "a", "\n", " "]),
    max_size=20,
).map("".join)


@SETTINGS
@given(THINK_TOKENS)
def test_after_last_think_and_last_tag_are_the_listed_last(text):
    closes = list(re.finditer(r"</\s*think\s*>", text, re.IGNORECASE))
    assert answers.after_last_think(text) == (text[closes[-1].end() :] if closes else text)
    spans = tags.iter_tag_spans(text, "answer")
    want = text[spans[-1][1] : spans[-1][2]].strip() if spans else None
    assert tags.find_tag(text, "answer", which="last") == want


# --- a megabyte of each hostile shape, then the real thing ------------------------------

CUP = '<points x1="12" y1="9" alt="cup">cup</points>'
MASKS = {"cup": [[10, 5, 20, 15]]}


def test_points_after_a_megabyte_attribute_word():
    # the CLI reproducer: <points aaa…a>cup</points> <answer>cup</answer>
    text = "<points " + _run("a") + ">cup</points> <answer>cup</answer> and " + CUP
    pts = extract_points(text)
    assert [(p.x, p.y, p.label) for p in pts] == [(12.0, 9.0, "cup")]
    assert spatial(text, MASKS).value == 1.0
    assert spatial_video("In frame 1 " + text, {1: MASKS}).value == 1.0
    assert outcome(text, "cup").value == 1.0


@pytest.mark.parametrize("head", ["frame", "frames", "between frames", "between 1"])
def test_temporal_mentions_after_a_megabyte_of_blanks(head):
    text = head + _run(" ") + "x. Between frames 2 and 4, in frame 7, at 3 seconds."
    frames, segments = extract_temporal_mentions(text)
    assert [(f.at, f.unit) for f in frames] == [(7.0, "frame"), (3.0, "second")]
    assert [(s.start, s.end) for s in segments] == [(2.0, 4.0)]
    parsed = ParsedResponse.of(text + " <answer>B</answer>")
    assert parsed.answer == "B" and len(parsed.frames) == 2 and len(parsed.segments) == 1


def test_video_point_frame_after_a_megabyte_of_blanks():
    text = "frame" + _run(" ") + "x. In frame 1 the " + CUP + " is red."
    assert spatial_video(text, {1: MASKS}).value == 1.0


def test_verifier_and_argos_rubric_on_a_megabyte_of_blanks():
    from groundrl.recipes import get_recipe

    text = "between 1" + _run(" ") + "x. The " + CUP + " <answer>cup</answer>"
    sample = {"answer": "cup", "points_masks": MASKS}
    res = AgenticVerifier().verify([text], [sample])[0]
    assert res.parts["outcome"].value == 1.0 and res.parts["spatial"].value == 1.0
    assert get_recipe("argos").rubric().score(text, **sample).total == 1.0


def test_teacher_score_after_a_megabyte_of_blanks():
    assert parse_binary_score("score:" + _run(" ") + 'x {"score": 1.0}') == 1.0
    assert parse_binary_score("score:" + _run(" ") + "x") is None


def test_lenient_plan_after_a_fence_opener_and_a_megabyte_of_blanks():
    amap = load_action_map({1: "pickup obj1"})
    plan = (
        '{"reasoning_and_reflection": "r", "visual_state_description": "v", "language_plan": "l", '
        '"executable_plan": [{"action_id": 1, "action_name": "pickup obj1"}]}'
    )
    text = "```json" + _run(" ") + "x then " + plan
    assert reinforced_format(text, amap, lenient=True).value == 0.5
    assert reinforced_accuracy(text, "['pickup obj1']", lenient=True).value == 1.0


@pytest.mark.parametrize(
    ("dataset", "want"), [("vl-rewardbench", 2), ("multimodal-rewardbench", 2), ("mm-rlhf-rewardbench", 2)]
)
def test_released_verdict_on_a_megabyte_of_unclosed_answers(dataset, want):
    assert released_verdict(_run("<answer>") + " so 2", dataset) == want


@pytest.mark.parametrize("unit", ["<think>1</think>", "</think><think>"])
def test_answer_after_a_megabyte_of_think_pairs(unit):
    text = _run(unit) + "</think> 3"
    assert counting_reward(text, 3).value == 1.0
    assert outcome(text, "3").value == 1.0
    assert detection_reward(_run(unit) + "</think>[0, 0, 10, 10]", [[0, 0, 10, 10]]).value == 1.0
