"""The text (and token ids) put between two turns of a household episode: the
environment's EB-ALFRED feedback as plain text, or as a user turn of the policy's chat
template. Shared by TRL's :class:`~groundrl.train.multiturn.EnvRollout`, the verl agent loop
(:mod:`groundrl.integrations.verl_agent_loop`) and the OpenRLHF agent
(:mod:`groundrl.integrations.openrlhf_household`). Tokenizers are duck-typed (anything with
``apply_chat_template`` / ``__call__``): nothing here imports transformers.

>>> from groundrl.sim.env import HouseholdEnv
>>> from groundrl.sim.generate import generate_tasks
>>> task = generate_tasks(1, seed=0)[0]
>>> env = HouseholdEnv([task], reward="plan")
>>> _ = env.reset(options={"task": task})
>>> obs, r, term, trunc, info = env.step("nonsense")
>>> default_feedback_text(info, obs)
'\\nFeedback: Last action is invalid. No action could be read in any vocabulary.\\nPlan:'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

#: ``text(info, obs)``: the feedback text from a step's ``info`` and observation (read only).
FeedbackText = Callable[[Mapping[str, Any], Mapping[str, Any]], str]


def default_feedback_text(info: Mapping[str, Any], obs: Mapping[str, Any]) -> str:
    """The text put between two turns: the turn's last action (when a vocabulary was
    read) and its EB-ALFRED feedback — the failure that stopped the plan, or the last
    success when the plan ran out — then the cue to plan again. Short on purpose: it is
    the re-plan context of a small policy."""
    last = (info.get("feedback") or [""])[-1]
    actions = info.get("actions") or []
    label = str(actions[-1])[:80] if actions and info.get("vocab") else ""
    return f"\nFeedback: {label + ': ' if label else ''}{last}\nPlan:"


#: Where environment feedback goes between two policy turns: ``user`` — a user turn of
#: the tokenizer's chat template (for chat / Instruct models: the model re-plans inside
#: its template); ``raw`` — the text as is (a model trained on plain text, like the demo's).
FEEDBACK_ROLES = ("user", "raw")

_SENTINEL = "\x00groundrl-turn\x00"
_chat_cache: dict[tuple[Any, ...], tuple[str, str, str]] = {}


def _chat_pieces(tokenizer: Any) -> tuple[str, str, str]:
    """``(close, before, after)``: what the chat template writes after an assistant
    message's content (``close``), and around a user message's content in the turn that
    follows it, up to the next assistant turn's generation prompt."""
    template = getattr(tokenizer, "chat_template", None)
    inner = getattr(tokenizer, "tokenizer", tokenizer)  # a processor's tokenizer
    # keyed by what the rendering depends on, not id(): ids of freed tokenizers are reused
    key = (str(template), getattr(inner, "bos_token", None), getattr(inner, "eos_token", None))
    if key not in _chat_cache:
        if not template:
            raise ValueError(
                "feedback as a user turn needs the tokenizer's chat template, and this tokenizer has "
                "none; use the raw feedback mode (feedback_role='raw')"
            )
        base = [{"role": "user", "content": "u"}, {"role": "assistant", "content": _SENTINEL}]
        one = tokenizer.apply_chat_template(base, tokenize=False)
        two = tokenizer.apply_chat_template(
            [*base, {"role": "user", "content": _SENTINEL + "fb"}], tokenize=False, add_generation_prompt=True
        )
        if not two.startswith(one) or one.count(_SENTINEL) != 1:
            raise ValueError(
                "this chat template rewrites earlier turns when a user turn follows, so feedback cannot be "
                "appended as a user turn; use the raw feedback mode (feedback_role='raw')"
            )
        close = one[one.index(_SENTINEL) + len(_SENTINEL) :]
        turn = two[len(one) :]
        before, after = turn.split(_SENTINEL + "fb", 1)
        _chat_cache[key] = (close, before, after)
    return _chat_cache[key]


def chat_feedback_text(tokenizer: Any, feedback: str, *, turn_ended: bool = True) -> str:
    """The text to append after a policy turn so that ``feedback`` enters as a user turn
    of the tokenizer's chat template: the end of the assistant turn the template writes
    (less the end-of-turn token the policy already sampled, when ``turn_ended``), the user
    turn, and the next assistant turn's generation prompt. Decoded, ``prompt + turn +
    this`` equals the chat template applied to the same messages (tests check it).

    ``tokenizer`` is a tokenizer or processor with ``apply_chat_template``; raises
    ValueError when it has no chat template or one that rewrites earlier turns."""
    close, before, after = _chat_pieces(tokenizer)
    eos = getattr(tokenizer, "eos_token", None) or getattr(
        getattr(tokenizer, "tokenizer", None), "eos_token", None
    )
    if turn_ended and eos and close.startswith(eos):
        close = close[len(eos) :]
    return close + before + feedback.strip() + after


def feedback_ids(
    tokenizer: Any,
    info: Mapping[str, Any],
    obs: Mapping[str, Any],
    role: str,
    last_ids: Sequence[int],
    text_fn: FeedbackText | None = None,
) -> list[int]:
    """The token ids of the feedback between two turns: ``role`` ``"user"`` renders it as
    a user turn (:func:`chat_feedback_text`; the turn ended when its last id is the EOS),
    ``"raw"`` tokenizes ``text_fn(info, obs)`` (default :func:`default_feedback_text`)."""
    text = (text_fn or default_feedback_text)(info, obs)
    tok = getattr(tokenizer, "tokenizer", tokenizer)
    if role == "user":
        eos = tok.eos_token_id
        text = chat_feedback_text(tokenizer, text, turn_ended=bool(last_ids) and last_ids[-1] == eos)
    return list(tok(text, add_special_tokens=False)["input_ids"])
