"""Issue 26 item 2: the text transforms on the reward server's path are linear and give
what the regexes they replace gave. Timings live in bench/adversarial_server.py; here the
new code is checked against the old regex on many small inputs (where the regex is
fast), and the hostile shapes at 1 MB are checked to finish with the right answer."""

import random
import re

from groundrl.integrations.common import (
    DEFAULT_STOP_TOKENS,
    collapse_vision,
    response_text,
    strip_stop_tokens,
)
from groundrl.judges.papers import _strip_answer, parse_yes_no
from groundrl.parse.answers import drop_tag_blocks
from groundrl.verify.verifier import ParsedResponse

VS, VE, IMG, VID = "<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"


def old_collapse(text):
    """The regex implementation this replaced (quadratic on unclosed starts)."""
    span = re.compile(r"<\|vision_start\|>(?:(?!<\|vision_end\|>).)*<\|vision_end\|>", re.S)
    run = re.compile(r"(<\|image_pad\|>|<\|video_pad\|>|<image>)(?:\1)+")

    def one(m):
        return f"{VS}{VID if VID in m.group(0) else IMG}{VE}"

    return run.sub(r"\1", span.sub(one, text))


def old_strip(text, tokens):
    out = text
    while True:
        bare = out.rstrip()
        for tok in tokens:
            if tok and bare.endswith(tok):
                out = bare[: -len(tok)]
                break
        else:
            return out


def old_drop(text, tag):
    return re.sub(rf"(?is)<{tag}>.*?</{tag}>", "", text).strip()


def _random_text(rng, pieces, n):
    return "".join(rng.choice(pieces) for _ in range(n))


SEEDS = range(300)  # one test loops over the seeds (not 300 test items); the message names it


def test_collapse_vision_equals_the_regex():
    for seed in SEEDS:
        rng = random.Random(seed)
        text = _random_text(
            rng, [VS, VE, IMG, VID, "<image>", "a", " ", "<|vision", "_pad|>"], rng.randint(0, 30)
        )
        assert collapse_vision(text) == old_collapse(text), f"seed {seed}: {text!r}"


def test_strip_stop_tokens_equals_the_slicing_loop():
    toks = ("<|im_end|>", "<|endoftext|>", "</s>", "s>", "", "<pad>")
    for seed in SEEDS:
        rng = random.Random(seed)
        text = _random_text(rng, [*toks, " ", "\n", "x", "<", "|im_end|>"], rng.randint(0, 25))
        assert strip_stop_tokens(text, toks) == old_strip(text, toks), f"seed {seed}: {text!r}"
        got = strip_stop_tokens(text)
        assert got == old_strip(text, DEFAULT_STOP_TOKENS), f"seed {seed}: {text!r}"


def test_drop_tag_blocks_equals_the_regex():
    pieces = [
        "<think>",
        "</think>",
        "<THINK>",
        "</Think>",
        "<answer>",
        "</answer>",
        "x",
        " ",
        "yes",
        "\n",
        "<",
    ]
    for seed in SEEDS:
        rng = random.Random(seed)
        text = _random_text(rng, pieces, rng.randint(0, 25))
        for tag in ("think", "answer"):
            got = drop_tag_blocks(text, tag)
            assert got == old_drop(text, tag), f"seed {seed}, <{tag}>: {text!r}"


MB = 1_000_000


def test_hostile_megabytes_finish_with_the_right_answer():
    assert collapse_vision(VS * (MB // len(VS))) == VS * (MB // len(VS))  # no end: unchanged
    q = "prompt" + VS * (MB // len(VS)) + "answer<|im_end|>"
    assert response_text(q, "prompt").endswith("answer")
    assert strip_stop_tokens("answer" + "<|endoftext|>" * (MB // 13)) == "answer"
    assert strip_stop_tokens("answer" + "<|im_end|> \n" * (MB // 12)) == "answer"
    assert parse_yes_no("<think>" * (MB // 7) + "yes") is None  # an unclosed think stays in front
    assert parse_yes_no("<think>" * (MB // 7) + "</think> yes") is True
    assert _strip_answer("<answer>" * (MB // 8)) == "<answer>" * (MB // 8)
    parsed = ParsedResponse.of("<answer>x</answer" * (MB // 17))
    assert parsed.reasoning.startswith("<answer>x</answer")
