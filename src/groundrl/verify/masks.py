"""Mask providers for spatial grounding: ``provider(label, sample) -> mask | boxes | None``.

* :class:`BoxMaskProvider` — ground truth in the sample: ``masks`` (``{label: 2-D bool
  array or nested lists}``) or ``boxes`` (``{label: [[x1, y1, x2, y2], …]}``).
* :class:`DetectorSegmenterMasks` — an open-vocabulary detector and a segmenter loaded
  from local paths through transformers, for data without ground truth: boxes from
  ``Owlv2ForObjectDetection`` (+ ``Owlv2Processor``) for the label as a text query, turned
  into masks by ``SamModel`` (+ ``SamProcessor``) prompted with those boxes. Nothing is
  downloaded: pass the directories of checkpoints you have. Not exercised in CI (no
  weights here).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from groundrl.judges.images import to_pil


class SampleMaskProvider(Protocol):
    """``provider(label, sample) -> mask | boxes | None``: the sample is only read."""

    def __call__(self, label: str, sample: Mapping[str, Any]) -> Any: ...


class BoxMaskProvider:
    def __call__(self, label: str, sample: Mapping[str, Any]) -> Any:
        key = " ".join(str(label).casefold().split())
        for field in ("masks", "points_masks", "boxes"):
            table = sample.get(field)
            if isinstance(table, dict):
                for k, v in table.items():
                    if " ".join(str(k).casefold().split()) == key:
                        return {"boxes": v} if field == "boxes" else v
        return None


class DetectorSegmenterMasks:
    def __init__(self, detector_path: str, segmenter_path: str, threshold: float = 0.2) -> None:
        self.detector_path, self.segmenter_path, self.threshold = detector_path, segmenter_path, threshold
        self._models: tuple[Any, ...] | None = None

    def _load(self) -> tuple[Any, ...]:
        if self._models is None:
            # lazy: transformers loads only when the detector and segmenter load
            from transformers import Owlv2ForObjectDetection, Owlv2Processor, SamModel, SamProcessor

            self._models = (
                Owlv2Processor.from_pretrained(self.detector_path),
                Owlv2ForObjectDetection.from_pretrained(self.detector_path),
                SamProcessor.from_pretrained(self.segmenter_path),
                SamModel.from_pretrained(self.segmenter_path),
            )
        return self._models

    def __call__(self, label: str, sample: Mapping[str, Any]) -> Any:
        # lazy: torch loads only when a mask is computed
        import torch

        image = sample.get("image") or (sample.get("images") or [None])[0]
        if image is None:
            return None
        img = to_pil(image)
        det_proc, det, seg_proc, seg = self._load()
        with torch.inference_mode():
            inputs = det_proc(text=[[label]], images=img, return_tensors="pt")
            out = det(**inputs)
            res = det_proc.post_process_object_detection(
                out, threshold=self.threshold, target_sizes=torch.tensor([img.size[::-1]])
            )[0]
            boxes = res["boxes"].tolist()
            if not boxes:
                return None
            s_in = seg_proc(img, input_boxes=[boxes], return_tensors="pt")
            s_out = seg(**s_in)
            masks = seg_proc.image_processor.post_process_masks(
                s_out.pred_masks, s_in["original_sizes"], s_in["reshaped_input_sizes"]
            )[0]
        return masks.any(dim=0).any(dim=0).numpy()


MASK_PROVIDERS = {"boxes": BoxMaskProvider, "detector_segmenter": DetectorSegmenterMasks}


def mask_provider_from_spec(spec: Any) -> SampleMaskProvider:
    """A mask provider from a config's ``verifier.masks``: ``boxes`` (ground truth in the
    sample, the default) or ``{provider: detector_segmenter, detector: PATH, segmenter:
    PATH, threshold: 0.2}`` — the paper's open-vocabulary detector g_θ then segmenter h_φ
    [Argos §3.1, Eq. 1] from local checkpoints (OWLv2 + SAM here; the paper's own teacher
    models differ). Raises ``ValueError`` naming the key to fix; loads nothing yet."""
    if spec is None or spec == "boxes":
        return BoxMaskProvider()
    if isinstance(spec, str):
        spec = {"provider": spec}
    if not isinstance(spec, dict):
        raise ValueError(f"verifier.masks must be `boxes` or a mapping {{provider: ...}}, got {spec!r}")
    kind = spec.get("provider")
    if kind not in MASK_PROVIDERS:
        raise ValueError(f"verifier.masks.provider must be one of {', '.join(MASK_PROVIDERS)}, got {kind!r}")
    if kind == "boxes":
        if set(spec) - {"provider"}:
            raise ValueError("verifier.masks: provider `boxes` takes no other keys")
        return BoxMaskProvider()
    allowed = {"provider", "detector", "segmenter", "threshold"}
    unknown = set(spec) - allowed
    if unknown:
        raise ValueError(
            f"verifier.masks: unknown key(s) {sorted(unknown)}; allowed: {', '.join(sorted(allowed))}"
        )
    missing = [k for k in ("detector", "segmenter") if not isinstance(spec.get(k), str) or not spec.get(k)]
    if missing:
        raise ValueError(
            f"verifier.masks: provider detector_segmenter needs {', '.join(missing)}: the local checkpoint "
            "directory of the detector (OWLv2) and of the segmenter (SAM)"
        )
    threshold = spec.get("threshold", 0.2)  # [ours: OWLv2's usual detection threshold]
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1:
        raise ValueError(f"verifier.masks.threshold must be a number in [0, 1], got {threshold!r}")
    return DetectorSegmenterMasks(spec["detector"], spec["segmenter"], float(threshold))
