"""groundrl: verifiable rewards, generative reward models and RL post-training for
embodied vision-language agents.

The core (parsers, rule rewards, rubric, adapters, CLI) imports no torch; training and
local judges live behind the ``train`` extra and are imported lazily.
"""

from groundrl.types import Score, Verdict

__version__ = "0.1.0"
__all__ = ["Score", "Verdict", "__version__"]
