"""Side work of a multi-process launch done once: the main process computes, every rank
gets the result.

Under ``accelerate launch`` / ``torchrun`` every rank runs the whole stage list. Stages
whose work is not training — judge or evaluator calls, filtering, writing the kept data —
must run once, or N ranks make N× the calls, write the same files at once, and (when
sampling differs) train on different data and hang at the first collective. :func:`run_once`
runs such work on the main process and broadcasts its (picklable) result to the others,
which wait at that broadcast. Files the work writes are read by the next stage from
``output_dir``, which on several nodes must be a shared file system (as TRL's checkpoints
already require).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def _partial_state() -> Any:
    """accelerate's process state, or None without accelerate. On a machine without CUDA
    it is asked for the CPU (gloo) set-up: a bare ``PartialState()`` there reports one
    process on every rank of a ``torchrun`` launch (distributed type NO), so every rank
    would think itself the main process."""
    try:
        # lazy: accelerate and torch load only when a run starts
        import torch
        from accelerate import PartialState

        return PartialState(cpu=not torch.cuda.is_available())
    except Exception:  # accelerate missing or no distributed set-up: one process
        return None


def _distributed_state() -> Any:
    """accelerate's state when this process is one of several, else None."""
    state = _partial_state()
    return state if state is not None and state.num_processes > 1 else None


def is_main_process() -> bool:
    """True on the process that writes the run folder's files (rank 0 of a launch;
    always in a single process)."""
    state = _distributed_state()
    return state is None or bool(state.is_main_process)


def wait_for_everyone() -> None:
    """A barrier across the launch's processes (nothing in a single process): after rank 0
    writes a model folder the next stage on every rank loads."""
    state = _distributed_state()
    if state is not None:
        state.wait_for_everyone()


def run_once(compute: Callable[[], T]) -> T:
    """``compute()`` on the main process only; every rank returns its result. An error
    on the main process is raised there and, as a ``RuntimeError`` naming it, on every
    other rank (none is left waiting at the broadcast)."""
    state = _distributed_state()
    if state is None:
        return compute()
    # lazy: accelerate loads only when a run starts
    from accelerate.utils import broadcast_object_list

    box: list[Any] = [None]
    error: BaseException | None = None
    if state.is_main_process:
        try:
            box[0] = ("ok", compute())
        except Exception as e:
            error = e
            box[0] = ("error", f"{type(e).__name__}: {e}")
    broadcast_object_list(box, from_process=0)
    if error is not None:
        raise error
    status, value = box[0]
    if status == "error":
        raise RuntimeError(f"the main process failed this stage's side work: {value}")
    return value
