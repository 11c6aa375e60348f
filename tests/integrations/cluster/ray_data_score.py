"""Run in .venv-cluster: score N rows with Ray Data map_batches on ray.init(num_cpus=2)."""

import json
import sys

import ray

from groundrl.integrations.ray_data import score_dataset

n = int(sys.argv[1])
good = "<critique>c</critique><score>7</score>"
rows = [{"completion": good if i % 2 == 0 else "<score>2</score>", "gt_score": 7} for i in range(n)]
ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
try:
    ds = ray.data.from_items(rows)
    scored, rps = score_dataset(ds, "eqa_rm", batch_size=4096)
    agg = scored.sum("reward")
    print(json.dumps({"rows": scored.count(), "reward_sum": agg, "rows_per_s": rps}))
finally:
    ray.shutdown()
