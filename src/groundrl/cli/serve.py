"""``groundrl serve``: the reward server (FastAPI + uvicorn, the ``serve`` extra)."""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from typing import Any

import typer

from groundrl.cli.fields import field_option, parse_fields
from groundrl.cli.recipe_options import RecipeArgs, recipe_by_name, recipe_command
from groundrl.recipes import recipe_names


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _options(
    recipe: str | None, args: RecipeArgs, action_map: Path | None, lenient: bool | None, tau: float | None
) -> dict[str, Any]:
    """``-O`` plus the alias flags, checked against ``--recipe`` when there is one (without
    one, each option goes to the recipes that declare it)."""
    aliases = {
        "action_map": str(action_map.resolve()) if action_map else None,
        "lenient": lenient,
        "tau": tau,
    }
    if recipe is not None:
        options = args.options(recipe_by_name(recipe), aliases)
        options.pop("judge", None)  # the judge travels as its own JSON setting
        return options
    if args.judge is not None:
        raise typer.BadParameter(
            "--judge-backend runs the model-based parts of --recipe: give --recipe",
            param_hint="--judge-backend",
        )
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.recipes.options import parse_assignments

    options = {k: v for k, v in aliases.items() if v is not None}
    try:
        options.update(parse_assignments(args.assignments))
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="-O/--option") from e
    return options


