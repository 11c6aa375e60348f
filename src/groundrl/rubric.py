"""Compose named reward parts into one reward: the one place that sums.

A :class:`Part` is a named reward function with a weight. Functions get the completion
and, by **argument injection**, the sample fields their signature names (the
``verifiers`` convention): ``def accuracy(completion, gold): ...`` is called with the
sample's ``gold``. A part may instead be *batched* (``batched=True``): it is called once
per batch as ``fn(completions, samples)`` and returns one value per completion — the
shape judge-backed parts need (one padded forward pass or one burst of HTTP requests).

Aggregation:

* ``"sum"`` (default): ``total = Σ_k w_k · R_k`` over the parts that apply (``None``
  values are skipped). A part with weight 0 is a *metric*: computed, reported, not summed.
* ``"gated_mean"`` (Argos [Argos §3.1, Eq. 9], :func:`gated_mean`): with gate part
  ``g`` and threshold ``τ``, ``total = R_g if R_g < τ else Σ_k w_k R_k / Σ_k w_k``, both
  sums over the applicable parts only. (The Argos paper writes ``w_G`` in the
  denominator where ``w_S`` is meant; we normalise by the weights of the parts actually
  present.)

Deadlines (issue 26): ``Part(timeout=s)`` or ``Rubric(part_timeout=s)`` bounds each call
of a part that may block (a judge, a third-party part); a call past it scores the
part's ``fallback`` with reason ``timeout: …`` (counted: ``Rubric.timeouts()``) and the
batch goes on.

Failures never escape: a part that raises (a bug in user code) scores its ``fallback``
(default 0.0) with the exception in the reason; a field a part needs but the sample lacks
is scored the same way with ``missing field 'x'``. Use :meth:`Rubric.required_fields` to
validate data at the boundary instead.
"""

from __future__ import annotations

import inspect
import logging
import math
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from groundrl.types import Score, Verdict

Aggregate = Literal["sum", "gated_mean"]


ENV_PART_TIMEOUT = "GROUNDRL_PART_TIMEOUT"


def env_part_timeout(environ: Mapping[str, str] | None = None) -> float | None:
    """``GROUNDRL_PART_TIMEOUT`` (seconds a reward part's call may take, issue 26; unset:
    no deadline): how verl / OpenRLHF / Ray workers and ``reward_funcs`` get the deadline
    that ``Rubric(part_timeout=…)`` sets in Python."""
    raw = (os.environ if environ is None else environ).get(ENV_PART_TIMEOUT)
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not (0 < value < float("inf")):
        raise ValueError(f"{ENV_PART_TIMEOUT} must be a number of seconds > 0, got {raw!r}")
    return value


def _check_timeout(what: str, value: Any) -> None:
    if value is not None and not (
        isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < math.inf
    ):
        raise ValueError(f"{what} must be a number of seconds > 0 (or None for no deadline), got {value!r}")


def _coerce(name: str, out: Any) -> Score:
    """A part may return a Score, a number, or None; normalise to a Score named ``name``."""
    if isinstance(out, Score):
        return out if out.name == name else Score(name, out.value, out.reason)
    if out is None:
        return Score(name, None, "not applicable")
    if isinstance(out, bool):
        return Score(name, float(out))
    if isinstance(out, (int, float)):
        return Score(name, float(out))
    return Score(name, 0.0, f"part returned {type(out).__name__}, expected a number or Score")


