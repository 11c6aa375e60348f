"""The registry of stage kinds a staged train config may name (``kind:``).

A stage kind declares, without importing torch: the function that runs it, which TRL
config its trainer takes (``grpo`` → ``GRPOConfig`` from the stage's ``grpo:`` block,
``sft`` → ``SFTConfig`` from ``sft:``, ``None`` for a stage that trains nothing), and its
own blocks with the parser that validates each at load. Built-in kinds are registered
below exactly as a plugin registers its own, and packages add kinds through the
``groundrl.stages`` entry-point group (each entry point names a :class:`StageKind`
object, registered on first use, or a module that calls :func:`register_stage_kind`).

A runner is ``runner(recipe, st, out, prev_data, **build_kw) -> StageResult`` (or the same
as a mapping ``{"trainer"?, "data"?, "notes"?, "echo"?}``): ``st`` is the stage's typed settings, an instance of the kind's ``settings``
class (:class:`groundrl.train.stage_settings.StageSettings` or a subclass with one field
per block of the kind; top level + stage keys, the trainer arguments already merged with
their defaults, ``model`` = the previous stage's ``final/``, ``output_dir`` = ``out``; a
kind without its own class finds its parsed blocks in ``st.blocks``); a returned
``trainer`` is trained, logged and saved
by :func:`groundrl.train.stages.run_config`; ``data`` is what a following stage without
``data`` reads; ``notes`` go to ``report.md``; ``echo`` is the line shown for a stage that
trains nothing (default: its notes).

>>> sorted(stage_kinds())[:3]
['cgrpo', 'grpo', 'proxy_grpo']
"""

from __future__ import annotations

import dataclasses
import importlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from groundrl.registry import Registry

log = logging.getLogger("groundrl.train")

TRAINERS = ("grpo", "sft")
ENTRY_POINT_GROUP = "groundrl.stages"


def resolve(ref: str | Callable[..., Any]) -> Callable[..., Any]:
    """``"package.module:function"`` → the function (imported on first use)."""
    if callable(ref):
        return ref
    module, _, attr = ref.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


@dataclass(frozen=True)
class StageResult:
    """What a stage runner hands back to :func:`groundrl.train.stages.run_config`."""

    trainer: Any = None  # a trainer to train, log and save; None: the stage trains nothing
    data: str | None = None  # what a following stage without ``data`` trains on
    notes: dict[str, object] = field(default_factory=dict)  # the stage's lines in report.md ("- key: value")
    echo: str | None = None  # shown for a stage that trains nothing (default: the notes)

    @classmethod
    def of(cls, res: StageResult | Mapping[str, Any]) -> StageResult:
        """A runner's return: a :class:`StageResult`, or the mapping form a plugin may
        return (``{"trainer"?, "data"?, "notes"?, "echo"?}``; another key raises)."""
        if isinstance(res, StageResult):
            return res
        if not isinstance(res, Mapping):
            raise TypeError(f"a stage runner returns a StageResult or a mapping, got {type(res).__name__}")
        allowed = [f.name for f in dataclasses.fields(cls)]
        unknown = [k for k in res if k not in allowed]
        if unknown:
            raise TypeError(
                f"a stage runner returned unknown key {unknown[0]!r}; allowed: {', '.join(allowed)}"
            )
        data = res.get("data")
        return cls(
            res.get("trainer"),
            None if data is None else str(data),
            dict(res.get("notes") or {}),
            res.get("echo"),
        )


@dataclass(frozen=True)
class StageKind:
    name: str
    runner: str | Callable[..., Any]
    trainer: str | None = None
    blocks: Mapping[str, str | Callable[[Any], Any]] = field(default_factory=dict)
    needs_data: bool = True
    produces_data: bool = False
    doc: str = ""
    settings: str | type = "groundrl.train.stage_settings:StageSettings"

    def run(self, *args: Any, **kwargs: Any) -> StageResult:
        return StageResult.of(resolve(self.runner)(*args, **kwargs))

    def parse_block(self, key: str, raw: Any) -> Any:
        return resolve(self.blocks[key])(raw)

    def settings_class(self) -> type:
        """The dataclass this kind's runner receives (imported on first use)."""
        cls = self.settings if isinstance(self.settings, type) else resolve(self.settings)
        return cls  # type: ignore[return-value]


#: The stage-kind registry (:class:`groundrl.registry.Registry`), one shape with every kind.
STAGE_KINDS: Registry[StageKind] = Registry(
    "stage kind", group=ENTRY_POINT_GROUP, name_of=lambda k: k.name, item_type=StageKind, log=log
)


