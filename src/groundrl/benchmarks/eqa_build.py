"""``build-eqa``: build an EQARewardBench-style set (EQA-RM's benchmark) from OpenEQA.

For each OpenEQA question with local episode frames:

1. **keyframes**: ``keyframes`` frames (default 5) spread uniformly over the episode's
   RGB frames (:func:`~groundrl.benchmarks.datasets.uniform_indices`);
2. **responses**: a policy model served OpenAI-compatibly sees the keyframes and the
   question and answers with step-by-step reasoning (``<think>…</think>``) and a final
   ``<answer>…</answer>`` — ``responses`` samples at ``policy_temperature`` (a natural mix
   of right and wrong answers) plus ``incorrect`` responses asked to argue for a
   plausible *wrong* answer, so every question has low-scoring trajectories too. A
   response without an ``<answer>`` is dropped and counted;
3. **ground truth**: a judge sees the keyframes, the question, the **reference answer**
   (and OpenEQA's ``extra_answers``), and the agent's reasoning and answer, and writes a
   critique in ``<critique>…</critique>`` and a 1–10 score in ``<score>…</score>`` with
   EQA-RM's labelling criteria (:data:`LABEL_SYSTEM`: 60 % agreement, 40 % trace [EQA-RM
   App. D]); it is told not to reveal the reference in the critique. A critique that contains the
   reference answer while the agent's answer does not is flagged ``leaks_reference``
   (counted in the manifest; kept). A response whose score cannot be read is dropped and
   counted;
4. **split**: by source (``scannet-v0`` / ``hm3d-v0``, the first part of
   ``episode_history``) and into train/test **by episode**: an episode is in test when
   ``Random(crc32(f"{seed}|{episode}")).random() < test_fraction`` (our choice: default
   0.2), so no episode is on both sides.

Resumable: each finished question is appended to ``progress.jsonl`` in the output folder;
a rerun with the same folder skips those questions and rebuilds the split files from
the journal. Items are what ``bench score-rm`` reads: ``{id, question, frames,
reasoning, answer, gt_score, gt_critique, reference, category, source, episode, split,
response_kind}``.

The paper (EQA-RM, Chen et al. 2025, arXiv:2506.10389) built EQARewardBench from OpenEQA
with agent trajectories whose ground-truth critiques and scores came from
Gemini-2.5-Pro given the reference answer, checked by humans; it reports training
EQA-RM on 700 samples. Our judge is whatever ``--judge-*`` names, and nothing here
replaces the human check.
"""

from __future__ import annotations

import json
import random
import zlib
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

from groundrl.benchmarks.datasets import OpenEQAQuestion
from groundrl.benchmarks.records import BadRow
from groundrl.io import iter_lines, json_line, write_jsonl
from groundrl.judges.base import ImagePart, JudgeBackend, Request, SamplingParams
from groundrl.judges.prompts import EQA_RM_REFERENCE_SYSTEM
from groundrl.parse.scores import parse_score
from groundrl.parse.tags import find_tag

POLICY_SYSTEM = (
    "You are a household robot that has just explored a home. The images are frames from your "
    "exploration, in the order you saw them. Answer the question about the home. First reason step by "
    "step inside <think>...</think>: say what you saw, where things are and what changed, naming views by "
    "their content or timing (at first, then, finally), never by a frame number or index. Then give a "
    "short final answer inside <answer>...</answer>."
)
"""[EQA-RM App. D, response generation, guideline 2: "DO NOT use specific frame number or
index"]; in our words."""
INCORRECT_SYSTEM = (
    "You are helping build a test of answer checkers. The images are frames from a robot's exploration of "
    "a home, in order. Write the reasoning of a robot that gets the question WRONG in a believable way "
    "(a misread frame, a confused object or place), step by step inside <think>...</think>, then its "
    "plausible but incorrect short answer inside <answer>...</answer>. Do not say that it is wrong."
)
LABEL_SYSTEM = EQA_RM_REFERENCE_SYSTEM
"""The labeller uses EQA-RM's own labelling criteria [EQA-RM App. D]: agreement with the
reference 60 %, reasoning trace 40 %, a 1-10 score, the reference never in the critique."""


