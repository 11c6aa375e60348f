"""One judge configuration for every surface.

The same settings reach a judge from ``--judge-*`` flags (score, serve, train, bench,
curate), a ``judge:`` block in a train YAML, ``judge=`` (a mapping or a
:class:`JudgeConfig`) in the adapters and the server factory, and ``GROUNDRL_JUDGE_*``
environment variables (the OpenRLHF function file, verl workers on Ray).

>>> JudgeConfig.from_mapping({"backend": "openai", "model": "m", "url": "http://127.0.0.1:8000/v1"}).timeout
60.0

Building it checks the settings; nothing connects or loads until :meth:`make_backend`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from groundrl.judges.registry import BUILTIN_BACKENDS as BACKENDS
from groundrl.judges.registry import backend_options, get_judge_backend, judge_backend_names
from groundrl.settings import parse_settings

DTYPES = ("float32", "bfloat16", "float16")
ENV_PREFIX = "GROUNDRL_JUDGE_"


@dataclass(frozen=True)
class JudgeConfig:
    """Where the judge runs and how it is called.

    * ``backend``: ``openai`` (any OpenAI-compatible server: vLLM, SGLang),
      ``transformers`` (a local checkpoint directory), or a backend registered with
      :func:`~groundrl.judges.registry.register_judge_backend` (or installed through the
      ``groundrl.judges`` entry-point group).
    * ``model``: the served model name (openai) or the checkpoint path (transformers).
    * ``url``: base URL ending in ``/v1`` (openai only).
    * ``api_key_env``: name of the environment variable holding the API key (the key
      itself never sits in a config file or a log).
    * ``device``, ``dtype`` (``float32``/``bfloat16``/``float16``), ``batch_size``:
      local models only.
    * ``concurrency``, ``timeout`` (s), ``retries``: openai only.
    * ``temperature``, ``max_tokens``: sampling; ``None`` keeps each paper judge's default
      (greedy, 512 tokens).
    * ``cache``: path of a sqlite response cache.
    * ``options``: the backend's own settings, parsed into the settings dataclass it
      registered (:func:`~groundrl.judges.registry.register_judge_backend`); unknown keys
      raise at load.
    * ``image_root``, ``allow_local_images``, ``allow_image_urls``: which image
      references the judge follows (:class:`~groundrl.judges.images.ImagePolicy`): local
      paths anywhere by default (the CLI reads your files), only under ``image_root`` when
      set, none with ``allow_local_images=False`` (the reward server's default unless
      ``image_root`` is given); http(s) URLs only with ``allow_image_urls``.
    """

    backend: str = field(
        metadata={
            "help": f"{' | '.join(BACKENDS)} (or an installed groundrl.judges backend): "
            "run the recipe's model-based parts."
        }
    )
    model: str = field(
        metadata={"help": "Judge model: the served name (openai) or a local checkpoint path (transformers)."}
    )
    url: str | None = field(
        default=None,
        metadata={"help": "Base URL of an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1."},
    )
    api_key_env: str = field(
        default="OPENAI_API_KEY",
        metadata={"help": "Environment variable holding the API key (default OPENAI_API_KEY)."},
    )
    device: str | None = field(
        default=None, metadata={"help": "transformers: device of the local judge, e.g. cuda:0."}
    )
    dtype: str | None = field(default=None, metadata={"help": f"transformers: {' | '.join(DTYPES)}."})
    batch_size: int = field(
        default=8, metadata={"help": "transformers: requests per padded forward pass (default 8)."}
    )
    concurrency: int = field(default=16, metadata={"help": "openai: requests in flight (default 16)."})
    timeout: float = field(default=60.0, metadata={"help": "openai: seconds per request (default 60)."})
    retries: int = field(default=3, metadata={"help": "openai: retries on 429/5xx/timeouts (default 3)."})
    temperature: float | None = field(
        default=None, metadata={"help": "Sampling temperature (default the paper judge's, greedy)."}
    )
    max_tokens: int | None = field(
        default=None, metadata={"help": "Tokens per judge answer (default the paper judge's, 512)."}
    )
    cache: str | None = field(
        default=None, metadata={"help": "sqlite file caching judge answers (reruns cost nothing)."}
    )
    image_root: str | None = field(
        default=None, metadata={"help": "The judge reads local images only under this folder."}
    )
    allow_local_images: bool = field(
        default=True,
        metadata={
            "help": "Let the judge read local image paths (the reward server: off unless --judge-image-root)."
        },
    )
    allow_image_urls: bool = field(
        default=False, metadata={"help": "Pass http(s) image URLs on to the judge server."}
    )
    options: dict[str, Any] | None = field(
        default=None,
        metadata={
            "help": "The backend's own settings (JSON object), checked against the settings it registered."
        },
    )

    def __post_init__(self) -> None:
        get_judge_backend(self.backend)  # an unknown name raises, listing the registered ones
        backend_options(self.backend, self.options)  # the backend's own settings, checked at load
        if not self.model:
            raise ValueError("the judge needs a model (a served model name or a local checkpoint path)")
        if self.backend == "openai":
            if not self.url or not str(self.url).startswith(("http://", "https://")):
                raise ValueError(
                    f"the openai judge backend needs url=http(s)://…/v1 (got {self.url!r}), "
                    "e.g. http://127.0.0.1:8000/v1"
                )
        elif self.backend == "transformers" and self.url:
            raise ValueError(
                "url is for the openai backend; a transformers judge loads model from a local path"
            )
        if self.dtype is not None and self.dtype not in DTYPES:
            raise ValueError(f"judge dtype {self.dtype!r} is not one of {', '.join(DTYPES)}")
        for name in ("batch_size", "concurrency"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"judge {name} must be an integer ≥ 1, got {getattr(self, name)!r}")
        if not isinstance(self.retries, int) or self.retries < 0:
            raise ValueError(f"judge retries must be an integer ≥ 0, got {self.retries!r}")
        if not (isinstance(self.timeout, (int, float)) and self.timeout > 0):
            raise ValueError(f"judge timeout must be > 0 seconds, got {self.timeout!r}")
        if self.max_tokens is not None and (not isinstance(self.max_tokens, int) or self.max_tokens < 1):
            raise ValueError(f"judge max_tokens must be an integer ≥ 1, got {self.max_tokens!r}")
        if self.temperature is not None and not (
            isinstance(self.temperature, (int, float)) and 0 <= self.temperature <= 10
        ):
            raise ValueError(f"judge temperature must be a number in [0, 10], got {self.temperature!r}")

    # -- construction ------------------------------------------------------------------

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    @classmethod
    def settings(cls) -> list[tuple[str, str, str]]:
        """``(name, type, help)`` of every setting: the one list the ``--judge-*`` flags of
        every command are generated from."""
        return [(f.name, str(f.type), str(f.metadata.get("help", ""))) for f in fields(cls)]

    @classmethod
    def from_mapping(cls, spec: Mapping[str, Any] | JudgeConfig) -> JudgeConfig:
        """From a dict (YAML ``judge:`` block, adapter ``judge=``, JSON), parsed by
        :func:`groundrl.settings.parse_settings`: an unknown key names the nearest setting
        and every allowed one, a wrong type names ``judge.<setting>``. ``-`` in a key reads
        as ``_``, a ``None`` value as unset, and string values of numeric, boolean and
        ``options`` settings (flags, environment variables) are converted first.

        >>> JudgeConfig.from_mapping({"backend": "openai", "model": "m", "retry": 1})
        Traceback (most recent call last):
        ...
        groundrl.settings.SettingsError: judge: unknown key 'retry' (did you mean 'retries'?); allowed: ...
        """
        if isinstance(spec, JudgeConfig):
            return spec
        if not isinstance(spec, Mapping):
            raise ValueError(f"a judge configuration is a mapping, got {type(spec).__name__}")
        names = cls.keys()
        spec = {str(k).replace("-", "_"): v for k, v in spec.items() if v is not None}
        spec = {k: _from_text(k, v) if k in names and isinstance(v, str) else v for k, v in spec.items()}
        if "backend" not in spec:
            raise ValueError(f"a judge configuration needs backend ({' or '.join(judge_backend_names())})")
        if "model" not in spec:
            raise ValueError("the judge needs a model (a served model name or a local checkpoint path)")
        return parse_settings(cls, spec, "judge")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> JudgeConfig | None:
        """From ``GROUNDRL_JUDGE`` (a JSON object) or ``GROUNDRL_JUDGE_<SETTING>``
        variables (``GROUNDRL_JUDGE_BACKEND``, ``…_MODEL``, ``…_URL``, …); ``None`` when
        neither is set."""
        env = os.environ if environ is None else environ
        raw = env.get("GROUNDRL_JUDGE")
        if raw:
            try:
                spec = json.loads(raw)
            except ValueError as e:
                raise ValueError(f"GROUNDRL_JUDGE is not JSON: {e}") from None
            return cls.from_mapping(spec)
        spec = {k[len(ENV_PREFIX) :].lower(): v for k, v in env.items() if k.startswith(ENV_PREFIX) and v}
        return cls.from_mapping(spec) if spec else None

    def to_dict(self) -> dict[str, Any]:
        """JSON-able settings, defaults left out (for server workers, Ray actors, logs)."""
        defaults = {f.name: f.default for f in fields(self)}
        return {k: v for k, v in asdict(self).items() if k in ("backend", "model") or v != defaults[k]}

    # -- use -----------------------------------------------------------------------------

    def make_backend(self) -> Any:
        """A :class:`~groundrl.judges.base.JudgeBackend` for these settings, made by the
        backend registered under ``self.backend`` (the caller closes it)."""
        return get_judge_backend(self.backend)(self)

    def backend_settings(self) -> Any:
        """``options`` as the backend's registered settings dataclass (``None`` when it
        declares none): what a backend reads its own settings from."""
        return backend_options(self.backend, self.options)

    def image_policy(self) -> Any:
        # lazy: import cycle: judges.images imports this module, directly or through its package
        from groundrl.judges.images import ImagePolicy

        return ImagePolicy(self.allow_local_images, self.image_root, self.allow_image_urls)

    def sampling(self) -> Any:
        """:class:`~groundrl.judges.base.SamplingParams` when temperature or max_tokens
        is set, else ``None`` (the paper judge's own default)."""
        if self.temperature is None and self.max_tokens is None:
            return None
        # lazy: import cycle: judges.base imports this module, directly or through its package
        from groundrl.judges.base import SamplingParams

        params = SamplingParams(max_tokens=512 if self.max_tokens is None else self.max_tokens)
        if self.temperature is None:
            return params
        return replace(params, temperature=float(self.temperature))


_INTS = ("batch_size", "concurrency", "retries", "max_tokens")
_BOOLS = ("allow_local_images", "allow_image_urls")
_FLOATS = ("timeout", "temperature")


def _from_text(name: str, value: str) -> Any:
    if name == "options":
        try:
            return json.loads(value)
        except ValueError as e:
            raise ValueError(f"judge options must be a JSON object, got {value!r} ({e})") from None
    if name in _BOOLS:
        if value.strip().lower() in ("true", "yes", "on", "1", "false", "no", "off", "0"):
            return value.strip().lower() in ("true", "yes", "on", "1")
        raise ValueError(f"judge {name} must be true or false, got {value!r}")
    try:
        if name in _INTS:
            return int(value)
        if name in _FLOATS:
            return float(value)
    except ValueError:
        raise ValueError(f"judge {name} must be a number, got {value!r}") from None
    return value