def register_stage_kind(
    kind: str | StageKind,
    runner: str | Callable[..., Any] | None = None,
    *,
    trainer: str | None = None,
    blocks: Mapping[str, str | Callable[[Any], Any]] | None = None,
    needs_data: bool = True,
    produces_data: bool = False,
    doc: str = "",
    replace: bool = False,
    settings: str | type | None = None,
) -> StageKind:
    """Add a stage kind (see the module doc): a :class:`StageKind` object, or its fields
    as arguments (``register_stage_kind("name", "module:fn", trainer=...)``). ``blocks``
    maps each stage-only key to its parser (``raw -> typed``, raising ``ValueError``
    naming the problem); ``settings`` names the dataclass the runner receives (a subclass
    of :class:`~groundrl.train.stage_settings.StageSettings` with a field per block; by
    default the base class, the blocks in its ``blocks``). The rules of every registry (:mod:`groundrl.registry`): a
    built-in name raises, another kind under a taken name raises unless ``replace=True``,
    the same object again is a no-op."""
    if isinstance(kind, StageKind):
        if runner is not None:
            raise TypeError("register_stage_kind(StageKind(...)) takes no runner: it is in the object")
        obj = kind
    elif isinstance(kind, str) and runner is not None:
        obj = StageKind(kind, runner, trainer, dict(blocks or {}), needs_data, produces_data, doc)
        if settings is not None:
            obj = dataclasses.replace(obj, settings=settings)
    else:
        raise TypeError("register_stage_kind takes a StageKind, or a name and a runner ('module:function')")
    if obj.trainer is not None and obj.trainer not in TRAINERS:
        raise ValueError(f"stage kind {obj.name!r}: trainer must be one of {', '.join(TRAINERS)} or None")
    return STAGE_KINDS.register(obj, replace=replace)


def unregister_stage_kind(name: str) -> None:
    """Remove a registered stage kind (tests, notebooks); a built-in raises."""
    STAGE_KINDS.unregister(name)


def stage_kinds() -> dict[str, StageKind]:
    """Every registered stage kind, built-ins and plugins."""
    return dict(STAGE_KINDS.items())


def get_stage_kind(name: Any) -> StageKind:
    kinds = stage_kinds()
    if name not in kinds:
        raise ValueError(f"kind must be one of {', '.join(sorted(kinds))}, got {name!r}")
    return kinds[name]


# -- the built-in kinds ----------------------------------------------------------------------
_S, _R = "groundrl.train.stages", "groundrl.train.rm_stages"
_T = "groundrl.train.stage_settings"
register_stage_kind("grpo", f"{_S}:run_grpo_stage", trainer="grpo", doc="GRPO on the recipe's rubric")
register_stage_kind(
    "sft", f"{_S}:run_sft_stage", trainer="sft", doc="SFT on {prompt, target, images?} records"
)
register_stage_kind(
    "verifier_filter",
    f"{_S}:run_verifier_filter_stage",
    blocks={"threshold": f"{_S}:parse_threshold"},
    produces_data=True,
    settings=f"{_T}:VerifierFilterSettings",
    doc="Argos: keep samples whose best rollout the verifier scores ≥ threshold",
)
register_stage_kind(
    "rft",
    f"{_R}:run_rft_stage",
    trainer="sft",
    blocks={"rft": "groundrl.train.rft:RFTConfig.from_mapping", "inputs": f"{_R}:parse_inputs"},
    settings=f"{_T}:RFTStageSettings",
    doc="EQA-RM rejective fine-tuning: sample, keep by Eq. 1, SFT",
)
register_stage_kind(
    "cgrpo",
    f"{_R}:run_cgrpo",
    trainer="grpo",
    blocks={"cgrpo": f"{_R}:parse_cgrpo", "inputs": f"{_R}:parse_inputs"},
    settings=f"{_T}:CGRPOStageSettings",
    doc="EQA-RM contrastive GRPO",
)
register_stage_kind(
    "proxy_grpo",
    f"{_R}:run_proxy_grpo",
    trainer="grpo",
    blocks={"proxy": f"{_R}:parse_proxy"},
    settings=f"{_T}:ProxyGRPOSettings",
    doc="Proxy-GRM policy GRPO with the proxy agent's verdict as a reward",
)
register_stage_kind("proxy_sft", f"{_R}:run_proxy_sft", trainer="sft", doc="Proxy-SFT of the proxy agent")
register_stage_kind("proxy_rl", f"{_R}:run_proxy_rl", trainer="grpo", doc="Proxy-RL of the proxy agent")
STAGE_KINDS.mark_builtins()
