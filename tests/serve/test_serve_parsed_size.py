"""Issue 26 item 3: admission bounds the parsed size of a body (JSON values), not only
its bytes: 15 MiB of ``{},`` took the server from 186 MiB to 1.7 GiB RSS. A body with
more values than ``max_body_elements`` is a 413 before it is parsed; commas and brackets
inside strings do not count; nesting past Python's limit is a 400."""

import httpx
import pytest

from groundrl.serve.app import create_app, json_elements


@pytest.mark.parametrize(
    "raw, n",
    [
        # values (containers and scalars) plus one per empty container, worked by hand
        (b"{}", 1 + 1),
        (b'{"a": 1}', 2),
        (b"[1, 2, 3]", 4),
        (b'["a,b", "[{", "\\\\", "\\"],"]', 5),  # the list and four strings
        (b"[{},{},{}]", 4 + 3),
    ],
)
def test_json_elements_counts_outside_strings(raw, n):
    assert json_elements(raw) == n


def test_a_body_of_many_tiny_values_is_refused_before_parsing(tools):
    app = create_app("toy", recipes={"toy": tools.toy_recipe()}, max_body_elements=1000)
    with tools.Running(app) as srv:
        bomb = b'{"samples": [' + b",".join([b"{}"] * 2000) + b"]}"
        r = httpx.post(srv.url + "/score", content=bomb)
        assert r.status_code == 413 and "JSON values" in r.json()["detail"]
        r = httpx.post(srv.url + "/get_reward", content=b'{"query": [' + b",".join([b'""'] * 2000) + b"]}")
        assert r.status_code == 413
        # long text full of commas and brackets inside strings is fine
        text = "a, [b], {c}, " * 1000
        r = httpx.post(srv.url + "/score", json={"samples": [{"completion": text, "gold": text}]})
        assert r.status_code == 200 and r.json()["results"][0]["reward"] >= 1
        # nesting past Python's recursion limit is a 400, not a 500
        deep = b'{"samples": [' + b"[" * 100_000 + b"]" * 100_000 + b"]}"
        assert httpx.post(srv.url + "/score", content=deep).status_code in (400, 413)


def test_max_body_elements_is_checked():
    with pytest.raises(ValueError, match="max_body_elements"):
        create_app("eqa_rm", max_body_elements=0)
