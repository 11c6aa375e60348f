"""Small real components for tests and benchmarks: a local OpenAI-compatible chat server.
(The tiny random Qwen2.5-VL is a product feature, ``model: tiny``: :mod:`groundrl.models.tiny_vlm`.)"""
