"""A production reward server: ``/score`` (groundrl's protocol), ``/get_reward`` (OpenRLHF),
``/health``, ``/metrics`` — micro-batched, bounded, authenticated. FastAPI + uvicorn
(the ``serve`` extra), imported only when the server is built."""
