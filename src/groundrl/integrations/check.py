"""``check_recipe``: the checks every recipe must pass, built-in or a plugin's (after
Gymnasium's ``check_env``).

1. **Declared fields** — the recipe has examples; each carries ``completion`` and every
   ``required`` field; the ``label_field`` is a declared field; the judge parts it names
   exist when a judge is configured.
2. **Totality** — every example's fields with hostile completions (empty, not text, 100 KB
   of unclosed tags, brackets, digits, NaN words, control characters), and the first
   example with each field replaced by hostile values: no exception, a finite total
   inside ``Rubric.value_range()``, and a reason on every part that has no value.
3. **The gold example** (``Recipe.gold_example``) scores the maximum of the range.
4. **Adapters agree** — on the examples, the TRL reward functions (weighted), verl's
   ``compute_score`` and OpenRLHF's ``reward_func`` give the rubric's totals.
5. **Reward-hacking probes** (:mod:`groundrl.integrations.probes`) — omit grounding, cite
   wrong evidence, the verdict in the rubric, overflow, repeated tags, empty format, the
   question copied, both options answered: each scores strictly below the honest gold
   example, or is skipped with its reason (``RecipeCheck.probes``).

It lives in ``integrations/`` because step 4 runs the three adapters: ``recipes/`` sits
below ``integrations/`` in the layer order (docs/architecture.md).

>>> check_recipe("eqa_rm").ok
True
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from groundrl.integrations.openrlhf import make_reward_func
from groundrl.integrations.probes import ProbeResult, run_probes
from groundrl.integrations.trl import reward_funcs
from groundrl.integrations.verl import make_compute_score
from groundrl.recipes import get_recipe, recipe_names
from groundrl.recipes.base import Recipe

_K = 100_000
HOSTILE_TEXT: tuple[Any, ...] = (
    "",
    "   \n\t",
    None,
    0,
    3.5,
    ["a", "b"],
    {"completion": "x"},
    "<" * _K,
    "<score>" * (_K // 7),
    "<plans>" + "1." * (_K // 2),
    "{" * _K,
    "[" * _K,
    "[[" + "1," * (_K // 2),
    "<rubric>" + "x" * _K,
    "<answer>1</answer>" * 1_000,
    "nan inf 1e999 -0 NaN",
    "\x00\x1b[31m\u202e\ufeff" * 1_000,
    "9" * _K,
)
HOSTILE_VALUES: tuple[Any, ...] = (None, "", -1, 1e999, [], {}, "x" * _K, [None, {"a": []}])
TOL = 1e-9


@dataclass
class RecipeCheck:
    recipe: str
    problems: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    probes: list[ProbeResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def fail(self, msg: str) -> None:
        if len(self.problems) < 50:
            self.problems.append(msg)

    def count(self, name: str, n: int = 1) -> None:
        self.counts[name] = self.counts.get(name, 0) + n


class RecipeCheckError(AssertionError):
    """A recipe failed :func:`check_recipe`; the message lists every problem."""


def _short(v: Any) -> str:
    r = repr(v)
    return r if len(r) <= 40 else r[:37] + "..."


def _check_verdict(chk: RecipeCheck, verdict: Any, vr: tuple[float, float] | None, where: str) -> None:
    total = verdict.total
    if not isinstance(total, (int, float)) or not math.isfinite(total):
        chk.fail(f"{where}: total {total!r} is not a finite number")
    elif vr is not None and not (vr[0] - TOL <= total <= vr[1] + TOL):
        chk.fail(f"{where}: total {total} outside value_range {vr}")
    for name, part in verdict.parts.items():
        if str(part.reason).startswith("error: "):  # the rubric caught a part's exception
            chk.fail(f"{where}: part {name} raised ({part.reason[7:]})")
        elif part.value is None and not part.reason:
            chk.fail(f"{where}: part {name} has no value and no reason")


def _score(chk: RecipeCheck, rubric: Any, completion: Any, sample: Mapping[str, Any], where: str) -> Any:
    chk.count("scored")
    try:
        return rubric.score(completion, **sample)
    except Exception as e:  # the check's point: any exception is a finding
        chk.fail(f"{where}: raised {type(e).__name__}: {e}")
        return None


def _fields(rec: Recipe, chk: RecipeCheck, examples: Sequence[Mapping[str, Any]], rubric: Any) -> None:
    if not examples:
        chk.fail("no examples: give Recipe(examples=[{'completion': ..., <fields>}, ...])")
    declared = {*rec.required, *rec.optional}
    if rec.label_field is not None and rec.label_field not in declared:
        chk.fail(f"label_field {rec.label_field!r} is neither required nor optional")
    for i, ex in enumerate(examples):
        missing = [f for f in ("completion", *rec.required) if f not in ex]
        if missing:
            chk.fail(f"example {ex.get('id', i)}: missing field(s) {missing}")
    if rec.gold_example is not None and rec.gold_example not in {str(e.get("id")) for e in examples}:
        chk.fail(f"gold_example {rec.gold_example!r} is not among the examples' ids")
    names = set(getattr(rubric, "names", ()))
    chk.count("examples", len(examples))
    chk.count("parts", len(names))


def _totality(chk: RecipeCheck, rubric: Any, examples: Sequence[Mapping[str, Any]], vr: Any) -> None:
    for ex in examples:
        sample = {k: v for k, v in ex.items() if k not in ("completion", "id")}
        for text in (ex.get("completion"), *HOSTILE_TEXT):
            v = _score(chk, rubric, text, sample, f"example {ex.get('id')} with completion {_short(text)}")
            if v is not None:
                _check_verdict(chk, v, vr, f"example {ex.get('id')} with completion {_short(text)}")
    if not examples:
        return
    first = examples[0]
    sample = {k: v for k, v in first.items() if k not in ("completion", "id")}
    for key in sample:
        for bad in HOSTILE_VALUES:
            where = f"example {first.get('id')} with {key}={_short(bad)}"
            v = _score(chk, rubric, first["completion"], {**sample, key: bad}, where)
            if v is not None:
                _check_verdict(chk, v, vr, where)


def _gold(chk: RecipeCheck, rec: Recipe, rubric: Any, examples: Sequence[Mapping[str, Any]], vr: Any) -> None:
    if rec.gold_example is None:
        return
    for ex in examples:
        if str(ex.get("id")) == rec.gold_example:
            sample = {k: v for k, v in ex.items() if k not in ("completion", "id")}
            v = _score(chk, rubric, ex["completion"], sample, f"gold example {rec.gold_example}")
            if v is not None and vr is not None and abs(v.total - vr[1]) > TOL:
                chk.fail(f"gold example {rec.gold_example} scores {v.total}, not the maximum {vr[1]}")


class _AdapterOptions(TypedDict, total=False):
    """What the adapters' factories get besides the target (a named recipe: its options)."""

    recipe_options: Mapping[str, Any]


