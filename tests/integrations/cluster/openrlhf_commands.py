"""Run in .venv-cluster: parse OpenRLHF command lines with the installed
openrlhf/cli/train_ppo_ray.py (its `__main__` block: the parser and the checks after
it, not `train(args)`; see openrlhf_household.flags), and check loose flags against its
parser's option strings. argv[1]: a JSON file {"commands": {name: [arg, …]}, "flags":
[flag, …]}. Prints {"commands": {name: "ok" | error}, "parsed": {name: {…}},
"unknown_flags": [flag, …]}."""

import contextlib
import io
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import openrlhf_household as oh_driver  # noqa: E402  (stubs vllm, which OpenRLHF imports)

spec = json.loads(Path(sys.argv[1]).read_text())
out = {"commands": {}, "parsed": {}, "unknown_flags": []}
for name, argv in spec["commands"].items():
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            out["parsed"][name] = oh_driver.flags(argv)["parsed"]
        out["commands"][name] = "ok"
    except SystemExit as e:  # argparse: an unknown or malformed flag
        out["commands"][name] = f"SystemExit {e.code}: {err.getvalue().strip()[-400:]}"
    except Exception as e:  # the checks after parsing
        out["commands"][name] = f"{type(e).__name__}: {e}"
# the parser's option strings (flags() keeps the parser its last call built)
oh_driver.flags(["--actor.model_name_or_path", "m", "--reward.remote_url", "r.py"])
options = set(oh_driver.flags.parser._option_string_actions)
out["unknown_flags"] = sorted(f for f in spec["flags"] if f not in options)
out["n_options"] = len(options)
print(json.dumps(out))
