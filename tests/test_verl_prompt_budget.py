"""One EQA-RM prompt (5 keyframes [EQA-RM §5.1]) fits the prompt budget that
examples/verl/eqa_rm.sh sets, counted the way verl counts it: the exported prompt's
``<image>`` placeholders become image parts, the processor's chat template and the
processor itself run with the script's data.mm_processor_kwargs (the tiny Qwen2.5-VL
processor: same patch 14 / merge 2 geometry as Qwen2-VL), and the script switches on
verl's overlong-prompt filter so a longer row is dropped at load, not at the rollout."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from groundrl.integrations.verl import IMAGE, verl_prompt

ROOT = Path(__file__).resolve().parents[1]
# An EQA-RM-sized text part: the question, the agent's answer and a seven-step reasoning
# trace, about the length of the paper's case study [EQA-RM App. C Table 6].
STEP = "I scan the next frames for the black backpack near the chair and the bed. "
TEXT = "Question: Where is the black backpack? Answer: on the floor next to the chair. " + STEP * 40


def _overrides(script: str, **env: str) -> dict[str, str]:
    path = f"{Path(sys.executable).parent}:{os.environ['PATH']}"
    r = subprocess.run(
        ["bash", str(ROOT / "examples" / "verl" / script)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **env, "GROUNDRL_DRY_RUN": "1", "PATH": path},
    )
    return dict(line.lstrip("+").split("=", 1) for line in r.stdout.splitlines())


def _mm_kwargs(overrides: dict[str, str]) -> dict:
    """The script's data.mm_processor_kwargs, as verl passes them to the processor."""
    prefix = "data.mm_processor_kwargs."
    return {k[len(prefix) :]: int(v) for k, v in overrides.items() if k.startswith(prefix)}


def _prompt_tokens(processor, frames, mm_kwargs):
    """verl's count: _build_messages' image parts, the chat template, the processor."""
    (message,) = verl_prompt(TEXT, len(frames))
    parts = [{"type": "image"}] * message["content"].count(IMAGE)
    content = [*parts, {"type": "text", "text": message["content"].replace(IMAGE, "")}]
    text = processor.apply_chat_template(
        [{"role": "user", "content": content}], add_generation_prompt=True, tokenize=False
    )
    out = processor(text=[text], images=frames, return_tensors="pt", **mm_kwargs)
    ids = out["input_ids"][0].tolist()
    pad = processor.tokenizer.convert_tokens_to_ids("<|image_pad|>")
    return len(ids), ids.count(pad)


@pytest.fixture(scope="module")
def processor():
    pytest.importorskip("transformers")
    from groundrl.models.tiny_vlm import build_processor

    return build_processor(seed=0)


def test_eqa_rm_script_sets_the_papers_caps_and_the_overlong_filter():
    o = _overrides("eqa_rm.sh")
    assert o["data.filter_overlong_prompts"] == "True"
    # [EQA-RM App. B Table 5]: max pixels 401,408; max prompt 8142; completion 768
    assert _mm_kwargs(o) == {"max_pixels": 401408, "min_pixels": 3136}
    assert o["data.max_prompt_length"] == "8142" and o["data.max_response_length"] == "768"
    assert _overrides("eqa_rm.sh", MAX_PROMPT="4096")["data.max_prompt_length"] == "4096"
    argos = _overrides("argos.sh")
    assert argos["data.filter_overlong_prompts"] == "True" and "max_pixels" in _mm_kwargs(argos)


def test_one_eqa_rm_prompt_fits_the_scripts_budget(processor):
    from PIL import Image

    o = _overrides("eqa_rm.sh")
    frames = [Image.new("RGB", (640, 480), (40 * i, 90, 30)) for i in range(5)]
    total, image_tokens = _prompt_tokens(processor, frames, _mm_kwargs(o))
    # by hand: 640x480 rounds to 644x476 (multiples of 28), under the cap: 23x17 tokens
    assert image_tokens == 5 * 23 * 17 == 1955
    assert total <= int(o["data.max_prompt_length"])
    assert total > 2048, "this prompt would not fit verl's default budget (the issue's case)"


def test_the_scripts_pixel_cap_bounds_each_frame(processor):
    from PIL import Image

    o = _overrides("eqa_rm.sh")
    kwargs = _mm_kwargs(o)
    cap = kwargs["max_pixels"]
    frames = [Image.new("RGB", (1280, 960), (200, 90, 30))] * 5
    _, capped = _prompt_tokens(processor, frames, kwargs)
    _, uncapped = _prompt_tokens(processor, frames, {**kwargs, "max_pixels": 4 * cap})
    # one image token per 28x28 px: at most cap / 784 = 512 per frame
    assert capped <= 5 * cap // 784 < uncapped
