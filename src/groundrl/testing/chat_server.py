"""A real local OpenAI-compatible chat-completions server for tests and benchmarks.

It listens on 127.0.0.1 (ephemeral port), answers ``POST /v1/chat/completions`` with a
configurable ``responder(messages, request_body) -> str``, and can be told to misbehave:
answer slowly (``delay``), fail the next requests with given HTTP statuses
(``fail_next=[500, 429]``), send malformed JSON, or omit ``prompt_logprobs``. It records
every request body and the maximum number of requests in flight at once.

``prompt_logprobs`` (vLLM's extension) is emulated over whitespace "tokens" of the
rendered messages: token ``w`` gets log-prob ``-0.1 · (1 + len(w) % 5)``; with
``return_token_ids`` the response carries ``prompt_token_ids`` too (ids in order of first
appearance on this server).

    with ChatServer(responder=lambda msgs, body: "<score>7</score>") as srv:
        OpenAIBackend("m", srv.base_url)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NotRequired, TypedDict, cast

Responder = Callable[[list[dict[str, Any]], dict[str, Any]], str]


def _render(messages: list[dict[str, Any]], add_generation_prompt: bool) -> list[str]:
    words: list[str] = []
    for m in messages:
        words.append(f"<{m.get('role', 'user')}>")
        c = m.get("content", "")
        if isinstance(c, list):
            c = " ".join(
                p.get("text", "<image>") if p.get("type") == "text" else "<image>"
                for p in c
                if isinstance(p, dict)
            )
        words.extend(str(c).split())
    if add_generation_prompt:
        words.append("<assistant>")
    return words


class _Reply(TypedDict):
    role: str
    content: str


class _Choice(TypedDict):
    index: int
    message: _Reply
    finish_reason: NotRequired[str]


class ChatCompletion(TypedDict):
    """The answer body, as far as the judge backends read it (vLLM's log-prob fields too)."""

    id: str
    object: str
    model: object
    choices: NotRequired[list[_Choice]]
    prompt_logprobs: NotRequired[list[dict[str, dict[str, float]] | None]]
    prompt_token_ids: NotRequired[list[int]]


def fake_logprob(word: str) -> float:
    return -0.1 * (1 + len(word) % 5)


class _Server(ThreadingHTTPServer):
    chat: ChatServer  # set by ChatServer before it serves
    daemon_threads = True
    request_queue_size = 256  # a burst of 64+ new connections must not be refused

    def handle_error(self, request: Any, client_address: Any) -> None:
        # a client that timed out and hung up is expected here, not a server error

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    """One request of a :class:`ChatServer` (``self.chat``, the server's owner)."""

    protocol_version = "HTTP/1.1"
    # headers and body go out as separate small writes: without TCP_NODELAY,
    # Nagle + delayed ACK add ~40 ms to every response.
    disable_nagle_algorithm = True

    @property
    def chat(self) -> ChatServer:
        return cast(_Server, self.server).chat

    def log_message(self, *args: Any) -> None:  # keep test output clean
        pass

    def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
        # out of flight before the client can read the reply: a client that sends its
        # next request at once must not find this one still counted (max_in_flight)
        self._leave()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(payload)

    def do_POST(self) -> None:  # noqa: N802 - http.server API
        length = int(self.headers.get("Content-Length", 0))
        raw = self.rfile.read(length)
        with self.chat._lock:
            self.chat.in_flight += 1
            self.chat.max_in_flight = max(self.chat.max_in_flight, self.chat.in_flight)
        self._counted = True
        try:
            self._handle(raw)
        finally:
            self._leave()

    def _leave(self) -> None:
        if getattr(self, "_counted", False):
            self._counted = False
            with self.chat._lock:
                self.chat.in_flight -= 1

    def _handle(self, raw: bytes) -> None:
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, b'{"error": "not found"}')
            return
        try:
            body = json.loads(raw)
        except ValueError:
            self._send(400, b'{"error": "bad json"}')
            return
        with self.chat._lock:
            self.chat.requests.append(body)
            status = self.chat.fail_next.pop(0) if self.chat.fail_next else 200
            malformed = self.chat.malformed_next > 0
            if malformed:
                self.chat.malformed_next -= 1
        if self.chat.delay:
            time.sleep(self.chat.delay)
        if status != 200:
            self._send(
                status,
                json.dumps({"error": f"injected {status}"}).encode(),
                {"Retry-After": "0"} if status == 429 else None,
            )
            return
        if malformed:
            self._send(200, b'{"choices": [ {"message": ')
            return
        messages = body.get("messages", [])
        out: ChatCompletion = {
            "id": f"cmpl-{len(self.chat.requests)}",
            "object": "chat.completion",
            "model": body.get("model"),
        }
        if body.get("prompt_logprobs") is not None:
            self._logprobs_reply(body, messages, out)
        else:
            self._completion_reply(body, messages, out)

    def _logprobs_reply(
        self, body: dict[str, Any], messages: list[dict[str, Any]], out: ChatCompletion
    ) -> None:
        """vLLM's ``prompt_logprobs`` over whitespace tokens (or a reply without them)."""
        if not self.chat.support_logprobs:
            out["choices"] = [{"index": 0, "message": {"role": "assistant", "content": "x"}}]
            self._send(200, json.dumps(out).encode())
            return
        words = _render(messages, bool(body.get("add_generation_prompt", True)))
        with self.chat._lock:
            ids = [self.chat.vocab.setdefault(w, len(self.chat.vocab)) for w in words]
        out["prompt_logprobs"] = [None] + [
            {str(t): {"logprob": fake_logprob(w), "rank": 1}} for t, w in zip(ids[1:], words[1:], strict=True)
        ]
        if body.get("return_token_ids"):
            out["prompt_token_ids"] = ids
        out["choices"] = [{"index": 0, "message": {"role": "assistant", "content": ""}}]
        self._send(200, json.dumps(out).encode())

    def _completion_reply(
        self, body: dict[str, Any], messages: list[dict[str, Any]], out: ChatCompletion
    ) -> None:
        """``n`` choices from the responder; a responder that raises is a 500."""
        n = int(body.get("n", 1) or 1)
        texts = []
        for i in range(n):
            try:
                texts.append(self.chat.responder(messages, {**body, "sample_index": i}))
            except Exception as e:  # a bad responder is a 500, as a real server would say
                self._send(500, json.dumps({"error": str(e)}).encode())
                return
        out["choices"] = [
            {"index": i, "message": {"role": "assistant", "content": t}, "finish_reason": "stop"}
            for i, t in enumerate(texts)
        ]
        self._send(200, json.dumps(out).encode())


