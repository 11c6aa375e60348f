"""The real verl 0.8 reward loop, OpenRLHF 0.11's SingleTurnAgentExecutor and Ray Data,
driven in their own environment (.venv-cluster, built by `make cluster-env`: verl pins
numpy<2, which breaks our pyarrow/datasets). Each test runs a driver script there and
checks hand-worked values. Skips, saying why, when that environment is absent."""

from __future__ import annotations

import sys

import pytest
from cluster_support import PY, ROOT, drive, needs_cluster_env

pytestmark = needs_cluster_env


RP_KEYS = ["format", "accuracy"]
PG_KEYS = ["accuracy", "format"]


@pytest.mark.parametrize(("manager", "fn"), [("naive", "compute_score_async"), ("remote", "compute_score")])
def test_verl_reward_loop_mixed_recipes(manager, fn):
    """A reinforced_planning + proxy_grm batch through RewardLoopManager.compute_rm_score:
    every row has the same keys, parts of the two recipes stay apart, pandas-style ndarray
    gold is read; the naive manager awaits compute_score_async (the scripts' entry point)
    and the process-based `remote` manager pickles our sync compute_score."""
    out = drive("verl_reward_loop.py", manager, fn)
    keys = ["score"]
    for recipe, parts in (("reinforced_planning", RP_KEYS), ("proxy_grm", PG_KEYS)):
        keys.append(f"{recipe}/applies")
        for p in parts:
            keys += [f"{recipe}/{p}", f"{recipe}/{p}/applies"]
    assert out["keys"] == keys
    # rows: RP valid plan (0.5 + 1), PG right verdict (+1 + 0.5·1), PG wrong verdict (-1 + 0),
    # RP unparseable (0)
    assert out["score"] == [1.5, 1.5, -1.0, 0.0] and out["rm_scores_sum"] == [1.5, 1.5, -1.0, 0.0]
    cols = out["columns"]
    assert cols["reinforced_planning/accuracy"] == [1.0, 0.0, 0.0, 0.0]
    assert cols["reinforced_planning/accuracy/applies"] == [1.0, 0.0, 0.0, 1.0]
    assert cols["proxy_grm/accuracy"] == [0.0, 1.0, -1.0, 0.0]
    assert cols["proxy_grm/applies"] == [0.0, 1.0, 1.0, 0.0]


def test_openrlhf_single_turn_agent_executor():
    """OpenRLHF's executor loads groundrl's openrlhf.py by path; the decoded query carries
    16 image pads and the EOS; the rewards equal the clean-text scores."""
    out = drive("openrlhf_agent.py")
    good, bad = out["good"], out["bad"]
    # the stub engine has the real RolloutRayActor.generate's parameters
    assert out["engine_signature"]["stub"] == out["engine_signature"]["real"]
    assert out["engine_signature"]["real"] == ["prompt_token_ids", "sampling_params", "multi_modal_data"]
    assert good["query_image_pads"] == 16 and good["query_ends_with_eos"]
    assert good["reward"] == [1.5] and good["scores"] == [1.0]
    assert good["extra_logs"] == {"format": [0.5], "accuracy": [1.0]}
    assert bad["reward"] == [0.0] and bad["scores"] == [pytest.approx(0.25 / 1.75)]


def test_ray_data_scores_100k_rows():
    """score_dataset over Ray Data map_batches: 100k eqa_rm rows, half right (2.0), half
    off by 5 without a critique (0.75): the sum is 50k·2 + 50k·0.75."""
    out = drive("ray_data_score.py", "100000")
    assert out["rows"] == 100_000 and out["reward_sum"] == 137_500.0
    assert out["rows_per_s"] > 0
    print(f"Ray Data: {out['rows_per_s']:.0f} rows/s", file=sys.stderr)


