"""No test asserts wall-clock time (issue 17, item 1).

A budget like ``assert time.perf_counter() - t < 1.0`` passes on an idle laptop and fails
on a loaded 2-core CI runner. Tests assert behaviour; time budgets live in ``bench/``
scripts that print ratios and targets (``bench/adversarial.py`` for the megabyte inputs).

The guard reads every test module's syntax tree. A value is *clock-derived* when it comes
from a clock call (``time.perf_counter``, ``time.time``, ``time.monotonic`` and their
``_ns`` forms, ``time.process_time``, ``loop.time()``), from a name assigned a
clock-derived value, or from a call to a function that returns one. Any ``assert``
whose test uses a clock-derived value is reported. Clocks used only for a polling
deadline (``while time.monotonic() < deadline``) are fine.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
CLOCKS = {"perf_counter", "perf_counter_ns", "time", "time_ns", "monotonic", "monotonic_ns", "process_time"}
CLOCK_MODULES = {"time"}

# Modules outside this guard's owner's area that still assert a budget, each with the
# reason. The guard fails when one of them no longer needs its entry, so the list only
# shrinks.
KNOWN: dict[str, str] = {}


def _is_clock_call(node: ast.AST, clock_names: set[str]) -> bool:
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    if isinstance(f, ast.Attribute) and f.attr in CLOCKS:
        if isinstance(f.value, ast.Name) and f.value.id in CLOCK_MODULES:
            return True  # time.perf_counter()
        if f.attr == "time" and not node.args:
            return True  # loop.time(), asyncio.get_running_loop().time()
    return isinstance(f, ast.Name) and f.id in clock_names  # from time import perf_counter


def _names(target: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(target) if isinstance(n, ast.Attribute)
    }


def _called_name(node: ast.Call) -> str | None:
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def clock_asserts(source: str) -> list[int]:
    """Line numbers of the asserts in ``source`` that use a clock-derived value."""
    tree = ast.parse(source)
    clock_names = {
        a.asname or a.name
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and n.module == "time"
        for a in n.names
        if a.name in CLOCKS
    }
    module_funcs: set[str] = set()  # top-level functions returning clock-derived values
    # Each top-level function or class is one scope (nested functions included); the
    # module's other statements are another. Names are tainted per scope, so an ``out``
    # timed in one test does not taint an ``out`` in the next.
    tops = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    rest = ast.Module(body=[n for n in tree.body if n not in tops], type_ignores=[])
    # per scope: (node, tainted names, its nested functions that return clock-derived values)
    scopes: list[tuple[ast.AST, set[str], set[str]]] = [(top, set(), set()) for top in [*tops, rest]]

    def derived(expr: ast.AST | None, tainted: set[str], funcs: set[str]) -> bool:
        if expr is None:
            return False
        for n in ast.walk(expr):
            if _is_clock_call(n, clock_names):
                return True
            if isinstance(n, ast.Name) and n.id in tainted:
                return True
            if isinstance(n, ast.Attribute) and n.attr in tainted and isinstance(n.ctx, ast.Load):
                return True
            if isinstance(n, ast.Call) and _called_name(n) in funcs | module_funcs:
                return True
        return False

    changed = True
    while changed:  # to a fixed point: taint flows through assignments and returns
        changed = False
        for scope, tainted, funcs in scopes:
            for n in ast.walk(scope):
                if isinstance(n, ast.Assign) and derived(n.value, tainted, funcs):
                    new = set().union(*(_names(t) for t in n.targets)) - tainted
                elif isinstance(n, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) and derived(
                    n.value, tainted, funcs
                ):
                    new = _names(n.target) - tainted
                elif (
                    isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and n.name not in funcs | module_funcs
                    and any(
                        isinstance(r, ast.Return) and derived(r.value, tainted, funcs) for r in ast.walk(n)
                    )
                ):
                    (module_funcs if n is scope else funcs).add(n.name)
                    changed = True
                    continue
                else:
                    continue
                if new:
                    tainted |= new
                    changed = True
    return sorted(
        n.lineno
        for scope, tainted, funcs in scopes
        for n in ast.walk(scope)
        if isinstance(n, ast.Assert) and derived(n.test, tainted, funcs)
    )


def _modules() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if p.name != Path(__file__).name)


# ---- the guard itself is tested on hand-written snippets ----------------------------


@pytest.mark.parametrize(
    "src",
    [
        "import time\nt = time.perf_counter()\nf()\nassert time.perf_counter() - t < 1.0\n",
        "import time\nt0 = time.time()\nf()\nelapsed = time.time() - t0\nassert elapsed < 2\n",
        "from time import monotonic\ns = monotonic()\nassert monotonic() - s < 1\n",
        "import asyncio, time\n"
        "async def one():\n    t = time.perf_counter()\n    await g()\n    return 1, time.perf_counter() - t\n"
        "out, waited = asyncio.run(one())\nassert waited < 0.6\n",
        "import time\ndef f():\n    t = time.perf_counter_ns()\n    x = time.perf_counter_ns() - t\n"
        "    assert x < 10**9, 'too slow'\n",
        "import asyncio\nasync def f():\n    loop = asyncio.get_running_loop()\n    t = loop.time()\n"
        "    await g()\n    assert loop.time() - t < 0.1\n",
        "import time\nclass S:\n    def run(self):\n        self.start = time.monotonic()\n"
        "    def check(self):\n        assert time.monotonic() - self.start < 3\n",
    ],
)
def test_guard_finds_budget_asserts(src):
    assert clock_asserts(src), src


@pytest.mark.parametrize(
    "src",
    [
        # a polling deadline, no assertion on time
        "import time\ndeadline = time.monotonic() + 10\nwhile time.monotonic() < deadline:\n"
        "    if done():\n        break\nassert done()\n",
        # timing that is only printed (a benchmark), and unrelated asserts
        "import time\nt = time.perf_counter()\nf()\nprint(time.perf_counter() - t)\nassert f() == 2\n",
        "import time\ntime.sleep(0.1)\nassert 1 + 1 == 2\n",
        # a name timed in one test is not the same name in the next one
        "import time\ndef test_a():\n    out = (f(), time.time())\n    print(out)\n"
        "def test_b():\n    out = f()\n    assert out == 2\n",
        "import asyncio, time\ndef test_a():\n    async def main():\n        return time.time()\n"
        "    print(asyncio.run(main()))\n"
        "def test_b():\n    async def main():\n        return 3\n    assert asyncio.run(main()) == 3\n",
    ],
)
def test_guard_allows_deadlines_and_behaviour(src):
    assert clock_asserts(src) == []


# ---- and then run over every test module ---------------------------------------------


def test_no_test_module_asserts_wall_clock_time():
    found = {}
    for path in _modules():
        lines = clock_asserts(path.read_text(encoding="utf-8"))
        if lines:
            found[path.relative_to(TESTS).as_posix()] = lines
    unexpected = {k: v for k, v in found.items() if k not in KNOWN}
    assert not unexpected, (
        "tests must not assert wall-clock time; move the budget to a bench/ script that prints "
        f"the ratio and target, and assert the behaviour instead: {unexpected}"
    )
    stale = sorted(set(KNOWN) - set(found))
    assert not stale, f"no wall-clock assert left in {stale}: remove them from KNOWN in {__file__}"
