"""Proxy-GRM policy training: the proxy agent's verdict as a TRL reward function.

The policy GRM writes ``<rubric>…</rubric><eval>…</eval><answer>1|2</answer>``; the
proxy agent (:class:`groundrl.judges.papers.ProxyAgent`, configured as a judge: an
OpenAI-compatible server or a local checkpoint on its own device) sees the query, the
image, both responses and **only the rubric** (:func:`groundrl.rewards.preference.rubric_text`)
and picks 1 or 2. Reward ``proxy``: +1 when it picks the preferred response, −1
otherwise [Proxy-GRM §3.3, Eq. 7] (total ``accuracy + proxy + 0.5·format``).

Who caused a missing verdict decides what it is worth — never a silent 0:

* **the policy** — no ``<rubric>`` block (never sent), a rubric that states the verdict
  (never sent: the proxy would copy it; Eq. 7 rewards a rubric "informative and
  unbiased" enough for an independent judge [Proxy-GRM §3.1], so we penalise rather
  than strip [ours]), a request the proxy refuses as malformed (HTTP 400/413/422: the
  rubric is the only thing in it the policy wrote, e.g. one too long for the proxy's
  context), or an answer naming neither response: **−1**, Eq. 7's "otherwise".
  ``unparseable: zero`` keeps the older 0 for the last case [ours]. Counted as
  ``proxy/policy_failures``.
* **the infrastructure** — connection refused, timeout, 5xx, an oversized answer: the
  backend already retried each request; the failed rows are sent once more
  (``retries``), then the row is **unscored**: ``None`` here, and with
  :func:`gate_unscored` ``None`` from every reward function of the trainer, which TRL
  1.16's GRPO excludes from the group's mean and std and gives advantage 0
  (``grpo_trainer.py``: ``unscorable_mask = isnan(rewards_per_func).all(dim=1)``; a
  ``None`` from one function alone is summed as 0 by ``nansum``, hence the gate).
  Counted as ``proxy/unscored`` per step and in ``totals``, with a warning.

Rows without the pair fields get ``None`` (not applicable).
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from groundrl.integrations.common import completion_text
from groundrl.judges.config import JudgeConfig
from groundrl.judges.papers import policy_caused, verdict_in_rubric
from groundrl.parse.scores import parse_preferred
from groundrl.rewards.preference import NO_RUBRIC_PROXY, rubric_text

log = logging.getLogger("groundrl.train")

UNPARSEABLE = {"penalty": NO_RUBRIC_PROXY, "released": NO_RUBRIC_PROXY, "zero": 0.0}
PAIR_FIELDS = ("query", "response_1", "response_2")
POLICY_PENALTY = NO_RUBRIC_PROXY  # Eq. 7's "otherwise"
DEFAULT_RETRIES = 1  # [ours] one more try of the rows whose call failed, after the backend's own


class _LastBatch(TypedDict):
    """The latest batch the proxy scored: TRL hands every reward function of a step the
    same ``completions`` object, so it is scored once and read back by the others."""

    completions: object
    out: list[float | None]
    unscored: set[int]


class ProxyOptions(TypedDict):
    """A ``proxy:`` block checked by :func:`proxy_options`."""

    unparseable: str
    weight: float
    retries: int


def _log_counts(log_metric: Any, **counts: int) -> None:
    """This batch's counts as ``proxy/<name>`` metrics, when TRL passed ``log_metric``."""
    if callable(log_metric):
        for name, n in counts.items():
            log_metric(f"proxy/{name}", float(n))


