"""groundrl's OpenRLHF reward function that also records what it gave (scripts/gpu_rehearsal.sh).

``--reward.remote_url scripts/rehearsal_openrlhf_reward.py`` scores exactly as
``groundrl/integrations/openrlhf.py`` does (``GROUNDRL_RECIPE`` / ``GROUNDRL_OPTIONS`` on
the Ray workers) and appends one line per sample to ``$GROUNDRL_REHEARSAL_SAMPLES``:
``{"completion", "fields", "logged": {"reward", <part>: value}}`` — the completion as the
adapter recovered it from OpenRLHF's query, the label as the recipe field it fills, and the
raw reward and parts OpenRLHF received — for scripts/rehearsal_check.py to re-score offline.
OpenRLHF catches a reward function's exception and logs it as a missing reward, so the
rehearsal also counts the lines (``rehearsal_check.py --min-samples``).
"""

from __future__ import annotations

import json
import os

from groundrl.integrations.common import env_config, env_stop_tokens, response_text
from groundrl.integrations.openrlhf import label_to_sample
from groundrl.integrations.openrlhf import reward_func as _reward_func
from groundrl.recipes import get_recipe

ENV_SAMPLES = "GROUNDRL_REHEARSAL_SAMPLES"


def _values(v):
    return v.tolist() if hasattr(v, "tolist") else list(v)


def reward_func(queries, prompts, labels=None, **kwargs):
    out = _reward_func(queries, prompts, labels, **kwargs)
    path = os.environ.get(ENV_SAMPLES)
    if not path:
        return out
    recipe = get_recipe(str(env_config()[0]))  # set: the reward above raised otherwise
    rewards = _values(out["rewards"])
    parts = {k: _values(v) for k, v in out["extra_logs"].items()}
    stops = env_stop_tokens()
    lines = []
    for i, (q, p) in enumerate(zip(queries, prompts, strict=True)):
        label = labels[i] if labels is not None else None
        rec = {
            "completion": response_text(q, p, stops),
            "fields": label_to_sample(label, recipe.label_field),
            "logged": {"reward": rewards[i], **{k: v[i] for k, v in parts.items()}},
        }
        lines.append(json.dumps(rec) + "\n")
    # one O_APPEND write per call: OpenRLHF calls this from threads of several Ray actors at once
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, "".join(lines).encode("utf-8"))
    finally:
        os.close(fd)
    return out