@dataclass
class Part:
    """A named reward part.

    ``fn(completion, **fields) -> Score | float | None`` (per sample) or, with
    ``batched=True``, ``fn(completions, samples) -> list[Score | float | None]``.
    ``fallback`` is the value used when the part raises or its input is missing
    (``None`` makes the part "not applicable" instead; but a part that raises or times
    out with a ``value_range`` scores its least-counting end, never "not applicable").
    """

    name: str
    fn: Callable[..., Any]
    weight: float = 1.0
    batched: bool = False
    fallback: float | None = 0.0
    # (low, high) the part's value can take (the paper's formula), when known: the rubric
    # derives its total's range from these (OpenRLHF's normalised ``scores``).
    value_range: tuple[float, float] | None = None
    # Seconds a call of this part may take (issue 26): past it the part scores its fallback
    # with reason "timeout: …" and the batch goes on (the call's thread is left to finish).
    # None: the rubric's part_timeout, if any.
    timeout: float | None = None
    # Filled in __post_init__: which sample fields the function asks for.
    _params: tuple[str, ...] = field(default=(), init=False, repr=False)
    _required: tuple[str, ...] = field(default=(), init=False, repr=False)
    _var_kw: bool = field(default=False, init=False, repr=False)
    _first: str = field(default="completion", init=False, repr=False)
    # the one required field is the second positional parameter: passed by position
    _positional: bool = field(default=False, init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.name or not isinstance(self.name, str):
            raise ValueError("a Part needs a non-empty string name")
        if not callable(self.fn):
            raise TypeError(f"Part {self.name!r}: fn must be callable, got {type(self.fn).__name__}")
        if not isinstance(self.weight, (int, float)) or not math.isfinite(self.weight):
            raise ValueError(f"Part {self.name!r}: weight must be a finite number, got {self.weight!r}")
        if self.value_range is not None:
            lo, hi = self.value_range
            if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
                raise ValueError(
                    f"Part {self.name!r}: value_range must be finite (low, high), got {self.value_range!r}"
                )
        _check_timeout(f"Part {self.name!r}: timeout", self.timeout)
        self.timeouts = 0  # calls that ran past their deadline
        if self.batched:
            return
        try:
            sig = inspect.signature(self.fn)
        except (TypeError, ValueError):  # builtins without signatures: pass completion only
            return
        params = list(sig.parameters.values())
        if not params:
            raise ValueError(f"Part {self.name!r}: fn must take the completion as its first argument")
        self._first = params[0].name
        names, required = [], []
        for p in params[1:]:  # the first parameter receives the completion
            if p.kind is inspect.Parameter.VAR_KEYWORD:
                self._var_kw = True
            elif p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY):
                names.append(p.name)
                if p.default is inspect.Parameter.empty:
                    required.append(p.name)
        self._params, self._required = tuple(names), tuple(required)
        self._positional = (
            len(params) > 1
            and params[1].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
            and required[:1] == [params[1].name]
        )

    @property
    def required_fields(self) -> tuple[str, ...]:
        return self._required

    def _score_each(self, completions: Sequence[Any], samples: Sequence[Mapping[str, Any]]) -> list[Score]:
        """:meth:`score` over a batch, with the per-call lookups hoisted out of the loop
        (the rubric's overhead over calling the function directly is measured in
        bench/rewards.py). Same results as calling :meth:`score` on each pair."""
        if len(completions) != len(samples):
            raise ValueError(f"{len(completions)} completions but {len(samples)} samples")
        fn, name, var_kw = self.fn, self.name, self._var_kw
        required = self._required
        optional = tuple(k for k in self._params if k not in required)
        skip = (self._first, "completion")
        out: list[Score] = []
        append = out.append
        if not var_kw and not optional and len(required) <= 1:
            return self._score_simple(completions, samples, required[0] if required else None)
        params = self._params
        for completion, sample in zip(completions, samples, strict=True):
            try:
                for k in required:
                    sample[k]  # noqa: B018 - raises KeyError when a required field is missing
                if var_kw:
                    kwargs = {k: v for k, v in sample.items() if k not in skip}
                else:  # the fields it names that the sample has (the required ones are there)
                    kwargs = {k: sample[k] for k in params if k in sample}
            except KeyError:
                missing = next(f for f in required if f not in sample)
                append(self._failed(f"missing field {missing!r}"))
                continue
            try:
                r = fn(completion, **kwargs)
            except Exception as e:  # a buggy part must not kill a training step
                append(self._broke(f"error: {type(e).__name__}: {e}"))
                continue
            append(r if type(r) is Score and r.name == name else _coerce(name, r))
        return out

    def _failed(self, reason: str) -> Score:
        return Score(self.name, self.fallback, reason)

    def _broke(self, reason: str) -> Score:
        """A call that raised, timed out or answered the wrong shape: the fallback; when
        that is None (not applicable) and the part declares its ``value_range``, the end
        of the range that counts least in the total (low for weight ≥ 0). [issue 42 N2: a
        MemoryError made Argos' grounding "not applicable" and lifted Eq. 9's gated mean
        from 0.5 to 1.0; a failure must never be worth more than an honest answer.]"""
        if self.fallback is None and self.value_range is not None:
            low, high = self.value_range
            return Score(self.name, low if self.weight >= 0 else high, reason)
        return Score(self.name, self.fallback, reason)

    def _score_simple(
        self, completions: Sequence[Any], samples: Sequence[Mapping[str, Any]], key: str | None
    ) -> list[Score]:
        """The most common part shape, ``fn(completion)`` or ``fn(completion, field)``:
        no keyword dict per call (the field by position when it is the second parameter,
        issue 41: no dict built and unpacked per call)."""
        fn, name = self.fn, self.name
        out: list[Score] = []
        append = out.append
        positional = self._positional
        for completion, sample in zip(completions, samples, strict=True):
            try:
                if key is None:
                    r = fn(completion)
                elif key in sample:
                    r = fn(completion, sample[key]) if positional else fn(completion, **{key: sample[key]})
                else:
                    append(self._failed(f"missing field {key!r}"))
                    continue
            except Exception as e:  # a buggy part must not kill a training step
                append(self._broke(f"error: {type(e).__name__}: {e}"))
                continue
            append(r if type(r) is Score and r.name == name else _coerce(name, r))
        return out

    def score(self, completion: Any, sample: Mapping[str, Any]) -> Score:
        if self.batched:
            return self.score_batch([completion], [sample])[0]
        for f in self._required:
            if f not in sample:
                return self._failed(f"missing field {f!r}")
        try:
            if self._var_kw:
                # every field, but never a second value for the completion's own parameter
                skip = (self._first, "completion")
                r = self.fn(completion, **{k: v for k, v in sample.items() if k not in skip})
            elif not self._params:
                r = self.fn(completion)
            elif self._positional and len(self._params) == 1:  # fn(completion, field)
                r = self.fn(completion, sample[self._params[0]])
            else:
                r = self.fn(completion, **{k: sample[k] for k in self._params if k in sample})
        except Exception as e:  # a buggy part must not kill a training step
            return self._broke(f"error: {type(e).__name__}: {e}")
        return r if type(r) is Score and r.name == self.name else _coerce(self.name, r)

    def score_batch(
        self, completions: Sequence[Any], samples: Sequence[Mapping[str, Any]], timeout: float | None = None
    ) -> list[Score]:
        """One Score per completion. With a deadline (``self.timeout``, else ``timeout``)
        the call runs in a daemon thread and a call past it scores the fallback, reason
        ``timeout``, counted in ``self.timeouts``. A per-sample part keeps the scores of
        the samples it finished in time [issue 42: one slow sample timed the whole batch
        out, flipping rewards the rule parts had decided]; the rest time out."""
        limit = self.timeout if self.timeout is not None else timeout
        if limit is None:
            return self._score_batch_now(completions, samples)
        done, box = threading.Event(), []
        finished: list[Score] = []  # a per-sample part's scores, as they come

        def run() -> None:
            try:
                if self.batched:
                    box.append(self._score_batch_now(completions, samples))
                    return
                for c, s in zip(completions, samples, strict=True):
                    finished.extend(self._score_each([c], [s]))
                box.append(finished)
            finally:
                done.set()

        threading.Thread(target=run, name=f"groundrl-part-{self.name}", daemon=True).start()
        if done.wait(limit) and box:
            return box[0]
        self.timeouts += 1
        kept = finished[:]  # one copy: the thread may still append
        why = f"timeout: part {self.name!r} took over {limit:g} s"
        return kept + [self._broke(why) for _ in completions[len(kept) :]]

    def _score_batch_now(
        self, completions: Sequence[Any], samples: Sequence[Mapping[str, Any]]
    ) -> list[Score]:
        if not self.batched:
            return self._score_each(completions, samples)
        try:
            outs = list(self.fn(list(completions), list(samples)))
        except Exception as e:
            return [self._broke(f"error: {type(e).__name__}: {e}") for _ in completions]
        if len(outs) != len(completions):
            return [
                self._broke(f"batched part returned {len(outs)} values for {len(completions)} completions")
                for _ in completions
            ]
        return [_coerce(self.name, o) for o in outs]


