"""The JSON candidates of EmbodiedBrain detection (groundrl.rewards.perception) skip a run
of "[" whose last one does not decode (issue 30: 256 attempts ~1,000 levels deep each cost
~40 ms per completion). The reference below is the plain loop: every "[" / "{" in turn,
up to MAX_JSON_CANDIDATES decode attempts; both give the same values on bracket soup."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundrl.rewards import perception
from groundrl.rewards.perception import detection_reward

SETTINGS = settings(
    derandomize=True, max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
DECODER = json.JSONDecoder()


def ref_json_values(s):
    out, pos = [], 0
    for _ in range(perception.MAX_JSON_CANDIDATES):
        starts = [i for i in (s.find("[", pos), s.find("{", pos)) if i != -1]
        if not starts:
            break
        i = min(starts)
        try:
            obj, end = DECODER.raw_decode(s, i)
        except (ValueError, RecursionError):
            pos = i + 1
            continue
        out.append(obj)
        pos = end
    return out


PIECES = st.sampled_from(
    ["[", "]", "{", "}", ",", ":", "1", "2.5", '"a"', "x", " ", "\n", "\t", "[[[[", "]]", "[1, ",
     '{"bbox_2d": [1, 2, 30, 40]}', "[0, 0, 5, 5]", "[" * 300, "[ " * 200, "]" * 50]
)  # fmt: skip
SOUP = st.lists(PIECES, max_size=20).map("".join)


@SETTINGS
@given(SOUP)
def test_json_values_equal_the_plain_loop(s):
    assert perception._json_values(s) == ref_json_values(s)


def test_runs_of_brackets_past_the_attempt_budget():
    for s in (
        "[" * 1000,
        "[" * 255 + "[1]",
        "[" * 256 + "[1]",
        "[ \n" * 300 + "[0, 0, 5, 5]",
        "[" * 10 + "]" * 10,
    ):
        assert perception._json_values(s) == ref_json_values(s), s[:20]
    # a run whose innermost value decodes is read as before: the nested list, not a box
    assert perception._json_values("[[[0, 0, 5, 5]]]") == [[[[0, 0, 5, 5]]]]
    # 100 "[" before a box: 100 failed attempts, then the box (past 256 it is never reached)
    assert detection_reward("[" * 100 + "[0, 0, 10, 10]", [[0, 0, 10, 10]]).value == 1.0
    assert detection_reward("[" * 300 + "[0, 0, 10, 10]", [[0, 0, 10, 10]]).value == 0.0
