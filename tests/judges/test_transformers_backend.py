import math

import pytest

pytest.importorskip("transformers")

from PIL import Image  # noqa: E402

from groundrl.judges import SamplingParams  # noqa: E402
from groundrl.testing.judge_backend import make_backend  # noqa: E402


@pytest.fixture(scope="module")
def backend(tiny_vlm_dir):
    return make_backend("transformers", str(tiny_vlm_dir), batch_size=4)


IMG = Image.new("RGB", (64, 48), (200, 10, 10))
REQS = [
    [{"role": "user", "content": [{"type": "image", "image": IMG}, {"type": "text", "text": "what colour"}]}],
    [{"role": "user", "content": "a much longer question about the kitchen and the fridge and the sink"}],
    [{"role": "user", "content": "short"}],
]


def test_batched_generation_shapes_and_seed(backend):
    p = SamplingParams(max_tokens=4, n=2, temperature=1.0, seed=3)
    a = backend.generate(REQS, p)
    b = backend.generate(REQS, p)
    assert [len(g.texts) for g in a] == [2, 2, 2] and all(g.ok for g in a)
    assert [g.texts for g in a] == [g.texts for g in b]


def test_greedy_batch_equals_one_at_a_time(backend):
    p = SamplingParams(max_tokens=4)
    batched = [g.texts for g in backend.generate(REQS, p)]
    single = [backend.generate([r], p)[0].texts for r in REQS]
    assert batched == single


def test_logprob_padding_invariant(backend):
    conts = [" red", " the fridge is open", " yes"]
    batched = backend.logprob(REQS, conts)
    for req, cont, lp in zip(REQS, conts, batched, strict=True):
        alone = backend.logprob([req], [cont])[0]
        assert lp.ok and len(lp.token_logprobs) == len(alone.token_logprobs) > 0
        assert all(abs(x - y) < 1e-4 for x, y in zip(lp.token_logprobs, alone.token_logprobs, strict=True))
        assert all(x <= 0 for x in lp.token_logprobs)
        assert 0 < lp.mean_token_prob <= 1
    assert math.isclose(
        batched[1].mean_token_prob,
        sum(math.exp(x) for x in batched[1].token_logprobs) / len(batched[1].token_logprobs),
    )


def test_bad_input_becomes_error_not_exception(backend):
    bad = [[{"role": "user", "content": [{"type": "image", "image": "/no/such/file.png"}]}]]
    g = backend.generate(bad)
    assert g[0].error and not g[0].texts
    assert backend.logprob(bad, ["x"])[0].error


def test_missing_path_is_a_config_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a local path"):
        make_backend("transformers", str(tmp_path / "nope"))


def test_greedy_n_samples_are_the_one_greedy_decode(backend):
    one = backend.generate(REQS[:2], SamplingParams(max_tokens=4))
    many = backend.generate(REQS[:2], SamplingParams(max_tokens=4, n=3))
    assert [g.texts for g in many] == [g.texts * 3 for g in one]


def test_a_bad_request_does_not_fail_its_batch(backend):
    before = backend.stats.as_dict()
    bad_image = [{"role": "user", "content": [{"type": "image", "image": "/no/such/file.png"}]}]
    junk = ["not a request", [None], [{"role": "user", "content": 5}], bad_image]
    out = backend.generate([REQS[2], *junk, REQS[1]], SamplingParams(max_tokens=3))
    assert [g.ok for g in out] == [True, False, False, False, False, True]
    assert "list of chat messages" in out[1].error and "is a dict" in out[2].error
    assert "string or a list of parts" in out[3].error and "/no/such/file.png" in out[4].error
    # the good requests decode exactly as they do on their own
    assert out[0].texts == backend.generate([REQS[2]], SamplingParams(max_tokens=3))[0].texts
    lps = backend.logprob([REQS[2], *junk, REQS[0]], [" yes", "x", "x", "x", "x", 7])
    assert [r.ok for r in lps] == [True, False, False, False, False, False]
    assert "continuation must be a string" in lps[5].error
    after = backend.stats.as_dict()
    assert after["requests"] - before["requests"] == 6 + 1 + 6
    assert after["failures"] - before["failures"] == 4 + 5