def episode_split(episode: str, seed: int, test_fraction: float) -> str:
    """``"test"`` or ``"train"`` for an episode, the same for every question of it.

    >>> episode_split("hm3d-v0/000-hm3d-x", 0, 0.0), episode_split("hm3d-v0/000-hm3d-x", 0, 1.0)
    ('train', 'test')
    """
    return (
        "test"
        if random.Random(zlib.crc32(f"{seed}|{episode}".encode())).random() < test_fraction
        else "train"
    )


class EQAItem(TypedDict):
    """One labelled response of a question, as journaled in progress.jsonl."""

    question: str
    frames: list[str]
    reasoning: str
    answer: str
    reference: str
    gt_score: float
    gt_critique: str
    leaks_reference: bool
    category: object
    source: str
    episode: str
    response_kind: str


class BenchItem(EQAItem):
    """A score-rm item of the built set (items.jsonl and the split files)."""

    id: str
    question_id: object
    split: str


class JournalRow(TypedDict):
    """One finished question in progress.jsonl."""

    question_id: object
    items: list[EQAItem]
    unparsed_responses: int
    unscored_responses: int


def _images(frames: Sequence[str]) -> list[ImagePart]:
    return [{"type": "image", "image": f} for f in frames]


def policy_request(q: OpenEQAQuestion, incorrect: bool = False) -> Request:
    return [
        {"role": "system", "content": INCORRECT_SYSTEM if incorrect else POLICY_SYSTEM},
        {
            "role": "user",
            "content": [*_images(q["frames"]), {"type": "text", "text": f"Question: {q['question']}"}],
        },
    ]


def label_request(q: OpenEQAQuestion, reasoning: str, answer: str) -> Request:
    refs = q["answer"] + "".join(f" / {a}" for a in q.get("extra_answers") or [])
    text = (
        f"Question: {q['question']}\n\nReference answer (do not reveal): {refs}\n\n"
        f"Agent reasoning:\n{reasoning}\n\nAgent answer: {answer}"
    )
    return [
        {"role": "system", "content": LABEL_SYSTEM},
        {"role": "user", "content": [*_images(q["frames"]), {"type": "text", "text": text}]},
    ]


def split_response(text: str | None) -> tuple[str, str] | None:
    """``(reasoning, answer)`` of a policy response; ``None`` without an ``<answer>``.

    >>> split_response("<think>frame 2 shows a red sofa</think><answer>red</answer>")
    ('frame 2 shows a red sofa', 'red')
    >>> split_response("just red") is None
    True
    """
    if not isinstance(text, str):
        return None
    answer = find_tag(text, "answer")
    if answer is None or not answer.strip():
        return None
    think = find_tag(text, "think")
    reasoning = think if think is not None else text[: text.lower().find("<answer>")]
    return reasoning.strip(), answer.strip()


def leaks(critique: str, reference: str, answer: str) -> bool:
    """The critique names the reference while the agent's answer does not (case-folded).

    >>> leaks("The sofa is actually red.", "red", "blue"), leaks("Correct: red.", "red", "red")
    (True, False)
    """
    r = reference.strip().casefold()
    return len(r) >= 2 and r in critique.casefold() and r not in answer.casefold()


def _journal(path: Path) -> dict[str, JournalRow]:
    done: dict[str, JournalRow] = {}
    if path.exists():
        for line in iter_lines(path):
            if line.problem:  # a line cut by an interrupted run: that question is redone
                continue
            done[str(line.value["question_id"])] = line.value
    return done


Calls = dict[str, int]


