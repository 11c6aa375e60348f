"""A judge running a local transformers checkpoint (``AutoModelForImageTextToText`` for
VLMs, ``AutoModelForCausalLM`` for text models, picked by the shared loader
:func:`groundrl.models.loading.load_model`), loaded from a path or a fixture name such as
``smollm2-135m-instruct`` — no hub.

Generation is batched with left padding (``batch_size`` requests per ``generate`` call,
``n`` samples each via ``num_return_sequences``); images go through the model's
processor. Sampling follows :class:`SamplingParams` alone — ``temperature``, ``top_p``,
with ``top_k`` off and ``repetition_penalty`` 1 whatever the checkpoint's
``generation_config.json`` says — so results (and cache entries) depend on the params
only. Temperature 0 is greedy, and its ``n`` samples are one greedy decode repeated.
A ``seed`` seeds torch inside :func:`torch.random.fork_rng`, so a judge call does not
move the trainer's random state; samples are reproducible for the same requests and
``batch_size`` (the batch a request lands in changes its random stream).

Log-probabilities: one forward pass over prompt + continuation, joined as token ids (the
prompt through the processor with its images, the continuation tokenised on its own), so
the result is exactly ``log P(continuation tokens | prompt)`` with no merge at the
junction. Only the last ``max continuation length + 1`` positions' logits are computed
(``logits_to_keep``), so a 150k vocabulary does not cost ``batch × prompt × vocab`` memory.

Failures are per request: a request that cannot be prepared (unreadable image, malformed
messages) gets its own error; a batch that fails in the model is retried one request at a
time, so one bad request does not take its batch down with it.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypedDict

from groundrl.judges.base import (
    ChatMessage,
    Generation,
    ImagePart,
    JudgeBackend,
    LogProbResult,
    RequestLike,
    SamplingParams,
    TextPart,
)
from groundrl.judges.cache import ResponseCache, as_cache, lookup, store
from groundrl.judges.images import ImagePolicy, map_content, text_part, to_pil
from groundrl.models.fixtures import resolve_model
from groundrl.models.loading import load_model

# what the chat template renders: images are ``{"type": "image"}`` placeholders (their
# pixels go to the processor apart), and a text-only model gets string contents
TemplateMessage = ChatMessage[TextPart | ImagePart]


class _GenerateKwargs(TypedDict, total=False):
    """The ``generate`` settings we pass (the sampling ones only when sampling)."""

    max_new_tokens: int
    do_sample: bool
    num_return_sequences: int
    pad_token_id: int | None
    temperature: float
    top_p: float
    top_k: int
    repetition_penalty: float


def _err(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"


class TransformersBackend(JudgeBackend):
    def __init__(
        self,
        model: str | Path | Any,
        processor: Any = None,
        batch_size: int = 8,
        device: str | None = None,
        cache: ResponseCache | str | None = None,
        dtype: str | None = None,
        image_policy: ImagePolicy | None = None,
    ) -> None:
        super().__init__()
        self.image_policy = image_policy or ImagePolicy()
        # lazy: torch loads only when a model runs
        import torch

        if batch_size < 1:
            raise ValueError(f"batch_size must be ≥ 1, got {batch_size}")
        self.batch_size = batch_size
        if isinstance(model, (str, Path)):
            path = Path(resolve_model(model))  # a fixture name → its converted folder
            if not path.exists():
                raise FileNotFoundError(f"--judge-model {model} is not a local path (no hub downloads here)")
            model, processor = load_model(str(path))
            self.model = str(path)
        else:
            self.model = getattr(getattr(model, "config", None), "_name_or_path", "") or type(model).__name__
            if processor is None:
                raise ValueError("pass the processor (or tokenizer) together with an in-memory model")
        self.net = model.eval()
        if device:
            self.net.to(device)
        if dtype:  # "bfloat16" etc.; the checkpoint's own dtype otherwise
            self.net.to(getattr(torch, dtype))
        self.processor = processor
        self.tokenizer = getattr(processor, "tokenizer", processor)
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.cache = as_cache(cache)
        self._torch = torch
        self._is_vlm = hasattr(processor, "image_processor")
        self._keep_arg = "logits_to_keep" in inspect.signature(self.net.forward).parameters

    # -- inputs --------------------------------------------------------------

    def _prepare(self, request: RequestLike) -> tuple[str, list[Any]]:
        """The chat-templated prompt (with the generation prompt) and its PIL images."""
        images: list[Any] = []

        def image_part(img: Any) -> ImagePart:
            images.append(to_pil(img, self.image_policy))
            return {"type": "image"}

        msgs: list[TemplateMessage] = map_content(request, image_part, text_part)
        if not self._is_vlm:  # a text-only model gets plain strings
            if images:
                raise ValueError(f"{self.model} is a text-only model; the request has images")
            for m in msgs:
                if isinstance(m["content"], list):
                    m["content"] = "".join(p["text"] for p in m["content"] if p["type"] == "text")
        return self._prompt(msgs), images

    def _prompt(self, msgs: list[TemplateMessage]) -> str:
        template_owner = self.processor if hasattr(self.processor, "apply_chat_template") else self.tokenizer
        if getattr(template_owner, "chat_template", None) or getattr(self.tokenizer, "chat_template", None):
            return template_owner.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False)
        return "\n".join(m["content"] if isinstance(m["content"], str) else "" for m in msgs) + "\n"

    def _encode(self, texts: list[str], images: list[list[Any]]) -> Any:
        flat = [img for imgs in images for img in imgs]
        if self._is_vlm and flat:
            return self.processor(text=texts, images=flat, return_tensors="pt", padding=True)
        return self.tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)

    def _rng(self, seed: int | None) -> Any:
        if seed is None:
            return contextlib.nullcontext()
        dev = self.net.device
        devices = [dev.index or 0] if dev.type == "cuda" else []
        return self._torch.random.fork_rng(devices=devices)

    def _batched(self, items: list[Any], run: Any) -> list[Any]:
        """``run`` over ``batch_size`` chunks; a failing chunk is retried item by item so
        only the request that breaks the model gets the error. Returns per-item results or
        exceptions."""
        out: list[Any] = []
        for start in range(0, len(items), self.batch_size):
            chunk = items[start : start + self.batch_size]
            try:
                out.extend(run(chunk))
            except Exception as e:
                if len(chunk) == 1:
                    out.append(e)
                    continue
                for item in chunk:
                    try:
                        out.extend(run([item]))
                    except Exception as e1:
                        out.append(e1)
        return out

    # -- generation ----------------------------------------------------------

    def generate(
        self, requests: Sequence[RequestLike], params: SamplingParams | None = None
    ) -> list[Generation]:
        params = params or SamplingParams()
        results: list[Generation | None] = [None] * len(requests)
        todo: list[tuple[int, str, list[Any], list[str]]] = []
        for i, request in enumerate(requests):
            self.stats.requests += 1
            try:
                self.image_policy.check_request(request)  # before the cache key reads any image
                keys, cached = lookup(self.cache, self.model, request, params)
                if cached is not None:
                    self.stats.cache_hits += 1
                    results[i] = Generation(texts=cached)
                    continue
                prompt, images = self._prepare(request)
            except Exception as e:
                results[i] = Generation(error=_err(e))
                continue
            todo.append((i, prompt, images, keys))
        with self._rng(params.seed):
            if params.seed is not None:
                self._torch.manual_seed(params.seed)
            outs = self._batched(todo, lambda chunk: self._generate_batch(chunk, params))
        for (i, _, _, keys), res in zip(todo, outs, strict=True):
            if isinstance(res, Exception):
                results[i] = Generation(error=_err(res))
            else:
                store(self.cache, keys, res)
                results[i] = Generation(texts=res)
        self.stats.failures += sum(1 for g in results if g is not None and g.error is not None)
        return results  # type: ignore[return-value]

    def _generate_batch(
        self, chunk: list[tuple[int, str, list[Any], list[str]]], params: SamplingParams
    ) -> list[list[str]]:
        torch = self._torch
        enc = self._encode([p for _, p, _, _ in chunk], [imgs for _, _, imgs, _ in chunk]).to(self.net.device)
        sample = params.temperature > 0
        reps = params.n if sample else 1  # greedy samples are all the same decode
        kwargs: _GenerateKwargs = {
            "max_new_tokens": params.max_tokens,
            "do_sample": sample,
            "num_return_sequences": reps,
            "pad_token_id": self.tokenizer.pad_token_id,
        }
        if sample:
            kwargs.update(
                {
                    "temperature": params.temperature,
                    "top_p": params.top_p,
                    "top_k": 0,
                    "repetition_penalty": 1.0,
                }
            )
        with torch.inference_mode():
            ids = self.net.generate(**enc, **kwargs)
        decoded = self.tokenizer.batch_decode(ids[:, enc["input_ids"].shape[1] :], skip_special_tokens=True)
        return [
            decoded[j * reps : (j + 1) * reps] if sample else [decoded[j]] * params.n
            for j in range(len(chunk))
        ]

    # -- log-probabilities ---------------------------------------------------

    def logprob(self, requests: Sequence[RequestLike], continuations: Sequence[str]) -> list[LogProbResult]:
        if len(requests) != len(continuations):
            raise ValueError(f"{len(requests)} requests but {len(continuations)} continuations")
        results: list[LogProbResult | None] = [None] * len(requests)
        todo: list[tuple[int, str, list[Any], list[int]]] = []
        for i, (request, cont) in enumerate(zip(requests, continuations, strict=True)):
            self.stats.requests += 1
            try:
                if not isinstance(cont, str):
                    raise ValueError(f"continuation must be a string, got {type(cont).__name__}")
                prompt, images = self._prepare(request)
                cont_ids = list(self.tokenizer(cont, add_special_tokens=False)["input_ids"])
            except Exception as e:
                results[i] = LogProbResult(None, _err(e))
                continue
            todo.append((i, prompt, images, cont_ids))
        outs = self._batched(todo, self._logprob_batch)
        for (i, *_), res in zip(todo, outs, strict=True):
            results[i] = LogProbResult(None, _err(res)) if isinstance(res, Exception) else LogProbResult(res)
        self.stats.failures += sum(1 for r in results if r is not None and r.error is not None)
        return results  # type: ignore[return-value]

    def _logprob_batch(self, chunk: list[tuple[int, str, list[Any], list[int]]]) -> list[list[float]]:
        torch = self._torch
        cont_ids = [c for *_, c in chunk]
        cmax = max(len(c) for c in cont_ids)
        if cmax == 0:
            return [[] for _ in chunk]
        enc = self._encode([p for _, p, _, _ in chunk], [imgs for _, _, imgs, _ in chunk])
        ids, mask = enc["input_ids"], enc["attention_mask"]
        # Per-token tensors (ids, mask, token-type ids) get the continuation appended to each
        # row's real tokens, then left padding again; image tensors are unchanged.
        per_token = [k for k, v in enc.items() if torch.is_tensor(v) and v.shape == ids.shape]
        rows: dict[str, list[Any]] = {k: [] for k in per_token}
        for r, c in enumerate(cont_ids):
            keep = mask[r].bool()
            for k in per_token:
                if k == "input_ids":
                    tail = torch.tensor(c, dtype=ids.dtype)
                else:
                    tail = torch.full((len(c),), 1 if k == "attention_mask" else 0, dtype=enc[k].dtype)
                rows[k].append(torch.cat([enc[k][r][keep], tail]))
        width = max(len(x) for x in rows["input_ids"])
        batch = dict(enc)
        for k in per_token:
            fill = self.tokenizer.pad_token_id if k == "input_ids" else 0
            batch[k] = torch.stack(
                [torch.cat([torch.full((width - len(x),), fill, dtype=x.dtype), x]) for x in rows[k]]
            )
        batch = {k: v.to(self.net.device) if torch.is_tensor(v) else v for k, v in batch.items()}
        if self._keep_arg:
            batch["logits_to_keep"] = cmax + 1
        with torch.inference_mode():
            logits = self.net(**batch).logits[:, -(cmax + 1) : -1].float()
        targets = batch["input_ids"][:, -cmax:]
        lp = torch.log_softmax(logits, dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1).cpu()
        return [lp[r, cmax - len(c) :].tolist() for r, c in enumerate(cont_ids)]
