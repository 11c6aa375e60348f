"""``groundrl serve``: the reward server (FastAPI + uvicorn)."""

from __future__ import annotations

from pathlib import Path

import typer

from groundrl.recipes import RECIPE_NAMES


def command(
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to bind (loopback by default)."),
    port: int = typer.Option(8000, "--port", help="TCP port."),
    recipe: str | None = typer.Option(
        None, "--recipe", help=f"Recipe for /get_reward (OpenRLHF): {', '.join(RECIPE_NAMES)}."
    ),
    token: str | None = typer.Option(
        None,
        "--token",
        envvar="GROUNDRL_TOKEN",
        help="Require `Authorization: Bearer TOKEN` (all routes but /health).",
    ),
    action_map: Path | None = typer.Option(
        None, "--action-map", exists=True, dir_okay=False, help="reinforced_planning: {id: name} action map."
    ),
    max_batch: int = typer.Option(64, "--max-batch", help="Samples per scoring batch."),
    max_wait_ms: float = typer.Option(5.0, "--max-wait-ms", help="How long a batch waits for more requests."),
    max_queue: int = typer.Option(4096, "--max-queue", help="Queued samples before 503 + Retry-After."),
    workers: int = typer.Option(1, "--workers", help="uvicorn worker processes."),
) -> None:
    """Serve rewards over HTTP: POST /score, POST /get_reward (OpenRLHF), GET /health, GET /metrics."""
    import uvicorn

    from groundrl.serve.app import create_app

    options = {"action_map": str(action_map)} if action_map else None
    try:
        app = create_app(recipe, token, max_batch, max_wait_ms, max_queue, recipe_options=options)
    except ValueError as e:
        raise typer.BadParameter(str(e)) from e
    uvicorn.run(
        app,
        host=host,
        port=port,
        workers=workers if workers > 1 else None,
        timeout_graceful_shutdown=30,
        log_level="warning",
    )
