"""Native loaders for the reward-model benchmarks in their published layouts.

Each loader returns ``(items, bad)``: pairwise items ``{id, query, response_1,
response_2, preferred (1|2), image, category, source?, group?}`` (or OpenEQA question
records), and the rows it could not load, each ``{"row": k, "id": …, "error": …}``
(missing or unreadable image, malformed ranking/label, missing field) — never a silent
drop. Nothing here touches the network: images are bytes embedded in the file or paths
under a local root.

Layouts (what the dataset authors publish):

* ``vl-rewardbench`` — MMInstruction/VL-RewardBench: parquet files (one or a folder of
  them) or JSONL with ``id, query, response [2 strings], image, human_ranking,
  query_source, …``. ``image`` is a struct ``{bytes, path}`` (the Hugging Face image
  feature) or a path. ``human_ranking`` ranks the two responses: the one ranked ``0`` is
  preferred (``[0, 1]`` → response 1, ``[1, 0]`` → response 2); anything but a
  permutation of ``[0, 1]`` is malformed. Category: the paper's three groups from
  ``query_source`` (``mmmu``/``mathverse``/reasoning → ``reasoning``;
  ``povid``/``rlaif``/``rlhf``/hallucination → ``hallucination``; others, e.g.
  ``wildvision-battle``, ``vlfeedback`` → ``general``); rows without a ``query_source``
  are classified by their ``id`` the same way (the Proxy-GRM scoring script's rule).
  ``source`` keeps the raw ``query_source``.
* ``multimodal-rewardbench`` — facebookresearch/multimodal_rewardbench ``data/all_data.json``:
  a JSON list of ``{ID, Text, Image, Output1, Output2, Better: "Output1"|"Output2",
  Category, …}``; ``Image`` is relative to the image root (default: the JSON file's
  folder, where ``scripts/0_download_data.py`` puts ``images/``). Category: ``Category``,
  with ``safety`` split into ``safety/bias`` (IDs starting ``pairs``) and
  ``safety/toxicity``, ``reasoning`` into ``reasoning/math`` (IDs starting ``math``) and
  ``reasoning/coding``, as its ``scripts/2_get_accuracy.py`` reports them.
* ``mm-rlhf-rewardbench`` — yifanzhang114/MM-RLHF-RewardBench as the Proxy-GRM README
  prepares it: JSONL (or parquet) rows ``{id, prompt (or question), chosen, rejected,
  image | video}``; several rows share an ``id`` (one chosen against several rejected),
  so ``group`` = ``id`` and Acc+ is per id. ``video`` is a folder of frames: 32 sampled
  uniformly (the released script's number). Category: the first of ``mcq, long, short,
  safety, video`` found in the media path (the released script's rule), else
  ``(other)``. Item ids are ``<id>#<k>`` (k-th row of that id).
* ``openeqa`` — facebookresearch/open-eqa ``data/open-eqa-v0.json`` plus the episode
  frames root (``data/frames``: ``<root>/<episode_history>/*-rgb.png``; any
  ``.png``/``.jpg`` when no ``-rgb`` frames exist).
* ``jsonl`` — our own items, one per line (see ``bench pairwise-rm --help``).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NotRequired, TypedDict

from groundrl.benchmarks.records import BadLine, BadRow
from groundrl.benchmarks.runner import read_items
from groundrl.io import iter_lines

PAIRWISE_FORMATS = ("jsonl", "vl-rewardbench", "multimodal-rewardbench", "mm-rlhf-rewardbench")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".bmp")
MMRLHF_KEYWORDS = ("mcq", "long", "short", "safety", "video")
VIDEO_FRAMES = 32


class PairwiseItem(TypedDict):
    """A pair as the native loaders return it (``preferred``: 1 or 2; ``image``: bytes,
    an absolute path or a list of frame paths)."""

    id: object
    query: str
    response_1: str
    response_2: str
    preferred: int
    image: object
    category: str
    source: NotRequired[object]
    group: NotRequired[str]


class OpenEQAQuestion(TypedDict):
    """An OpenEQA question with its episode's keyframes (absolute paths)."""

    question_id: object
    question: str
    answer: str
    extra_answers: list[str]
    category: object
    episode: str
    source: str
    frames: list[str]


