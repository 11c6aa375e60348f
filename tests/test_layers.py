"""Layers point one way (issue 23 item 1; the order is docs/architecture.md's).

An AST walk over ``src/groundrl`` builds the import graph between *units* (a subpackage
such as ``train``, or a top-level module such as ``rubric``), counting module-level and
function-level imports (and ``import_module("...")`` with a literal name) but not those
under ``if TYPE_CHECKING:``. It fails on

* an import from a higher layer into a lower one (``rewards`` importing ``judges``);
* any cycle between units, whatever their layers;
* a unit that has no layer (a new subpackage: give it one here and in the docs);
* an entry of :data:`KNOWN_VIOLATIONS` that is no longer a violation — the list only
  shrinks: when a move removes one, delete its entry.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PACKAGE = "groundrl"
DOC = ROOT / "docs" / "architecture.md"

# Lowest first: a unit imports only from its own layer or lower ones (and never in a
# cycle). The same table is docs/architecture.md's "Layers"; a test keeps them equal.
# `groundrl` is the package's own __init__ (a lazy facade: `from groundrl import Rubric`
# is counted as an import of groundrl.rubric). `testing` sits above everything: product
# code must not import test support.
LAYERS: tuple[tuple[str, ...], ...] = (
    (
        "groundrl",
        "types",
        "floats",
        "examples",
        "intervals",
        "io",
        "models",
        "presets",
        "registry",
        "results",
        "run_params",
        "settings",
        "summary",
    ),
    ("parse",),
    ("rewards",),
    ("rubric",),
    ("judges",),
    ("recipes", "verify", "sim", "augment"),
    ("curate", "benchmarks", "scoring", "scoring_parallel"),
    ("integrations",),
    ("monitor",),
    ("train",),
    ("demos",),
    ("serve", "cli", "__main__"),
    ("testing",),
)

# (importer module, imported module) pairs that break a layer, each with the move that
# removes it; delete an entry when its import is gone. Empty since the moves of issue 23
# item 1 (measured on 2026-11-24: 15 entries, now 0): keep it so.
KNOWN_VIOLATIONS: frozenset[tuple[str, str]] = frozenset()


# Every function-level import says why it is not at module level: a ``# lazy: <why>``
# comment on the import, or on a comment line above it in its block of imports (keeping
# torch / transformers / the optional extras out of light imports, or breaking an import
# cycle inside a unit). Units still to be cleaned are exempt; the tuple only shrinks
# (issue 23 item 1; docs/architecture.md counts what is left).
LAZY_REASONS_PENDING: tuple[str, ...] = ()

# -- the graph ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Import:
    importer: str  # the module whose code imports
    imported: str  # the package module it imports (resolved to a module that exists)
    line: int
    in_function: bool


def module_name(path: Path, src: Path) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"
    )


def _raw_imports(tree: ast.AST, module: str, is_pkg: bool) -> Iterable[tuple[str, str | None, int, bool]]:
    """``(module, name or None, line, in_function)`` for every import statement (one per
    imported name), skipping ``if TYPE_CHECKING:`` bodies; relative names made absolute."""
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, in_fn = stack.pop()
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, None, node.lineno, in_fn
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = module.split(".") if is_pkg else module.split(".")[:-1]
                pkg = pkg[: len(pkg) - (node.level - 1)]
                base = ".".join([*pkg, *([node.module] if node.module else [])])
            for a in node.names:
                yield base, a.name, node.lineno, in_fn
        elif isinstance(node, ast.Call) and _import_module_literal(node):
            yield node.args[0].value, None, node.lineno, in_fn  # type: ignore[attr-defined]
        inner = in_fn or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        if isinstance(node, ast.If) and _is_type_checking(node):
            children: list[ast.AST] = list(node.orelse)  # the else branch does run
        else:
            children = list(ast.iter_child_nodes(node))
        stack.extend((c, inner) for c in reversed(children))


def _import_module_literal(node: ast.Call) -> bool:
    f = node.func
    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
    return (
        name == "import_module"
        and bool(node.args)
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    )


def _facade(init: Path) -> dict[str, str]:
    """The root package's lazy exports (``_WHERE = {name: module}``), if it has them."""
    if not init.is_file():
        return {}
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "_WHERE" for t in node.targets
        ):
            return dict(ast.literal_eval(node.value))
    return {}


