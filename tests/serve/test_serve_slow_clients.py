"""Issue 16 S4: a client that sends its headers slowly is disconnected after the header
timeout (a slowloris client cannot hold connections), while complete requests on other
connections are served; `groundrl serve` caps connections and says where it listens."""

import socket

import httpx
from typer.testing import CliRunner

from groundrl.serve.app import create_app
from groundrl.serve.protocol import HeaderTimeoutH11


class QuickTimeout(HeaderTimeoutH11):
    header_timeout = 0.3


def _closed_by_server(url: str, partial: bytes) -> bool:
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall(partial)  # headers never finished
        try:
            return s.recv(1024) == b""  # EOF: the server closed the connection
        except TimeoutError:
            return False


def test_half_sent_headers_are_cut_off(tools):
    with tools.Running(create_app("eqa_rm"), http=QuickTimeout) as srv:
        assert _closed_by_server(srv.url, b"POST /score HTTP/1.1\r\nHost: x\r\nContent-Type: app")
        # after a full request and response, a slow second request on the same connection too
        host, port = srv.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=30) as s:
            s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            first = b""
            while not first.endswith(b"]}"):  # the whole /health response, body included
                first += s.recv(4096)
            assert first.startswith(b"HTTP/1.1 200 OK")
            s.sendall(b"GET /health HTTP/1.1\r\nHo")
            assert s.recv(1024) == b""
        assert httpx.get(srv.url + "/health").status_code == 200


def test_serve_help_lists_the_connection_settings():
    from groundrl.cli.main import app

    out = CliRunner().invoke(app, ["serve", "--help"], env={"COLUMNS": "200"}).output
    assert "--header-timeout" in out and "--limit-concurrency" in out