def gated_mean(gate: float | None, terms: Sequence[tuple[float, float | None]], tau: float) -> float:
    """Argos' gated aggregation [Argos §3.1, Eq. 9], the one place it is written::

        R = R_acc                                             if R_acc < τ
        R = (w_A R_acc + w_G G + w_R R_reasoning) / (w_A + w_G + w_R)   if R_acc ≥ τ

    ``gate`` is ``R_acc``; ``terms`` are the ``(weight, value)`` of every term the
    *sample* calls for (``R_acc`` among them). The denominator is fixed: it holds the
    weight of each such term whatever the response did, so a term the response leaves
    unscorable (``value`` ``None``: e.g. no points cited on a sample with masks) counts
    0 and forfeits its share — an ungrounded right answer scores w_A / (w_A + w_G) < 1
    (the paper's denominator names w_G, its numerator w_S; both are the one grounding
    weight). The paper selects tools "depending on the training sample" [Argos §3.1]
    and is silent on the denominator of a sample that calls for no grounding (no masks,
    no frames): there the caller leaves the term out and its weight with it [ours].
    0.0 when the weights sum to ≤ 0 [ours: no weighted mean exists]; ``gate=None`` (no
    gate score): the weighted mean alone. The Argos recipe's rubric and the agentic
    verifier (:mod:`groundrl.verify.verifier`) both aggregate through it.

    >>> gated_mean(0.0, [(1.0, 0.0), (1.0, 1.0)], 0.5)
    0.0
    >>> gated_mean(1.0, [(1.0, 1.0), (2.0, 0.25)], 0.5)
    0.5
    >>> gated_mean(1.0, [(1.0, 1.0), (1.0, None)], 0.5)  # called for, not cited
    0.5
    """
    if gate is not None and gate < tau:
        return float(gate)
    wsum = sum(w for w, _ in terms)
    if wsum <= 0:
        return 0.0
    return float(sum(w * v for w, v in terms if v is not None) / wsum)


