"""A fast, headless household simulator with EB-ALFRED semantics: world and skills,
ALFRED goals and task types, three task sources, an expert planner, five action vocabularies, plan
execution as a reward, and the EB-ALFRED evaluation loop."""

from groundrl.sim.execute import ExecResult, execute
from groundrl.sim.goals import TASK_TYPES, Goal, progress
from groundrl.sim.planner import expert_plan
from groundrl.sim.skills import Skill
from groundrl.sim.task_types import TaskType, get_task_type, register_task_type
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
    "TaskType",
    "action_space",
    "execute",
    "expert_plan",
    "get_task_type",
    "load_tasks",
    "progress",
    "register_task_type",
    "render_plan",
]
