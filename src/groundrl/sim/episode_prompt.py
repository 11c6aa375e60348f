"""The household task as a policy sees it: where the objects the instruction needs are,
and the text prompt that asks for a plan. The one prompt every engine uses by default
(the TRL demo's SFT and GRPO data, the verl agent loop, the OpenRLHF agent), so a policy
trained on one sees the same context on another."""

from __future__ import annotations

from groundrl.sim.tasks import Task

#: Tools and appliances named in the scene line even when the instruction does not name
#: them [ours: the slice / clean / heat / cool / look-at plans need them].
TOOLS = ("Knife", "ButterKnife", "SinkBasin", "Faucet", "Microwave", "Fridge", "DeskLamp", "FloorLamp")


def observation(task: Task) -> str:
    """Where the objects the instruction needs are (and the tools), as one line."""
    words = set(task.instruction.replace(".", " ").replace(",", " ").split())
    keep = {task.goal.obj, task.goal.recep, task.goal.mrecep, *TOOLS} | words
    env = task.env()
    parts = []
    for o in task.scene.objects:
        if o.type not in keep or o.parent is None:
            continue
        p = task.scene.objects[[x.id for x in task.scene.objects].index(o.parent)].type
        closed = " (closed)" if env.props(o.parent)["openable"] else ""
        parts.append(f"{o.type} in {p}{closed}")
    return "; ".join(parts)


def prompt(task: Task) -> str:
    return f"Instruction: {task.instruction}\nScene: {observation(task)}\nPlan:"
