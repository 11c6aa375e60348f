"""Issue 26 item 1: a body that stalls is dropped (408) and its bytes released from the
buffered-bytes budget; small requests are served while large bodies stall; a client that
hangs up mid-body is counted as a disconnect (499), not as a server error."""

import socket
import time

import httpx

from groundrl.serve.app import create_app

SMALL = b'{"recipe": "toy", "samples": [{"completion": "a", "gold": "a"}]}'


def _stall(url: str, declared: int, sent: int) -> socket.socket:
    """Open a POST declaring ``declared`` bytes, send ``sent`` of them, and hold."""
    host, port = url.removeprefix("http://").split(":")
    s = socket.create_connection((host, int(port)), timeout=30)
    head = f"POST /score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {declared}\r\n\r\n"
    s.sendall(head.encode() + b" " * sent)
    return s


def _answer(s: socket.socket) -> bytes:
    out = b""
    while True:
        try:
            got = s.recv(65536)
        except (TimeoutError, ConnectionResetError):
            return out
        if not got:
            return out
        out += got


def _app(tools, **kw):
    return create_app("toy", recipes={"toy": tools.toy_recipe()}, max_body_bytes=64_000, **kw)


def test_small_requests_are_served_while_large_bodies_stall(tools):
    # 4 stalled bodies of 64 kB - 100 B: past the 7/8 of the default 4 x 64 kB budget
    with tools.Running(_app(tools, body_timeout_s=30)) as srv:
        held = [_stall(srv.url, 64_000, 63_900) for _ in range(4)]
        time.sleep(0.3)  # let the server read what was sent
        try:
            r = httpx.post(srv.url + "/score", content=SMALL, timeout=30)
            assert r.status_code == 200, r.text
            assert r.json()["results"][0]["reward"] > 0
        finally:
            for s in held:
                s.close()


def test_a_stalled_body_is_dropped_and_its_bytes_released(tools):
    app = _app(tools, body_timeout_s=0.5, max_buffered_bytes=128_000)
    with tools.Running(app) as srv:
        s = _stall(srv.url, 60_000, 59_900)
        answer = _answer(s)  # the server answers and closes; we never finish the body
        s.close()
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
        assert b"too slow" in answer
        # its bytes are free again (55 kB more would pass the 112 kB for large bodies)
        big = (
            b'{"recipe": "toy", "samples": [{"completion": "a", "gold": "a", "pad": "'
            + b"x" * 55_000
            + b'"}]}'
        )
        r = httpx.post(srv.url + "/score", content=big, timeout=30)
        assert r.status_code == 200, r.text
        metrics = httpx.get(srv.url + "/metrics").text
        assert "groundrl_slow_bodies_total 1" in metrics
        assert 'groundrl_requests_total{route="/score",status="408"} 1' in metrics


def test_a_trickling_body_is_dropped_by_the_rate_floor(tools):
    # a byte every 0.1 s never trips the 1 s idle limit, but averages 10 B/s < 1000 B/s
    app = _app(tools, body_timeout_s=1.0, min_body_rate=1000)
    with tools.Running(app) as srv:
        s = _stall(srv.url, 5_000, 0)
        s.settimeout(0.05)
        answer = b""
        for _ in range(200):  # up to ~20 s of trickling; the server cuts it at ~1-2 s
            try:
                s.sendall(b" ")
            except OSError:
                break
            try:
                answer += s.recv(4096)
                if answer:
                    break
            except TimeoutError:
                pass
        s.close()
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]


def test_a_client_that_hangs_up_mid_body_is_a_disconnect_not_a_500(tools):
    with tools.Running(_app(tools)) as srv:
        s = _stall(srv.url, 10_000, 100)
        time.sleep(0.2)
        s.close()
        for _ in range(100):
            metrics = httpx.get(srv.url + "/metrics").text
            if 'status="499"' in metrics:
                break
            time.sleep(0.05)
    assert 'groundrl_requests_total{route="/score",status="499"} 1' in metrics
    assert 'groundrl_errors_total{route="/score",kind="disconnect"} 1' in metrics
    assert 'kind="server"' not in metrics and 'status="500"' not in metrics
