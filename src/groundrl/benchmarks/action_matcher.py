"""A judge-backed action matcher for EmbodiedBrain's planning P/R/F1, as its released
evaluation (``evaluation/src/InternalBench/eval_key_action_canonical_soft.py``) scores it.

The released script asks an LLM, once per predicted action, which gold actions of the
item share its intent ("Mug" and "Cup", "turn on Faucet" and "turn on Water"), fills a
pred×gold 0/1 matrix from the answer (every gold action equal to a named one), and then
counts the maximum one-to-one matching (quantity) and the LCS (order) on that matrix. We
do the same with our own prompt (nothing of theirs is copied):

* one judge request per distinct ``(predicted action, gold list)`` of the run, all sent as
  one batch (the backend runs them concurrently); repeated pairs are asked once, and with
  ``--judge-cache`` a rerun asks nothing;
* the judge answers JSON ``{"matches": [gold indices]}`` (the released shape
  ``{"result": [{"match": true, "matched_gt_index": i}, …]}`` is read too); an answer
  that cannot be read matches nothing beyond exact equality and is counted (``unreadable``);
* an exactly equal canonical action always matches (the exact matcher is a subset).

Actions are compared after :func:`groundrl.rewards.planning.canonical_actions` (synonyms
mapped, locomotion dropped), as in the released script.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence

from groundrl.judges.base import Generation, JudgeBackend, Request, SamplingParams

Action = tuple[str, ...]

MATCHER_SYSTEM = (
    "You check a household robot's plan against a reference plan. You get one predicted action and the "
    "numbered list of reference actions. A reference action matches when the predicted action achieves "
    "the same goal: treat synonymous objects or places as the same (a mug and a cup, a trash can and a "
    "garbage bin), accept a common-sense equivalent way of doing it (turning on the faucet to turn on the "
    "water), ignore case and plural; opposite intents never match (turn on vs turn off). Reply with JSON "
    'only: {"matches": [indices of every matching reference action]}, or {"matches": []} when none does.'
)

_JSON = re.compile(r"\{.*\}", re.DOTALL)


def matcher_request(pred: Action, gold: Sequence[Action]) -> Request:
    listing = "\n".join(f"{j}: {json.dumps(list(g))}" for j, g in enumerate(gold))
    text = f"Predicted action: {json.dumps(list(pred))}\n\nReference actions:\n{listing}"
    return [{"role": "system", "content": MATCHER_SYSTEM}, {"role": "user", "content": text}]


def parse_matches(text: str | None, n_gold: int) -> frozenset[int] | None:
    """Gold indices named in a judge answer; ``None`` when it cannot be read.

    >>> sorted(parse_matches('ok {"matches": [0, 2, 9]}', 3))
    [0, 2]
    >>> sorted(parse_matches('{"result": [{"match": true, "matched_gt_index": 1}, {"match": false}]}', 3))
    [1]
    >>> parse_matches("no json", 3) is None
    True
    """
    if not isinstance(text, str):
        return None
    m = _JSON.search(text)
    if m is None:
        return None
    try:
        data = json.loads(m.group(0))
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    if isinstance(data.get("matches"), list):
        idx = data["matches"]
    elif isinstance(data.get("result"), list):
        idx = [
            r.get("matched_gt_index")
            for r in data["result"]
            if isinstance(r, dict) and r.get("match") is True
        ]
    else:
        return None
    return frozenset(i for i in idx if type(i) is int and 0 <= i < n_gold)


class LLMActionMatcher:
    """Batched, deduplicated judge calls deciding which gold actions a predicted action
    matches; :meth:`prepare` asks, :meth:`matcher` returns the per-item pair matcher."""

    def __init__(self, backend: JudgeBackend, params: SamplingParams | None = None) -> None:
        self.backend = backend
        self.params = params or SamplingParams(temperature=0.0, max_tokens=256)
        self.answers: dict[tuple[Action, tuple[Action, ...]], frozenset[int]] = {}
        self.calls = 0
        self.failures = 0  # requests that failed (no answer)
        self.unreadable = 0  # answers without readable JSON
        self.reused = 0

    def prepare(self, pairs: Sequence[tuple[Sequence[Action], Sequence[Action]]]) -> None:
        """Ask the judge about every ``(predicted action, gold list)`` not yet known."""
        todo: list[tuple[Action, tuple[Action, ...]]] = []
        seen = set()
        for preds, gold in pairs:
            g = tuple(gold)
            for a in preds:
                key = (tuple(a), g)
                if key in self.answers or key in seen:
                    self.reused += 1
                    continue
                seen.add(key)
                todo.append(key)
        if not todo:
            return
        self.calls += len(todo)
        try:
            gens = self.backend.generate([matcher_request(a, g) for a, g in todo], self.params)
        except Exception as e:  # never crash a benchmark on a backend bug
            gens = [Generation(error=f"{type(e).__name__}: {e}") for _ in todo]
        for (a, g), gen in zip(todo, gens, strict=True):
            got = parse_matches(gen.text if gen.ok else None, len(g))
            if not gen.ok:
                self.failures += 1
            elif got is None:
                self.unreadable += 1
            self.answers[(a, g)] = got if got is not None else frozenset()

    def matcher(self, gold: Sequence[Action]) -> Callable[[Action, Action], bool]:
        """``matcher(pred, gold_action)`` for one item's gold list: exact equality, or the
        judge named a gold action equal to ``gold_action``."""
        g = tuple(gold)

        def match(a: Action, b: Action) -> bool:
            if a == b:
                return True
            idx = self.answers.get((tuple(a), g), frozenset())
            return any(g[j] == b for j in idx)

        return match