def _sample(
    policy: JudgeBackend,
    batch: Sequence[OpenEQAQuestion],
    params: SamplingParams,
    counts: Calls,
    calls: Calls,
) -> list[list[tuple[str, str | None]]]:
    """``(kind, text)`` per question of the batch: ``counts["sampled"]`` sampled and
    ``counts["prompted_incorrect"]`` prompted-incorrect responses."""
    gens: list[list[tuple[str, str | None]]] = [[] for _ in batch]
    for kind, count in counts.items():
        if not count:
            continue
        p = SamplingParams(params.temperature, 1.0, params.max_tokens, params.seed, n=count)
        got = policy.generate([policy_request(q, incorrect=kind == "prompted_incorrect") for q in batch], p)
        calls["policy"] += len(batch)
        for i, g in enumerate(got):
            calls["policy_failures"] += not g.ok
            gens[i] += [(kind, t) for t in g.texts]
    return gens


def _item(q: OpenEQAQuestion, kind: str, reasoning: str, answer: str, label: str, score: float) -> EQAItem:
    critique = find_tag(label, "critique") or ""
    return {
        "question": q["question"],
        "frames": q["frames"],
        "reasoning": reasoning,
        "answer": answer,
        "reference": q["answer"],
        "gt_score": float(score),
        "gt_critique": critique.strip(),
        "leaks_reference": leaks(critique, q["answer"], answer),
        "category": q["category"],
        "source": q["source"],
        "episode": q["episode"],
        "response_kind": kind,
    }


def _label_batch(
    judge: JudgeBackend,
    batch: Sequence[OpenEQAQuestion],
    gens: list[list[tuple[str, str | None]]],
    jparams: SamplingParams,
    calls: Calls,
) -> list[JournalRow]:
    """The judge scores every readable response; one journal row per question."""
    to_label: list[tuple[int, str, str, str]] = []
    unparsed = [0] * len(batch)
    for i, rs in enumerate(gens):
        for kind, t in rs:
            ra = split_response(t)
            if ra is None:
                unparsed[i] += 1
            else:
                to_label.append((i, kind, *ra))
    labels = (
        judge.generate([label_request(batch[i], r, a) for i, _, r, a in to_label], jparams)
        if to_label
        else []
    )
    calls["judge"] += len(to_label)
    per_q: list[list[EQAItem]] = [[] for _ in batch]
    unscored = [0] * len(batch)
    for (i, kind, reasoning, answer), g in zip(to_label, labels, strict=True):
        calls["judge_failures"] += not g.ok
        score = parse_score(g.text, 0, 10).value if g.ok else None
        if score is None:
            unscored[i] += 1
            continue
        per_q[i].append(_item(batch[i], kind, reasoning, answer, g.text or "", score))
    return [
        {"question_id": q["question_id"], "items": per_q[i], "unparsed_responses": unparsed[i],
         "unscored_responses": unscored[i]}
        for i, q in enumerate(batch)
    ]  # fmt: skip


