"""Hostile inputs for the reward server's own code paths (issues 26, 42): growth of the
text transforms, judge-answer parsers, the body's value count and the inline-image
check that were super-linear, one core.

Run: ``.venv/bin/python bench/adversarial_server.py [--repeat 3] [--cap 20]``.
Prints, per shape, seconds at 10 KB / 100 KB / 1 MB and the growth over its
budget (the fitted exponent k of time ~ size^k over bench/adversarial.py's EXPONENT_BUDGET;
ratio ≤ 1 meets it), the gate of issues 26 and 41; and,
for information, seconds per MB over bench/adversarial.py's 0.2 s/MB part budget. ``--cap`` seconds: a size that takes longer stops its shape (a quadratic shape at
1 MB would take minutes), reported as ``>cap``. Exits 1 when a shape is over budget.
Never run under ``make test``: timings are the bench's job, tests assert behaviour.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable

os.environ.setdefault("OMP_NUM_THREADS", "1")

from adversarial import EXPONENT_BUDGET, PER_MB_BUDGET, SIZES, _fill, _time, fitted_exponent  # noqa: E402

VS, VE, PAD = "<|vision_start|>", "<|vision_end|>", "<|image_pad|>"


def _shapes() -> list[tuple[str, Callable[[int], object], Callable[[object], object]]]:
    from groundrl.integrations.common import collapse_vision, response_text, strip_stop_tokens
    from groundrl.judges.images import ImagePolicy
    from groundrl.judges.papers import _strip_answer, parse_yes_no
    from groundrl.serve.body import count_values
    from groundrl.verify.verifier import ParsedResponse

    def body(unit: str, head: str = "") -> Callable[[int], object]:
        return lambda n: _fill(unit, n, head).encode()

    return [
        ("collapse_vision: <|vision_start|> without end", lambda n: _fill(VS, n), collapse_vision),
        ("collapse_vision: starts and pads, one end", lambda n: _fill(VS + PAD, n, "", VE), collapse_vision),
        ("collapse_vision: closed spans", lambda n: _fill(VS + PAD * 3 + VE + "x", n), collapse_vision),
        ("collapse_vision: pad runs", lambda n: _fill(PAD, n), collapse_vision),
        ("response_text: starts in the query", lambda n: _fill(VS, n, "prompt"), lambda q: response_text(q, "prompt")),
        ("strip_stop_tokens: <|endoftext|> run", lambda n: _fill("<|endoftext|>", n, "answer"), strip_stop_tokens),
        ("strip_stop_tokens: tokens and spaces", lambda n: _fill("<|im_end|> \n", n, "answer"), strip_stop_tokens),
        ("verifier response: <answer> unclosed", lambda n: _fill("<answer>", n), ParsedResponse.of),
        ("verifier response: <answer>x</answer prefixes", lambda n: _fill("<answer>x</answer", n), ParsedResponse.of),
        ("judge yes/no: <think> unclosed", lambda n: _fill("<think>", n, "", "yes"), parse_yes_no),
        ("judge yes/no: <THINK> mixed case", lambda n: _fill("<ThInK>a", n, "", "no"), parse_yes_no),
        ("Argos answer strip: <answer> unclosed", lambda n: _fill("<answer>", n), _strip_answer),
        # issue 42 N1: the body guard on a string that never closes (the old regex: quadratic)
        ("body guard: escaped quotes, string unclosed", body(',\\"', '["'), count_values),
        ("body guard: strings of commas", body('",,,,",'), count_values),
        ("body guard: backslash runs", body('"\\\\\\",'), count_values),
        ("inline image: base64 text, CLI policy", lambda n: _fill("QUJD", n), ImagePolicy().classify),
    ]  # fmt: skip


def run(repeat: int, cap: float) -> int:
    print(
        f"{'shape (growth)':<52} {'10 KB':>8} {'100 KB':>8} {'1 MB':>8} {'k/budget':>14} {'s/MB/budget':>12}"
    )
    over = 0
    for label, make, fn in _shapes():
        fn(make(1_000))  # warm-up: lazy imports out of the timing
        ts: list[float] = []
        for size in SIZES:
            if ts and ts[-1] > cap:
                break
            ts.append(_time(lambda t=make(size), f=fn: f(t), repeat if not ts or ts[-1] < 1 else 1))
        if len(ts) < len(SIZES):
            cols = " ".join(f"{t:8.4f}" for t in ts) + f" {'>' + format(cap, 'g'):>8}" * (
                len(SIZES) - len(ts)
            )
            print(f"{label:<52} {cols} {'—':>14} {'—':>12}  OVER")
            over += 1
            continue
        growth = fitted_exponent(SIZES, ts) / EXPONENT_BUDGET  # bench/adversarial.py's gate
        per_mb = ts[2] / (SIZES[2] / 1e6) / PER_MB_BUDGET
        bad = growth > 1
        over += bad
        cols = " ".join(f"{t:8.4f}" for t in ts)
        print(f"{label:<52} {cols} {growth:14.2f} {per_mb:12.2f}{'  OVER' if bad else ''}")
    print(f"{over} shape(s) over the growth budget (target: k/budget ≤ 1.00, k fitted 10 KB-1 MB)")
    return over


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="timings per size; the best is reported")
    ap.add_argument("--cap", type=float, default=20.0, help="seconds after which a shape stops growing")
    ap.add_argument(
        "--server", action="store_true", help="also time /health during a 1 MB hostile /get_reward"
    )
    ap.add_argument(
        "--bodies", action="store_true", help="also time /health during issue 42's hostile request bodies"
    )
    ap.add_argument(
        "--findings", action="store_true", help="also run issue 26's slow-body and value-bomb checks"
    )
    args = ap.parse_args(argv)
    over = run(args.repeat, args.cap)
    cases = [("a 1 MB hostile /get_reward", {})] if args.server else []
    if args.bodies:
        cases += [(f"{what} on /score", {"route": "/score", "content": raw}) for what, raw in HOSTILE_BODIES]
    for what, kw in cases:
        idle, med, worst, took = health_while_hostile(**kw)
        print(
            f"\n/health while {what} is answered ({took:.2f} s): median {med * 1e3:.1f} ms, "
            f"max {worst * 1e3:.1f} ms; idle median {idle * 1e3:.1f} ms; max/idle {worst / idle:.0f}x"
        )
    if args.findings:
        ok, sent = slow_bodies()
        print(f"small POSTs answered 200 while four 16 MiB bodies stall: {ok} of {sent}")
        before, after, statuses = value_bombs()
        print(
            f"four 15 MiB bodies of {{}},: server peak RSS {before:.0f} -> {after:.0f} MB, statuses {statuses}"
        )
    return 1 if over else 0


# ------------------------------------------------------------------ the event loop


def _serve(port: int):
    """``groundrl serve``'s app for eqa_rm in a child process (its own GIL, as in production)."""
    import subprocess

    code = (
        "import uvicorn; from groundrl.serve.app import create_app; "
        f"uvicorn.run(create_app('eqa_rm'), host='127.0.0.1', port={port}, log_level='error')"
    )
    return subprocess.Popen([sys.executable, "-c", code])


