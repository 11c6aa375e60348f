"""verl adapter: ``compute_score(data_source, solution_str, ground_truth, extra_info)``.

verl's reward managers call a custom ``compute_score`` once per response and accept a
float or a dict with ``"score"``; every other key becomes a logged per-sample metric,
so every call returns the same keys: ``score`` plus one float per part (a part that
does not apply is reported as 0.0; the total already ignores it).

``ground_truth`` fills the recipe's label field (``gold``, ``gt_score``, ``preferred``,
``answer``); ``extra_info`` (a dict) supplies any other sample field, e.g. images or an
``action_map`` path — verl does not pass images to reward functions, so carry image
references in ``extra_info``.

Config (``custom_reward_function``)::

    custom_reward_function:
      path: <site-packages>/groundrl/integrations/verl.py
      name: compute_score_async    # or compute_score; recipe from extra_info["recipe"] or
                                   # data_source "groundrl/<recipe>"
      reward_kwargs:               # optional; verl passes these to compute_score
        recipe: proxy_grm          # default recipe when the sample names none
        recipe_options: {}         # the recipe's options (groundrl recipes lists them)
        judge: {backend: openai, model: judge, url: "http://127.0.0.1:8000/v1"}

A run that mixes recipes names them all (``reward_kwargs.recipes: [reinforced_planning,
proxy_grm]`` or ``GROUNDRL_RECIPES=reinforced_planning,proxy_grm``): every call then
returns the same keys — ``score``, ``<recipe>/applies`` per recipe and
``<recipe>/<part>`` + ``<recipe>/<part>/applies`` per part of each (verl takes the key set
from the first sample, and parts of different recipes that share a name stay apart). A
part that does not apply (or belongs to another recipe) logs 0.0 with ``…/applies`` 0.0,
so ``mean(<recipe>/<part>) / mean(<recipe>/<part>/applies)`` is its mean where it applies
(:mod:`groundrl.results`). A one-recipe run keeps the plain keys (``score`` + one per
part); ``applicability: true`` adds ``<part>/applies`` there too.

``ground_truth`` may be a numpy array (pandas reads parquet lists that way), a list, a
number or a string; a JSON-encoded label (``groundrl.integrations.verl.write_dataset``
encodes labels when their types differ across rows) is decoded, and a JSON *object*
supplies several sample fields. For verl's process-based ``reward_manager.name=remote``
the function must pickle: the file loaded by ``path`` re-exports this module's objects,
so Ray pickles them by reference to ``groundrl.integrations.verl``.

``compute_score_async`` (what ``examples/verl/*.sh`` configure) gives the same result
dicts; verl awaits it on its reward loop, and the concurrent calls of a judge-backed
recipe are scored in one ``Rubric.score_batch`` so the judge sends them together
(``bench/verl_judge.py``). ``compute_score`` sends one judge request per call from verl's
thread pool.

:func:`write_dataset` (``groundrl export verl``) writes the rows, images embedded as
``{"bytes": …}`` with one ``<image>`` placeholder each in the prompt, the form verl's
``RLHFDataset`` reads.

The same settings can come from ``GROUNDRL_RECIPE`` / ``GROUNDRL_OPTIONS`` /
``GROUNDRL_JUDGE_*`` environment variables on the workers
(:func:`groundrl.integrations.common.env_config`). Or build a bound function in your own
module: ``compute_score = make_compute_score("reinforced_planning", action_map="map.json")``.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import math
import os
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, TypedDict

from groundrl.integrations.common import (
    NOT_JSON,
    RubricCache,
    cached_env_config,
    completion_text,
    env_snapshot,
    loads_fresh,
)
from groundrl.io import atomic_output
from groundrl.recipes import get_recipe, recipe_names
from groundrl.recipes.resolve import label_field, options_for, resolve_rubric
from groundrl.results import APPLIES, TRAINER_NOT_APPLICABLE, part_values, trainer_values
from groundrl.rubric import Rubric

ENV_RECIPES = "GROUNDRL_RECIPES"
ENV_APPLICABILITY = "GROUNDRL_APPLICABILITY"


def plain(value: Any) -> Any:
    """numpy arrays / scalars (pandas-read parquet) as Python lists / numbers, recursively.

    >>> import numpy as np
    >>> plain(np.array(["find a Apple", "pick up the Apple"], dtype=object))
    ['find a Apple', 'pick up the Apple']
    """
    if isinstance(value, (str, bytes, bool, int, float)) or value is None:
        return value
    # containers before the numpy test: hasattr on a dict raises and catches inside
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "tolist") and hasattr(value, "dtype"):  # ndarray or numpy scalar
        return plain(value.tolist())
    return value


_PLAIN = (str, bytes, bool, int, float, type(None))  # what plain() returns as it is


def _decode_label(value: Any) -> Any:
    """A JSON-encoded list/object label (``write_dataset``'s ``{"json": …}`` form or a
    JSON string starting with ``[``/``{``) decoded; anything else unchanged."""
    if isinstance(value, dict) and len(value) == 1 and isinstance(value.get("json"), str):
        decoded = loads_fresh(value["json"])  # the n responses of a prompt share it: decoded once
        return value["json"] if decoded is NOT_JSON else decoded
    return value


def _extra(extra_info: Any) -> Any:
    """``extra_info`` as plain Python; ``write_dataset``'s ``{"json": "…"}`` form decoded.
    A dict comes back as a new dict of its string keys, the caller's to fill; its values
    are never shared with another call (:func:`loads_fresh`)."""
    if type(extra_info) is dict and type(extra_info.get("json")) is str:
        # write_dataset's form as verl passes it: {"json": …} plus the keys verl's reward
        # managers add on every call (num_turns, rollout_reward_scores); the text is
        # decoded once per prompt, not once per response (issue 41)
        decoded = loads_fresh(extra_info["json"])
        if type(decoded) is dict:
            for k, v in extra_info.items():
                if k != "json" and type(k) is str:
                    decoded[k] = v if type(v) in _PLAIN else plain(v)
            return decoded
    if not isinstance(extra_info, dict):
        return extra_info
    extra = {k: v for k, v in plain(extra_info).items() if isinstance(k, str)}
    if isinstance(extra.get("json"), str):
        decoded = loads_fresh(extra["json"])
        if isinstance(decoded, dict):
            rest = {k: v for k, v in extra.items() if k != "json"}  # verl adds num_turns etc.
            extra = {**decoded, **rest}
    return extra


def _sample(label: str | None, ground_truth: Any, extra_info: Any) -> dict[str, object]:
    return _sample_of(label, ground_truth, _extra(extra_info))


def _sample_of(label: str | None, ground_truth: Any, extra: Any) -> dict[str, object]:
    """:func:`_sample` of an ``extra_info`` already through :func:`_extra` (issue 41: it
    was decoded and made plain twice per call); a dict ``extra`` becomes the sample."""
    # _extra's dict holds string keys only (a sample field is a keyword argument)
    sample: dict[str, object] = extra if isinstance(extra, dict) else {}
    gt = ground_truth if type(ground_truth) in _PLAIN else _decode_label(plain(ground_truth))
    if isinstance(gt, str) and gt.lstrip()[:1] in ("[", "{"):
        decoded = loads_fresh(gt)
        if isinstance(decoded, dict):
            sample.update(decoded)  # a JSON object's keys are strings
            return sample
        if isinstance(decoded, list):
            gt = decoded
    if label is not None and gt is not None:
        sample[label] = gt
    return sample


def _result(
    rubric: Rubric, solution_str: Any, sample: Mapping[str, object], applicability: bool = False
) -> dict[str, float | None]:
    verdict = rubric.score(completion_text(solution_str), **sample)
    if applicability:
        return {"score": verdict.total, **trainer_values(verdict, rubric.names, applicability=True)}
    return {"score": verdict.total, **part_values(verdict, rubric.names, TRAINER_NOT_APPLICABLE)}


def make_compute_score(
    recipe_or_rubric: str | Rubric,
    label: str | None = None,
    *,
    recipe_options: Mapping[str, Any] | None = None,
    judge: Any = None,
    applicability: bool = False,
    **options: Any,
) -> Callable[..., dict[str, float | None]]:
    """A verl ``compute_score`` bound to one recipe (or rubric). ``label`` overrides the
    field that ``ground_truth`` fills (required for a bare rubric); options come as
    ``recipe_options={...}`` or keywords, ``judge`` as a mapping, a JudgeConfig or a
    judge object; ``applicability`` adds ``<part>/applies`` keys."""
    rubric = resolve_rubric(recipe_or_rubric, recipe_options, judge, **options)
    field = label or label_field(recipe_or_rubric)

    def compute_score(data_source=None, solution_str="", ground_truth=None, extra_info=None, **kwargs):
        return _result(rubric, solution_str, _sample(field, ground_truth, extra_info), applicability)

    return compute_score


_rubrics = RubricCache()


def _recipe_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return [str(v) for v in value]


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


class _Call(NamedTuple):
    """One ``compute_score`` call resolved: the sample's recipe, the run's recipes (two or
    more: namespaced keys), each recipe's rubric, and the sample's fields. (A NamedTuple,
    not a dataclass: verl execs this file outside ``sys.modules``, where a dataclass
    cannot resolve its string annotations.)"""

    name: str
    run: list[str]
    rubrics: dict[str, Rubric]
    sample: dict[str, object]
    applicability: bool
    names: list[str]  # the sample's rubric's part names (read once per setting, issue 41)
    batched: bool  # whether that rubric has a batched (judge) part


def _resolve_call(
    data_source: Any,
    ground_truth: Any,
    extra_info: Any,
    recipe: str | None,
    recipes: Any,
    recipe_options: Mapping[str, Any] | None,
    judge: Any,
    applicability: Any,
) -> _Call:
    extra_info = _extra(extra_info)
    name = extra_info.get("recipe") if isinstance(extra_info, dict) else None
    if name is None and isinstance(data_source, str) and data_source.startswith("groundrl/"):
        name = data_source.split("/", 1)[1]
    # Everything but the sample is the run's setting: resolved once per distinct setting
    # and environment (issue 41: env, options, rubric cache and recipe lookups per call
    # made verl's compute_score ~10x the reward itself).
    try:
        key: Any = (name, recipe, recipes if recipes is None else _key(recipes),
                    recipe_options if recipe_options is None else _key(recipe_options),
                    judge if judge is None else _key(judge), _key(applicability),
                    env_snapshot(), _rubrics.generation)  # fmt: skip
        hit = _settings.get(key)
    except TypeError:  # unhashable or not JSON-able settings: resolve without the cache
        key, hit = None, None
    if hit is None:
        hit = _setting(data_source, name, recipe, recipes, recipe_options, judge, applicability)
        if key is not None:
            if len(_settings) >= _SETTINGS_MAX:
                _settings.clear()  # [ours] a run has a few settings; never grow without bound
            _settings[key] = hit
    name, run, rubrics, label, applies, names, batched = hit
    return _Call(name, run, rubrics, _sample_of(label, ground_truth, extra_info), applies, names, batched)


_Setting = tuple[str, list[str], dict[str, Rubric], str | None, bool, list[str], bool]
_settings: dict[Any, _Setting] = {}
_SETTINGS_MAX = 64


def _key(value: Any) -> Any:
    """A setting as a cache key: itself when hashable and plain, else its JSON text (the
    judge by its settings, as :class:`RubricCache` keys it). verl passes the same
    reward_kwargs objects on every call: their text is reused while they still equal what
    it was made from (an object changed in place gets a new key)."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    memo = _keys.get(id(value))
    if memo is not None and memo[0] is value and memo[1] == value:
        return memo[2]
    key = json.dumps(value.to_dict() if hasattr(value, "to_dict") else value, sort_keys=True, default=repr)
    if len(_keys) >= 64:
        _keys.clear()
    _keys[id(value)] = (value, json.loads(key), key)  # holds value: its id is not reused
    return key


_keys: dict[int, tuple[Any, Any, str]] = {}


def _setting(
    data_source: Any,
    name: Any,
    recipe: str | None,
    recipes: Any,
    recipe_options: Any,
    judge: Any,
    applicability: Any,
) -> _Setting:
    """The sample-independent part of a call: recipe, the run's recipes, their rubrics,
    the label field, whether to add applicability keys, and the sample's rubric's part
    names and whether it has a batched part."""
    env_recipe, env_options, env_judge = cached_env_config()
    name = name or recipe or env_recipe
    if name is None:
        raise ValueError(
            f"cannot tell the groundrl recipe (data_source={data_source!r}); set extra_info['recipe'], "
            "data_source='groundrl/<recipe>' or reward_kwargs.recipe, with one of "
            f"{', '.join(recipe_names())}"
        )
    run = _recipe_list(recipes) or _recipe_list(os.environ.get(ENV_RECIPES))
    if len(run) >= 2 and name not in run:
        raise ValueError(f"sample recipe {name!r} is not one of this run's recipes ({', '.join(run)})")
    shared_options = dict(recipe_options) if recipe_options is not None else env_options
    shared_judge = judge if judge is not None else env_judge
    if applicability is None:
        applicability = os.environ.get(ENV_APPLICABILITY, "")
    rubrics = {}
    for r in run if len(run) >= 2 else [name]:
        options, judge_ = options_for(get_recipe(r), shared_options, shared_judge)
        rubrics[r] = _rubrics.get(r, options, judge_)
    label = get_recipe(name).label_field
    mine = rubrics[name]
    batched = any(p.batched for p in mine.parts)
    return name, run if len(run) >= 2 else [], rubrics, label, _truthy(applicability), mine.names, batched


def _assemble(call: _Call, verdict: Any) -> dict[str, float | None]:
    """verl's result dict for the sample's verdict (see the module docstring's keys)."""
    if not call.run:
        if call.applicability:
            return {"score": verdict.total, **trainer_values(verdict, call.names, applicability=True)}
        return {"score": verdict.total, **part_values(verdict, call.names, TRAINER_NOT_APPLICABLE)}
    out: dict[str, float | None] = {"score": verdict.total}
    for r in call.run:
        mine = r == call.name
        out[f"{r}/{APPLIES}"] = 1.0 if mine else 0.0
        out.update(
            trainer_values(
                verdict if mine else None, call.rubrics[r].names, prefix=f"{r}/", applicability=True
            )
        )
    return out


def compute_score(
    data_source: Any = None,
    solution_str: Any = "",
    ground_truth: Any = None,
    extra_info: Any = None,
    *,
    recipe: str | None = None,
    recipes: Any = None,
    recipe_options: Mapping[str, Any] | None = None,
    judge: Any = None,
    applicability: Any = None,
    **kwargs: Any,
) -> dict[str, float | None]:
    """Dispatching ``compute_score``: the recipe comes from ``extra_info["recipe"]``, a
    ``data_source`` of the form ``groundrl/<recipe>``, the ``recipe`` reward kwarg or
    ``$GROUNDRL_RECIPE``, in that order. Options and judge come from the reward kwargs,
    else from the environment. ``recipes`` (reward kwarg, a list, or
    ``$GROUNDRL_RECIPES``, comma-separated) names every recipe of a mixed run: with two or
    more, the keys are namespaced and identical on every call (see the module docstring).
    An unknown recipe, or one outside ``recipes``, is a configuration error and raises
    ``ValueError`` naming the choices. One sample per call: a judge-backed recipe sends
    one judge request per call (see :func:`compute_score_async` for batched calls)."""
    call = _resolve_call(
        data_source, ground_truth, extra_info, recipe, recipes, recipe_options, judge, applicability
    )
    verdict = call.rubrics[call.name].score_sample(completion_text(solution_str), call.sample)
    return _assemble(call, verdict)


# -- the async, batched entry point --------------------------------------------------

#: How long a batch waits for more concurrent calls before it is scored [ours: verl
#: decodes each response in a thread before calling compute_score, so a batch's calls
#: arrive spread over a few ms; 20 ms gathers them at little cost next to a judge call].
BATCH_WINDOW_S = 0.02
#: The most calls scored in one ``Rubric.score_batch`` [ours: the judge's own
#: ``concurrency`` bounds the requests in flight; this only bounds one batch's memory].
MAX_BATCH = 512


class _Batcher:
    """Concurrent calls on one event loop for one rubric, scored together: each call
    waits (at most ``window`` s, or until ``max_batch`` are waiting), then the waiting
    calls go to ``Rubric.score_batch`` in a worker thread, so judge-backed parts send
    their requests as one batch (the judge backend's concurrency and micro-batching)."""

    def __init__(self, rubric: Rubric, window: float, max_batch: int) -> None:
        self.rubric, self.window, self.max_batch = rubric, window, max_batch
        self.pending: list[tuple[Any, Mapping[str, object], asyncio.Future]] = []
        self.timer: asyncio.TimerHandle | None = None
        self.batches: list[int] = []  # sizes of the batches scored (bench/tests read it)

    async def score(self, completion: Any, sample: Mapping[str, object]) -> Any:
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        self.pending.append((completion, sample, fut))
        if len(self.pending) >= self.max_batch:
            self._flush()
        elif self.timer is None:
            self.timer = loop.call_later(self.window, self._flush)
        return await fut

    def _flush(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        batch, self.pending = self.pending, []
        if batch:
            self.batches.append(len(batch))
            asyncio.get_running_loop().create_task(self._run(batch))

    async def _run(self, batch: list[tuple[Any, Mapping[str, object], asyncio.Future]]) -> None:
        try:
            verdicts = await asyncio.to_thread(
                self.rubric.score_batch, [b[0] for b in batch], [b[1] for b in batch]
            )
        except Exception as e:  # Rubric.score_batch contains part errors; this is a bug
            for *_, fut in batch:
                if not fut.done():
                    fut.set_exception(e)
            return
        for (*_, fut), v in zip(batch, verdicts, strict=True):
            if not fut.done():
                fut.set_result(v)


# per event loop (weakly: asyncio.run makes and frees loops), per rubric
_batchers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[int, _Batcher]] = (
    weakref.WeakKeyDictionary()
)


def _batcher(rubric: Rubric, window: float, max_batch: int) -> _Batcher:
    per_loop = _batchers.setdefault(asyncio.get_running_loop(), {})
    b = per_loop.get(id(rubric))
    if b is None or b.rubric is not rubric or (b.window, b.max_batch) != (window, max_batch):
        b = per_loop[id(rubric)] = _Batcher(rubric, window, max_batch)
    return b


def _check_batching(batch_window_s: Any, max_batch: Any) -> None:
    if not (batch_window_s >= 0 and math.isfinite(batch_window_s)):
        raise ValueError(f"reward_kwargs.batch_window_s must be a finite number ≥ 0, got {batch_window_s!r}")
    if isinstance(max_batch, bool) or not isinstance(max_batch, int) or max_batch < 1:
        raise ValueError(f"reward_kwargs.max_batch must be an integer ≥ 1, got {max_batch!r}")


async def compute_score_async(
    data_source: Any = None,
    solution_str: Any = "",
    ground_truth: Any = None,
    extra_info: Any = None,
    *,
    recipe: str | None = None,
    recipes: Any = None,
    recipe_options: Mapping[str, Any] | None = None,
    judge: Any = None,
    applicability: Any = None,
    batch_window_s: float = BATCH_WINDOW_S,
    max_batch: int = MAX_BATCH,
    **kwargs: Any,
) -> dict[str, float | None]:
    """:func:`compute_score` as a coroutine, the same keys and values: verl awaits an
    ``async def`` reward function on its reward loop (``reward.custom_reward_function.name:
    compute_score_async``) and runs a batch's samples concurrently. A judge-backed recipe's
    concurrent calls are gathered (``batch_window_s``, up to ``max_batch``; reward kwargs)
    and scored in one ``Rubric.score_batch``, so the judge sends them with its own
    concurrency and micro-batching instead of one request per call from verl's thread
    pool. Rule-only recipes are scored in place (nothing to wait for)."""
    if batch_window_s is not BATCH_WINDOW_S or max_batch is not MAX_BATCH:  # set: check them
        _check_batching(batch_window_s, max_batch)
    call = _resolve_call(
        data_source, ground_truth, extra_info, recipe, recipes, recipe_options, judge, applicability
    )
    rubric = call.rubrics[call.name]
    text = completion_text(solution_str)
    if not call.batched:
        return _assemble(call, rubric.score_sample(text, call.sample))
    verdict = await _batcher(rubric, float(batch_window_s), max_batch).score(text, call.sample)
    return _assemble(call, verdict)


IMAGE = "<image>"  # verl RLHFDataset's placeholder: one per entry of the row's images


def _image_bytes(ref: Any, base: Path | None, where: str) -> bytes:
    """The encoded bytes of one image reference: a file path (relative to ``base``, the
    input file's folder, then to the working directory), a ``data:`` URL, raw bytes, a
    ``{"bytes": …}`` / ``{"path": …}`` mapping or a PIL image. Raises ValueError naming
    ``where`` when it cannot be read as an image."""
    # lazy: Pillow loads only when a row carries images
    from PIL import Image

    data: bytes | None = None
    if isinstance(ref, dict):
        ref = ref.get("bytes") or ref.get("path") or ref.get("image")
    if isinstance(ref, bytes | bytearray):
        data = bytes(ref)
    elif isinstance(ref, Image.Image):
        buf = io.BytesIO()
        ref.save(buf, format="PNG")
        data = buf.getvalue()
    elif isinstance(ref, str) and ref.startswith("data:"):
        try:
            data = base64.b64decode(ref.split(",", 1)[1], validate=False)
        except (IndexError, ValueError) as e:
            raise ValueError(f"{where}: a data: URL that does not decode ({e})") from None
    elif isinstance(ref, str) and ref.split("://", 1)[0] in ("http", "https"):
        raise ValueError(f"{where}: {ref[:80]!r} is a URL; download it and give the file path")
    elif isinstance(ref, str | Path):
        path = Path(ref)
        for cand in ([base / path] if base is not None and not path.is_absolute() else []) + [path]:
            if cand.is_file():
                data = cand.read_bytes()
                break
        if data is None:
            raise ValueError(
                f"{where}: no image file at {str(ref)[:120]!r} (relative paths are read from the input's folder)"
            )
    else:
        raise ValueError(
            f"{where}: an image is a path, a data: URL, bytes or {{'bytes': …}}, got {type(ref).__name__}"
        )
    try:
        Image.open(io.BytesIO(data))  # reads the header only: a clear error now, not on the cluster
    except Exception as e:
        raise ValueError(f"{where}: not an image PIL can read ({type(e).__name__})") from None
    return data


def _content_text(content: Any, where: str) -> str:
    """A message's content as text: list content (OpenAI-style parts) joined, each image
    part becoming an ``<image>`` placeholder where it stood."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise ValueError(f"{where}: message content must be text or a list of parts")
    out = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            out.append(str(part.get("text", "")))
        elif kind in ("image", "image_url"):
            out.append(IMAGE)
        else:
            raise ValueError(f"{where}: a content part of type {kind!r}; use text and image parts")
    return "".join(out)


def verl_prompt(prompt: Any, n_images: int, where: str = "row") -> list[dict[str, str]]:
    """The chat ``prompt`` verl's ``RLHFDataset`` expects: text contents, with one
    ``<image>`` placeholder per image in order. A prompt without placeholders gets them
    in front of its first user message (where Qwen-VL's own chat examples put images);
    one whose count differs from the images raises ValueError naming ``where``.

    >>> verl_prompt("What is left of the sink?", 2)
    [{'role': 'user', 'content': '<image><image>What is left of the sink?'}]
    """
    if isinstance(prompt, str):
        prompt = [{"role": "user", "content": prompt}]
    if not isinstance(prompt, list) or not all(isinstance(m, dict) and "role" in m for m in prompt):
        raise ValueError(f"{where}: prompt must be text or a list of chat messages with a role")
    msgs = [{"role": str(m["role"]), "content": _content_text(m.get("content", ""), where)} for m in prompt]
    have = sum(m["content"].count(IMAGE) for m in msgs)
    if have == n_images:
        return msgs
    user = next((m for m in msgs if m["role"] == "user"), None)
    if have == 0 and user is not None:
        user["content"] = IMAGE * n_images + user["content"]
        return msgs
    raise ValueError(
        f"{where}: the prompt has {have} {IMAGE} placeholder(s) for {n_images} image(s); "
        f"give one per image (or none, and they go before the first user message)"
    )


class VerlRewardModel(TypedDict):
    style: str
    ground_truth: Any  # the recipe's label, or {"json": "…"} when label types differ across rows


class VerlRecord(TypedDict):
    """One row of verl's RLHF parquet layout, as :func:`write_dataset` writes it."""

    data_source: str
    prompt: list[dict[str, str]]
    images: list[dict[str, bytes]]
    ability: str
    reward_model: VerlRewardModel
    extra_info: dict[str, str]


BATCH_ROWS, BATCH_BYTES = 256, 32 << 20  # rows and image bytes held before a row group is written [ours]


def _row_recipe(i: int, row: Mapping[str, Any], recipe: str | None) -> Any:
    r = row.get("recipe") or recipe
    if r is None:
        raise ValueError(f"row {i} names no recipe and no recipe= was given")
    return r, get_recipe(r)


def _label_kinds(rows: Iterable[Mapping[str, Any]], recipe: str | None) -> set[str]:
    """The Python type names of every row's label (one pass, nothing kept)."""
    kinds: set[str] = set()
    for i, row in enumerate(rows):
        _, rec = _row_recipe(i, row, recipe)
        kinds.add(type(row.get(rec.label_field) if rec.label_field else None).__name__)
    return kinds


def _record(
    i: int, row: Mapping[str, Any], recipe: str | None, base: Path | None, as_json: bool
) -> VerlRecord:
    r, rec = _row_recipe(i, row, recipe)
    refs = row.get("images") or []
    refs = [refs] if isinstance(refs, str | bytes | dict) else list(refs)
    frames = row.get("video") or []
    refs += [frames] if isinstance(frames, str | bytes | dict) else list(frames)
    images = [{"bytes": _image_bytes(x, base, f"row {i} image {k}")} for k, x in enumerate(refs)]
    prompt = verl_prompt(row.get("prompt", ""), len(images), f"row {i}")
    gt = row.get(rec.label_field) if rec.label_field else None
    skip = {"prompt", "images", "video", "completion", rec.label_field}
    extra = {k: v for k, v in row.items() if k not in skip}
    extra.update(recipe=r, index=i)
    return {
        "data_source": f"groundrl/{r}",
        "prompt": prompt,
        "images": images,
        "ability": r,
        "reward_model": {"style": "rule", "ground_truth": {"json": json.dumps(gt)} if as_json else gt},
        "extra_info": {"json": json.dumps(extra)},
    }


def write_dataset(
    rows: Iterable[Mapping[str, Any]],
    path: str,
    recipe: str | None = None,
    image_root: str | Path | None = None,
) -> int:
    """Write groundrl samples as verl's RLHF parquet layout: ``data_source``
    (``groundrl/<recipe>``), chat ``prompt``, ``images``, ``ability``,
    ``reward_model: {style: rule, ground_truth}`` and ``extra_info`` (the other fields,
    ``recipe`` and ``index`` included). Labels whose types differ across rows (Arrow needs
    one type per column) are JSON-encoded as ``{"json": "…"}``, which
    :func:`compute_score` decodes. Returns the number of rows written.

    Images are what verl's ``RLHFDataset`` reads: each of a sample's ``images`` (one
    reference or a list: a single image, an episode's frames) and then its ``video``
    frames (a list of frame references, each sent as an image) is embedded as
    ``{"bytes": …}`` (see :func:`_image_bytes` for the references read; relative paths
    from ``image_root``), and the prompt carries one ``<image>`` placeholder per image
    (:func:`verl_prompt`). A row that cannot be written raises ValueError naming it, and
    ``path`` is then left as it was.

    Streaming (issue 42): ``rows`` that can be iterated twice (a list, or an object whose
    ``__iter__`` re-reads a file) are read twice — once for the label types, once to
    write, :data:`BATCH_ROWS` rows (or :data:`BATCH_BYTES` of images) per row group — so
    memory does not grow with the data set; a one-shot iterator is held in a list first.
    The file is written under a temporary name and renamed when complete."""
    base = Path(image_root) if image_root is not None else None
    if iter(rows) is rows:  # a one-shot iterator cannot be read twice
        rows = list(rows)
    kinds = _label_kinds(rows, recipe)
    as_json = len(kinds) > 1 or bool(kinds - set(_ARROW_LABELS))  # lists, dicts: JSON too
    batch: list[VerlRecord] = []
    n = held = 0
    with atomic_output(path, "wb") as f:
        writer = None
        try:
            for i, row in enumerate(rows):
                batch.append(_record(i, row, recipe, base, as_json))
                held += sum(len(im["bytes"]) for im in batch[-1]["images"])
                if len(batch) >= BATCH_ROWS or held >= BATCH_BYTES:
                    writer = _write_batch(writer, f, batch, kinds, as_json)
                    n, batch, held = n + len(batch), [], 0
            if batch or writer is None:
                writer = _write_batch(writer, f, batch, kinds, as_json)
                n += len(batch)
        finally:
            if writer is not None:
                writer.close()
    return n


_ARROW_LABELS = {"str": "string", "int": "int64", "float": "float64", "bool": "bool_", "NoneType": "null"}


def _schema(kinds: set[str], as_json: bool) -> Any:
    """The table's Arrow schema: what ``Table.from_pylist`` infers for a whole data set,
    fixed up front so every row group agrees. ``images`` is a list of ``{bytes: binary}``
    even when every row has none (Arrow would infer a null list, which verl reads as no
    images anyway)."""
    # lazy: pyarrow comes with the cluster stack (verl, datasets), not with groundrl
    import pyarrow as pa

    if as_json or not kinds:
        label = pa.struct([("json", pa.string())]) if as_json else pa.null()
    else:
        label = getattr(pa, _ARROW_LABELS[next(iter(kinds))])()
    return pa.schema(
        [
            ("data_source", pa.string()),
            ("prompt", pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))),
            ("images", pa.list_(pa.struct([("bytes", pa.binary())]))),
            ("ability", pa.string()),
            ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", label)])),
            ("extra_info", pa.struct([("json", pa.string())])),
        ]
    )


def _write_batch(writer: Any, f: Any, records: Sequence[VerlRecord], kinds: set[str], as_json: bool) -> Any:
    """Append ``records`` as one row group (opening the writer on the first call)."""
    # lazy: pyarrow comes with the cluster stack (verl, datasets), not with groundrl
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = _schema(kinds, as_json)
    if writer is None:
        writer = pq.ParquetWriter(f, schema)
    writer.write_table(pa.Table.from_pylist(list(records), schema=schema))
    return writer


if __name__ != "groundrl.integrations.verl":  # loaded by path (verl's custom_reward_function)
    # Re-export the installed module's objects: they pickle by reference (verl's process-
    # based ``remote`` reward manager sends compute_score to Ray workers), and the rubric
    # cache is shared with code that imports the module.
    from groundrl.integrations import verl as _installed

    compute_score = _installed.compute_score  # noqa: F811
    compute_score_async = _installed.compute_score_async  # noqa: F811
    make_compute_score = _installed.make_compute_score  # noqa: F811
