"""groundrl samples as OpenRLHF 0.11's prompt dataset (``groundrl export openrlhf``).

One JSON line per sample, with the keys ``examples/openrlhf/common.sh`` passes
(``--data.input_key prompt``, ``--data.label_key`` = the recipe's label field, e.g.
``gt_score``, ``--data.image_key images``):

* ``prompt``: the chat messages with text content and one ``<image>`` tag per image, in
  order (:func:`groundrl.integrations.verl.verl_prompt`; tags go before the first user
  message when the prompt has none). OpenRLHF's ``PromptDataset`` turns each tag into an
  image part before the chat template (``_str_to_content_list``);
* ``images``: one entry per tag — a file reference as its absolute path (OpenRLHF's
  ``load_images`` opens it on the node, so the path must be visible there), any other
  reference (bytes, a ``data:`` URL, ``{"bytes": …}``, a PIL image) as a
  ``data:image/png;base64,…`` string, which ``load_images`` decodes. Omitted for a
  text-only sample;
* the recipe's label field (``label`` for a recipe without one): a JSON object of the
  sample's fields (the label itself, ``recipe``, ``index`` and every other field but the
  prompt and images), which groundrl's OpenRLHF reward
  (:func:`groundrl.integrations.openrlhf.label_to_sample`) reads back as the sample, so
  fields beside the label reach the reward too.

Every image is read once at export (a clear error naming the row now, not a warning and a
skipped image on the cluster: OpenRLHF skips images it cannot load).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from groundrl.integrations.verl import _image_bytes, _row_recipe, verl_prompt
from groundrl.io import atomic_output


def _image_ref(ref: Any, base: Path | None, where: str) -> str:
    """An image reference as OpenRLHF's ``load_images`` reads it (checked readable)."""
    data = _image_bytes(ref, base, where)  # raises ValueError naming ``where``
    path = ref.get("path") if isinstance(ref, dict) and not ref.get("bytes") else ref
    if isinstance(path, str | Path) and not str(path).startswith("data:"):
        p = Path(path)
        found = base / p if base is not None and not p.is_absolute() and (base / p).is_file() else p
        return str(found.resolve())
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def openrlhf_row(i: int, row: Mapping[str, Any], recipe: str | None, base: Path | None) -> dict[str, object]:
    """One sample as a line of OpenRLHF's prompt dataset (see the module docstring)."""
    name, rec = _row_recipe(i, row, recipe)
    refs = row.get("images") or []
    refs = [refs] if isinstance(refs, str | bytes | dict) else list(refs)
    frames = row.get("video") or []
    refs += [frames] if isinstance(frames, str | bytes | dict) else list(frames)
    images = [_image_ref(x, base, f"row {i} image {k}") for k, x in enumerate(refs)]
    prompt = verl_prompt(row.get("prompt", ""), len(images), f"row {i}")
    fields = {k: v for k, v in row.items() if k not in ("prompt", "images", "video", "completion")}
    fields.update(recipe=name, index=i)
    out: dict[str, object] = {  # the label key is the recipe's label field
        "prompt": prompt,
        rec.label_field or "label": json.dumps(fields, ensure_ascii=False),
    }
    if images:
        out["images"] = images
    return out


def write_prompts(
    rows: Iterable[Mapping[str, Any]],
    path: str,
    recipe: str | None = None,
    image_root: str | Path | None = None,
) -> int:
    """Write ``rows`` as OpenRLHF prompt-dataset JSON lines at ``path`` (written under a
    temporary name and renamed when complete; a row that cannot be written raises
    ValueError naming it and leaves ``path`` as it was). Relative image paths are read from
    ``image_root``. Streams: one row in memory at a time. Returns the rows written."""
    base = Path(image_root) if image_root is not None else None
    n = 0
    with atomic_output(path, "w") as f:
        for i, row in enumerate(rows):
            f.write(json.dumps(openrlhf_row(i, row, recipe, base), ensure_ascii=False) + "\n")
            n += 1
    return n
