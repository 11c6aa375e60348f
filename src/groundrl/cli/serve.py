"""``groundrl serve``: the reward server (FastAPI + uvicorn, the ``serve`` extra)."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import typer

from groundrl.cli.dataclass_options import flag, settings_command
from groundrl.cli.fields import field_option, parse_fields
from groundrl.cli.recipe_options import RecipeArgs, recipe_by_name, recipe_command
from groundrl.recipes import recipe_names
from groundrl.serve.limits import Limits


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


@dataclass(frozen=True)
class Listen:
    """How uvicorn listens: the ``groundrl serve`` flags that are not server limits."""

    host: str = flag("127.0.0.1", "Interface to bind (loopback by default).")
    port: int = flag(8000, "TCP port.", min=0, max=65535)
    limit_concurrency: int = flag(1024, "Open connections (per worker) before uvicorn answers 503.", min=1)
    header_timeout: float = flag(
        10.0, "Seconds a connection may take to send a request's headers before it is closed.", min=0.1
    )
    graceful_timeout: float = flag(
        30.0, "Seconds to let in-flight requests finish on SIGTERM/SIGINT.", min=0.0
    )
    workers: int = flag(1, "uvicorn worker processes (each builds its own app).", min=1)


@settings_command(Limits, "limits")
@settings_command(Listen, "listen")
@recipe_command
def command(
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
    limits: Limits = None,  # type: ignore[assignment]  # the Limits fields' flags
    docs: bool = typer.Option(
        False, "--docs/--no-docs", help="Serve /openapi.json and /docs (behind the token when one is set)."
    ),
    listen: Listen = None,  # type: ignore[assignment]  # the Listen fields' flags
    field: list[str] = field_option(),
    recipe_args: RecipeArgs = None,  # type: ignore[assignment]
) -> None:
    """Serve rewards over HTTP: POST /score, POST /get_reward (OpenRLHF), GET /health, GET /metrics."""
    try:
        # lazy: loads when the command runs; groundrl --help imports every command module
        import uvicorn  # noqa: F401  # the serve extra is checked before any work

        from groundrl.serve.factory import build_app
    except ModuleNotFoundError as e:
        typer.echo(
            f"error: the reward server needs the serve extra: pip install 'groundrl[serve]' ({e})", err=True
        )
        raise typer.Exit(2) from e

    options = _options(recipe, recipe_args, action_map, lenient, tau)
    config: dict[str, Any] = {
        "recipe": recipe,
        "token": token,
        **asdict(limits),
        "options": options,
        "docs": docs,
        "fields": parse_fields(field) or None,  # /score samples' renames (--field)
    }
    if recipe_args.judge is not None:
        config["judge"] = recipe_args.judge_spec()  # JSON: worker processes rebuild it
    try:
        app = build_app(config)  # configuration errors surface here, before binding
    except (ValueError, TypeError, OSError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from e
    if not _is_loopback(listen.host) and token is None:
        typer.echo(
            f"warning: serving on {listen.host} without --token: anyone who can reach it can use it", err=True
        )
    _run(app, config, listen)


def _run(app: Any, config: Mapping[str, Any], listen: Listen) -> None:
    """Run the built app under uvicorn (one process, or ``--workers`` processes that each
    rebuild it from ``config``)."""
    # lazy: loads when the command runs; groundrl --help imports every command module
    import uvicorn

    from groundrl.serve import protocol
    from groundrl.serve.factory import ENV_FILE, write_config_file

    common: dict[str, Any] = {
        "host": listen.host,
        "port": listen.port,
        "log_level": "warning",
        "timeout_graceful_shutdown": listen.graceful_timeout,
        "limit_concurrency": listen.limit_concurrency,
    }
    os.environ["GROUNDRL_HEADER_TIMEOUT"] = str(listen.header_timeout)  # worker processes inherit it

    protocol.HeaderTimeoutH11.header_timeout = listen.header_timeout
    common["http"] = protocol.HeaderTimeoutH11
    auth = "bearer token" if config["token"] else "none"
    recipe, n = config["recipe"] or "named per request", listen.workers
    typer.echo(
        f"groundrl serve: http://{listen.host}:{listen.port} (recipe {recipe}, auth {auth}, "
        f"{n} worker{'s' if n > 1 else ''}); routes /score /get_reward /health /metrics",
        err=True,
    )
    if listen.workers == 1:
        uvicorn.run(app, **common)
    else:  # uvicorn's workers import the app themselves: hand them the configuration in
        # an owner-only file, not the environment (it may hold the token)
        path = write_config_file(config)
        os.environ[ENV_FILE] = path
        os.environ.pop("GROUNDRL_TOKEN", None)  # nor the token's own variable
        try:
            uvicorn.run("groundrl.serve.factory:app_from_env", factory=True, workers=listen.workers, **common)
        finally:
            os.unlink(path)