class Rubric:
    """Weighted reward parts plus an aggregation rule. See the module docstring."""

    def __init__(
        self,
        parts: Sequence[Part],
        aggregate: Aggregate = "sum",
        gate: str | None = None,
        tau: float = 0.5,
        name: str = "rubric",
        part_timeout: float | None = None,
    ) -> None:
        parts = list(parts)
        if not parts:
            raise ValueError("a Rubric needs at least one Part")
        names = [p.name for p in parts]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"duplicate part names {sorted(dup)}; every part needs its own name")
        if aggregate not in ("sum", "gated_mean"):
            raise ValueError(f"aggregate must be 'sum' or 'gated_mean', got {aggregate!r}")
        if aggregate == "gated_mean":
            if gate not in names:
                raise ValueError(f"gated_mean needs gate= one of the part names {names}, got {gate!r}")
            if not math.isfinite(tau):
                raise ValueError(f"tau must be finite, got {tau!r}")
        self.parts = parts
        self.aggregate = aggregate
        self.gate = gate
        self.tau = float(tau)
        self.name = name
        # seconds any part without its own ``timeout`` may take per call (None: no deadline)
        _check_timeout("part_timeout", part_timeout)
        self.part_timeout = part_timeout
        # Judge backends this rubric owns (closed by close()) and the judge objects behind
        # its model-based parts (their call/failure counters feed run summaries).
        self.resources: list[Any] = []
        self.judges: list[Any] = []

    def close(self) -> None:
        """Close the judge backends this rubric owns (HTTP sessions, local models).
        Idempotent; a rubric without judges has nothing to close."""
        while self.resources:
            res = self.resources.pop()
            try:
                res.close()
            except Exception as e:  # closing must not mask the run's own outcome
                logging.getLogger("groundrl.judges").warning("closing %r failed: %s", res, e)

    def __enter__(self) -> Rubric:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def value_range(self) -> tuple[float, float] | None:
        """``(low, high)`` of the total, from the parts' ``value_range``: Σ over the summed
        parts of w·low … w·high (a part may not apply: then it adds 0, inside the range when
        low ≤ 0 ≤ high, which holds for every built-in part), or for the Argos gate the
        widest range of the weighted parts. ``None`` when a part that counts has none."""
        counted = [p for p in self.parts if p.weight != 0]
        if not counted or any(p.value_range is None for p in counted):
            return None
        if self.aggregate == "gated_mean":
            lo = min(p.value_range[0] for p in counted)  # type: ignore[index]
            hi = max(p.value_range[1] for p in counted)  # type: ignore[index]
        else:
            ranges = [(p.weight, p.value_range) for p in counted if p.value_range is not None]
            lo = sum(min(w * a, w * b) for w, (a, b) in ranges)
            hi = sum(max(w * a, w * b) for w, (a, b) in ranges)
        return (float(lo), float(hi)) if hi > lo else None

    def timeouts(self) -> int:
        """Part calls that ran past their deadline, over all parts."""
        return sum(p.timeouts for p in self.parts)

    def judge_stats(self) -> tuple[int, int]:
        """``(calls, failures)`` summed over the rubric's judges."""
        calls = sum(int(getattr(j, "calls", 0) or 0) for j in self.judges)
        failures = sum(int(getattr(j, "failures", 0) or 0) for j in self.judges)
        return calls, failures

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.parts]

    @property
    def weights(self) -> list[float]:
        return [float(p.weight) for p in self.parts]

    def part(self, name: str) -> Part:
        for p in self.parts:
            if p.name == name:
                return p
        raise KeyError(f"no part named {name!r}; parts are {self.names}")

    def required_fields(self) -> set[str]:
        """Sample fields some part cannot do without (besides the completion)."""
        return {f for p in self.parts for f in p.required_fields}

    def total(self, parts: Mapping[str, Score]) -> float:
        """Aggregate already computed part scores."""
        applicable = [
            (p.weight, v) for p in self.parts if p.name in parts and (v := parts[p.name].value) is not None
        ]
        if self.aggregate == "sum":
            return float(sum(w * v for w, v in applicable))
        g = parts.get(self.gate) if self.gate else None
        return gated_mean(None if g is None else g.value, applicable, self.tau)

    def score(self, completion: Any, /, **sample: Any) -> Verdict:
        """Score one completion; ``sample`` holds the dataset fields. The same verdict as
        ``score_batch([completion], [sample])[0]``; without batched parts or deadlines it
        is built directly (issue 41: verl calls once per sample, and the batch machinery
        cost more than a cheap reward)."""
        return self.score_sample(completion, sample)

    def score_sample(self, completion: Any, sample: Mapping[str, Any]) -> Verdict:
        """:meth:`score` with the fields in a mapping (the adapters hold one already: no
        keyword unpacking, and any key type is accepted, as in :meth:`score_batch`)."""
        if self.part_timeout is not None:
            return self.score_batch([completion], [sample])[0]
        for p in self.parts:
            if p.batched or p.timeout is not None:
                return self.score_batch([completion], [sample])[0]
        parts = {p.name: p.score(completion, sample) for p in self.parts}
        if self.aggregate != "sum":
            return Verdict(self.total(parts), parts)
        total = 0.0  # summed as score_batch sums: part order, from 0.0
        for p in self.parts:
            v = parts[p.name].value
            if v is not None:
                total += p.weight * v
        return Verdict(float(total), parts)

    def score_batch(self, completions: Sequence[Any], samples: Sequence[Mapping[str, Any]]) -> list[Verdict]:
        """One :class:`~groundrl.types.Verdict` (``total`` and each part's :class:`Score`)
        per completion, in order: ``completions[i]`` scored against ``samples[i]``, a
        mapping of that sample's dataset fields (without the completion; each part gets
        the fields its signature names). The call every surface makes (``groundrl score``,
        the reward server, the TRL / verl / OpenRLHF adapters): batched parts (judges) see
        the whole batch in one call, the others are called per completion. Lengths that
        differ raise ``ValueError`` (a programmer error); a malformed completion or a
        missing field is a part scored with a reason, never an exception.

        >>> def exact(completion, answer):
        ...     return float(completion.strip() == answer)
        >>> rubric = Rubric([Part("exact", exact), Part("chars", lambda c: len(c), weight=0)])
        >>> verdicts = rubric.score_batch(["Paris ", "Lyon"], [{"answer": "Paris"}, {"answer": "Paris"}])
        >>> [(v.total, v.parts["chars"].value) for v in verdicts]
        [(1.0, 6.0), (0.0, 4.0)]
        >>> rubric.score_batch(["Paris"], [{}])[0].parts["exact"].reason
        "missing field 'answer'"
        """
        if len(completions) != len(samples):
            raise ValueError(f"{len(completions)} completions but {len(samples)} samples")
        names = [p.name for p in self.parts]
        limit = self.part_timeout
        columns = [p.score_batch(completions, samples, limit) for p in self.parts]
        verdicts: list[Verdict] = []
        if self.aggregate == "sum":  # the common case, summed in place (same order as total())
            # column by column: each sample's total starts at 0.0 and adds its parts in
            # part order, the same sums as total(); then one Verdict per sample in a
            # comprehension. Every column has one Score per completion (Part.score_batch),
            # so the zips need no length check (issue 41: a loop per sample over the parts
            # cost about as much as two cheap parts' own calls, ~2 µs a sample).
            totals = [0.0] * len(completions)
            for p, col in zip(self.parts, columns, strict=False):
                w = p.weight
                for i, sc in enumerate(col):
                    v = sc.value
                    if v is not None:
                        totals[i] += w * v
            rows = zip(*columns, strict=False)
            return [
                Verdict(t, dict(zip(names, row, strict=False))) for t, row in zip(totals, rows, strict=False)
            ]
        for row in zip(*columns, strict=True):
            parts = dict(zip(names, row, strict=True))
            verdicts.append(Verdict(total=self.total(parts), parts=parts))
        return verdicts

    def __repr__(self) -> str:
        inner = ", ".join(f"{p.name}×{p.weight:g}" for p in self.parts)
        extra = f", gate={self.gate!r}, tau={self.tau:g}" if self.aggregate == "gated_mean" else ""
        return f"Rubric({self.name!r}: {inner}; {self.aggregate}{extra})"
