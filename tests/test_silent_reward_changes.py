"""Issue 37 item 1: the silent reward changes, each held to the paper.

Argos [Argos §3.1, Eq. 9]: the gated mean's denominator is fixed (w_A + w_G + w_R), so a
right answer that cites no evidence on a sample with masks forfeits the grounding share.
Before the fix the grounding term was dropped with its weight: no points scored 1.0, as
high as a correctly grounded answer."""

from __future__ import annotations

from groundrl.recipes import get_recipe
from groundrl.rubric import gated_mean
from groundrl.verify.verifier import AgenticVerifier

MASKED = {"answer": "cup", "points_masks": {"cup": [[10, 5, 20, 15]]}}
UNGROUNDED = "<answer>cup</answer>"
GROUNDED = 'The cup is at <points x1="12" y1="8" alt="cup">cup</points>. <answer>cup</answer>'
HALF = (
    'Cup at <points x1="12" y1="8" alt="cup">cup</points> and '
    '<points x1="90" y1="90" alt="cup">cup</points>. <answer>cup</answer>'
)


def test_gated_mean_counts_an_unscored_term_in_the_denominator():
    # (w_A·1 + w_G·0) / (w_A + w_G) by hand: 1 / 2; and with w_G = 3: 1 / 4
    assert gated_mean(1.0, [(1.0, 1.0), (1.0, None)], 0.5) == 0.5
    assert gated_mean(1.0, [(1.0, 1.0), (3.0, None)], 0.5) == 0.25


def test_argos_recipe_ungrounded_right_answer_forfeits_the_grounding_share():
    rubric = get_recipe("argos").build()
    none = rubric.score(UNGROUNDED, **MASKED).total
    one = rubric.score(GROUNDED, **MASKED).total
    half = rubric.score(HALF, **MASKED).total
    assert none == 0.5  # (1·1 + 1·0) / (1 + 1)
    assert one == 1.0 and half == 0.75  # (1 + 0.5) / 2
    assert none < half < one


def test_argos_sample_without_masks_leaves_w_g_out():
    # no grounding references in the sample: the term is not called for [ours]
    rubric = get_recipe("argos").build()
    assert rubric.score("<answer>B</answer>", answer="B").total == 1.0


def test_agentic_verifier_ungrounded_right_answer_forfeits_the_grounding_share():
    v = AgenticVerifier()
    none, one = v.verify([UNGROUNDED, GROUNDED], [MASKED, MASKED])
    assert none.total == 0.5 and none.parts["grounding"].value == 0.0
    assert one.total == 1.0
    assert v.verify(["<answer>B</answer>"], [{"answer": "B"}])[0].total == 1.0


# --- Proxy-GRM [Proxy-GRM §3.3, Eq. 7]: who caused a missing verdict decides its value ---

PAIR = {"query": ["q"] * 2, "response_1": ["a"] * 2, "response_2": ["b"] * 2, "preferred": [1, 1]}
HONEST = "<rubric>1. counts the chairs</rubric><eval>r1 counts 4</eval><answer>1</answer>"


class ScriptedAgent:
    """Answers each call from a script of per-call answer lists; records what it saw."""

    def __init__(self, *calls):
        self.calls = list(calls)
        self.seen = []

    def verdicts(self, items, rubrics):
        self.seen.append(list(rubrics))
        return self.calls.pop(0)[: len(rubrics)]


def _proxy(agent, **kw):
    from groundrl.train.proxy_reward import proxy_reward

    logged = {}
    f = proxy_reward(agent, **kw)
    return f, logged


def test_a_rubric_the_proxy_refuses_pays_the_penalty_not_zero():
    # an over-long rubric: the proxy's server answers 400 (context length); the policy's doing
    refused = (None, "proxy call failed: HTTP 400: maximum context length is 32768 tokens")
    f, logged = _proxy(ScriptedAgent([refused, (1, "")]))
    assert f(completions=[HONEST, HONEST], log_metric=logged.__setitem__, **PAIR) == [-1.0, 1.0]
    assert logged["proxy/policy_failures"] == 1.0 and logged["proxy/unscored"] == 0.0


def test_an_unparseable_proxy_answer_is_eq7_otherwise_by_default():
    f, logged = _proxy(ScriptedAgent([(None, "proxy answer unparseable: x"), (2, "")]))
    assert f(completions=[HONEST, HONEST], log_metric=logged.__setitem__, **PAIR) == [-1.0, -1.0]


