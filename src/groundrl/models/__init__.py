"""Models groundrl builds itself. Today one: the tiny random Qwen2.5-VL behind
``model: tiny`` (train configs, ``groundrl sft``, the transformers judge backend), built
offline from config (:mod:`groundrl.models.tiny_vlm`). Imports nothing else of groundrl;
torch / transformers load inside its functions."""
