"""What a recipe is: a named paper method that builds its rubric from declared options
and says which sample fields it reads.

A third-party recipe is one :class:`Recipe` object, registered with
:func:`groundrl.recipes.register` or through the ``groundrl.recipes`` entry-point group::

    from groundrl import Option, Part, Recipe, Rubric

    def build(bonus: float = 0.0) -> Rubric:
        def exact(completion, **fields):          # **fields: every sample field
            return float(completion.strip() == fields.get("answer")) + bonus
        return Rubric([Part("exact", exact)], name="my_recipe")

    RECIPE = Recipe(name="my_recipe", paper="mine", summary="exact match", build=build,
                    required=("answer",), options=(Option("bonus", "float", 0.0, "added to every score"),))
"""

from __future__ import annotations

import atexit
import inspect
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from groundrl.judges.config import JudgeConfig
from groundrl.recipes.options import UNSET, Option, OptionError
from groundrl.rubric import Rubric

# Rubrics that own a judge backend. Trainer adapters keep theirs for the whole run; the
# backends (HTTP sessions, event-loop threads) are closed when the interpreter exits.
_open_rubrics: weakref.WeakSet[Rubric] = weakref.WeakSet()


@atexit.register
def _close_open_rubrics() -> None:
    for rubric in list(_open_rubrics):
        rubric.close()


def _as_options(options: Any) -> tuple[Option, ...]:
    if isinstance(options, Mapping):  # {name: help}: untyped options (JSON from text)
        return tuple(Option(n, "json", UNSET, str(h)) for n, h in options.items())
    return tuple(options)


@dataclass(frozen=True)
class Recipe:
    """A paper's reward recipe.

    ``build(**options) -> Rubric`` makes the rubric; its parameters must be exactly the
    declared ``options`` (checked here, so the declaration and the builder cannot drift).
    ``required`` are the sample fields every line must carry besides ``completion``;
    ``optional`` the ones read when present. ``label_field`` is the field that a
    trainer's single "label" / "ground_truth" fills (verl, OpenRLHF).
    ``judge_factory(backend, sampling) -> judge`` turns a judge backend into the object
    the ``judge`` option gives the builder (``None``: the recipe has no model-based parts).
    """

    name: str
    paper: str
    summary: str
    build: Callable[..., Rubric]
    required: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()
    label_field: str | None = None
    options: Sequence[Option] = ()
    judge_factory: Callable[[Any, Any], Any] | None = None
    judge_parts: tuple[str, ...] = ()
    # samples ({"completion", "id"?, <fields>}) or a function returning them (loaded lazily):
    # what `check_recipe`, the test suite and `demo --score-examples` score
    examples: Sequence[Mapping[str, Any]] | Callable[[], Sequence[Mapping[str, Any]]] = ()
    example_options: Mapping[str, Any] = field(default_factory=dict)  # e.g. a bundled action map
    gold_example: str | None = None  # the example id that must score the rubric's maximum
    # reward-hacking probes (integrations/probes.py) the paper's reward does not score
    # lower, each with the reason shown in the probe table
    probe_exempt: Mapping[str, str] = field(default_factory=dict)
    _by_name: dict[str, Option] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.name or not self.name.replace("_", "a").replace("-", "a").isalnum():
            raise ValueError(f"recipe name {self.name!r}: use letters, digits, '_' and '-'")
        if not callable(self.build):
            raise TypeError(f"recipe {self.name!r}: build must be callable")
        opts = _as_options(self.options)
        object.__setattr__(self, "options", opts)
        self._by_name.update({o.name: o for o in opts})
        if len(self._by_name) != len(opts):
            raise ValueError(f"recipe {self.name!r}: option names repeat")
        self._check_signature()

    def _check_signature(self) -> None:
        try:
            params = inspect.signature(self.build).parameters.values()
        except (TypeError, ValueError):
            return
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
            return
        names = {p.name for p in params if p.kind is not inspect.Parameter.VAR_POSITIONAL}
        if names != set(self._by_name):
            raise ValueError(
                f"recipe {self.name!r}: build() takes {sorted(names)} but the declared options are "
                f"{sorted(self._by_name)}; declare each option once"
            )

    def example_samples(self) -> list[dict[str, Any]]:
        """The recipe's examples as fresh dicts (``[]`` when it has none)."""
        ex = self.examples() if callable(self.examples) else self.examples
        return [dict(e) for e in ex]

    def example_fields(self) -> dict[str, Any]:
        """The fields (all keys but ``completion`` and ``id``) of the example carrying the
        most of them (the first on a tie): valid inputs for tests and benchmarks that vary
        only the completion, so a new recipe is covered by them without a copy of its data."""
        samples = self.example_samples()
        if not samples:
            raise ValueError(f"recipe {self.name!r} has no examples; give it Recipe(examples=...)")
        fields = [{k: v for k, v in s.items() if k not in ("completion", "id")} for s in samples]
        return max(fields, key=len)  # max keeps the first of equal lengths

    # -- options ------------------------------------------------------------------------

    def option(self, name: str) -> Option:
        try:
            return self._by_name[name]
        except KeyError:
            known = ", ".join(self._by_name) or "none"
            raise OptionError(f"recipe {self.name!r} has no option {name!r} (options: {known})") from None

    def resolve_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """Declared defaults overlaid with ``options``, each converted by its type."""
        for name in options:
            self.option(name)
        return {
            o.name: o.convert(options[o.name], self.name) if o.name in options else o.default
            for o in self.options
            if o.name in options or o.default is not UNSET
        }

    def rubric(self, **options: Any) -> Rubric:
        """The rubric for these options. A ``judge`` given as a
        :class:`~groundrl.judges.config.JudgeConfig` (or its mapping) becomes a backend
        that the rubric owns: ``rubric.close()`` closes it."""
        values = self.resolve_options(options)
        backend = None
        judge = values.get("judge")
        if isinstance(judge, JudgeConfig):
            if self.judge_factory is None:
                raise OptionError(f"recipe {self.name!r} has no model-based parts; drop the judge")
            backend = judge.make_backend()
            try:
                values["judge"] = self.judge_factory(backend, judge.sampling())
            except Exception:
                backend.close()
                raise
        try:
            rubric = self.build(**values)
        except Exception:
            if backend is not None:
                backend.close()
            raise
        if backend is not None:
            rubric.resources.append(backend)
            _open_rubrics.add(rubric)  # closed at exit if its owner never closes it
        if values.get("judge") is not None:
            rubric.judges.append(values["judge"])
        return rubric

    # -- samples ------------------------------------------------------------------------

    def missing_fields(self, sample: Mapping[str, Any]) -> list[str]:
        """Required fields (``completion`` included) absent from ``sample``."""
        return [f for f in ("completion", *self.required) if f not in sample or sample[f] is None]

    def describe(self) -> dict[str, Any]:
        """What ``groundrl recipes --json`` prints for this recipe."""
        return {
            "name": self.name,
            "paper": self.paper,
            "summary": self.summary,
            "required": ["completion", *self.required],
            "optional": list(self.optional),
            "label_field": self.label_field,
            "judge_parts": list(self.judge_parts),
            "options": [o.describe() for o in self.options],
        }
