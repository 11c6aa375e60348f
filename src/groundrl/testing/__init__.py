"""Small real components for tests, benchmarks and the demo: a tiny random Qwen2.5-VL
built offline, and a local OpenAI-compatible chat server."""
