"""The fields of TRL's ``GRPOConfig`` / ``SFTConfig``, read without importing TRL.

A train config's ``grpo:`` and ``sft:`` blocks are TRL config fields. Checking them by
importing TRL costs 5–20 s (it imports torch and transformers), too slow for the
"bad config → clear error in under a second" promise of ``groundrl train``. The field
names, annotations, defaults and help texts are plain literals in TRL's and transformers'
source, so we read them with :mod:`ast` from the *installed* packages: the table can
never drift from the version that will run. When the source cannot be read (a zipped
or compiled install), we fall back to importing the real dataclasses.

>>> f = trainer_fields("grpo")
>>> f["num_generations"].annotation in ("int | None", "int")
True
>>> check_field("grpo", "max_steps", "many")
"grpo.max_steps: expected int, got 'many' (str)"
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# (module, class) from base to leaf: later classes override earlier fields
_CHAINS = {
    "grpo": (
        ("transformers.training_args", "TrainingArguments"),
        ("trl.trainer.base_config", "_BaseConfig"),
        ("trl.trainer.grpo_config", "GRPOConfig"),
    ),
    "sft": (
        ("transformers.training_args", "TrainingArguments"),
        ("trl.trainer.base_config", "_BaseConfig"),
        ("trl.trainer.sft_config", "SFTConfig"),
    ),
}
CLASS_NAMES = {"grpo": "GRPOConfig", "sft": "SFTConfig"}
NO_DEFAULT = "<computed>"


@dataclass(frozen=True)
class TrainerField:
    name: str
    annotation: str  # as written in the source, e.g. "int | None"
    default: Any  # a literal, or NO_DEFAULT when the source computes it
    help: str


def _source(module: str) -> str:
    # find_spec of a submodule would import its parent packages (trl's __init__ takes
    # seconds); the top-level package's folder is found without importing anything
    top, *rest = module.split(".")
    spec = importlib.util.find_spec(top)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"no package {top}")
    path = Path(next(iter(spec.submodule_search_locations)), *rest).with_suffix(".py")
    if not path.is_file():
        raise ImportError(f"no Python source for {module}")
    return path.read_text(encoding="utf-8")


def _literal(node: ast.AST | None) -> Any:
    if node is None:
        return NO_DEFAULT
    if isinstance(node, ast.Lambda):  # default_factory=lambda: [...]
        return _literal(node.body)
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return NO_DEFAULT


def _from_assign(name: str, node: ast.AnnAssign) -> TrainerField:
    default: Any = _literal(node.value)
    help_ = ""
    if isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "") == "field":
        kw = {k.arg: k.value for k in node.value.keywords}
        default = _literal(kw.get("default") or kw.get("default_factory"))
        meta = _literal(kw.get("metadata"))
        if isinstance(meta, dict):
            help_ = str(meta.get("help", ""))
    return TrainerField(name, ast.unparse(node.annotation), default, help_)


def _class_fields(module: str, cls: str) -> dict[str, TrainerField]:
    tree = ast.parse(_source(module))
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == cls:
            return {
                f.name: f
                for f in (
                    _from_assign(b.target.id, b)
                    for b in node.body
                    if isinstance(b, ast.AnnAssign) and isinstance(b.target, ast.Name)
                )
                if not f.name.startswith("_")
            }
    raise ImportError(f"class {cls} not found in {module}")


def _imported_fields(kind: str) -> dict[str, TrainerField]:
    # lazy: TRL loads only when a trainer is built or its fields are read
    import trl

    cls = getattr(trl, CLASS_NAMES[kind])
    out = {}
    for f in dataclasses.fields(cls):
        default = f.default if f.default is not dataclasses.MISSING else NO_DEFAULT
        out[f.name] = TrainerField(f.name, str(f.type), default, str(f.metadata.get("help", "")))
    return out


@functools.cache
def trainer_fields(kind: str) -> dict[str, TrainerField]:
    """Every field of the TRL config class a ``kind`` block (``grpo`` or ``sft``) sets."""
    if kind not in _CHAINS:
        raise ValueError(f"trainer kind must be one of {', '.join(_CHAINS)}, got {kind!r}")
    try:
        out: dict[str, TrainerField] = {}
        for module, cls in _CHAINS[kind]:
            out.update(_class_fields(module, cls))
        return out
    except (ImportError, OSError, SyntaxError):
        return _imported_fields(kind)


# -- type checks from the annotation text ---------------------------------------------------

_SIMPLE = {
    "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "bool": lambda v: isinstance(v, bool),
    "str": lambda v: isinstance(v, str),
    "dict": lambda v: isinstance(v, dict),
    "list": lambda v: isinstance(v, list),
    "None": lambda v: v is None,
    "NoneType": lambda v: v is None,
}


def _accepts(node: ast.AST, value: Any) -> bool:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _accepts(node.left, value) or _accepts(node.right, value)
    if isinstance(node, ast.Constant):
        return value is None if node.value is None else True
    if isinstance(node, ast.Attribute):  # typing.X, enum classes: not checked
        return True
    if isinstance(node, ast.Name):
        check = _SIMPLE.get(node.id)
        # enums (SchedulerType, IntervalStrategy, …) take their string values
        return check(value) if check else isinstance(value, str) or node.id == "Any" or value is not None
    if isinstance(node, ast.Subscript):
        head = getattr(node.value, "id", getattr(node.value, "attr", ""))
        args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if head == "Optional":
            return value is None or _accepts(args[0], value)
        if head == "Union":
            return any(_accepts(a, value) for a in args)
        if head == "Literal":
            return any(isinstance(a, ast.Constant) and a.value == value for a in args)
        if head in ("list", "List"):
            return isinstance(value, list)
        if head in ("dict", "Dict"):
            return isinstance(value, dict)
    return True  # an annotation we do not model: let TRL judge it


def coerce(kind: str, name: str, value: Any) -> Any:
    """YAML 1.1 reads ``1e-6`` (no dot) as a string: a float field takes it as the number."""
    f = trainer_fields(kind).get(name)
    if f is not None and isinstance(value, str) and "float" in f.annotation:
        try:
            return float(value)
        except ValueError:
            return value
    return value


def check_field(kind: str, name: str, value: Any) -> str | None:
    """``None`` when ``value`` fits the field's annotation, else a message naming it."""
    f = trainer_fields(kind).get(name)
    if f is None:
        return None
    try:
        node = ast.parse(f.annotation, mode="eval").body
    except SyntaxError:
        return None
    if _accepts(node, value):
        return None
    return f"{kind}.{name}: expected {f.annotation}, got {value!r} ({type(value).__name__})"