Loaded = tuple[list[PairwiseItem], list[BadRow]]


# ---------------------------------------------------------------------------
# reading rows
# ---------------------------------------------------------------------------


def _parquet_rows(path: Path) -> list[Mapping[str, object]]:
    # lazy: pyarrow comes with the cluster stack (datasets, verl), not with groundrl
    import pyarrow.parquet as pq

    files = sorted(path.glob("*.parquet")) if path.is_dir() else [path]
    if not files:
        raise ValueError(f"no .parquet file in {path}")
    rows: list[Mapping[str, object]] = []
    for f in files:
        rows.extend(pq.read_table(f).to_pylist())
    return rows


def read_rows(path: str | Path) -> tuple[list[Any], list[BadRow]]:
    """Rows of a parquet file/folder, a JSON list or a JSONL file; JSONL lines that are
    not JSON objects come back as bad rows."""
    path = Path(path)
    if path.is_dir() or path.suffix == ".parquet":
        return _parquet_rows(path), []
    if path.suffix == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict):  # {id: record} layouts
            data = [{"id": k, **v} if isinstance(v, dict) else v for k, v in data.items()]
        return list(data), []
    rows: list[Any] = []
    bad: list[BadRow] = []
    for line in iter_lines(path):
        if line.problem:
            bad.append({"row": line.number, "error": line.problem})
        else:
            rows.append(line.value)
    return rows, bad


def detect_format(path: str | Path) -> str:
    """The layout of ``path`` from its keys (see the module docstring); ``jsonl`` when
    nothing more specific matches."""
    path = Path(path)
    if path.is_dir() or path.suffix == ".parquet":
        # lazy: pyarrow comes with the cluster stack (datasets, verl), not with groundrl
        import pyarrow.parquet as pq

        f = sorted(path.glob("*.parquet"))[0] if path.is_dir() else path
        keys = set(pq.read_schema(f).names)
    else:
        keys = set()
        if path.suffix == ".json":
            data = json.loads(path.read_text(encoding="utf-8"))
            first = data[0] if isinstance(data, list) and data else {}
            keys = set(first) if isinstance(first, dict) else set()
        else:
            for line in iter_lines(path, objects=False):
                if not line.problem:  # the first line that is JSON decides
                    keys = set(line.value) if isinstance(line.value, dict) else set()
                    break
    if {"Output1", "Output2", "Better"} <= keys:
        return "multimodal-rewardbench"
    if {"response", "human_ranking"} <= keys:
        return "vl-rewardbench"
    if {"chosen", "rejected"} <= keys:
        return "mm-rlhf-rewardbench"
    if {"question_id", "episode_history"} <= keys:
        return "openeqa"
    return "jsonl"


# ---------------------------------------------------------------------------
# images
# ---------------------------------------------------------------------------


def _check_image(ref: Any) -> str | None:
    """``None`` when ``ref`` opens as an image, else why not."""
    # lazy: groundrl.judges (about 170 modules) loads only when an image is checked
    from groundrl.judges.images import to_pil

    try:
        to_pil(ref)
    except Exception as e:
        return f"{type(e).__name__}: {str(e)[:80]}"
    return None


def _resolve(ref: str, roots: list[Path]) -> Path | None:
    p = Path(ref)
    if p.is_absolute():
        return p if p.is_file() else None
    for r in roots:
        if (r / p).is_file():
            return r / p
    return None


def _image(ref: Any, roots: list[Path]) -> tuple[Any, str | None]:
    """An image reference the judge can open (bytes or an absolute path), or an error."""
    if ref is None:
        return None, "missing image"
    if isinstance(ref, dict):  # the Hugging Face image feature {bytes, path}
        if ref.get("bytes"):
            data = ref["bytes"]
            why = _check_image(data)
            return (data, None) if why is None else (None, f"unreadable embedded image ({why})")
        ref = ref.get("path")
        if not ref:
            return None, "missing image"
    if isinstance(ref, (bytes, bytearray)):
        why = _check_image(bytes(ref))
        return (bytes(ref), None) if why is None else (None, f"unreadable embedded image ({why})")
    if not isinstance(ref, str) or not ref:
        return None, "missing image"
    p = _resolve(ref, roots)
    if p is None:
        return None, f"missing image {ref[:80]!r}"
    why = _check_image(str(p))
    return (str(p), None) if why is None else (None, f"unreadable image {ref[:80]!r} ({why})")