def test_score_cli_on_ray_keeps_order_and_error_lines():
    """`groundrl score --ray`: the same rows, in input order, as one process writes them
    (a bad line stays an error record with its line number; exit 1 as without Ray)."""
    out = drive("ray_score_cli.py", "40")
    assert out["rc"] == 1, out["stderr"]
    rows = out["rows"]
    assert [r["line"] for r in rows] == list(range(1, 42))
    assert "error" in rows[3] and "not JSON" in rows[3]["error"]
    scored = [r for r in rows if "error" not in r]
    assert [r["id"] for r in scored] == list(range(40))
    assert [r["reward"] for r in scored[:2]] == [2.0, 0.75]  # 1 + 1; (1 - 0.25) + 0


def test_examples_verl_scripts_pass_verl_startup_and_score(tmp_path):
    """examples/verl/*.sh (dry run, all six): the overrides compose with verl 0.8's own
    ppo_trainer config and pass the checks main_ppo and main_ppo_sync run before training
    (legacy-reward migration, resolve, validate_config) at 1 node x 8 GPUs (and argos at
    the header's 1-GPU and 2-node geometries); with the actor micro-batch unset verl's
    check fails (the checks are live). verl's get_custom_reward_fn loads groundrl's
    compute_score_async with each recipe script's reward_kwargs and, awaited, it scores the
    recipe's sample as worked by hand. The verl commands in README.md and docs/
    (examples/verl/*.sh calls with their environment) pass the same checks, and the
    override keys the docs' tables name exist in verl's config."""
    import json

    from doc_commands import example_script_calls, verl_override_keys

    docs = {"calls": example_script_calls("verl"), "keys": verl_override_keys()}
    (tmp_path / "docs.json").write_text(json.dumps(docs))
    out = drive("verl_examples.py", str(ROOT), str(tmp_path / "docs.json"))
    scripts = out["scripts"]
    # every verl command and override key the docs give passes the same checks
    assert len(out["docs"]) == len(docs["calls"]) >= 2 and len(docs["keys"]) >= 5
    for where, checks in out["docs"].items():
        assert checks == {"main_ppo": "ok", "main_ppo_sync": "ok"}, where
    assert out["doc_keys_missing"] == []
    assert set(scripts) == {
        "eqa_rm",
        "argos",
        "reinforced_planning",
        "embodied_brain",
        "proxy_grm",
        "household_multiturn",
    }
    ok = {"main_ppo": "ok", "main_ppo_sync": "ok"}
    for script, r in scripts.items():
        assert r["checks"]["1x8"] == ok, (script, r["checks"])
        assert r["real_batch"] == 32 * 8 and r["n_gpus"] == 8
    assert scripts["argos"]["checks"] == {"1x8": ok, "1x1": ok, "2x8": ok}
    for entry in ("main_ppo", "main_ppo_sync"):
        assert "ppo_micro_batch_size_per_gpu" in out["control"][entry]
    for recipe, r in scripts.items():
        if recipe == "household_multiturn":
            continue
        assert r["path"].endswith("groundrl/integrations/verl.py") and r["kwargs"]["recipe"] == recipe
        assert r["async"]  # verl sees compute_score_async as a coroutine function and awaits it
        if r["want"] is not None:
            assert r["score"] == r["want"], (recipe, r)
    assert "judge" in scripts["proxy_grm"]["kwargs"] and "tau" in scripts["argos"]["kwargs"]["recipe_options"]


def test_examples_verl_geometry_refuses_before_launch():
    """A geometry verl would reject (MICRO not dividing the per-GPU mini-batch) stops the
    script before it launches, naming the setting."""
    import os
    import subprocess

    env = {**os.environ, "GROUNDRL_DRY_RUN": "1", "MICRO": "3", "PATH": f"{PY.parent}:{os.environ['PATH']}"}
    r = subprocess.run(
        ["bash", str(ROOT / "examples" / "verl" / "eqa_rm.sh")], capture_output=True, text=True, env=env
    )
    assert r.returncode == 2 and "MICRO (3) must divide" in r.stderr and not r.stdout
