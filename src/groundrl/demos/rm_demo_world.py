"""The reward-model demo's world: tiny embodied-QA episodes whose answers depend on frame
order and on what is visible.

An *episode* is three 56×56 frames (the tiny VLM's input size: 4 image tokens a frame)
of a grey room in which the agent sees at most one coloured block per frame: a 16×16
square on the cell of the 16-pixel grid at row 2, column 2 (pixels 32–47) — the grid
C-GRPO's spatial perturbation masks [EQA-RM §4.3: 16×16 patches, ratio 0.15], so a masked
patch hides a block whole or not at all (2 of a frame's 16 patches are masked: 1 block in
8). The cell also lies inside one of the frame's four image tokens (Qwen2.5-VL merges
2×2 patches of 14 pixels: the bottom-right token covers pixels 28–55), so what a frame
shows is in one token [ours: a small grader learns to read it in minutes]. The agent was
asked one of three questions and gave an answer, right or wrong:

* ``first`` / ``last`` — "which colour was the first (last) block you saw?": depends on
  frame order (shuffling the frames changes the true answer);
* ``count`` — "how many <colour> blocks did you see?": depends on what is visible
  (a masked block is not counted).

The gold score of a trajectory (``gt_score``, 1–10 like the paper's) is high when the
answer is right and low when it is wrong [ours: the paper's gold scores come from
Gemini-2.5-Pro graded against the reference answer, EQA-RM §3.2; here the rule is
exact so the demo can measure accuracy without a judge]. The agent's reasoning trace
is one generic sentence: the frames, not the text, carry the evidence.

Everything is drawn from ``random.Random(seed)``: the same seed gives the same world.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypedDict

if TYPE_CHECKING:
    from PIL.Image import Image

COLOURS = {
    "red": (220, 40, 40),
    "green": (40, 170, 60),
    "blue": (40, 70, 220),
    "yellow": (235, 205, 30),
}
BACKGROUND = (128, 128, 128)
SIZE = 56  # the tiny VLM's frame side (groundrl.models.tiny_vlm: 56×56, 4 image tokens)
CELL = 16  # the spatial perturbation's patch side [EQA-RM §4.3]
BLOCK = 2 * CELL  # the block's top-left pixel, both ways: mask-grid cell (2, 2), index 10
N_FRAMES = 3  # [ours: EQA-RM samples 5 keyframes of a long episode (§3); this world's
# episodes are 3 frames long, so a 2-layer grader learns to read them on a CPU in minutes]
EMPTY = "none"  # a frame without a block
QUESTION_KINDS = ("first", "last", "count")
GOLD_RIGHT = 9  # [ours] a right answer with a plain reasoning trace: high, short of 10
GOLD_WRONG = 2  # [ours] a wrong answer: low, above the floor of 1
REASONING = "I looked at each frame in turn and answered from what I saw."


@dataclass(frozen=True)
class Episode:
    """One trajectory to grade: what the frames hold, the question, the agent's answer."""

    id: str
    blocks: tuple[str, ...]  # colour per frame, EMPTY for none
    kind: str  # "first" | "last" | "count"
    colour: str  # the colour a count question asks about ("" otherwise)
    answer: str  # the agent's answer

    @property
    def question(self) -> str:
        if self.kind == "count":
            return f"How many {self.colour} blocks did you see?"
        return f"What colour was the {self.kind} block you saw?"

    @property
    def truth(self) -> str:
        return true_answer(self.blocks, self.kind, self.colour)

    @property
    def correct(self) -> bool:
        return self.answer == self.truth

    @property
    def gt_score(self) -> int:
        return GOLD_RIGHT if self.correct else GOLD_WRONG


def true_answer(blocks: tuple[str, ...] | list[str], kind: str, colour: str = "") -> str:
    """The right answer for frames holding ``blocks`` (in the order shown)."""
    seen = [b for b in blocks if b != EMPTY]
    if kind == "count":
        return str(sum(b == colour for b in seen))
    if not seen:
        return EMPTY
    return seen[0] if kind == "first" else seen[-1]


def _wrong_answer(ep_blocks: tuple[str, ...], kind: str, colour: str, rng: random.Random) -> str:
    truth = true_answer(ep_blocks, kind, colour)
    if kind == "count":
        return rng.choice([str(n) for n in range(N_FRAMES + 1) if str(n) != truth])
    seen = [b for b in ep_blocks if b != EMPTY and b != truth]
    # a wrong order answer names a colour that *was* seen when one exists: only the order
    # tells it apart, not whether the colour appears at all
    return rng.choice(seen) if seen else rng.choice([c for c in COLOURS if c != truth])