@recipe_command
def command(
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to bind (loopback by default)."),
    port: int = typer.Option(8000, "--port", min=0, max=65535, help="TCP port."),
    recipe: str | None = typer.Option(
        None,
        "--recipe",
        help=f"Default recipe of /score and the recipe of /get_reward (OpenRLHF): {', '.join(recipe_names())}.",
    ),
    token: str | None = typer.Option(
        None,
        "--token",
        envvar="GROUNDRL_TOKEN",
        help="Require `Authorization: Bearer TOKEN` on every route but /health (or set GROUNDRL_TOKEN).",
    ),
    action_map: Path | None = typer.Option(
        None,
        "--action-map",
        exists=True,
        dir_okay=False,
        help="Alias of -O action_map=PATH.",
    ),
    lenient: bool | None = typer.Option(
        None, "--lenient/--no-lenient", help="Alias of -O lenient=true|false."
    ),
    tau: float | None = typer.Option(None, "--tau", help="Alias of -O tau=X (argos)."),
    max_batch: int = typer.Option(64, "--max-batch", min=1, help="Samples per scoring call (micro-batch)."),
    max_wait_ms: float = typer.Option(
        5.0, "--max-wait-ms", min=0.0, help="Longest a judge-backed batch waits to fill (rule-only: no wait)."
    ),
    max_queue: int = typer.Option(
        4096, "--max-queue", min=1, help="Samples held (queued or scoring) before 503 + Retry-After."
    ),
    max_samples: int = typer.Option(
        4096, "--max-samples", min=1, help="Samples (queries) per request (422 above)."
    ),
    max_body_mb: float = typer.Option(
        16.0, "--max-body-mb", min=0.001, help="Request body limit in MiB (413 above)."
    ),
    batch_concurrency: int = typer.Option(
        1, "--batch-concurrency", min=1, help="Batches scored at once per recipe (raise for a judge server)."
    ),
    limit_concurrency: int = typer.Option(
        1024,
        "--limit-concurrency",
        min=1,
        help="Open connections (per worker) before uvicorn answers 503.",
    ),
    docs: bool = typer.Option(
        False, "--docs/--no-docs", help="Serve /openapi.json and /docs (behind the token when one is set)."
    ),
    header_timeout: float = typer.Option(
        10.0,
        "--header-timeout",
        min=0.1,
        help="Seconds a connection may take to send a request's headers before it is closed.",
    ),
    body_timeout: float = typer.Option(
        10.0,
        "--body-timeout",
        min=0.1,
        help="Seconds a request body may go without a byte before it is dropped (408).",
    ),
    min_body_rate_kb: float = typer.Option(
        64.0,
        "--min-body-rate-kb",
        min=0.0,
        help="KiB/s a request body must average after --body-timeout seconds (0: no floor).",
    ),
    part_timeout: float = typer.Option(
        600.0,
        "--part-timeout",
        min=0.0,
        help="Seconds a reward part's call may take (a hung judge or third-party part); past it the part "
        "scores its fallback with reason `timeout` and the batch is answered. 0: no deadline.",
    ),
    graceful_timeout: float = typer.Option(
        30.0,
        "--graceful-timeout",
        min=0.0,
        help="Seconds to let in-flight requests finish on SIGTERM/SIGINT.",
    ),
    workers: int = typer.Option(
        1, "--workers", min=1, help="uvicorn worker processes (each builds its own app)."
    ),
    field: list[str] = field_option(),
    recipe_args: RecipeArgs = None,  # type: ignore[assignment]
) -> None:
    """Serve rewards over HTTP: POST /score, POST /get_reward (OpenRLHF), GET /health, GET /metrics."""
    try:
        # lazy: loads when the command runs; groundrl --help imports every command module
        import uvicorn

        from groundrl.serve.factory import ENV_FILE, build_app, write_config_file
    except ModuleNotFoundError as e:
        typer.echo(
            f"error: the reward server needs the serve extra: pip install 'groundrl[serve]' ({e})", err=True
        )
        raise typer.Exit(2) from e

    options = _options(recipe, recipe_args, action_map, lenient, tau)
    config: dict[str, Any] = {
        "recipe": recipe,
        "token": token,
        "max_batch": max_batch,
        "max_wait_ms": max_wait_ms,
        "max_queue": max_queue,
        "max_samples": max_samples,
        "max_body_bytes": max(1, int(max_body_mb * 1024 * 1024)),
        "batch_concurrency": batch_concurrency,
        "options": options,
        "docs": docs,
        "body_timeout_s": body_timeout,
        "min_body_rate": min_body_rate_kb * 1024,
        "part_timeout_s": part_timeout or None,
        "fields": parse_fields(field) or None,  # /score samples' renames (--field)
    }
    if recipe_args.judge is not None:
        config["judge"] = recipe_args.judge_spec()  # JSON: worker processes rebuild it
    try:
        app = build_app(config)  # configuration errors surface here, before binding
    except (ValueError, TypeError, OSError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from e
    if not _is_loopback(host) and token is None:
        typer.echo(
            f"warning: serving on {host} without --token: anyone who can reach it can use it", err=True
        )
    common: dict[str, Any] = {
        "host": host,
        "port": port,
        "log_level": "warning",
        "timeout_graceful_shutdown": graceful_timeout,
        "limit_concurrency": limit_concurrency,
    }
    os.environ["GROUNDRL_HEADER_TIMEOUT"] = str(header_timeout)  # worker processes inherit it
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.serve import protocol

    protocol.HeaderTimeoutH11.header_timeout = header_timeout
    common["http"] = protocol.HeaderTimeoutH11
    auth = "bearer token" if token else "none"
    typer.echo(
        f"groundrl serve: http://{host}:{port} (recipe {recipe or 'named per request'}, auth {auth}, "
        f"{workers} worker{'s' if workers > 1 else ''}); routes /score /get_reward /health /metrics",
        err=True,
    )
    if workers == 1:
        uvicorn.run(app, **common)
    else:  # uvicorn's workers import the app themselves: hand them the configuration in
        # an owner-only file, not the environment (it may hold the token)
        path = write_config_file(config)
        os.environ[ENV_FILE] = path
        os.environ.pop("GROUNDRL_TOKEN", None)  # nor the token's own variable
        try:
            uvicorn.run("groundrl.serve.factory:app_from_env", factory=True, workers=workers, **common)
        finally:
            os.unlink(path)