class ChatServer:
    def __init__(
        self, responder: Responder | None = None, delay: float = 0.0, host: str = "127.0.0.1", port: int = 0
    ) -> None:
        self.responder: Responder = responder or (lambda msgs, body: "ok")
        self.delay = delay
        self.fail_next: list[int] = []
        self.malformed_next = 0
        self.support_logprobs = True
        self.requests: list[dict[str, Any]] = []
        self.vocab: dict[str, int] = {}
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._httpd = _Server((host, port), _Handler)
        self._httpd.chat = self
        self._thread = threading.Thread(target=self.serve_forever, name="chat-server", daemon=True)

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> ChatServer:
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        # a short poll so stop() returns in ~10 ms instead of the default 0.5 s
        self._httpd.serve_forever(poll_interval=0.01)

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def main() -> None:
    """``python -m groundrl.testing.chat_server --delay 0.05``: serve until killed, printing
    the base URL first (benchmarks run it in a second process)."""
    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--delay", type=float, default=0.0, help="seconds before each answer")
    ap.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free one)")
    ap.add_argument(
        "--answer", default="<critique>ok</critique><score>7</score>", help="the text every answer carries"
    )
    args = ap.parse_args()
    srv = ChatServer(responder=lambda m, b: args.answer, delay=args.delay, port=args.port)
    print(srv.base_url, flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        srv.serve_forever()


if __name__ == "__main__":
    main()
