import asyncio

import pytest

from groundrl.judges import SamplingParams
from groundrl.judges.cache import ResponseCache
from groundrl.testing.judge_backend import make_backend

REQ = [{"role": "user", "content": "score this"}]


def backend(srv, **kw):
    kw.setdefault("backoff", 0.01)
    return make_backend("openai", "judge", srv.base_url, **kw)


def test_generate_n_samples_and_image_as_data_url(chat_server):
    from PIL import Image

    chat_server.responder = lambda msgs, body: f"sample {body['sample_index']}"
    be = backend(chat_server)
    req = [
        {
            "role": "user",
            "content": [{"type": "image", "image": Image.new("RGB", (4, 4))}, {"type": "text", "text": "hi"}],
        }
    ]
    g = be.generate([req], SamplingParams(n=3, seed=7, temperature=0.8))[0]
    assert g.texts == ["sample 0", "sample 1", "sample 2"]
    body = chat_server.requests[-1]
    assert body["n"] == 3 and body["seed"] == 7 and body["temperature"] == 0.8
    assert body["messages"][0]["content"][0]["image_url"]["url"].startswith("data:image/png;base64,")
    be.close()


def test_retries_on_5xx_and_429_not_on_400(chat_server):
    be = backend(chat_server, max_retries=3)
    chat_server.fail_next = [500, 503, 429]
    assert be.generate([REQ])[0].ok
    assert be.stats.retries == 3 and len(chat_server.requests) == 4
    assert be.stats.requests == 1 and be.stats.failures == 0  # requests, not HTTP attempts
    chat_server.fail_next = [400]
    g = be.generate([REQ])[0]
    assert not g.ok and "HTTP 400" in g.error
    assert be.stats.retries == 3  # no retry on 400
    chat_server.fail_next = [500] * 10
    g = be.generate([REQ])[0]
    assert "HTTP 500" in g.error and be.stats.failures == 2
    be.close()


def test_malformed_json_and_wrong_content_never_raise(chat_server):
    be = backend(chat_server, max_retries=1)
    chat_server.malformed_next = 2
    g = be.generate([REQ])[0]
    assert not g.ok and "malformed JSON" in g.error
    chat_server.responder = lambda m, b: 42  # content that is not a string
    g = be.generate([REQ])[0]
    assert not g.ok
    be.close()


def test_timeout_then_defined_failure(chat_server):
    chat_server.delay = 0.5
    be = backend(chat_server, timeout=0.1, max_retries=1)
    g = be.generate([REQ])[0]
    # two attempts that each gave up at the client's 0.1 s (a timeout error, not the server's reply)
    assert not g.ok and "Timeout" in g.error
    assert be.stats.retries == 1 and len(chat_server.requests) == 2
    be.close()


def test_concurrency_bound(chat_server):
    chat_server.delay = 0.05
    be = backend(chat_server, concurrency=4)
    out = be.generate([REQ] * 12)
    assert all(g.ok for g in out)
    assert chat_server.max_in_flight == 4
    be.close()


def test_agenerate_from_a_running_loop(chat_server):
    be = backend(chat_server)

    async def main():
        return await be.agenerate([REQ, REQ])

    assert all(g.ok for g in asyncio.run(main()))
    be.close()