def collect_imports(src: Path, package: str) -> list[Import]:
    """Every import of ``package``'s own modules inside ``src/package``."""
    files = sorted((src / package).rglob("*.py"))
    modules = {module_name(p, src) for p in files}
    facade = _facade(src / package / "__init__.py")

    def resolve(base: str, name: str | None) -> str | None:
        if name is not None and f"{base}.{name}" in modules:
            return f"{base}.{name}"
        if base == package and name in facade:
            return facade[name]
        while base and base not in modules:
            base = base.rpartition(".")[0]
        return base or None

    out: list[Import] = []
    for path in files:
        mod = module_name(path, src)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for base, name, line, in_fn in _raw_imports(tree, mod, path.name == "__init__.py"):
            if base != package and not base.startswith(package + "."):
                continue
            target = resolve(base, name)
            if target is not None:
                out.append(Import(mod, target, line, in_fn))
    return out


def unit_of(module: str) -> str:
    """``groundrl.train.grpo`` → ``train``; ``groundrl.rubric`` → ``rubric``; the root
    package → ``groundrl``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def unit_graph(
    imports: Iterable[Import], skip: Callable[[Import], bool] = lambda i: False
) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for i in imports:
        a, b = unit_of(i.importer), unit_of(i.imported)
        graph.setdefault(a, set())
        graph.setdefault(b, set())
        if a != b and not skip(i):
            graph[a].add(b)
    return graph


def strongly_connected(graph: Mapping[str, Iterable[str]]) -> list[set[str]]:
    """Tarjan's strongly connected components with more than one node (the cycles),
    iterative so that a deep graph cannot hit the recursion limit."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[set[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph.get(root, ())))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph.get(child, ()))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp = set()
                while True:
                    n = stack.pop()
                    on_stack.discard(n)
                    comp.add(n)
                    if n == node:
                        break
                if len(comp) > 1:
                    found.append(comp)
    return found


def layer_index(layers: Iterable[Iterable[str]]) -> dict[str, int]:
    return {u: k for k, names in enumerate(layers) for u in names}


def upward(imports: Iterable[Import], layer: Mapping[str, int]) -> list[Import]:
    """Imports from a unit into a unit of a higher layer (units without a layer skipped)."""
    return [
        i
        for i in imports
        if unit_of(i.importer) in layer
        and unit_of(i.imported) in layer
        and layer[unit_of(i.importer)] < layer[unit_of(i.imported)]
    ]


def cycle_edges(imports: Iterable[Import], skip: Callable[[Import], bool] = lambda i: False) -> list[Import]:
    """Imports whose unit edge lies inside a cycle of the unit graph."""
    imports = list(imports)
    comps = strongly_connected(unit_graph(imports, skip))
    where = {u: k for k, c in enumerate(comps) for u in c}
    return [
        i
        for i in imports
        if not skip(i)
        and unit_of(i.importer) != unit_of(i.imported)
        and unit_of(i.importer) in where
        and where.get(unit_of(i.importer)) == where.get(unit_of(i.imported))
    ]


def _where(i: Import, layer: Mapping[str, int]) -> str:
    a, b = unit_of(i.importer), unit_of(i.imported)
    path = i.importer.replace(".", "/")
    kind = "in a function" if i.in_function else "at module level"
    return f"{path}.py:{i.line} imports {i.imported} ({a} layer {layer.get(a)} -> {b} layer {layer.get(b)}, {kind})"


def _import_runs(fn: ast.AST) -> Iterable[list[ast.stmt]]:
    """Runs of consecutive import statements in the statement lists inside ``fn`` (one
    block of imports, blank lines between its groups included)."""
    for node in ast.walk(fn):
        for name in ("body", "orelse", "finalbody"):
            stmts = getattr(node, name, None)
            if not isinstance(stmts, list):
                continue
            run: list[ast.stmt] = []
            for st in [*stmts, None]:
                if isinstance(st, (ast.Import, ast.ImportFrom)):
                    run.append(st)
                    continue
                if run:
                    yield run
                run = []


