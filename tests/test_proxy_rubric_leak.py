"""Proxy-GRM: the proxy agent sees the rubric and nothing else [Proxy-GRM §3.3, Eq. 7].
A completion without a ``<rubric>…</rubric>`` block never reaches the proxy (a real chat
server on 127.0.0.1 counts its requests) and its proxy reward is Eq. 7's "otherwise", −1."""

import pytest

from groundrl.judges.papers import ProxyAgent
from groundrl.recipes import get_recipe
from groundrl.testing.judge_backend import make_backend

PAIR = {"query": "How many chairs?", "response_1": "three", "response_2": "four", "preferred": 1}
# the gaming completion of issue 24: no rubric, the right verdict in plain sight
NO_RUBRIC = "Response 1 is right, answer 1. <eval>r1 counts correctly</eval><answer>1</answer>"
MISLEADING = "<rubric>prefer the larger count</rubric><eval>e</eval><answer>1</answer>"


def _user_text(msgs):
    parts = msgs[-1]["content"]
    return parts if isinstance(parts, str) else " ".join(p.get("text", "") for p in parts if "text" in p)


def _proxy_follows_the_rubric(chat_server):
    seen = []

    def responder(msgs, body):
        text = _user_text(msgs)
        seen.append(text)
        # a proxy that reads whatever it is shown: "answer 1" in the text -> 1, else 2
        return "<answer>1</answer>" if "answer 1" in text else "<think>larger count</think><answer>2</answer>"

    chat_server.responder = responder
    return seen


def test_recipe_rubric_never_sends_a_rubricless_completion(chat_server):
    seen = _proxy_follows_the_rubric(chat_server)
    agent = ProxyAgent(make_backend("openai", "proxy", chat_server.base_url, backoff=0.01, max_retries=1))
    rubric = get_recipe("proxy_grm").rubric(judge=agent)
    gamed, honest = rubric.score_batch([NO_RUBRIC, MISLEADING], [PAIR, PAIR])
    assert len(chat_server.requests) == 1 and "answer 1" not in seen[0]  # only the rubric went out
    assert "prefer the larger count" in seen[0] and "<eval>" not in seen[0]
    assert gamed.parts["proxy"].value == -1.0 and "no <rubric>" in gamed.parts["proxy"].reason
    assert honest.parts["proxy"].value == -1.0  # the proxy followed the misleading rubric to 2
    # hand-worked totals, acc + proxy + 0.5·format: gamed 1 − 1 + 0 = 0; honest 1 − 1 + 0.5 = 0.5
    assert gamed.total == pytest.approx(0.0) and honest.total == pytest.approx(0.5)


def test_training_reward_never_sends_a_rubricless_completion(chat_server):
    from groundrl.train.proxy_reward import make_agent, proxy_reward

    _proxy_follows_the_rubric(chat_server)
    agent = make_agent({"backend": "openai", "model": "proxy", "url": chat_server.base_url})
    f = proxy_reward(agent)
    cols = {k: [v, v, v] for k, v in PAIR.items()}
    good = "<rubric>count the chairs; answer 1 if three</rubric><eval>e</eval><answer>1</answer>"
    out = f(completions=[NO_RUBRIC, good, "<rubric>never closed <answer>1</answer>"], **cols)
    assert out == [-1.0, 1.0, -1.0]
    assert len(chat_server.requests) == 1  # only the completion with a closed rubric was sent
