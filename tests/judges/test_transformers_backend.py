import math

import pytest

pytest.importorskip("transformers")

from PIL import Image  # noqa: E402

from groundrl.judges import SamplingParams, make_backend  # noqa: E402


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
