"""The server's limits are one checked Limits object: each bad setting is refused when
made with a message naming it, max_samples is capped by max_queue, and an app made
from a Limits serves with them through a real server on 127.0.0.1."""

import httpx
import pytest

from groundrl.serve.app import Limits, create_app, create_app_from_limits


@pytest.mark.parametrize(
    ("setting", "needle"),
    [
        ({"max_batch": 0}, "max_batch must be an int ≥ 1, got 0"),
        ({"max_queue": True}, "max_queue must be an int ≥ 1, got True"),
        ({"retry_after_s": -1}, "retry_after_s must be an int ≥ 0, got -1"),
        ({"max_wait_ms": float("nan")}, "max_wait_ms must be a finite number ≥ 0"),
        (
            {"max_buffered_bytes": 10, "max_body_bytes": 100},
            "max_buffered_bytes must be an int ≥ max_body_bytes (100)",
        ),
        ({"body_timeout_s": 0}, "body_timeout_s must be a finite number of seconds > 0, got 0"),
        ({"body_timeout_s": float("inf")}, "body_timeout_s must be a finite number of seconds > 0"),
        ({"max_body_elements": 0}, "max_body_elements must be an int ≥ 1"),
        ({"part_timeout_s": 0}, "part_timeout_s must be a number of seconds > 0 or None, got 0"),
        ({"min_body_rate": -1}, "min_body_rate must be a finite number of bytes/s ≥ 0, got -1"),
    ],
)
def test_a_bad_limit_is_refused_naming_it(setting, needle):
    with pytest.raises(ValueError) as e:
        Limits(**setting)
    assert needle in str(e.value)
    with pytest.raises(ValueError) as e:  # create_app's keywords are the same fields
        create_app(**setting)
    assert needle in str(e.value)


def test_limits_defaults_and_the_max_samples_cap():
    assert Limits().max_samples == 4096 and Limits(part_timeout_s=None).part_timeout_s is None
    assert Limits(max_queue=10, max_samples=100).max_samples == 10  # every valid request admissible
    with pytest.raises(ValueError, match="token must be a non-empty string"):
        create_app_from_limits(None, "  ", Limits())


def test_create_app_from_limits_serves_with_them(tools):
    app = create_app_from_limits("toy", None, Limits(max_samples=2), recipes={"toy": tools.toy_recipe()})
    with tools.Running(app) as srv:
        two = httpx.post(f"{srv.url}/score", json={"samples": [{"completion": "a"}, {"completion": "b"}]})
        three = httpx.post(f"{srv.url}/score", json={"samples": [{"completion": "a"}] * 3})
    assert two.status_code == 200 and len(two.json()["results"]) == 2
    assert three.status_code == 422 and "at most 2" in three.json()["detail"]
