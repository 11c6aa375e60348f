"""Multi-turn feedback inside the chat template (TRL ``EnvRollout``): on a chat
tokenizer, the context the policy re-plans from, decoded, is exactly the chat template
applied to the same messages (prompt, the policy's turn, the feedback as a user turn);
feedback tokens have mask 0; text prompts keep the raw feedback."""

import pytest

pytest.importorskip("transformers")

FB = "Feedback: Last action is invalid. No action could be read in any vocabulary.\nPlan:"


@pytest.fixture(scope="module")
def chat():
    from groundrl.models.tiny_vlm import build_tokenizer
    from groundrl.sim.episode_prompt import prompt
    from groundrl.sim.generate import generate_tasks

    task = next(t for t in generate_tasks(20, seed=0) if t.task_type == "pick_and_place_simple")
    tok = build_tokenizer(seed=0, extra_corpus=[prompt(task), FB, "\n".join(task.gold_plan)])
    return task, tok, prompt(task)


def _script(tok, plan):
    calls = []

    def gen(model, tok_, contexts, n, trainer=None):
        calls.append([list(c) for c in contexts])
        text = " nonsense" if len(calls) == 1 else plan
        return [tok(text, add_special_tokens=False)["input_ids"] + [tok.eos_token_id] for _ in contexts]

    return gen, calls


def test_chat_prompt_feedback_is_a_user_turn_of_the_template(chat):
    from groundrl.train.multiturn import EnvRollout

    task, tok, text = chat
    plan = "\n".join(task.gold_plan)
    gen, calls = _script(tok, plan)
    messages = [{"role": "user", "content": text}]
    rollout = EnvRollout({text: task}, max_turns=3, generate_fn=gen)  # feedback_role "auto"
    (ep,) = rollout.play(None, tok, [messages], 400)
    assert ep.turns == 2 and ep.success
    # the context of turn 2 is the chat template of prompt + turn 1 + the feedback turn
    want = tok.apply_chat_template(
        [*messages, {"role": "assistant", "content": " nonsense"}, {"role": "user", "content": FB}],
        tokenize=False,
        add_generation_prompt=True,
    )
    assert tok.decode(calls[1][0]) == want
    assert want.endswith("<|im_end|>\n<|im_start|>user\n" + FB + "<|im_end|>\n<|im_start|>assistant\n")
    # the whole episode is the template's conversation (less the newline after the last turn)
    whole = tok.apply_chat_template(
        [
            *messages,
            {"role": "assistant", "content": " nonsense"},
            {"role": "user", "content": FB},
            {"role": "assistant", "content": plan},
        ],
        tokenize=False,
    )
    assert tok.decode(ep.prompt_ids + ep.completion_ids) + "\n" == whole
    # mask: the two turns 1, the feedback turn 0
    t1 = tok(" nonsense", add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
    t2 = tok(plan, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
    n_fb = len(ep.completion_ids) - len(t1) - len(t2)
    assert ep.env_mask == [1] * len(t1) + [0] * n_fb + [1] * len(t2) and n_fb > 0


def test_text_prompt_keeps_raw_feedback_and_roles_are_checked(chat):
    from groundrl.train.multiturn import EnvRollout

    task, tok, text = chat
    gen, calls = _script(tok, "\n".join(task.gold_plan))
    (ep,) = EnvRollout({text: task}, max_turns=2, generate_fn=gen).play(None, tok, [text], 400)
    assert tok.decode(calls[1][0]).endswith(" nonsense<|im_end|>\n" + FB)
    gen, calls = _script(tok, "\n".join(task.gold_plan))
    raw = EnvRollout({text: task}, max_turns=2, generate_fn=gen, feedback_role="raw")
    raw.play(None, tok, [[{"role": "user", "content": text}]], 400)
    assert tok.decode(calls[1][0]).endswith("<|im_start|>assistant\n nonsense<|im_end|>\n" + FB)
    with pytest.raises(ValueError, match="feedback_role"):
        EnvRollout({text: task}, feedback_role="assistant")


def test_user_role_needs_a_chat_template(chat):
    from groundrl.sim.episode_feedback import chat_feedback_text

    task, tok, text = chat
    no_template = tok.__class__(tokenizer_object=tok.backend_tokenizer, eos_token="<|im_end|>")
    with pytest.raises(ValueError, match="raw"):
        chat_feedback_text(no_template, "x")
