"""Helpers every trainer adapter needs: completion text from any message format, rubrics
cached per setting (resolved by :mod:`groundrl.recipes.resolve`), reward ranges, and the
environment-variable configuration used on Ray workers."""

from __future__ import annotations

import functools
import json
import marshal
import os
import re
import threading
from collections.abc import Mapping
from typing import Any

from groundrl.judges.config import JudgeConfig
from groundrl.recipes.resolve import resolve_rubric
from groundrl.rubric import Rubric

ENV_RECIPE = "GROUNDRL_RECIPE"
ENV_OPTIONS = "GROUNDRL_OPTIONS"
ENV_OPTION_PREFIX = "GROUNDRL_OPTION_"


def completion_text(completion: Any) -> str:
    """Text of a completion in TRL's standard (``str``) or conversational format
    (``[{"role": "assistant", "content": str | [{"type": "text", "text": …}, …]}]``);
    for a list of messages the last assistant message is used. Anything else becomes
    ``""`` so the rewards score it as malformed rather than crash."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        completion = [completion]
    if isinstance(completion, (list, tuple)):
        msgs = [m for m in completion if isinstance(m, dict)]
        assistant = [m for m in msgs if m.get("role", "assistant") == "assistant"] or msgs
        if not assistant:
            return ""
        content = assistant[-1].get("content", "")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return "".join(
                p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
            )
    return ""


def env_config(environ: Mapping[str, str] | None = None) -> tuple[str | None, dict[str, object], Any]:
    """``(recipe, options, judge)`` from environment variables (how Ray workers that
    load a reward file by path are configured):

    * ``GROUNDRL_RECIPE``: the recipe name;
    * ``GROUNDRL_OPTIONS``: a JSON object of recipe options, and/or one variable per
      option, ``GROUNDRL_OPTION_<NAME>`` (e.g. ``GROUNDRL_OPTION_LENIENT=true``), read
      as text and converted by the option's declared type; ``GROUNDRL_ACTION_MAP`` is
      the older spelling of ``GROUNDRL_OPTION_ACTION_MAP``;
    * ``GROUNDRL_JUDGE`` (JSON) or ``GROUNDRL_JUDGE_<SETTING>``: the judge
      (:meth:`~groundrl.judges.config.JudgeConfig.from_env`).
    """
    env = os.environ if environ is None else environ
    options: dict[str, object] = {}  # option values checked by the recipe's declared types
    raw = env.get(ENV_OPTIONS)
    if raw:
        try:
            options = json.loads(raw)
        except ValueError as e:
            raise ValueError(f"{ENV_OPTIONS} is not JSON: {e}") from None
        if not isinstance(options, dict):
            raise ValueError(f"{ENV_OPTIONS} must be a JSON object of recipe options")
    if env.get("GROUNDRL_ACTION_MAP"):
        options.setdefault("action_map", env["GROUNDRL_ACTION_MAP"])
    for key, value in env.items():
        if key.startswith(ENV_OPTION_PREFIX) and value:
            options[key[len(ENV_OPTION_PREFIX) :].lower()] = value
    return env.get(ENV_RECIPE) or None, options, JudgeConfig.from_env(env)


ENV_PREFIX = "GROUNDRL_"


def env_snapshot(environ: Mapping[str, str] | None = None) -> tuple[tuple[Any, Any], ...]:
    """Every ``GROUNDRL_*`` variable as a hashable key: what :func:`env_config` and the
    adapters read, so a setting resolved from the environment can be reused until one
    of them changes. ``os.environ`` is read through its raw store (one pass, no decoding
    of the other variables; a full ``env_config`` on every verl ``compute_score`` call
    decoded every variable twice, ~0.1 ms a call, ten times the reward, issue 41).

    >>> env_snapshot({"PATH": "/bin", "GROUNDRL_RECIPE": "eqa_rm"})
    (('GROUNDRL_RECIPE', 'eqa_rm'),)
    """
    env = os.environ if environ is None else environ
    raw = getattr(env, "_data", None) if env is os.environ else None
    if not isinstance(raw, dict):
        return tuple((k, v) for k, v in env.items() if k.startswith(ENV_PREFIX))
    # CPython's os._Environ: its encoded keys and values. The keys, in order, are compared
    # with the last scan's (a tuple comparison, mostly identity checks: half a set
    # comparison's cost, issue 41; equal tuples mean equal key sets, and a reordering only
    # costs a rescan), and only when they changed are they scanned again for the
    # GROUNDRL_* keys; their values are read every time.
    global _env_scan
    keys = tuple(raw)
    scan = _env_scan  # one object, so that threads never see half of an update
    if keys != scan[0]:
        prefix = os.environ.encodekey(ENV_PREFIX)
        scan = _env_scan = (keys, tuple(k for k in keys if k.startswith(prefix)))
    ours = scan[1]  # zip/map in C (a generator per call cost ~1 µs)
    return tuple(zip(ours, map(raw.get, ours), strict=True)) if ours else ()


_env_scan: tuple[tuple[Any, ...], tuple[Any, ...]] = ((), ())
_env_configs: dict[tuple[tuple[Any, Any], ...], tuple[str | None, dict[str, object], Any]] = {}
_ENV_CONFIGS_MAX = 8
_env_lock = threading.Lock()


def cached_env_config() -> tuple[str | None, dict[str, object], Any]:
    """:func:`env_config` of ``os.environ``, read again only when a ``GROUNDRL_*``
    variable changed (:func:`env_snapshot`): the adapters' per-call path. The options
    dict is a fresh copy on every call; a bad setting raises on every call."""
    key = env_snapshot()
    hit = _env_configs.get(key)
    if hit is None:
        hit = env_config()
        with _env_lock:  # verl calls from a thread pool
            if len(_env_configs) >= _ENV_CONFIGS_MAX:
                _env_configs.clear()  # [ours] a run's environment changes rarely, if ever
            _env_configs[key] = hit
    return hit[0], dict(hit[1]), hit[2]


class RubricCache:
    """Rubrics built once per (recipe, options, judge) setting, for the module-level
    reward functions that trainers call with settings on every call."""

    def __init__(self, size: int = 16) -> None:
        self.size = size
        self._rubrics: dict[str, Rubric] = {}
        self._lock = threading.Lock()
        # bumped when a rubric is evicted (and closed): callers that keep rubrics they
        # got from here check it before reusing one
        self.generation = 0

    def get(self, recipe: str, options: Mapping[str, Any], judge: Any) -> Rubric:
        judge_key = judge.to_dict() if hasattr(judge, "to_dict") else judge
        key = json.dumps([recipe, dict(options), judge_key], sort_keys=True, default=repr)
        with self._lock:
            if key not in self._rubrics:
                if len(self._rubrics) >= self.size:
                    self.generation += 1
                    self._rubrics.pop(next(iter(self._rubrics))).close()
                self._rubrics[key] = resolve_rubric(recipe, options, judge)
            return self._rubrics[key]


# ------------------------------------------------------------------ reward ranges

ENV_SCORE_RANGE = "GROUNDRL_SCORE_RANGE"


def reward_range(recipe: Any, rubric: Rubric) -> tuple[float, float] | None:
    """``(low, high)`` of ``rubric``'s total: the recipe's declared ``reward_range`` if it
    has one, else :meth:`Rubric.value_range` (from the parts' declared ``value_range``:
    Σ w·low … Σ w·high for a sum, the widest part range for a gated mean); ``None`` when a
    part that counts declares none (then OpenRLHF's ``scores`` equal ``rewards``).

    >>> from groundrl.recipes import get_recipe
    >>> rec = get_recipe("reinforced_planning")
    >>> reward_range(rec, rec.rubric())
    (-0.25, 1.5)
    """
    declared = getattr(recipe, "reward_range", None)
    if declared is not None:
        lo, hi = (float(x) for x in declared)
        return (lo, hi) if hi > lo else None
    return rubric.value_range()


def parse_range(text: str) -> tuple[float, float]:
    """``"LOW,HIGH"`` → ``(LOW, HIGH)`` (``GROUNDRL_SCORE_RANGE``)."""
    try:
        lo, hi = (float(x) for x in str(text).split(","))
    except ValueError:
        raise ValueError(f"a score range is 'LOW,HIGH' (e.g. -0.25,1.5), got {text!r}") from None
    if not hi > lo:
        raise ValueError(f"a score range needs LOW < HIGH, got {text!r}")
    return lo, hi


def normalise(total: float, rng: tuple[float, float] | None) -> float:
    """``total`` mapped onto [0, 1] by ``rng`` (clipped); ``total`` itself without a range.

    >>> normalise(1.5, (-0.25, 1.5)), normalise(-0.25, (-0.25, 1.5)), normalise(0.625, (-0.25, 1.5))
    (1.0, 0.0, 0.5)
    """
    if rng is None:
        return total
    lo, hi = rng
    return min(1.0, max(0.0, (total - lo) / (hi - lo)))


# ------------------------------------------------------------- rollout text → completion

# End-of-sequence / end-of-turn / padding tokens that a decode with
# ``skip_special_tokens=False`` (OpenRLHF 0.11) leaves after the response: Qwen's
# (ChatML) and Llama 2/3's. Configurable per call (``stop_tokens=``) or with
# ``GROUNDRL_STOP_TOKENS`` (a JSON list).
DEFAULT_STOP_TOKENS: tuple[str, ...] = (
    "<|im_end|>",
    "<|endoftext|>",
    "<|eot_id|>",
    "<|end_of_text|>",
    "<|eom_id|>",
    "<|finetune_right_pad_id|>",
    "</s>",
    "<pad>",
    "<|end|>",
)
ENV_STOP_TOKENS = "GROUNDRL_STOP_TOKENS"

# Chat-template headers that open an assistant turn (ChatML, Llama 3, Llama 2 [/INST]).
ASSISTANT_HEADERS: tuple[str, ...] = (
    "<|im_start|>assistant\n",
    "<|start_header_id|>assistant<|end_header_id|>\n\n",
    "<|start_header_id|>assistant<|end_header_id|>",
    "[/INST]",
)

_VISION_RUN = None
_VS, _VE, _VIDEO, _IMAGE = "<|vision_start|>", "<|vision_end|>", "<|video_pad|>", "<|image_pad|>"


def collapse_vision(text: str) -> str:
    """Image/video placeholder runs collapsed: everything between ``<|vision_start|>``
    and ``<|vision_end|>`` becomes one token, so a prompt written with one
    ``<|image_pad|>`` matches the decoded query where the processor expanded it into
    hundreds; bare runs of ``<|image_pad|>`` / ``<|video_pad|>`` (and Llama-style
    ``<image>``) collapse to one. One pass of string search (issue 26: a regex over
    spans rescanned to the end from every unclosed start, quadratic).

    >>> collapse_vision("a<|vision_start|><|image_pad|><|image_pad|><|vision_end|>b")
    'a<|vision_start|><|image_pad|><|vision_end|>b'
    """
    global _VISION_RUN
    if "<|vision_start|>" not in text and "_pad|>" not in text and "<image>" not in text:
        return text

    if _VISION_RUN is None:
        _VISION_RUN = re.compile(r"(<\|image_pad\|>|<\|video_pad\|>|<image>)(?:\1)+")
    out: list[str] = []
    pos = 0
    while True:
        i = text.find(_VS, pos)
        j = text.find(_VE, i + len(_VS)) if i >= 0 else -1
        if j < 0:  # no end after this start: none after any later start either
            break
        kind = _VIDEO if text.find(_VIDEO, i, j) >= 0 else _IMAGE
        out += (text[pos:i], _VS, kind, _VE)
        pos = j + len(_VE)
    out.append(text[pos:])
    return _VISION_RUN.sub(r"\1", "".join(out))


def _stop_table(tokens: tuple[str, ...]) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    """The non-empty stop tokens that can end a text, in their order: by the text's last
    two characters (a token of one character counts under each pair it ends), and for
    a pair no token ends with, by the last character (the one-character tokens)."""
    singles = [t for t in tokens if len(t) == 1]
    pairs = {t[-2:] for t in tokens if len(t) >= 2}
    two = {k: tuple(t for t in tokens if t and (t[-2:] == k if len(t) >= 2 else t == k[-1])) for k in pairs}
    one = {c: tuple(t for t in singles if t == c) for c in set(singles)}
    return two, one


_DEFAULT_STOP_TABLE = _stop_table(DEFAULT_STOP_TOKENS)
_stop_tables = functools.lru_cache(maxsize=16)(_stop_table)


def strip_stop_tokens(text: str, stop_tokens: tuple[str, ...] | None = None) -> str:
    """``text`` without the end-of-sequence / end-of-turn / pad tokens that trail it (any
    number, in any order, with whitespace between them); text before them is kept as is.
    One backward pass, one slice (issue 26: slicing per token was quadratic); at each
    step only the tokens ending in the two characters there are tried (issue 41: every
    token was tried after the last one came off).

    >>> strip_stop_tokens('{"a": 1}<|im_end|>\\n<|endoftext|><|endoftext|>')
    '{"a": 1}'
    """
    two, one = _DEFAULT_STOP_TABLE if stop_tokens is None else _stop_tables(tuple(stop_tokens))
    if not two and not one:
        return text
    end = len(text)  # the answer is text[:end]
    while True:
        bare = end
        while bare > 0 and text[bare - 1].isspace():
            bare -= 1
        cands = two.get(text[bare - 2 : bare]) if bare >= 2 else None
        if cands is None:
            cands = one.get(text[bare - 1], ()) if bare else ()
        for tok in cands:
            if text.endswith(tok, 0, bare):
                end = bare - len(tok)
                break
        else:
            return text[:end] if end < len(text) else text


def response_text(query: Any, prompt: Any, stop_tokens: tuple[str, ...] | None = None) -> str:
    """The response in an OpenRLHF ``query`` (``decode(prompt_ids + response_ids,
    skip_special_tokens=False)``):

    1. vision placeholder runs collapse in both texts (:func:`collapse_vision`);
    2. the prompt prefix is removed when the query starts with it; else the text after
       the last assistant-turn header (:data:`ASSISTANT_HEADERS`) is the response; else
       the whole query (a client that sent no prompt);
    3. trailing EOS / end-of-turn / pad tokens are removed (:func:`strip_stop_tokens`).
    """
    p = collapse_vision(prompt) if isinstance(prompt, str) else ""
    return response_of(query, p, stop_tokens)


def response_of(query: Any, prompt: str, stop_tokens: tuple[str, ...] | None = None) -> str:
    """:func:`response_text` for a ``prompt`` already through :func:`collapse_vision`
    (``""`` for none): a batch collapses each distinct prompt once (issue 41)."""
    if not isinstance(query, str):
        return ""
    q = collapse_vision(query)
    p = prompt
    if p and q.startswith(p):
        resp = q[len(p) :]
    else:
        resp = q
        if p:
            cut = max(((q.rfind(h), h) for h in ASSISTANT_HEADERS), key=lambda t: t[0])
            if cut[0] >= 0:
                resp = q[cut[0] + len(cut[1]) :]
    return strip_stop_tokens(resp, stop_tokens)


NOT_JSON: Any = object()  # loads_fresh's answer for text that is not JSON (remembered too)


_KEEP, _DICT, _LIST, _BLOB, _AGAIN = range(5)  # how loads_fresh hands out a remembered value
_SCALARS = (str, int, float, bool, type(None))
_FRESH_MAX = 256  # [ours] texts remembered: a trainer batch's prompts, a few hundred at most
_fresh: dict[str, tuple[int, Any]] = {}
_fresh_lock = threading.Lock()


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
        return NOT_JSON


def _copy_plan(value: Any) -> tuple[int, Any]:
    """How to give out ``value`` so that no caller can change what the next one gets:
    as it is (a scalar), a shallow copy (a dict / list of scalars), or a fresh object
    from its marshal bytes (nested containers; C, 5-25x cheaper than json.loads)."""
    if value is NOT_JSON or isinstance(value, _SCALARS):
        return _KEEP, value
    items = value.values() if type(value) is dict else value
    if all(isinstance(v, _SCALARS) for v in items):
        return (_DICT if type(value) is dict else _LIST), value
    try:
        return _BLOB, marshal.dumps(value)
    except ValueError:  # nested past marshal's depth: decode the text on every call
        return _AGAIN, None


def loads_fresh(text: str) -> Any:
    """``json.loads(text)`` (:data:`NOT_JSON` when it is not JSON) as a new object on every
    call, decoded once per text: the n responses of one prompt carry the same label /
    ``extra_info`` text (issue 41), and a reward that changes a field it was given (a
    gold list sorted in place) must not change the next response's sample. The last
    :data:`_FRESH_MAX` texts are remembered.

    >>> a = loads_fresh('{"gold": [1, 2]}'); a["gold"].append(3)
    >>> loads_fresh('{"gold": [1, 2]}'), loads_fresh("['a']") is NOT_JSON
    ({'gold': [1, 2]}, True)
    """
    plan = _fresh.get(text)
    if plan is None:
        value = _loads(text)
        plan = _copy_plan(value)
        with _fresh_lock:  # verl scores from a thread pool
            if len(_fresh) >= _FRESH_MAX:
                del _fresh[next(iter(_fresh))]  # the oldest text
            _fresh[text] = plan
        if plan[0] in (_KEEP, _AGAIN):
            return value  # nobody else holds it
    kind, held = plan
    if kind == _KEEP:
        return held
    if kind == _DICT:
        return dict(held)
    if kind == _LIST:
        return list(held)
    if kind == _BLOB:
        return marshal.loads(held)
    return _loads(text)


def env_stop_tokens(environ: Mapping[str, str] | None = None) -> tuple[str, ...] | None:
    """``GROUNDRL_STOP_TOKENS`` (a JSON list of strings) or ``None`` for the defaults."""
    env = os.environ if environ is None else environ
    raw = env.get(ENV_STOP_TOKENS)
    if not raw:
        return None
    try:
        toks = json.loads(raw)
    except ValueError:
        toks = None
    if not isinstance(toks, list) or not all(isinstance(t, str) for t in toks):
        raise ValueError(f'{ENV_STOP_TOKENS} must be a JSON list of strings, e.g. ["<|im_end|>"]')
    return tuple(toks)
