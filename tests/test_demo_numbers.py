"""bench/demo_numbers.py's claims stay true to the docs (issue 38 item 4): every quoted demo
number is still written where its claim says (a doc edit that changes a number without the
bench's table fails here), and the comparison calls a number off only outside the run's
interval. The demos themselves run in the bench, not here (minutes each)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("demo_numbers", ROOT / "bench" / "demo_numbers.py")
assert _spec is not None and _spec.loader is not None
dn = importlib.util.module_from_spec(_spec)
sys.modules["demo_numbers"] = dn  # dataclasses look their module up there
_spec.loader.exec_module(dn)


def test_every_claim_is_quoted_in_its_doc():
    assert dn.CLAIMS
    stale = [f"{c.doc}: {c.quote}" for c in dn.CLAIMS if dn.stale(c)]
    assert not stale, "quoted numbers no longer in the docs (update bench/demo_numbers.py):\n" + "\n".join(
        stale
    )


def test_a_changed_doc_makes_a_claim_stale(tmp_path):
    claim = dn.CLAIMS[0]
    (tmp_path / claim.doc).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / claim.doc).write_text(claim.quote.replace(f"{claim.value:.2f}", "9.99"), encoding="utf-8")
    assert dn.stale(claim, tmp_path)


@pytest.mark.parametrize(
    ("quoted", "metrics", "status"),
    [
        (0.71, {"sft": {"accuracy": 0.706, "accuracy_ci95": [0.65, 0.76]}}, "ok"),
        (0.71, {"sft": {"accuracy": 0.60, "accuracy_ci95": [0.55, 0.65]}}, "off"),
        # the quote is rounded: 0.64 may stand for 0.6449, inside [0.6449, 0.70]; 0.6451 may not
        (0.64, {"sft": {"accuracy": 0.67, "accuracy_ci95": [0.6449, 0.70]}}, "ok"),
        (0.64, {"sft": {"accuracy": 0.67, "accuracy_ci95": [0.6451, 0.70]}}, "off"),
        (0.71, {"sft": {"accuracy": 0.714}}, "ok"),  # no interval: equal at the quoted digits
        (0.71, {"sft": {"accuracy": 0.72}}, "off"),
        (0.71, {"sft": {}}, "missing"),
    ],
)
def test_check_compares_the_quote_with_the_runs_interval(quoted, metrics, status):
    claim = dn.Claim("rm", 0, "README.md", "x", "sft.accuracy", quoted, "sft.accuracy_ci95")
    assert dn.check(claim, metrics)[0] == status


def test_lookup_walks_dicts_and_lists():
    m = {"a": {"b": [1.0, {"c": 2.0}]}}
    assert dn.lookup(m, "a.b.1.c") == 2.0 and dn.lookup(m, "a.b.0") == 1.0
    assert dn.lookup(m, "a.x") is None and dn.lookup(m, "a.b.5") is None


def test_pooled_difference_weights_by_tasks_and_combines_the_seeds_intervals():
    # two seeds: 300 tasks at +0.10 [0.00, +0.20] and 100 tasks at −0.10 [−0.20, 0.00]: mean
    # 0.75·0.1 − 0.25·0.1 = 0.05; standard errors 0.2 / 3.919928 each, pooled
    # sqrt(0.75² + 0.25²)·0.051021 = 0.040335, half-width 1.959964 · 0.040335 = 0.079056
    runs = [
        {"n_eval_tasks": 300, "d": 0.1, "d_ci95": [0.0, 0.2]},
        {"n_eval_tasks": 100, "d": -0.1, "d_ci95": [-0.2, 0.0]},
    ]
    mean, lo, hi = dn.pooled_difference(runs, "d")
    assert mean == pytest.approx(0.05)
    assert (lo, hi) == (pytest.approx(0.05 - 0.079057, abs=1e-5), pytest.approx(0.05 + 0.079057, abs=1e-5))


def test_the_pooled_quote_is_in_readme_and_sim_docs():
    for doc in ("README.md", "docs/sim.md"):
        assert dn.POOLED_QUOTE in (ROOT / doc).read_text(encoding="utf-8"), doc


def test_monitor_trends_are_the_first_and_last_three_steps_means():
    curve = [
        {"judge": j, "sim_success": 0.0, "claim_share": 1.0} for j in (0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.9)
    ]
    got = dn.with_trends({"runs": {"hackable": {"curve": curve}, "short": {"curve": curve[:2]}}})["trends"]
    assert got["hackable"]["judge"] == [pytest.approx(0.2), pytest.approx(0.8)]
    assert got["hackable"]["claim_share"] == [1.0, 1.0]
    assert "short" not in got  # fewer than 3 steps: no trend to quote