# issue 42 N1: 1.5 MiB of one unclosed string (the old value count's regex retried from
# every quote: hours), and 15 MiB of empty strings (the most work the linear count does)
HOSTILE_BODIES = [
    ("1.5 MiB of escaped quotes in an unclosed string", b'{"samples": ["' + b',\\"' * 520_000),
    ("15 MiB of empty strings", b'{"samples": [' + b'"",' * 5_000_000 + b'""]}'),
]


def health_while_hostile(
    size: int = 1_000_000, timeout: float = 600.0, route: str = "/get_reward", content: bytes | None = None
) -> tuple[float, float, float, float]:
    """(idle /health median s, /health median and max s while a hostile request is
    answered, that request's seconds). By default the request is a ``/get_reward`` of
    ``size`` characters of ``<|vision_start|>`` with no end tag (the collapse was quadratic
    on it); ``content`` posts those raw bytes to ``route`` instead."""
    import socket
    import statistics
    import threading
    import time

    import httpx

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = _serve(port)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                httpx.get(url + "/health", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        with httpx.Client(timeout=timeout) as c:

            def lat() -> float:
                t = time.perf_counter()
                c.get(url + "/health")
                return time.perf_counter() - t

            idle = [lat() for _ in range(30)]
            done: list[float] = []
            body = {"query": ["q" + VS * (size // len(VS))], "prompts": ["q"], "labels": [None]}

            def hostile() -> None:
                t = time.perf_counter()
                if content is None:
                    httpx.post(url + route, json=body, timeout=timeout)
                else:
                    httpx.post(url + route, content=content, timeout=timeout)
                done.append(time.perf_counter() - t)

            th = threading.Thread(target=hostile)
            th.start()
            time.sleep(0.05)
            busy = []
            while not done and len(busy) < 10_000:
                busy.append(lat())
            th.join()
        return statistics.median(idle), statistics.median(busy), max(busy), done[0]
    finally:
        proc.terminate()
        proc.wait(30)


# ------------------------------------------------------------------ server findings (issue 26)


def _hwm_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        return int(next(x for x in f if x.startswith("VmHWM")).split()[1]) / 1024


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(url: str) -> None:
    import time

    import httpx

    for _ in range(600):
        try:
            httpx.get(url + "/health", timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.1)


def slow_bodies(seconds: float = 5.0) -> tuple[int, int]:
    """(small POSTs answered 200, sent) in ``seconds`` while four connections hold 16 MiB
    bodies with their last 100 bytes unsent."""
    import socket
    import time

    import httpx

    port = _free_port()
    proc = _serve(port)
    url = f"http://127.0.0.1:{port}"
    held = []
    try:
        _wait(url)
        size = 16 * 1024 * 1024
        for _ in range(4):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(f"POST /score HTTP/1.1\r\nHost: x\r\nContent-Length: {size}\r\n\r\n".encode())
            s.sendall(b" " * (size - 100))
            held.append(s)
        time.sleep(0.5)
        crit = (
            "<critique>" + "c" * 2000 + "</critique><score>7</score>"
        )  # ~2 KB: over the ~420 B that got through
        body = {"samples": [{"completion": crit, "gt_score": 7}]}
        ok = sent = 0
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            sent += 1
            with contextlib.suppress(httpx.HTTPError):
                ok += httpx.post(url + "/score", json=body, timeout=seconds).status_code == 200
            time.sleep(0.05)
        return ok, sent
    finally:
        for s in held:
            s.close()
        proc.terminate()
        proc.wait(30)


def value_bombs() -> tuple[float, float, list[int]]:
    """(server peak RSS MB before, after, statuses) for four concurrent 15 MiB bodies of ``{},``."""
    import threading

    import httpx

    port = _free_port()
    proc = _serve(port)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait(url)
        before = _hwm_mb(proc.pid)
        bomb = b'{"samples": [' + b",".join([b"{}"] * (15 * 1024 * 1024 // 3)) + b"]}"
        statuses: list[int] = []

        def post() -> None:
            try:
                statuses.append(httpx.post(url + "/score", content=bomb, timeout=600).status_code)
            except httpx.HTTPError:
                statuses.append(0)

        threads = [threading.Thread(target=post) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return before, _hwm_mb(proc.pid), statuses
    finally:
        proc.terminate()
        proc.wait(30)


if __name__ == "__main__":
    sys.exit(main())