def unreasoned_function_imports(source: str) -> list[int]:
    """Lines of the import statements inside functions of ``source`` that give no
    ``# lazy:`` reason, on their own lines or on a comment line above them in their block."""
    lines = source.splitlines()
    found: set[int] = set()
    for fn in ast.walk(ast.parse(source)):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for run in _import_runs(fn):
            said = False  # a `# lazy:` comment line above a statement covers the rest of its block
            for st in run:
                said = said or (st.lineno > 1 and lines[st.lineno - 2].strip().startswith("# lazy:"))
                if not (said or any("# lazy:" in ln for ln in lines[st.lineno - 1 : st.end_lineno])):
                    found.add(st.lineno)
    return sorted(found)


# -- the package -------------------------------------------------------------------------

LAYER = layer_index(LAYERS)


@pytest.fixture(scope="module")
def imports() -> list[Import]:
    return collect_imports(SRC, PACKAGE)


def _known(i: Import) -> bool:
    return (i.importer, i.imported) in KNOWN_VIOLATIONS


def test_every_unit_has_one_layer():
    units = {unit_of(module_name(p, SRC)) for p in (SRC / PACKAGE).rglob("*.py")}
    listed = [u for names in LAYERS for u in names]
    assert len(listed) == len(set(listed)), "a unit is listed in two layers"
    assert not units - set(listed), (
        f"units without a layer: {sorted(units - set(listed))}; add each to LAYERS here and to the "
        "layer table of docs/architecture.md"
    )
    assert not set(listed) - units, f"LAYERS names units that do not exist: {sorted(set(listed) - units)}"


def test_layer_table_is_the_docs_table():
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    rows = [ln for ln in section.splitlines() if re.match(r"^\|\s*\d+\s*\|", ln)]
    doc_layers = tuple(tuple(re.findall(r"`([\w.]+)`", row.split("|")[2])) for row in rows)
    assert doc_layers == LAYERS, "docs/architecture.md's layer table and LAYERS differ"


def test_no_new_upward_import(imports):
    new = [i for i in upward(imports, LAYER) if not _known(i)]
    assert not new, "imports into a higher layer (see docs/architecture.md):\n" + "\n".join(
        _where(i, LAYER) for i in new
    )


def test_no_new_cycle_between_units(imports):
    comps = strongly_connected(unit_graph(imports, skip=_known))
    new = cycle_edges(imports, skip=_known)
    assert not comps, f"cycles between units {comps}:\n" + "\n".join(_where(i, LAYER) for i in new)


def test_known_violations_only_shrink(imports):
    present = {(i.importer, i.imported) for i in imports}
    violating = {(i.importer, i.imported) for i in [*upward(imports, LAYER), *cycle_edges(imports)]}
    gone = sorted(KNOWN_VIOLATIONS - present)
    fine = sorted((KNOWN_VIOLATIONS & present) - violating)
    assert not gone, f"these imports are gone: delete them from KNOWN_VIOLATIONS: {gone}"
    assert not fine, f"these imports no longer break a layer: delete them from KNOWN_VIOLATIONS: {fine}"


def _unreasoned_by_unit() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted((SRC / PACKAGE).rglob("*.py")):
        unit = unit_of(module_name(path, SRC))
        lines = unreasoned_function_imports(path.read_text(encoding="utf-8"))
        found.setdefault(unit, []).extend(f"{path.relative_to(ROOT)}:{n}" for n in lines)
    return found


def test_function_level_imports_say_why():
    found = _unreasoned_by_unit()
    bare = [where for unit, lines in found.items() if unit not in LAZY_REASONS_PENDING for where in lines]
    assert not bare, (
        "imports inside functions with no '# lazy: <why>' (move them to module level, or say which "
        "heavy or optional package they keep out of `import`):\n" + "\n".join(bare)
    )
    clean = sorted(u for u in LAZY_REASONS_PENDING if not found.get(u))
    assert not clean, f"these units give every reason now: delete them from LAZY_REASONS_PENDING: {clean}"


# -- the helpers on hand-made input ------------------------------------------------------


