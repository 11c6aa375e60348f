"""A fast, headless household simulator with EB-ALFRED semantics: world and skills,
ALFRED goals, three task sources, an expert planner, five action vocabularies, plan
execution as a reward, and the EB-ALFRED evaluation loop."""

from groundrl.sim.execute import ExecResult, execute
from groundrl.sim.goals import TASK_TYPES, Goal, progress
from groundrl.sim.planner import expert_plan
from groundrl.sim.skills import Skill
from groundrl.sim.tasks import Task, load_tasks
from groundrl.sim.vocab import VOCABS, action_space, render_plan
from groundrl.sim.world import Env, Scene

__all__ = [
    "TASK_TYPES",
    "VOCABS",
    "Env",
    "ExecResult",
    "Goal",
    "Scene",
    "Skill",
    "Task",
    "action_space",
    "execute",
    "expert_plan",
    "load_tasks",
    "progress",
    "render_plan",
]