def _adapters(
    chk: RecipeCheck, rec: Recipe, options: Mapping[str, Any], examples: Sequence[Mapping[str, Any]]
) -> None:
    if not examples:
        return

    rubric = rec.rubric(**options)
    # a registered recipe goes through the adapters by name, as trainers call them; an
    # unregistered one (a plugin under development) as its rubric
    named = rec.name in recipe_names() and get_recipe(rec.name) is rec
    target: Any = rec.name if named else rubric
    kw: _AdapterOptions = {"recipe_options": options} if named else {}
    label = None if named else rec.label_field
    samples = [{k: v for k, v in ex.items() if k not in ("completion", "id")} for ex in examples]
    comps = [ex["completion"] for ex in examples]
    want = [rubric.score(c, **s).total for c, s in zip(comps, samples, strict=True)]
    funcs, weights = reward_funcs(target, async_judges=False, **kw)
    cols = {k: [s.get(k) for s in samples] for k in {k for s in samples for k in s}}
    prompts = [[{"role": "user", "content": "q"}] for _ in comps]
    chat = [[{"role": "assistant", "content": c}] for c in comps]
    per_func = [f(prompts=prompts, completions=chat, **cols) for f in funcs]
    trl = [
        sum(w * (vals[i] or 0.0) for w, vals in zip(weights, per_func, strict=True))
        for i in range(len(comps))
    ]
    compute = make_compute_score(target, label, **kw)
    verl = [
        compute("groundrl", c, json.dumps(s), {}).get("score") for c, s in zip(comps, samples, strict=True)
    ]
    reward = make_reward_func(target, label, tensors=False, score_range=None, **kw)
    orl = reward([f"q{c}" for c in comps], ["q"] * len(comps), [json.dumps(s) for s in samples])["rewards"]
    for name, got in (("TRL", trl), ("verl", verl), ("OpenRLHF", orl)):
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            if g is None or abs(float(g) - w) > 1e-6:
                chk.fail(f"{name} adapter: example {examples[i].get('id', i)} gives {g}, the rubric {w}")
        chk.count(f"adapter:{name}", len(got))
    rubric.close()


def _probes(chk: RecipeCheck, rec: Recipe, rubric: Any, examples: Sequence[Mapping[str, Any]]) -> None:
    try:
        chk.probes = run_probes(rubric, examples, rec.gold_example, getattr(rec, "probe_exempt", None))
    except Exception as e:  # the check's point: any exception is a finding
        chk.fail(f"probes: raised {type(e).__name__}: {e}")
        return
    for p in chk.probes:
        chk.count(f"probe:{p.status}")
        if p.status == "FAIL":
            chk.fail(f"probe {p.name} (from example {p.example}): {p.reason}")


def check_recipe(
    recipe: Recipe | str, options: Mapping[str, Any] | None = None, strict: bool = True
) -> RecipeCheck:
    """Run every check on ``recipe`` (an object or a registered name) with ``options``
    over its ``example_options``. ``strict``: raise :class:`RecipeCheckError` listing the
    problems; else return them in the :class:`RecipeCheck`."""
    rec = get_recipe(recipe) if isinstance(recipe, str) else recipe
    opts = {**rec.example_options, **(options or {})}
    chk = RecipeCheck(rec.name)
    rubric = rec.rubric(**opts)
    try:
        examples = rec.example_samples()
        vr = rubric.value_range()
        _fields(rec, chk, examples, rubric)
        _totality(chk, rubric, examples, vr)
        _gold(chk, rec, rubric, examples, vr)
        _probes(chk, rec, rubric, examples)
    finally:
        rubric.close()
    try:
        _adapters(chk, rec, opts, rec.example_samples())
    except Exception as e:
        chk.fail(f"adapters: raised {type(e).__name__}: {e}")
    if strict and not chk.ok:
        raise RecipeCheckError(f"recipe {rec.name}: " + "; ".join(chk.problems))
    return chk