def test_logprob_equals_an_unpadded_forward_pass(backend):
    """Expected values from a separate, hand-built forward pass: the prompt's ids from the
    processor, the continuation's ids from the tokenizer alone, one sequence, no padding."""
    import torch

    proc, tok, net = backend.processor, backend.tokenizer, backend.net
    conts = ["\n\nred", " the fridge is open"]  # a leading newline would merge with the prompt's
    got = backend.logprob([REQS[0], REQS[1]], conts)
    for req, cont, res in zip([REQS[0], REQS[1]], conts, got, strict=True):
        msgs = [{"role": "user", "content": req[0]["content"]}]
        if isinstance(msgs[0]["content"], list):
            msgs[0]["content"] = [{"type": "image"}, msgs[0]["content"][1]]
            enc = proc(
                text=[proc.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False)],
                images=[IMG],
                return_tensors="pt",
            )
        else:
            enc = tok(
                [tok.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False)],
                return_tensors="pt",
                add_special_tokens=False,
            )
        cont_ids = tok(cont, add_special_tokens=False)["input_ids"]
        ids = torch.cat([enc["input_ids"], torch.tensor([cont_ids])], dim=1)
        feed = dict(enc, input_ids=ids, attention_mask=torch.ones_like(ids))
        if "mm_token_type_ids" in enc:
            feed["mm_token_type_ids"] = torch.cat(
                [enc["mm_token_type_ids"], torch.zeros((1, len(cont_ids)), dtype=torch.long)], dim=1
            )
        with torch.no_grad():
            logp = torch.log_softmax(net(**feed).logits[0].float(), dim=-1)
        p = enc["input_ids"].shape[1]
        expected = [float(logp[p - 1 + j, t]) for j, t in enumerate(cont_ids)]
        assert res.token_logprobs == pytest.approx(expected, abs=1e-4)
    assert backend.logprob([REQS[2]], [""])[0].token_logprobs == []


def test_seed_leaves_the_callers_random_state_alone(backend):
    import torch

    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    backend.generate(REQS[:1], SamplingParams(max_tokens=2, temperature=1.0, seed=5))
    assert torch.equal(torch.rand(3), expected)


def test_sampling_ignores_the_checkpoints_generation_defaults(backend):
    # A checkpoint that ships top_k=1 would make every sample the greedy one; the
    # backend samples by SamplingParams alone, so 6 samples of 6 tokens differ.
    cfg = backend.net.generation_config
    cfg.top_k, cfg.repetition_penalty = 1, 1.5
    try:
        g = backend.generate(REQS[2:], SamplingParams(max_tokens=6, n=6, temperature=1.0, seed=0))[0]
    finally:
        cfg.top_k, cfg.repetition_penalty = None, None
    assert len(set(g.texts)) > 1


def test_cache_answers_repeats_without_the_model(tiny_vlm_dir, tmp_path):
    be = make_backend("transformers", str(tiny_vlm_dir), batch_size=4, cache=str(tmp_path / "c.sqlite"))
    p = SamplingParams(max_tokens=3, n=2, temperature=1.0, seed=1)
    first = [g.texts for g in be.generate(REQS, p)]

    def broken(*a, **k):
        raise AssertionError("the model must not run on a cache hit")

    be.net.generate = broken
    assert [g.texts for g in be.generate(REQS, p)] == first
    assert be.stats.cache_hits == 3
    # a different seed is a miss: the (broken) model is asked and the failure is per request
    assert all(
        not g.ok for g in be.generate(REQS, SamplingParams(max_tokens=3, n=2, temperature=1.0, seed=2))
    )


def test_text_only_causal_lm(backend, make_tiny_lm):
    from groundrl.judges.transformers_backend import TransformersBackend

    tok = backend.tokenizer
    net = make_tiny_lm(tok)
    be = TransformersBackend(net, processor=tok, batch_size=2)
    out = be.generate(REQS, SamplingParams(max_tokens=3))
    assert not out[0].ok and "text-only" in out[0].error  # the request with an image
    assert out[1].ok and out[2].ok
    lps = be.logprob(REQS[1:], [" yes", " no no"])
    assert [len(r.token_logprobs) for r in lps] == [
        len(tok(" yes", add_special_tokens=False)["input_ids"]),
        len(tok(" no no", add_special_tokens=False)["input_ids"]),
    ]