def _roots(path: Path, image_root: str | Path | None) -> list[Path]:
    base = path if path.is_dir() else path.parent
    return [Path(image_root)] if image_root is not None else [base]


def _text(row: Mapping[str, object], *keys: str) -> str | None:
    for k in keys:
        v = row.get(k)
        if isinstance(v, str):
            return v
    return None


# ---------------------------------------------------------------------------
# VL-RewardBench
# ---------------------------------------------------------------------------


def vl_rewardbench_category(source: str) -> str:
    """The paper's group of a ``query_source`` (or id).

    >>> [vl_rewardbench_category(s) for s in ("mmmu-pro", "povid", "RLAIF-V", "wildvision-battle")]
    ['reasoning', 'hallucination', 'hallucination', 'general']
    """
    s = source.lower()
    if "mmmu" in s or "mathverse" in s or "reasoning" in s:
        return "reasoning"
    if any(k in s for k in ("povid", "rlaif", "rlhf", "hallucination")):
        return "hallucination"
    return "general"


def _ranking(value: Any) -> int | None:
    """Preferred response (1 or 2) from ``human_ranking``; ``None`` when malformed."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        return None
    try:
        r = [float(x) for x in value]
    except (TypeError, ValueError):
        return None
    return r.index(0.0) + 1 if sorted(r) == [0.0, 1.0] else None


def load_vl_rewardbench(path: str | Path, image_root: str | Path | None = None) -> Loaded:
    path = Path(path)
    rows, bad = read_rows(path)
    roots = _roots(path, image_root)
    items: list[PairwiseItem] = []
    for k, row in enumerate(rows, start=1):
        rid = row.get("id") if row.get("id") is not None else f"row{k}"
        resp = row.get("response")
        if isinstance(resp, str):
            try:
                resp = json.loads(resp)
            except ValueError:
                resp = None
        if not (isinstance(resp, (list, tuple)) and len(resp) == 2 and all(isinstance(r, str) for r in resp)):
            bad.append({"row": k, "id": rid, "error": "response is not a list of 2 strings"})
            continue
        query = _text(row, "query")
        if query is None:
            bad.append({"row": k, "id": rid, "error": "missing field 'query'"})
            continue
        pref = _ranking(row.get("human_ranking"))
        if pref is None:
            bad.append(
                {"row": k, "id": rid, "error": f"malformed human_ranking {row.get('human_ranking')!r}"}
            )
            continue
        image, why = _image(row.get("image"), roots)
        if why:
            bad.append({"row": k, "id": rid, "error": why})
            continue
        source = row.get("query_source")
        items.append(
            {
                "id": rid,
                "query": query,
                "response_1": resp[0],
                "response_2": resp[1],
                "preferred": pref,
                "image": image,
                "category": vl_rewardbench_category(str(source if source else rid)),
                "source": source if source else None,
            }
        )
    return items, bad


# ---------------------------------------------------------------------------
# Multimodal RewardBench
# ---------------------------------------------------------------------------


def multimodal_rewardbench_category(category: object, item_id: object) -> str:
    """``Category`` with safety and reasoning split by ID prefix.

    >>> multimodal_rewardbench_category("safety", "pairs-12"), multimodal_rewardbench_category("reasoning", "emma")
    ('safety/bias', 'reasoning/coding')
    """
    c, i = str(category).lower(), str(item_id).lower()
    if c == "safety":
        return "safety/bias" if i.startswith("pairs") else "safety/toxicity"
    if c == "reasoning":
        return "reasoning/math" if i.startswith("math") else "reasoning/coding"
    return c


def load_multimodal_rewardbench(path: str | Path, image_root: str | Path | None = None) -> Loaded:
    path = Path(path)
    rows, bad = read_rows(path)
    roots = _roots(path, image_root)
    items: list[PairwiseItem] = []
    for k, row in enumerate(rows, start=1):
        if not isinstance(row, dict):
            bad.append({"row": k, "error": "not an object"})
            continue
        rid = row.get("ID") if row.get("ID") is not None else f"row{k}"
        missing = [f for f in ("Text", "Output1", "Output2") if not isinstance(row.get(f), str)]
        if missing:
            bad.append({"row": k, "id": rid, "error": f"missing field {missing[0]!r}"})
            continue
        better = row.get("Better")
        if better not in ("Output1", "Output2"):
            bad.append({"row": k, "id": rid, "error": f"Better must be Output1 or Output2, got {better!r}"})
            continue
        image, why = _image(row.get("Image"), roots)
        if why:
            bad.append({"row": k, "id": rid, "error": why})
            continue
        meta = row.get("Meta")
        meta = meta if isinstance(meta, dict) else {}
        cat = row.get("Category", meta.get("Category", "unknown"))
        items.append(
            {
                "id": rid,
                "query": row["Text"],
                "response_1": row["Output1"],
                "response_2": row["Output2"],
                "preferred": 1 if better == "Output1" else 2,
                "image": image,
                "category": multimodal_rewardbench_category(cat, rid),
            }
        )
    return items, bad


# ---------------------------------------------------------------------------
# MM-RLHF-RewardBench
# ---------------------------------------------------------------------------


def mmrlhf_category(media: str) -> str:
    """The released script's category: the first keyword in the media path.

    >>> mmrlhf_category("images/long_023/x.jpg"), mmrlhf_category("a/b.png")
    ('long', '(other)')
    """
    m = media.lower()
    return next((kw for kw in MMRLHF_KEYWORDS if kw in m), "(other)")


def _video_frames(ref: str, roots: list[Path], n: int) -> tuple[list[str] | None, str | None]:
    p = Path(ref)
    folder = p if p.is_absolute() else next((r / p for r in roots if (r / p).is_dir()), None)
    if folder is None or not folder.is_dir():
        return None, f"missing video frame folder {ref[:80]!r}"
    files = sorted(f for f in folder.iterdir() if f.is_file() and f.suffix.lower() in IMAGE_SUFFIXES)
    if not files:
        return None, f"empty video frame folder {ref[:80]!r}"
    idx = uniform_indices(len(files), n)
    return [str(files[i]) for i in idx], None


def load_mm_rlhf_rewardbench(
    path: str | Path, image_root: str | Path | None = None, video_frames: int = VIDEO_FRAMES
) -> Loaded:
    path = Path(path)
    rows, bad = read_rows(path)
    roots = _roots(path, image_root)
    items: list[PairwiseItem] = []
    seen: dict[str, int] = defaultdict(int)
    for k, row in enumerate(rows, start=1):
        rid = str(row.get("id")) if row.get("id") is not None else f"row{k}"
        query = _text(row, "prompt", "question", "query")
        missing = [f for f in ("chosen", "rejected") if not isinstance(row.get(f), str)]
        if query is None:
            missing.insert(0, "prompt")
        # a None query is in missing too; said here as well so query is a str below
        if query is None or missing:
            bad.append({"row": k, "id": rid, "error": f"missing field {missing[0]!r}"})
            continue
        media = row.get("image") or row.get("video")
        if row.get("image"):
            image, why = _image(row["image"], roots)
        elif isinstance(row.get("video"), str):
            image, why = _video_frames(row["video"], roots, video_frames)
        else:
            image, why = None, "missing image or video"
        if why:
            bad.append({"row": k, "id": rid, "error": why})
            continue
        n = seen[rid]
        seen[rid] += 1
        items.append(
            {
                "id": f"{rid}#{n}",
                "query": query,
                "response_1": row["chosen"],
                "response_2": row["rejected"],
                "preferred": 1,
                "image": image,
                "category": mmrlhf_category(media if isinstance(media, str) else ""),
                "group": rid,
            }
        )
    return items, bad


# ---------------------------------------------------------------------------
# OpenEQA questions + episode frames
# ---------------------------------------------------------------------------


def uniform_indices(n: int, k: int) -> list[int]:
    """``k`` indices spread uniformly over ``range(n)``, first and last included
    (all of them when ``n <= k``).

    >>> uniform_indices(10, 5), uniform_indices(3, 5), uniform_indices(7, 1)
    ([0, 2, 5, 7, 9], [0, 1, 2], [3])
    """
    if n <= k:
        return list(range(n))
    if k == 1:
        return [(n - 1) // 2]
    return [math.floor(i * (n - 1) / (k - 1) + 0.5) for i in range(k)]


def episode_frames(frames_root: str | Path, episode: str) -> list[Path]:
    """An episode's RGB frames in order: ``*-rgb.png`` if any, else every image file."""
    folder = Path(frames_root) / episode
    if not folder.is_dir():
        return []
    files = sorted(f for f in folder.iterdir() if f.is_file() and f.suffix.lower() in IMAGE_SUFFIXES)
    rgb = [f for f in files if f.stem.endswith("-rgb")]
    return rgb or files


