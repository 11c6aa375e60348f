"""Issue 26 item 4: a judge score that is NaN, infinite, missing or out of range is
scored with a reason that names it (they scored 0 with an empty reason), and the
server's health counts the unusable ones as judge failures."""

import pytest

from groundrl.judges.papers import PlanningGRM
from groundrl.serve.judge_health import judge_failed
from groundrl.testing.judge_backend import make_backend


@pytest.mark.parametrize(
    "answer, value, needle, failure",
    [
        ("<score>0.85</score>", 0.85, "", False),
        ("<score>nan</score>", 0.0, "'nan' is not finite", True),
        ("<score>1e999</score>", 0.0, "'1e999' is not finite", True),
        ("<score>-inf</score>", 0.0, "'-inf' is not finite", True),
        ("<score>1.7</score>", 1.0, "outside [0, 1], clamped", False),
        ("<score>great</score>", 0.0, "no number in the judge's <score>", True),
        ("I like it", 0.0, "no <score> in judge output", True),
    ],
)
def test_planning_grm_names_unusable_scores(chat_server, answer, value, needle, failure):
    chat_server.responder = lambda msgs, body: answer
    grm = PlanningGRM(make_backend("openai", "judge", chat_server.base_url, backoff=0.01))
    (s,) = grm.reward_batch(["<plans>1.[Navigate] go</plans>"], [{"question": "q", "gold": "g"}])
    grm.backend.close()
    assert s.value == value
    assert needle in s.reason if needle else s.reason == ""
    assert judge_failed(s.reason) is failure
