"""Bearer token, request validation (422 naming the field, 400, 413) and /metrics."""

import httpx
import pytest

from groundrl.serve.app import create_app
from groundrl.serve.metrics import Metrics

H = {"Authorization": "Bearer s3cret"}
EQA = {"completion": "<critique>c</critique><score>7</score>", "gt_score": 7}


def test_token_guards_every_route_but_health(tools):
    with tools.Running(create_app("eqa_rm", token="s3cret")) as srv:
        body = {"samples": [EQA]}
        assert httpx.get(srv.url + "/health").status_code == 200
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret"}):
            r = httpx.post(srv.url + "/score", json=body, headers=headers)
            assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
        # a non-ASCII header is refused like any wrong token, not a 500
        r = httpx.post(srv.url + "/score", json=body, headers={"Authorization": b"Bearer s3cr\xe9t"})
        assert r.status_code == 401
        assert httpx.get(srv.url + "/metrics").status_code == 401
        assert httpx.post(srv.url + "/get_reward", json={"query": ["x"]}).status_code == 401
        # an unknown route is a 404 with or without the token (issue 17: not a 401)
        assert httpx.get(srv.url + "/nowhere").status_code == 404
        assert httpx.post(srv.url + "/score", json=body, headers=H).status_code == 200
        assert httpx.post(srv.url + "/get_reward", json={"query": ["x"]}, headers=H).status_code == 200
        assert httpx.get(srv.url + "/metrics", headers=H).status_code == 200
        # RFC 7235 §2.1: the scheme is case-insensitive; the token itself is not
        for scheme in ("bearer", "BEARER", "bEaReR"):
            r = httpx.post(srv.url + "/score", json=body, headers={"Authorization": f"{scheme} s3cret"})
            assert r.status_code == 200, scheme
        r = httpx.post(srv.url + "/score", json=body, headers={"Authorization": "Bearer S3CRET"})
        assert r.status_code == 401


@pytest.fixture(scope="module")
def strict_server(tools):
    app = create_app("toy", max_samples=3, recipes={"toy": tools.toy_recipe()})
    with tools.Running(app) as srv:
        yield srv.url