def test_cache_skips_repeat_requests(chat_server, tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    be = backend(chat_server, cache=cache)
    p = SamplingParams(n=2)
    first = be.generate([REQ], p)[0].texts
    n = len(chat_server.requests)
    assert be.generate([REQ], p)[0].texts == first
    assert len(chat_server.requests) == n and be.stats.cache_hits == 1 and len(cache) == 2
    be.generate([REQ], SamplingParams(n=2, temperature=0.5))  # other params: a miss
    assert len(chat_server.requests) == n + 1
    be.close()


def test_logprob_via_prompt_logprobs(chat_server):
    be = backend(chat_server)
    lp = be.logprob([REQ], ["the answer"])[0]
    # the test server gives word w log-prob -0.1·(1 + len(w) % 5)
    assert lp.token_logprobs == pytest.approx([-0.4, -0.2])
    chat_server.support_logprobs = False
    lp = be.logprob([REQ], ["the answer"])[0]
    assert not lp.ok and "prompt_logprobs" in lp.error
    be.close()


@pytest.mark.parametrize(
    "kind, model, url, message",
    [
        ("vllm", "m", None, "unknown judge backend"),
        ("openai", "m", None, "--judge-url is required"),
        ("openai", None, "http://127.0.0.1:1/v1", "--judge-model"),
        ("openai", "m", "ftp://x", "http"),
        ("openai", "m", "http://127.0.0.1:1/v1", "unknown option.*batch_size"),
    ],
)
def test_config_errors(kind, model, url, message):
    with pytest.raises(ValueError, match=message):
        make_backend(kind, model, url, **({"batch_size": 4} if "option" in message else {}))


def test_connection_errors_are_retried_then_reported():
    import socket

    with socket.socket() as s:  # a port that nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    be = make_backend("openai", "judge", f"http://127.0.0.1:{port}/v1", max_retries=2, backoff=0.01)
    out = be.generate([REQ, REQ])
    assert all(not g.ok and "Connect" in g.error for g in out)
    assert be.stats.retries == 4 and be.stats.failures == 2
    assert not be.logprob([REQ], [" a"])[0].ok
    be.close()


def test_requests_that_cannot_be_sent_never_raise(chat_server):
    be = backend(chat_server)
    bad = [
        "not a request",
        [None],
        [{"role": "user", "content": 5}],
        [{"role": "user", "content": [{"type": "image", "image": "/no/such/file.png"}]}],
    ]
    out = be.generate([REQ, *bad])
    assert [g.ok for g in out] == [True, False, False, False, False]
    assert len(chat_server.requests) == 1  # nothing malformed went on the wire
    lps = be.logprob([*bad, REQ], ["a", "a", "a", "a", None])
    assert not any(r.ok for r in lps) and "continuation must be a string" in lps[-1].error
    assert be.stats.failures == 4 + 5
    be.close()


def test_extra_body_is_merged_into_every_request(chat_server):
    be = backend(chat_server, extra_body={"top_k": -1, "repetition_penalty": 1.0, "temperature": 9})
    be.generate([REQ], SamplingParams(temperature=0.3))
    body = chat_server.requests[-1]
    assert body["top_k"] == -1 and body["repetition_penalty"] == 1.0
    assert body["temperature"] == 0.3  # SamplingParams win over extra_body
    be.close()


def test_logprob_continuation_starts_where_the_token_ids_diverge(chat_server):
    """A token merged across the junction (prompt ids [5, 6, 7] vs [5, 6, 9, 4]) is scored
    with the continuation: the last two positions, not len(full) - len(base) = 1."""
    be = backend(chat_server)

    async def fake(messages, continue_final):
        if continue_final:
            return [None, -0.1, -0.2, -0.3], [5, 6, 9, 4]
        return [None, -0.1, -0.5], [5, 6, 7]

    be._prompt_logprobs = fake
    assert be.logprob([REQ], ["x"])[0].token_logprobs == [-0.2, -0.3]
    be.close()


def test_an_answer_over_the_cap_is_a_counted_failure_never_read_whole(chat_server):
    """Issue 26 item 3: the answer is read up to answer_cap(max_tokens, n) bytes."""
    from groundrl.judges.openai_backend import answer_cap

    cap = answer_cap(16)
    chat_server.responder = lambda m, b: "<score>7</score>" + "x" * (cap + 10)
    be = backend(chat_server, max_retries=2)
    g = be.generate([REQ], SamplingParams(max_tokens=16))[0]
    assert not g.ok and f"over {cap} bytes" in g.error
    assert be.stats.failures == 1 and be.stats.retries == 0  # not retried: it will not shrink
    # the same answer is fine when max_tokens allows it
    g = be.generate([REQ], SamplingParams(max_tokens=2 * cap // 64))[0]
    assert g.ok and g.text.startswith("<score>7</score>")
    be.close()
