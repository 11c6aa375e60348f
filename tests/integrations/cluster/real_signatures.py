"""Parameter lists of real methods, read from the installed source with ``ast`` (some
modules cannot import here: vLLM-only imports), so the drivers' stand-ins can be held to
the real signatures: a renamed or added parameter upstream fails the test."""

import ast
import inspect
from pathlib import Path


def method_params(source: Path, cls: str, method: str) -> list[str]:
    """The parameter names of ``cls.method`` in ``source`` (``self`` dropped)."""
    tree = ast.parse(Path(source).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for f in node.body:
                if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef) and f.name == method:
                    a = f.args
                    names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
                    return [n for n in names if n != "self"]
    raise LookupError(f"{cls}.{method} not found in {source}")


def stub_params(fn) -> list[str]:
    return [n for n in inspect.signature(fn).parameters if n != "self"]