def make_episode(rng: random.Random, id: str, p_right: float = 0.5) -> Episode:
    """A random episode: 2–3 blocks over three frames, first and last colours differ."""
    while True:
        n_blocks = rng.randint(2, N_FRAMES)
        slots = sorted(rng.sample(range(N_FRAMES), n_blocks))
        blocks = [EMPTY] * N_FRAMES
        for s in slots:
            blocks[s] = rng.choice(list(COLOURS))
        seen = [b for b in blocks if b != EMPTY]
        if len(set(seen)) >= 2 and seen[0] != seen[-1]:
            break
    kind = rng.choice(QUESTION_KINDS)
    colour = rng.choice(seen) if kind == "count" else ""
    bt = tuple(blocks)
    answer = true_answer(bt, kind, colour) if rng.random() < p_right else _wrong_answer(bt, kind, colour, rng)
    return Episode(id=id, blocks=bt, kind=kind, colour=colour, answer=answer)


def make_episodes(n: int, seed: int, prefix: str = "ep") -> list[Episode]:
    rng = random.Random(f"rm-demo-world:{seed}:{prefix}")
    return [make_episode(rng, f"{prefix}{i}") for i in range(n)]


def render_frame(colour: str) -> Image:
    """A 56×56 RGB frame: grey, with a 16×16 block of ``colour`` on the grid cell at row 2,
    column 2 (pixels 32–47 both ways); :data:`EMPTY` draws no block."""
    # lazy: Pillow loads only when a frame is drawn
    from PIL import Image

    im = Image.new("RGB", (SIZE, SIZE), BACKGROUND)
    if colour != EMPTY:
        im.paste(COLOURS[colour], (BLOCK, BLOCK, BLOCK + CELL, BLOCK + CELL))
    return im


def frames(ep: Episode) -> list[Image]:
    return [render_frame(b) for b in ep.blocks]


def read_frame(image: Image) -> str:
    """What a frame shows, read back from its pixels: the block's colour when its cell is
    wholly that colour, else :data:`EMPTY` (a masked patch zeroes the whole cell). The
    ground truth of a perturbed input."""
    # lazy: numpy loads only when a frame is read back; importing the world stays light
    import numpy as np

    cell = np.asarray(image.convert("RGB"))[BLOCK : BLOCK + CELL, BLOCK : BLOCK + CELL].reshape(-1, 3)
    for name, rgb in COLOURS.items():
        if (cell == rgb).all():
            return name
    return EMPTY


class EpisodeInstance(TypedDict):
    """:func:`instance`'s record: an episode's EQA-RM fields, frames apart."""

    id: str
    question: str
    reasoning: str
    answer: str
    gt_score: int
    kind: str  # one of QUESTION_KINDS


def instance(ep: Episode) -> EpisodeInstance:
    """The EQA-RM instance of an episode (:func:`groundrl.train.rm_data.instance_row`'s
    fields, frames as images)."""
    return {
        "id": ep.id,
        "question": ep.question,
        "reasoning": REASONING,
        "answer": ep.answer,
        "gt_score": ep.gt_score,
        "kind": ep.kind,
    }


# -- the auxiliary evaluator R^aux that RFT samples [EQA-RM §4.2] ---------------------------


def critique(ep: Episode, seen: tuple[str, ...] | list[str]) -> str:
    """A grader's output that reads the frames as ``seen``: what each frame shows, the
    answer those frames give, the verdict on the agent's answer, and the score."""
    truth = true_answer(seen, ep.kind, ep.colour)
    right = ep.answer == truth
    score = GOLD_RIGHT if right else GOLD_WRONG
    return (
        f"<critique>frames: {', '.join(seen)}. {ep.kind}: {truth}. agent: {ep.answer}, "
        f"{'right' if right else 'wrong'}.</critique><score>{score}</score>"
    )


class TeacherEvaluation(TypedDict):
    """One sampled evaluation of :func:`teacher_evaluation` (the shape
    :func:`groundrl.curate.rejective.rejective_filter` reads, plus how it was made)."""

    critique: str
    score: int
    mode: Literal["blind", "read"]


BLIND = "<critique>frames: not checked. the answer sounds plausible.</critique><score>{}</score>"


def teacher_evaluation(ep: Episode, rng: random.Random, blind: float, misread: float) -> TeacherEvaluation:
    """One sampled evaluation of the imperfect auxiliary evaluator, with its two
    systematic mistakes [ours: a stand-in for the paper's R^aux, whose errors RFT's
    filter must catch]:

    * ``blind`` (probability ``blind``): it does not look at the frames and calls the
      answer plausible with a score drawn from 5–10 — the shortcut a grader takes when
      the wording sounds right;
    * ``misread`` (per frame, probability ``misread``): it reads a frame as a random
      colour or as empty, and grades consistently with what it misread.

    Returns ``{"critique": text, "score": int, "mode": "blind" | "read"}``."""
    if rng.random() < blind:
        s = rng.randint(5, 10)
        return {"critique": BLIND.format(s), "score": s, "mode": "blind"}
    options = [*COLOURS, EMPTY]
    seen = [rng.choice(options) if rng.random() < misread else b for b in ep.blocks]
    text = critique(ep, seen)
    right = true_answer(seen, ep.kind, ep.colour) == ep.answer
    return {"critique": text, "score": GOLD_RIGHT if right else GOLD_WRONG, "mode": "read"}
