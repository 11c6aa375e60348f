"""A scalar reward-model baseline: a local ``AutoModelForSequenceClassification``
checkpoint that scores each response on its own, as the papers' tables compare
generative judges with scalar RMs.

The model sees text only (query and response as a user/assistant chat when the
tokenizer has a chat template, else ``query\\n\\nresponse``); images are not given to it,
which the reports say. The reward of a response is the model's logit when it has one
label, else the log-probability of its last label (``log_softmax(logits)[-1]``).

* Pairwise: the higher reward wins; equal rewards are no verdict (counted wrong).
* Scores (``score-rm``): the reward of ``question + reasoning + answer`` is put on the
  0–10 scale as ``10 · sigmoid(reward)`` (our choice: a Bradley-Terry RM's logit read as a
  probability of being good); Spearman's rank correlation with the gold scores, which
  needs no scale, is reported beside it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from groundrl.benchmarks.stats import spearman as spearman  # re-exported: it lived here


class ScalarRM:
    """A sequence-classification reward model loaded from a local ``path``."""

    def __init__(
        self, path: str, device: str | None = None, batch_size: int = 8, max_length: int = 4096
    ) -> None:
        # lazy: torch loads only when a model runs
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.path = str(path)
        self.tokenizer = AutoTokenizer.from_pretrained(self.path)
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token or self.tokenizer.unk_token
        self.tokenizer.padding_side = "right"
        self.model = AutoModelForSequenceClassification.from_pretrained(self.path)
        if self.model.config.pad_token_id is None:
            self.model.config.pad_token_id = self.tokenizer.pad_token_id
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model.to(self.device).eval()
        self.batch_size = batch_size
        self.max_length = max_length
        self.calls = 0
        self.failures = 0

    def _text(self, query: str, response: str) -> str:
        if getattr(self.tokenizer, "chat_template", None):
            try:
                text = self.tokenizer.apply_chat_template(
                    [{"role": "user", "content": query}, {"role": "assistant", "content": response}],
                    tokenize=False,
                )
                return str(text)  # a str with tokenize=False
            except Exception:  # a template that wants other fields: plain text
                pass
        return f"{query}\n\n{response}"

    def rewards(self, pairs: Sequence[tuple[str, str]]) -> list[float | None]:
        """One reward per ``(query, response)``; ``None`` for a batch that failed."""
        # lazy: torch loads only when a model runs
        import torch

        out: list[float | None] = []
        for i in range(0, len(pairs), self.batch_size):
            chunk = pairs[i : i + self.batch_size]
            self.calls += len(chunk)
            try:
                enc = self.tokenizer(
                    [self._text(q, r) for q, r in chunk],
                    return_tensors="pt",
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                ).to(self.device)
                with torch.no_grad():
                    logits = self.model(**enc).logits.float()
                vals = logits[:, 0] if logits.shape[-1] == 1 else torch.log_softmax(logits, -1)[:, -1]
                out.extend(float(v) for v in vals.cpu())
            except Exception:
                self.failures += len(chunk)
                out.extend([None] * len(chunk))
        return out

    def pairwise_rewards(self, items: Sequence[Mapping[str, object]]) -> list[tuple[float, float] | None]:
        """``(reward of response_1, reward of response_2)`` per item, in the shown order."""
        flat = [(str(it["query"]), str(it[k])) for it in items for k in ("response_1", "response_2")]
        r = self.rewards(flat)
        return [
            (r[2 * i], r[2 * i + 1]) if r[2 * i] is not None and r[2 * i + 1] is not None else None  # type: ignore[misc]
            for i in range(len(items))
        ]

    def scores(self, items: Sequence[Mapping[str, object]]) -> list[float | None]:
        """score-rm items → ``10 · sigmoid(reward)`` (``None`` on failure)."""
        flat = [
            (str(it.get("question", "")), f"{it.get('reasoning', '')}\n\nAnswer: {it.get('answer', '')}")
            for it in items
        ]
        return [None if r is None else 10.0 / (1.0 + math.exp(-r)) for r in self.rewards(flat)]

    def close(self) -> None:
        self.model = None