def test_strongly_connected_finds_each_cycle_once():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"f"}, "f": {"e"}, "g": {"g"}}
    comps = strongly_connected(graph)
    assert sorted(sorted(c) for c in comps) == [["a", "b", "c"], ["e", "f"]]
    assert strongly_connected({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_strongly_connected_on_a_long_chain_closed_into_a_ring():
    n = 5000  # deeper than the default recursion limit
    graph = {str(k): {str(k + 1)} for k in range(n)}
    graph[str(n)] = {"0"}
    comps = strongly_connected(graph)
    assert len(comps) == 1 and len(comps[0]) == n + 1


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_collect_imports_on_a_small_package(tmp_path):
    _write(tmp_path, "pkg/__init__.py", '_WHERE = {"Thing": "pkg.low.things"}\n')
    _write(tmp_path, "pkg/low/__init__.py", "")
    _write(tmp_path, "pkg/low/things.py", "import json\n")
    _write(tmp_path, "pkg/high/__init__.py", "from . import tool\n")
    _write(
        tmp_path,
        "pkg/high/tool.py",
        "from __future__ import annotations\n"
        "import typing\n"
        "from typing import TYPE_CHECKING\n"
        "from ..low import things\n"
        "if TYPE_CHECKING:\n"
        "    from pkg.mid import hidden\n"
        "if typing.TYPE_CHECKING:\n"
        "    import pkg.mid\n"
        "else:\n"
        "    import pkg.mid.shown\n"
        "def f():\n"
        "    from pkg import Thing\n"
        "    import importlib\n"
        "    return importlib.import_module('pkg.mid.dyn')\n",
    )
    for m in ("hidden", "shown", "dyn"):
        _write(tmp_path, f"pkg/mid/{m}.py", "")
    _write(tmp_path, "pkg/mid/__init__.py", "")
    got = {(i.importer, i.imported, i.line, i.in_function) for i in collect_imports(tmp_path, "pkg")}
    assert got == {
        ("pkg.high", "pkg.high.tool", 1, False),
        ("pkg.high.tool", "pkg.low.things", 4, False),
        ("pkg.high.tool", "pkg.mid.shown", 10, False),
        ("pkg.high.tool", "pkg.low.things", 12, True),
        ("pkg.high.tool", "pkg.mid.dyn", 14, True),
    }


def test_upward_and_cycle_edges_on_hand_made_imports():
    layer = layer_index([("low",), ("mid", "side"), ("high",)])
    imps = [
        Import("p.high.a", "p.mid.b", 1, False),  # down: fine
        Import("p.mid.b", "p.high.a", 2, True),  # up, and a cycle high <-> mid
        Import("p.mid.c", "p.side", 3, False),  # same layer, one way: fine
        Import("p.low", "p.low.x", 4, False),  # inside one unit
    ]
    assert upward(imps, layer) == [imps[1]]
    assert cycle_edges(imps) == imps[:2]
    assert cycle_edges(imps, skip=lambda i: i is imps[1]) == []
    same_layer_ring = [Import("p.mid.c", "p.side", 1, False), Import("p.side", "p.mid", 2, False)]
    assert upward(same_layer_ring, layer) == []
    assert cycle_edges(same_layer_ring) == same_layer_ring


def test_unreasoned_function_imports_on_hand_made_source():
    source = (
        "import json\n"  # module level: not counted
        "def f():\n"
        "    import torch  # lazy: torch only here\n"
        "    # lazy: the optional sim extra\n"
        "    from gymnasium import spaces\n"
        "    import numpy as np\n"  # same block as the comment above
        "\n"
        "    from pkg import first\n"  # a second group of the same block
        "    x = 1\n"
        "    import os\n"  # a new block without a reason
        "    def g():\n"
        "        from pkg import thing\n"  # nested function, no reason
        "        return thing\n"
        "    # a comment that is not a reason\n"
        "    from pkg import (\n"
        "        other,\n"
        "    )\n"
        "    if x:\n"
        "        # lazy: only on this branch\n"
        "        import json\n"
        "    return torch, spaces, np, first, os, g, other, json\n"
    )
    assert unreasoned_function_imports(source) == [10, 12, 15]