@pytest.mark.parametrize(
    "route, body, status, needle",
    [
        ("/score", b"{", 400, "not JSON"),
        ("/score", b"[" * 100_000, 400, "not JSON"),  # nesting too deep for the parser
        ("/score", b"[1, 2]", 422, "JSON object"),
        ("/score", b'{"recipe": "eqa_rm", "sample": []}', 422, "`sample`"),
        ("/score", b'{"recipe": "nope", "samples": []}', 422, "`recipe` must be one of"),
        ("/score", b'{"recipe": 3, "samples": []}', 422, "`recipe`"),
        ("/score", b'{"recipe": "eqa_rm", "samples": "x"}', 422, "`samples`"),
        ("/score", b'{"recipe": "eqa_rm"}', 422, "`samples`"),
        ("/score", b'{"recipe": "eqa_rm", "samples": [{}, {}, {}, {}]}', 422, "at most 3"),
        ("/get_reward", b'{"query": "x"}', 422, "`query`"),
        ("/get_reward", b'{"query": ["a", 1]}', 422, "`query[1]`"),
        ("/get_reward", b'{"query": ["a", "b"], "prompts": ["a"]}', 422, "`prompts`"),
        ("/get_reward", b'{"query": ["a"], "prompts": [null]}', 422, "`prompts[0]`"),
        ("/get_reward", b'{"query": ["a"], "labels": ["1", "2"]}', 422, "`labels`"),
        ("/get_reward", b'{"query": ["a"], "labels": "1"}', 422, "`labels`"),
        ("/get_reward", b'{"query": ["a", "b", "c", "d"]}', 422, "at most 3"),
    ],
)
def test_malformed_envelopes(strict_server, route, body, status, needle):
    r = httpx.post(strict_server + route, content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == status and needle in r.json()["detail"], r.text


def test_recipe_is_required_without_a_default(tools):
    with tools.Running(create_app()) as srv:
        r = httpx.post(srv.url + "/score", json={"samples": [EQA]})
    assert r.status_code == 422 and "`recipe` is required" in r.json()["detail"]


def test_empty_requests_are_fine(tools):
    with tools.Running(create_app("eqa_rm")) as srv:
        assert httpx.post(srv.url + "/score", json={"samples": []}).json() == {"results": []}
        out = httpx.post(srv.url + "/get_reward", json={"query": [], "prompts": [], "labels": []}).json()
    assert out == {"rewards": [], "scores": [], "extra_logs": {"accuracy": [], "format": []}, "errors": []}


def test_body_limit_by_content_length_and_while_streaming(tools):
    small = b'{"recipe": "eqa_rm", "samples": []}'

    def chunks(total):
        yield b'{"recipe": "eqa_rm", "samples": [], "pad": "'
        for _ in range(total // 1000):
            yield b"x" * 1000
        yield b'"}'

    with tools.Running(create_app(max_body_bytes=2000)) as srv:
        r = httpx.post(srv.url + "/score", content=b" " * 3000 + small)
        assert r.status_code == 413 and "2000 bytes" in r.json()["detail"]
        # chunked (no Content-Length): cut off once 2000 bytes have arrived
        r = httpx.post(srv.url + "/score", content=chunks(50_000))
        assert r.status_code == 413
        # a chunked body under the limit is read whole (here: its unknown field is the 422)
        r = httpx.post(srv.url + "/score", content=chunks(1000))
        assert r.status_code == 422 and "`pad`" in r.json()["detail"]
        assert httpx.post(srv.url + "/score", content=b" " * 1900 + small).status_code == 200


def test_metrics_after_known_requests(tools):
    with tools.Running(create_app("eqa_rm", token="s3cret")) as srv:
        httpx.post(srv.url + "/score", json={"samples": [EQA]})
        httpx.post(srv.url + "/score", json={"samples": [EQA]})
        httpx.post(srv.url + "/score", json={"samples": [EQA, {"completion": "x"}]}, headers=H)
        httpx.post(srv.url + "/score", json={"samples": 1}, headers=H)
        httpx.get(srv.url + "/a/b/c", headers=H)
        text = httpx.get(srv.url + "/metrics", headers=H).text
    values = _parse(text)
    expected = {
        'groundrl_requests_total{route="/score",status="200"}': 1,
        'groundrl_requests_total{route="/score",status="401"}': 2,
        'groundrl_requests_total{route="/score",status="422"}': 1,
        'groundrl_requests_total{route="other",status="404"}': 1,  # unknown paths share one label
        'groundrl_errors_total{route="/score",kind="client"}': 3,
        'groundrl_errors_total{route="other",kind="client"}': 1,
        'groundrl_request_duration_seconds_count{route="/score"}': 4,
        'groundrl_request_duration_seconds_bucket{route="/score",le="+Inf"}': 4,
        'groundrl_sample_errors_total{recipe="eqa_rm"}': 1,
        "groundrl_queue_depth": 0,
        "groundrl_queue_limit": 4096,
        "groundrl_queue_high_water": 2,
        'groundrl_batches_total{batcher="score:eqa_rm"}': 1,
        'groundrl_batch_samples_total{batcher="score:eqa_rm"}': 2,
    }
    assert {k: values.get(k) for k in expected} == expected
    assert not any("/a/b/c" in k for k in values)


def test_metrics_text_hand_worked():
    m = Metrics(["/score"], buckets=(0.01, 0.1))
    m.observe("/score", 200, 0.005)
    m.observe("/score", 200, 0.05)
    m.observe("/score", 503, 0.5)
    m.observe("/x", 500, 0.01)  # exactly on a bucket edge counts in it (le = less or equal)
    m.add_sample_errors("toy", 2)
    text = m.render(queue_depth=3, queue_limit=10, high_water=7, batches={"score:toy": (2, 5)})
    v = _parse(text)
    assert v['groundrl_request_duration_seconds_bucket{route="/score",le="0.01"}'] == 1
    assert v['groundrl_request_duration_seconds_bucket{route="/score",le="0.1"}'] == 2
    assert v['groundrl_request_duration_seconds_bucket{route="/score",le="+Inf"}'] == 3
    assert v['groundrl_request_duration_seconds_sum{route="/score"}'] == pytest.approx(0.555)
    assert v['groundrl_request_duration_seconds_bucket{route="other",le="0.01"}'] == 1
    assert v['groundrl_errors_total{route="/score",kind="overloaded"}'] == 1
    assert v['groundrl_errors_total{route="other",kind="server"}'] == 1
    assert v['groundrl_sample_errors_total{recipe="toy"}'] == 2
    assert (v["groundrl_queue_depth"], v["groundrl_queue_limit"], v["groundrl_queue_high_water"]) == (
        3,
        10,
        7,
    )
    assert v['groundrl_batches_total{batcher="score:toy"}'] == 2
    assert v['groundrl_batch_samples_total{batcher="score:toy"}'] == 5
    # every family is declared once, before its samples
    types = [line.split()[2] for line in text.splitlines() if line.startswith("# TYPE")]
    assert len(types) == len(set(types)) == 12


def _parse(text):
    """Prometheus text → {series: value}; fails on a line that is not `series value`."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        series, value = line.rsplit(" ", 1)
        out[series] = float(value)
    return out


def test_token_in_the_url_for_clients_without_headers(tools):
    """OpenRLHF posts to --reward.remote_url without an Authorization header: the token
    may ride in the URL's query (percent-encoded), compared in constant time."""
    token = "s3 cr&t"
    with tools.Running(create_app("eqa_rm", token=token)) as srv:
        body = {"query": ["<critique>c</critique><score>7</score>"], "labels": ["5"]}
        ok = httpx.post(srv.url + "/get_reward?token=s3%20cr%26t", json=body)
        assert ok.status_code == 200 and ok.json()["rewards"] == [0.96 + 1.0]
        for q in ("?token=s3", "?token=", "?tok=s3%20cr%26t", "?x=1&token=wrong"):
            assert httpx.post(srv.url + "/get_reward" + q, json=body).status_code == 401