def build(
    questions: Sequence[OpenEQAQuestion],
    policy: JudgeBackend,
    judge: JudgeBackend,
    out: Path,
    *,
    responses: int = 4,
    incorrect: int = 1,
    policy_temperature: float = 1.0,
    policy_max_tokens: int = 512,
    judge_params: SamplingParams | None = None,
    test_fraction: float = 0.2,
    seed: int = 0,
    batch_size: int = 16,
    bad_questions: list[BadRow] | None = None,
    settings: Mapping[str, object] | None = None,
    progress: Any = None,
) -> dict[str, Any]:
    """Build the set from OpenEQA ``questions`` (records of
    :func:`~groundrl.benchmarks.datasets.load_openeqa`, keyframes attached) into ``out``;
    returns the manifest. Each finished question is journaled in progress.jsonl, so an
    interrupted run resumes where it stopped."""
    if responses < 0 or incorrect < 0 or responses + incorrect < 1:
        raise ValueError("ask for at least one response per question (responses + incorrect ≥ 1)")
    if not 0 <= test_fraction <= 1:
        raise ValueError(f"test_fraction must be in [0, 1], got {test_fraction}")
    out.mkdir(parents=True, exist_ok=True)
    journal = out / "progress.jsonl"
    done = _journal(journal)
    todo = [q for q in questions if str(q["question_id"]) not in done]
    jparams = judge_params or SamplingParams(temperature=0.0, max_tokens=1024, seed=seed)
    pparams = SamplingParams(policy_temperature, 1.0, policy_max_tokens, seed)
    counts = {"sampled": responses, "prompted_incorrect": incorrect}
    calls = {"policy": 0, "policy_failures": 0, "judge": 0, "judge_failures": 0}
    resumed = len(questions) - len(todo)
    with journal.open("a", encoding="utf-8") as jf:
        for b in range(0, len(todo), batch_size):
            batch = todo[b : b + batch_size]
            gens = _sample(policy, batch, pparams, counts, calls)
            for row in _label_batch(judge, batch, gens, jparams, calls):
                jf.write(json_line(row))
                jf.flush()
                done[str(row["question_id"])] = row
            if progress is not None:
                progress(len(batch))
    return _finish(
        out, questions, done, seed, test_fraction, calls, resumed, bad_questions or [], settings or {}
    )


def _finish(
    out: Path,
    questions: Sequence[OpenEQAQuestion],
    done: Mapping[str, JournalRow],
    seed: int,
    test_fraction: float,
    calls: dict[str, int],
    resumed: int,
    bad_questions: list[BadRow],
    settings: Mapping[str, object],
) -> dict[str, Any]:
    items: list[BenchItem] = []
    for q in questions:
        row = done.get(str(q["question_id"]))
        if row is None:
            continue
        for j, it in enumerate(row["items"]):
            items.append(
                {"id": f"{q['question_id']}#{j}", "question_id": q["question_id"], **it,
                 "split": episode_split(it["episode"], seed, test_fraction)}
            )  # fmt: skip
    files: dict[str, list[BenchItem]] = defaultdict(list)
    for it in items:
        files["items.jsonl"].append(it)
        files[f"{it['split']}.jsonl"].append(it)
        files[f"{it['split']}_{it['source']}.jsonl"].append(it)
    for name, rows in files.items():
        write_jsonl(out / name, rows)
    counts = Counter((it["split"], it["source"]) for it in items)
    episodes = {s: sorted({it["episode"] for it in items if it["split"] == s}) for s in ("train", "test")}
    manifest = {
        "n_questions": len(questions),
        "n_questions_done": sum(str(q["question_id"]) in done for q in questions),
        "n_questions_resumed": resumed,
        "n_items": len(items),
        "by_split_source": {f"{s}/{src}": n for (s, src), n in sorted(counts.items())},
        "n_episodes": {s: len(v) for s, v in episodes.items()},
        "episode_overlap": len(set(episodes["train"]) & set(episodes["test"])),
        "score_histogram": {str(k): v for k, v in sorted(Counter(round(it["gt_score"]) for it in items).items())},
        "by_response_kind": dict(Counter(it["response_kind"] for it in items)),
        "n_leaks_reference": sum(it["leaks_reference"] for it in items),
        "n_unparsed_responses": sum(done[str(q["question_id"])]["unparsed_responses"] for q in questions if str(q["question_id"]) in done),
        "n_unscored_responses": sum(done[str(q["question_id"])]["unscored_responses"] for q in questions if str(q["question_id"]) in done),
        "n_bad_questions": len(bad_questions),
        "bad_questions": bad_questions,
        "calls_this_run": calls,
        "seed": seed,
        "test_fraction": test_fraction,
        "settings": dict(settings),
        "files": sorted(files) + ["manifest.json", "progress.jsonl"],
    }  # fmt: skip
    (out / "manifest.json").write_text(
        json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return manifest
