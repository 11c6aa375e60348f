import json

import pytest
from typer.testing import CliRunner

from groundrl.cli.main import app
from groundrl.judges.papers import (
    ArgosTeachers,
    EQARMEvaluator,
    PlanningGRM,
    ProxyAgent,
    ProxyGRMPolicy,
    parse_yes_no,
    proxy_verified,
)
from groundrl.recipes import get_recipe
from groundrl.testing.judge_backend import make_backend


def backend(srv):
    return make_backend("openai", "judge", srv.base_url, backoff=0.01, max_retries=1)


def last_user_text(msgs):
    parts = msgs[-1]["content"]
    return (
        parts
        if isinstance(parts, str)
        else " ".join(p.get("text", "") for p in parts if p.get("type") == "text")
    )


def test_parse_yes_no():
    assert parse_yes_no("Yes.") is True and parse_yes_no("<think>hmm yes</think> no") is False
    assert parse_yes_no("maybe") is None and parse_yes_no(None) is None


def test_eqa_rm_evaluator_scores_and_reference_variant(chat_server):
    chat_server.responder = lambda m, b: (
        "<critique>fine</critique><score>8</score>"
        if "Reference answer" in last_user_text(m)
        else "<critique>x</critique><score>eleven</score>"
    )
    ev = EQARMEvaluator(backend(chat_server))
    items = [
        {"question": "q", "reasoning": "r", "answer": "a"},
        {"question": "q", "reasoning": "r", "answer": "a", "reference": "a"},
    ]
    assert ev.evaluate(items) == [[None], [8.0]]


def test_proxy_part_rewards_and_failures(chat_server):
    seen = []

    def responder(msgs, body):
        text = last_user_text(msgs)
        seen.append(text)
        return (
            "<think>rubric says 2</think><answer>2</answer>"
            if "prefer-two" in text
            else "<answer>1 or 2</answer>"
        )

    chat_server.responder = responder
    proxy = ProxyAgent(backend(chat_server))
    rubric = get_recipe("proxy_grm").rubric(judge=proxy)
    pair = {"query": "How many chairs?", "response_1": "three", "response_2": "four"}
    out = rubric.score_batch(
        [
            "<rubric>prefer-two</rubric><eval>e</eval><answer>2</answer>",
            "<rubric>vague</rubric><eval>e</eval><answer>2</answer>",
            "x",
        ],
        [{**pair, "preferred": 2}, {**pair, "preferred": 2}, {"preferred": 1}],
    )
    # an answer naming neither response: Eq. 7's "otherwise", −1 (issue 37)
    assert [v.parts["proxy"].value for v in out] == [1.0, -1.0, None]
    # the proxy saw the rubric text only up to </rubric>, after the query and both responses, in that order
    shown = next(t for t in seen if "prefer-two" in t)
    assert (
        shown.index("How many chairs?")
        < shown.index("three")
        < shown.index("four")
        < shown.index("prefer-two")
    )
    assert "<eval>" not in shown
    # total = acc + 0.5·format + proxy
    assert out[0].total == pytest.approx(1 + 0.5 + 1)
    chat_server.fail_next = [500, 500]
    v = rubric.score("<rubric>prefer-two</rubric><eval>e</eval><answer>2</answer>", **pair, preferred=2)
    # a server failure: unscored (None), never a silent 0 (issue 37)
    assert v.parts["proxy"].value is None and "failed" in v.parts["proxy"].reason


def test_proxy_verified_inference(chat_server):
    chat_server.responder = lambda m, b: (
        "<rubric>r</rubric><eval>e</eval><answer>1</answer>"
        if "[Rubric]" not in last_user_text(m)
        else "<answer>2</answer>"
    )
    out = proxy_verified(
        ProxyGRMPolicy(backend(chat_server)),
        ProxyAgent(backend(chat_server)),
        [{"query": "q", "response_1": "a", "response_2": "b"}],
    )
    assert out[0]["verdict"] == 1 and out[0]["proxy_verdict"] == 2 and out[0]["agree"] is False


def test_planning_grm_part(chat_server):
    answers = {"a": "<think>t</think><score>0.75</score>", "b": "<score>1.4</score>", "c": "no score at all"}
    chat_server.responder = lambda m, b: answers[last_user_text(m).rsplit("Plan to grade:\n", 1)[1]]
    rubric = get_recipe("embodied_brain").rubric(judge=PlanningGRM(backend(chat_server)))
    assert rubric.weights == [0.2, 0.0, 0.0, 0.8]
    out = rubric.score_batch(["a", "b", "c"], [{}, {}, {}])
    assert [v.parts["grm"].value for v in out] == [0.75, 1.0, 0.0]
    assert out[0].total == pytest.approx(0.8 * 0.75)
    chat_server.fail_next = [500, 500]
    v = rubric.score("a")
    assert v.parts["grm"].value == 0.0 and "failed" in v.parts["grm"].reason