def proxy_reward(agent: Any, unparseable: str = "penalty", retries: int = DEFAULT_RETRIES) -> Any:
    """A TRL reward function named ``proxy`` calling ``agent.verdicts`` once per batch
    (plus at most ``retries`` calls for rows whose call failed on the infrastructure)."""
    if unparseable not in UNPARSEABLE:
        raise ValueError(f"proxy.unparseable must be one of {', '.join(UNPARSEABLE)}, got {unparseable!r}")
    if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
        raise ValueError(f"proxy.retries must be an integer ≥ 0, got {retries!r}")
    bad_value = UNPARSEABLE[unparseable]
    totals = {"failures": 0, "unparseable": 0, "calls": 0, "unscored": 0, "policy_failures": 0}
    last: _LastBatch = {"completions": None, "out": [], "unscored": set()}

    def score(completions: Any, log_metric: Any, cols: Mapping[str, Sequence[Any]]) -> list[float | None]:
        n = len(completions)
        out: list[float | None] = [None] * n
        prefs = cols.get("preferred") or [None] * n
        todo = [
            i
            for i in range(n)
            if all(isinstance((cols.get(f) or [None] * n)[i], str) for f in PAIR_FIELDS)
            and parse_preferred(prefs[i]).value in (1, 2)
        ]
        rubrics = {i: rubric_text(completion_text(completions[i])) for i in todo}
        policy = 0
        for i in todo:  # no rubric, or one that states the verdict: no call [Eq. 7]
            if not rubrics[i] or verdict_in_rubric(rubrics[i]):
                out[i], policy = POLICY_PENALTY, policy + 1
        todo = [i for i in todo if out[i] is None]
        item = {
            i: {f: cols[f][i] for f in PAIR_FIELDS} | {"image": (cols.get("image") or [None] * n)[i]}
            for i in todo
        }
        totals["calls"] += len(todo)
        failed, bad, pending = 0, 0, todo
        for attempt in range(retries + 1):
            results = (
                agent.verdicts([item[i] for i in pending], [rubrics[i] for i in pending]) if pending else []
            )
            again = []
            for i, (verdict, why) in zip(pending, results, strict=True):
                if verdict is not None:
                    out[i] = 1.0 if verdict == parse_preferred(prefs[i]).value else -1.0
                elif not why.startswith("proxy call failed"):  # answered, names neither
                    out[i], bad = bad_value, bad + 1
                elif policy_caused(why):
                    out[i], policy = POLICY_PENALTY, policy + 1
                else:
                    failed += attempt == 0
                    again.append(i)
            pending = again
        unscored = set(pending)
        totals["failures"] += failed
        totals["unparseable"] += bad
        totals["policy_failures"] += policy
        totals["unscored"] += len(unscored)
        if unscored:
            log.warning(
                "proxy agent: %d of %d calls failed after %d retr%s; those rows are unscored",
                len(unscored), len(todo), retries, "y" if retries == 1 else "ies",
            )  # fmt: skip
        _log_counts(
            log_metric, failures=failed, unscored=len(unscored), unparseable=bad, policy_failures=policy
        )
        last.update({"completions": completions, "out": out, "unscored": unscored})
        return out

    def batch(
        completions: Any, log_metric: Any, cols: Mapping[str, Sequence[Any]]
    ) -> tuple[list[float | None], set[int]]:
        """Once per batch: TRL passes every reward function the same ``completions``."""
        if last["completions"] is not completions:
            score(completions, log_metric, cols)
        return list(last["out"]), set(last["unscored"])

    def proxy(prompts=None, completions=None, log_metric=None, **cols: Any) -> list[float | None]:
        return batch(completions, log_metric, cols)[0]

    proxy.totals = totals  # type: ignore[attr-defined]
    proxy.unscored_rows = lambda completions, log_metric=None, **cols: batch(completions, log_metric, cols)[1]  # type: ignore[attr-defined]
    return proxy


def gate_unscored(trainer: Any, proxy: Any) -> None:
    """Make every other reward function of ``trainer`` give ``None`` on the rows the
    proxy left unscored, so TRL drops those rows from the group's advantage (see the
    module docstring). The proxy is computed once per batch whichever function runs first."""
    funcs = list(trainer.reward_funcs)
    for k, f in enumerate(funcs):
        if f is proxy or not callable(f) or hasattr(f, "parameters"):
            continue  # the proxy itself; a reward model (nn.Module) is left alone
        funcs[k] = _gated(f, proxy)
    trainer.reward_funcs = funcs


def _gated(f: Any, proxy: Any) -> Any:
    def blank(vals: list[Any], kwargs: Mapping[str, Any]) -> list[Any]:
        cols = {k: v for k, v in kwargs.items() if k not in ("prompts", "completions", "log_metric")}
        drop = proxy.unscored_rows(kwargs.get("completions"), kwargs.get("log_metric"), **cols)
        return [None if i in drop else v for i, v in enumerate(vals)]

    if inspect.iscoroutinefunction(f):

        @functools.wraps(f)
        async def agated(**kwargs: Any) -> list[Any]:
            return blank(list(await f(**kwargs)), kwargs)

        return agated

    @functools.wraps(f)
    def gated(**kwargs: Any) -> list[Any]:
        return blank(list(f(**kwargs)), kwargs)

    return gated


def make_agent(judge: Any) -> Any:
    """A :class:`ProxyAgent` on the backend of a judge block (mapping or JudgeConfig)."""
    # lazy: judges.papers brings numpy and orjson; loaded only when this runs
    from groundrl.judges.papers import ProxyAgent

    cfg = judge if isinstance(judge, JudgeConfig) else JudgeConfig.from_mapping(judge)
    return ProxyAgent(cfg.make_backend(), cfg.sampling())


def proxy_options(raw: Mapping[str, Any] | None) -> ProxyOptions:
    raw = dict(raw or {})
    unknown = set(raw) - {"unparseable", "weight", "retries"}
    if unknown:
        raise ValueError(f"proxy: unknown key(s) {sorted(unknown)}; allowed: unparseable, weight, retries")
    un = raw.get("unparseable", "penalty")
    if un not in UNPARSEABLE:
        raise ValueError(f"proxy.unparseable must be one of {', '.join(UNPARSEABLE)}, got {un!r}")
    retries = raw.get("retries", DEFAULT_RETRIES)
    if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
        raise ValueError(f"proxy.retries must be an integer ≥ 0, got {retries!r}")
    return {"unparseable": un, "weight": float(raw.get("weight", 1.0)), "retries": retries}