def test_a_server_failure_is_retried_then_unscored_and_counted():
    down = (None, "proxy call failed: ClientConnectorError: refused")
    agent = ScriptedAgent([down, (1, "")], [down])  # second row: healed; first: down twice
    f, logged = _proxy(agent)
    out = f(completions=[HONEST, HONEST], log_metric=logged.__setitem__, **PAIR)
    assert out[1] == 1.0 and out[0] is None  # never a silent 0
    assert agent.seen[1] == [agent.seen[0][0]]  # the failed row alone was sent again
    assert logged["proxy/unscored"] == 1.0 and f.totals["unscored"] == 1


def test_a_server_failure_healed_by_the_retry_is_scored():
    down = (None, "proxy call failed: HTTP 503: loading")
    f, logged = _proxy(ScriptedAgent([down, (1, "")], [(2, "")]))
    assert f(completions=[HONEST, HONEST], log_metric=logged.__setitem__, **PAIR) == [-1.0, 1.0]
    assert logged["proxy/unscored"] == 0.0


def test_a_verdict_stated_in_the_rubric_is_penalised_and_never_sent():
    leak = "<rubric>1. counts the chairs. Response 1 is better.</rubric><eval>e</eval><answer>1</answer>"
    agent = ScriptedAgent([(1, ""), (1, "")])  # a proxy that would copy the stated verdict
    f, logged = _proxy(agent)
    assert f(completions=[leak, HONEST], log_metric=logged.__setitem__, **PAIR) == [-1.0, 1.0]
    assert agent.seen == [["<rubric>1. counts the chairs</rubric>"]]


def test_gate_unscored_blanks_every_reward_of_an_unscored_row():
    from groundrl.train.proxy_reward import gate_unscored

    down = (None, "proxy call failed: TimeoutError")
    f, _ = _proxy(ScriptedAgent([(1, ""), down], [down]))

    def accuracy(prompts=None, completions=None, **kw):
        return [1.0 for _ in completions]

    trainer = type("T", (), {"reward_funcs": [accuracy, f]})()
    gate_unscored(trainer, f)
    comps = [HONEST, HONEST]
    # the accuracy function runs first (TRL's order): the proxy is computed once, shared
    assert trainer.reward_funcs[0](prompts=None, completions=comps, **PAIR) == [1.0, None]
    assert trainer.reward_funcs[0].__name__ == "accuracy"
    assert trainer.reward_funcs[1](prompts=None, completions=comps, **PAIR) == [1.0, None]


def test_recipe_proxy_part_scores_a_refused_call_minus_one_and_a_dead_server_unscored():
    from groundrl.judges.base import Generation
    from groundrl.judges.papers import ProxyAgent

    class Backend:
        def __init__(self, errors):
            self.errors = errors

        def generate(self, requests, params):
            return [Generation(error=e) if e else Generation(["<answer>1</answer>"]) for e in self.errors]

    sample = {"query": "q", "response_1": "a", "response_2": "b", "preferred": 1}
    refused, dead = "HTTP 400: prompt too long", "ClientConnectorError: refused"
    scores = ProxyAgent(Backend([refused, dead])).reward_batch([HONEST, HONEST], [sample, sample])
    assert [s.value for s in scores] == [-1.0, None]


# --- EmbodiedBrain's GRM [EmbodiedBrain §4.2 item 4, §9.2.4]: a text judge, told the task ---


def test_planning_grm_takes_the_task_from_the_prompt_and_sends_no_images():
    from groundrl.judges.base import Generation
    from groundrl.judges.papers import PlanningGRM

    sent = []

    class Backend:
        def generate(self, requests, params):
            sent.extend(requests)
            return [Generation(["<score>0.50</score>"]) for _ in requests]

    row = {
        "prompt": [
            {
                "role": "user",
                "content": [{"type": "image"}, {"type": "text", "text": "Put the apple in the fridge"}],
            }
        ],
        "gold": "<plans>1.[Navigate] fridge</plans>",
        "images": ["kitchen.png"],
    }
    PlanningGRM(Backend()).reward_batch(["<plans>1.[Navigate] fridge</plans>"], [row])
    user = sent[0][-1]["content"]
    parts = user if isinstance(user, list) else [{"type": "text", "text": user}]
    text = " ".join(p.get("text", "") for p in parts if isinstance(p, dict))
    assert "Task: Put the apple in the fridge" in text
    assert not [p for p in parts if isinstance(p, dict) and p.get("type") != "text"]