def test_argos_teachers(chat_server):
    from PIL import Image

    red, blue = Image.new("RGB", (8, 8), (255, 0, 0)), Image.new("RGB", (8, 8), (0, 0, 255))

    def responder(msgs, body):
        text = last_user_text(msgs)
        if "Do the two answers mean the same" in text:
            return "yes" if "cooking room" in text else "no"
        return "yes" if "red" in text else "no"

    chat_server.responder = responder
    teachers = ArgosTeachers(backend(chat_server))
    rubric = get_recipe("argos").rubric(judge=teachers)
    assert rubric.names == ["outcome", "grounding", "reasoning"]
    # frames are 1-based as in Argos' traces ("frame 1 at 0.00 seconds")
    completion = "In frame 1 a red cup is visible. In frame 2 a green cup. Frames 1 to 2 show red things. <answer>the cooking room</answer>"
    v = rubric.score(completion, answer="kitchen", frames=[red, blue], question="Where?")
    assert v.parts["outcome"].value == 1.0 and "semantic" in v.parts["outcome"].reason
    # one grounding term: frames 1/2 = 0.5, segment 1/1 = 1 (no points) -> G = 0.75 [Argos App. D]
    assert v.parts["grounding"].value == 0.75
    assert "frame_grounding=0.5" in v.parts["grounding"].reason
    r = v.parts["reasoning"].value
    assert 0 < r <= 1
    # gate open: (outcome + G + reasoning) / 3 [Argos Eq. 9]
    assert v.total == pytest.approx((1 + 0.75 + r) / 3)
    # out-of-range frame reference is wrong, not skipped
    v2 = rubric.score("frame 7 shows red. <answer>kitchen</answer>", answer="kitchen", frames=[red])
    assert v2.parts["grounding"].value == 0.0
    v3 = rubric.score("frame 0 shows red. <answer>kitchen</answer>", answer="kitchen", frames=[red])
    assert v3.parts["grounding"].value == 0.0  # there is no frame 0
    # a mention in seconds maps through fps (frame 1 at 0.00 s): 0.5 s at 2 fps is frame 2
    seen = []
    chat_server.responder = lambda msgs, body: seen.append(body) or "yes"
    v4 = rubric.score(
        "At 0.5 seconds it is red. <answer>kitchen</answer>", answer="kitchen", frames=[red, blue], fps=2
    )
    assert v4.parts["grounding"].value == 1.0
    sent = [
        p
        for b in seen
        for m in b["messages"]
        for p in (m["content"] if isinstance(m["content"], list) else [])
    ]
    urls = [p["image_url"]["url"] for p in sent if p.get("type") == "image_url"]
    from groundrl.judges.images import to_data_url

    assert to_data_url(blue) in urls and to_data_url(red) not in urls


def test_cli_score_with_judge_and_unreachable_judge(chat_server, tmp_path):
    chat_server.responder = lambda m, b: "<score>0.5</score>"
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"id": "a", "completion": "<response>x</response>"}) + "\n")
    out = tmp_path / "out.jsonl"
    runner = CliRunner()
    r = runner.invoke(
        app,
        [
            "score",
            "embodied_brain",
            str(src),
            "-o",
            str(out),
            "--judge-backend",
            "openai",
            "--judge-model",
            "j",
            "--judge-url",
            chat_server.base_url,
        ],
    )
    assert r.exit_code == 0, r.output
    assert json.loads(out.read_text())["parts"]["grm"] == 0.5
    # a port nobody listens on: the run still finishes, the part falls back to 0 and the failure is counted
    r = runner.invoke(
        app,
        [
            "score",
            "embodied_brain",
            str(src),
            "-o",
            str(out),
            "--judge-backend",
            "openai",
            "--judge-model",
            "j",
            "--judge-url",
            "http://127.0.0.1:9/v1",
        ],
    )
    assert r.exit_code == 0, r.output
    row = json.loads(out.read_text())
    assert row["parts"]["grm"] == 0.0 and "failed" in row["reasons"]["grm"]
    assert "1 failed" in r.output
    r = runner.invoke(
        app,
        [
            "score",
            "eqa_rm",
            str(src),
            "--judge-backend",
            "openai",
            "--judge-model",
            "j",
            "--judge-url",
            chat_server.base_url,
        ],
    )
    assert r.exit_code != 0 and "no model-based parts" in r.output
