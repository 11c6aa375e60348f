"""A judge running a local transformers checkpoint (``AutoModelForImageTextToText`` for
VLMs, ``AutoModelForCausalLM`` for text models), loaded from a path — no hub.

Generation is batched with left padding (``batch_size`` requests per forward pass, ``n``
samples each via ``num_return_sequences``); images go through the model's processor.
Log-probabilities come from one forward pass over prompt + continuation: the
continuation's tokens are those after the tokenised prompt (chat template with the
generation prompt), and each gets ``log softmax(logits)[token]`` from the position
before it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from groundrl.judges.base import Generation, JudgeBackend, LogProbResult, Request, SamplingParams
from groundrl.judges.images import map_content, to_pil


class TransformersBackend(JudgeBackend):
    def __init__(
        self, model: str | Path | Any, processor: Any = None, batch_size: int = 8, device: str | None = None
    ) -> None:
        super().__init__()
        import torch

        if batch_size < 1:
            raise ValueError(f"batch_size must be ≥ 1, got {batch_size}")
        self.batch_size = batch_size
        if isinstance(model, (str, Path)):
            path = Path(model)
            if not path.exists():
                raise FileNotFoundError(f"--judge-model {model} is not a local path (no hub downloads here)")
            model, processor = _load(path)
            self.model = str(path)
        else:
            self.model = getattr(getattr(model, "config", None), "_name_or_path", type(model).__name__)
            if processor is None:
                raise ValueError("pass the processor (or tokenizer) together with an in-memory model")
        self.net = model.eval()
        if device:
            self.net.to(device)
        self.processor = processor
        self.tokenizer = getattr(processor, "tokenizer", processor)
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self._torch = torch
        self._is_vlm = hasattr(processor, "image_processor")

    # -- inputs --------------------------------------------------------------

    def _prepare(self, request: Request) -> tuple[list[dict[str, Any]], list[Any]]:
        images: list[Any] = []

        def image_part(img: Any) -> dict[str, Any]:
            images.append(to_pil(img))
            return {"type": "image"}

        msgs = map_content(request, image_part)
        if not self._is_vlm:  # a text-only model gets plain strings
            for m in msgs:
                if isinstance(m["content"], list):
                    m["content"] = "".join(p.get("text", "") for p in m["content"])
        return msgs, images

    def _prompt(self, msgs: list[dict[str, Any]]) -> str:
        template_owner = self.processor if hasattr(self.processor, "apply_chat_template") else self.tokenizer
        if getattr(template_owner, "chat_template", None) or getattr(self.tokenizer, "chat_template", None):
            return template_owner.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False)
        return "\n".join(m["content"] if isinstance(m["content"], str) else "" for m in msgs) + "\n"

    def _encode(self, texts: list[str], images: list[list[Any]]) -> Any:
        flat = [img for imgs in images for img in imgs]
        if self._is_vlm and flat:
            return self.processor(text=texts, images=flat, return_tensors="pt", padding=True)
        return self.tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)

    # -- generation ----------------------------------------------------------

    def generate(self, requests: Sequence[Request], params: SamplingParams | None = None) -> list[Generation]:
        params = params or SamplingParams()
        out: list[Generation] = []
        for start in range(0, len(requests), self.batch_size):
            chunk = requests[start : start + self.batch_size]
            self.stats.requests += len(chunk)
            try:
                out.extend(self._generate_batch(chunk, params))
            except Exception as e:  # one bad batch must not end a training step
                self.stats.failures += len(chunk)
                out.extend(Generation(error=f"{type(e).__name__}: {e}") for _ in chunk)
        return out

    def _generate_batch(self, requests: Sequence[Request], params: SamplingParams) -> list[Generation]:
        torch = self._torch
        prepared = [self._prepare(r) for r in requests]
        texts = [self._prompt(m) for m, _ in prepared]
        enc = self._encode(texts, [imgs for _, imgs in prepared]).to(self.net.device)
        sample = params.temperature > 0
        kwargs: dict[str, Any] = dict(
            max_new_tokens=params.max_tokens,
            do_sample=sample,
            num_return_sequences=params.n,
            pad_token_id=self.tokenizer.pad_token_id,
        )
        if sample:
            kwargs.update(temperature=params.temperature, top_p=params.top_p)
        if params.seed is not None:
            torch.manual_seed(params.seed)
        with torch.inference_mode():
            ids = self.net.generate(**enc, **kwargs)
        new = ids[:, enc["input_ids"].shape[1] :]
        decoded = self.tokenizer.batch_decode(new, skip_special_tokens=True)
        return [Generation(texts=decoded[i * params.n : (i + 1) * params.n]) for i in range(len(requests))]

    # -- log-probabilities ---------------------------------------------------

    def logprob(self, requests: Sequence[Request], continuations: Sequence[str]) -> list[LogProbResult]:
        if len(requests) != len(continuations):
            raise ValueError(f"{len(requests)} requests but {len(continuations)} continuations")
        out: list[LogProbResult] = []
        for start in range(0, len(requests), self.batch_size):
            reqs = requests[start : start + self.batch_size]
            conts = continuations[start : start + self.batch_size]
            self.stats.requests += len(reqs)
            try:
                out.extend(self._logprob_batch(reqs, conts))
            except Exception as e:
                self.stats.failures += len(reqs)
                out.extend(LogProbResult(None, f"{type(e).__name__}: {e}") for _ in reqs)
        return out

    def _logprob_batch(
        self, requests: Sequence[Request], continuations: Sequence[str]
    ) -> list[LogProbResult]:
        torch = self._torch
        prepared = [self._prepare(r) for r in requests]
        prompts = [self._prompt(m) for m, _ in prepared]
        images = [imgs for _, imgs in prepared]
        # prompt lengths, each on its own (no padding), with the same images
        n_prompt = [
            int(self._encode([p], [imgs])["input_ids"].shape[1])
            for p, imgs in zip(prompts, images, strict=True)
        ]
        enc = self._encode([p + c for p, c in zip(prompts, continuations, strict=True)], images).to(
            self.net.device
        )
        with torch.inference_mode():
            logits = self.net(**enc).logits.float()
        logp = torch.log_softmax(logits[:, :-1], dim=-1)
        targets = enc["input_ids"][:, 1:]
        tok_lp = logp.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
        lengths = enc["attention_mask"].sum(dim=1).tolist()
        width = enc["input_ids"].shape[1]
        results = []
        for i, (length, np_) in enumerate(zip(lengths, n_prompt, strict=True)):
            pad = width - int(length)  # left padding
            first = pad + np_  # index of the first continuation token in input_ids
            k = width - first
            if k <= 0:
                results.append(LogProbResult([], None))
                continue
            results.append(LogProbResult(tok_lp[i, first - 1 :].tolist()))
        return results


def _load(path: Path) -> tuple[Any, Any]:
    from transformers import (
        AutoConfig,
        AutoModelForCausalLM,
        AutoModelForImageTextToText,
        AutoProcessor,
        AutoTokenizer,
    )

    from groundrl.testing.tiny_vlm import ensure_processor_registered

    ensure_processor_registered()
    config = AutoConfig.from_pretrained(path)
    if getattr(config, "vision_config", None) is not None:
        return AutoModelForImageTextToText.from_pretrained(path), AutoProcessor.from_pretrained(path)
    return AutoModelForCausalLM.from_pretrained(path), AutoTokenizer.from_pretrained(path)