def load_openeqa(
    questions: str | Path, frames_root: str | Path, keyframes: int = 5
) -> tuple[list[OpenEQAQuestion], list[BadRow]]:
    """OpenEQA questions with ``keyframes`` uniform frames of their episode (absolute
    paths). Questions whose episode has no frames under ``frames_root`` are bad."""
    rows = json.loads(Path(questions).read_text(encoding="utf-8"))
    items: list[OpenEQAQuestion] = []
    bad: list[BadRow] = []
    cache: dict[str, list[Path]] = {}
    for k, q in enumerate(rows, start=1):
        qid = q.get("question_id") if isinstance(q, dict) else None
        if not isinstance(q, dict) or not all(
            isinstance(q.get(f), str) for f in ("question", "answer", "episode_history")
        ):
            bad.append({"row": k, "id": qid, "error": "needs question, answer and episode_history"})
            continue
        ep = q["episode_history"]
        if ep not in cache:
            cache[ep] = episode_frames(frames_root, ep)
        frames = cache[ep]
        if not frames:
            bad.append({"row": k, "id": qid, "error": f"no frames under {Path(frames_root) / ep}"})
            continue
        items.append(
            {
                "question_id": qid if qid is not None else f"row{k}",
                "question": q["question"],
                "answer": q["answer"],
                "extra_answers": q.get("extra_answers") or [],
                "category": q.get("category") or "(no category)",
                "episode": ep,
                "source": ep.split("/")[0],
                "frames": [str(frames[i].resolve()) for i in uniform_indices(len(frames), keyframes)],
            }
        )
    return items, bad


