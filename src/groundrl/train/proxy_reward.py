"""Proxy-GRM policy training: the proxy agent's verdict as a TRL reward function.

The policy GRM writes ``<rubric>…</rubric><eval>…</eval><answer>1|2</answer>``; the
proxy agent (:class:`groundrl.judges.papers.ProxyAgent`, configured as a judge: an
OpenAI-compatible server or a local checkpoint on its own device) sees the query, the
image, both responses and **only the rubric** (:func:`groundrl.rewards.preference.rubric_text`)
and picks 1 or 2. Reward ``proxy``: +1 when it picks the preferred response, −1 when it
picks the other (Proxy-GRM: total ``accuracy + proxy + 0.5·format``).

When the proxy gives no verdict:

* the call failed (server down, timeout, HTTP error): **0** — the documented fallback;
  the row is still trained on (its accuracy and format parts count), and the failure is
  counted (``proxy/failures`` per step, ``failures`` in total);
* the call answered but names neither response: ``unparseable: zero`` (default, **0**:
  the rubric neither helped nor misled the proxy) or ``unparseable: released`` (**−1**,
  as the released training code scores it). Counted as ``proxy/unparseable``.

A completion without a ``<rubric>…</rubric>`` block is never sent to the proxy (it
sees only the rubric): its proxy reward is −1, Eq. 7's "otherwise" [Proxy-GRM §3.3].

Rows without the pair fields get ``None`` (not applicable).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from groundrl.integrations.common import completion_text
from groundrl.judges.config import JudgeConfig
from groundrl.parse.scores import parse_preferred
from groundrl.rewards.preference import NO_RUBRIC_PROXY, rubric_text

log = logging.getLogger("groundrl.train")

UNPARSEABLE = {"zero": 0.0, "released": -1.0}
PAIR_FIELDS = ("query", "response_1", "response_2")


def proxy_reward(agent: Any, unparseable: str = "zero") -> Any:
    """A TRL reward function named ``proxy`` calling ``agent.verdicts`` once per batch."""
    if unparseable not in UNPARSEABLE:
        raise ValueError(f"proxy.unparseable must be one of {', '.join(UNPARSEABLE)}, got {unparseable!r}")
    bad_value = UNPARSEABLE[unparseable]
    totals = {"failures": 0, "unparseable": 0, "calls": 0}

    def proxy(prompts=None, completions=None, log_metric=None, **cols: Any) -> list[float | None]:
        n = len(completions)
        out: list[float | None] = [None] * n
        todo = [
            i for i in range(n) if all(isinstance((cols.get(f) or [None] * n)[i], str) for f in PAIR_FIELDS)
        ]
        items = [
            {f: cols[f][i] for f in PAIR_FIELDS} | {"image": (cols.get("image") or [None] * n)[i]}
            for i in todo
        ]
        rubrics = [rubric_text(completion_text(completions[i])) for i in todo]
        prefs = cols.get("preferred") or [None] * n
        for i, rub in zip(todo, rubrics, strict=True):  # no rubric: no call [Proxy-GRM Eq. 7]
            if not rub and parse_preferred(prefs[i]).value in (1, 2):
                out[i] = NO_RUBRIC_PROXY
        items = [it for it, rub in zip(items, rubrics, strict=True) if rub]
        todo, rubrics = [i for i, rub in zip(todo, rubrics, strict=True) if rub], [r for r in rubrics if r]
        failed = bad = 0
        results = agent.verdicts(items, rubrics) if todo else []
        for i, (verdict, why) in zip(todo, results, strict=True):
            pref = parse_preferred(prefs[i]).value
            if pref not in (1, 2):
                continue
            if verdict is None:
                if why.startswith("proxy call failed"):
                    failed += 1
                    out[i] = 0.0
                else:
                    bad += 1
                    out[i] = bad_value
                continue
            out[i] = 1.0 if verdict == pref else -1.0
        totals["calls"] += len(todo)
        totals["failures"] += failed
        totals["unparseable"] += bad
        if failed:
            log.warning("proxy agent: %d of %d calls failed; their proxy reward is 0", failed, len(todo))
        if callable(log_metric):
            log_metric("proxy/failures", float(failed))
            log_metric("proxy/unparseable", float(bad))
        return out

    proxy.totals = totals  # type: ignore[attr-defined]
    return proxy


def make_agent(judge: Any) -> Any:
    """A :class:`ProxyAgent` on the backend of a judge block (mapping or JudgeConfig)."""
    # lazy: judges.papers brings numpy and orjson; loaded only when this runs
    from groundrl.judges.papers import ProxyAgent

    cfg = judge if isinstance(judge, JudgeConfig) else JudgeConfig.from_mapping(judge)
    return ProxyAgent(cfg.make_backend(), cfg.sampling())


def proxy_options(raw: Mapping[str, Any] | None) -> dict[str, Any]:
    raw = dict(raw or {})
    unknown = set(raw) - {"unparseable", "weight"}
    if unknown:
        raise ValueError(f"proxy: unknown key(s) {sorted(unknown)}; allowed: unparseable, weight")
    un = raw.get("unparseable", "zero")
    if un not in UNPARSEABLE:
        raise ValueError(f"proxy.unparseable must be one of {', '.join(UNPARSEABLE)}, got {un!r}")
    return {"unparseable": un, "weight": float(raw.get("weight", 1.0))}
