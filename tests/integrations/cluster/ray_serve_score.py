"""Run in .venv-cluster: groundrl's reward server under the real Ray Serve
(groundrl.serve.ray_serve.deployment, 2 replicas) on ray.init(num_cpus=2), its HTTP proxy
on 127.0.0.1; 8 concurrent POST /score requests. Prints one JSON line."""

import json
import socket
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import ray
from ray import serve

from groundrl.serve.ray_serve import deployment

with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]

ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
try:
    serve.start(http_options={"host": "127.0.0.1", "port": port})
    app = deployment("eqa_rm", num_replicas=2, ray_actor_options={"num_cpus": 0.5}).bind()
    serve.run(app, name="groundrl", route_prefix="/")
    status = serve.status().applications["groundrl"]
    replicas = {k: dict(v.replica_states) for k, v in status.deployments.items()}

    def score(i):
        body = {
            "samples": [
                {"id": i, "completion": "<critique>ok</critique><score>7</score>", "gt_score": 7},
                {"id": i + 100, "completion": "<score>2</score>", "gt_score": 7},
            ]
        }
        req = urllib.request.Request(
            f"http://127.0.0.1:{port}/score",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(score, range(8)))
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=30) as r:
        health = json.loads(r.read())
    result = json.dumps(
        {
            "app_status": str(status.status),
            "replicas": replicas,
            "statuses": [a[0] for a in answers],
            "rewards": [[x["reward"] for x in a[1]["results"]] for a in answers],
            "ids": [[x["id"] for x in a[1]["results"]] for a in answers],
            "health": health,
        }
    )
finally:
    serve.shutdown()
    ray.shutdown()
print(result, flush=True)  # last: Serve's shutdown logs to stdout too