def load_pairwise(
    path: str | Path, fmt: str = "auto", image_root: str | Path | None = None
) -> tuple[str, list, list]:
    """``(format, items, bad)`` for any pairwise layout; ``fmt="auto"`` detects it."""
    if fmt == "auto":
        fmt = detect_format(path)
    if fmt == "vl-rewardbench":
        return fmt, *load_vl_rewardbench(path, image_root)
    if fmt == "multimodal-rewardbench":
        return fmt, *load_multimodal_rewardbench(path, image_root)
    if fmt == "mm-rlhf-rewardbench":
        return fmt, *load_mm_rlhf_rewardbench(path, image_root)
    if fmt == "jsonl":
        # lazy: benchmarks.pairwise_rm brings numpy and orjson; loaded only when this runs
        from groundrl.benchmarks.pairwise_rm import REQUIRED

        items, bad = read_items(path, REQUIRED)
        return fmt, items, [_bad_row(b) for b in bad]
    raise ValueError(f"not a pairwise layout: {fmt!r} (pairwise formats: {', '.join(PAIRWISE_FORMATS)})")


def _bad_row(b: BadLine) -> BadRow:
    """A :func:`~groundrl.benchmarks.runner.read_items` report keyed by ``row`` like the
    native loaders' (the same key order: row, id, error)."""
    if "id" in b:
        return {"row": b["line"], "id": b["id"], "error": b["error"]}
    return {"row": b["line"], "error": b["error"]}
