"""A judge backend registers its own settings (issue 40 item 4): a settings dataclass given
to ``register_judge_backend`` (or the backend class's ``Settings``) is what the judge
block's ``options`` is parsed into when the ``JudgeConfig`` is built — types from the
fields, a misspelt key fails at load naming the closest — and the backend reads it from
``config.backend_settings()``. Before, a backend could take only JudgeConfig's fixed
settings."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from groundrl.judges.base import Generation, JudgeBackend
from groundrl.judges.config import JudgeConfig
from groundrl.judges.registry import judge_backend_settings, register_judge_backend, unregister_judge_backend


@dataclass(frozen=True)
class RegionSettings:
    region: str = "eu"
    budget: int = 2


@pytest.fixture
def regional():
    @register_judge_backend("t-regional", settings=RegionSettings)
    class Regional(JudgeBackend):
        def __init__(self, config):
            super().__init__()
            self.settings = config.backend_settings()

        def generate(self, requests, params=None):
            return [Generation([f"<answer>{self.settings.region}</answer>"]) for _ in requests]

    yield Regional
    unregister_judge_backend("t-regional")


def test_options_are_parsed_into_the_backends_settings(regional):
    assert judge_backend_settings("t-regional") is RegionSettings
    config = JudgeConfig.from_mapping({"backend": "t-regional", "model": "m", "options": '{"region": "us"}'})
    assert config.backend_settings() == RegionSettings(region="us", budget=2)
    backend = config.make_backend()
    assert isinstance(backend, regional) and backend.settings.region == "us"
    assert JudgeConfig(backend="t-regional", model="m").backend_settings() == RegionSettings()


def test_a_misspelt_or_mistyped_option_fails_at_load(regional):
    with pytest.raises(
        ValueError, match=r"unknown key 'regoin' \(did you mean 'region'\?\); allowed: region, budget"
    ):
        JudgeConfig(backend="t-regional", model="m", options={"regoin": "us"})
    with pytest.raises(ValueError, match="budget"):
        JudgeConfig(backend="t-regional", model="m", options={"budget": "many"})
    with pytest.raises(ValueError, match="judge options must be a JSON object"):
        JudgeConfig.from_mapping({"backend": "t-regional", "model": "m", "options": "{region"})


def test_a_backend_without_settings_refuses_options():
    with pytest.raises(ValueError, match="judge backend 'transformers' declares no settings; remove options"):
        JudgeConfig(backend="transformers", model="m", options={"region": "us"})
    assert JudgeConfig(backend="transformers", model="m").backend_settings() is None


def test_a_backend_class_declares_its_settings_as_Settings():
    class WithSettings(JudgeBackend):
        Settings = RegionSettings

        def generate(self, requests, params=None):
            return []

    register_judge_backend("t-class-settings", WithSettings)
    try:
        assert judge_backend_settings("t-class-settings") is RegionSettings
        with pytest.raises(TypeError, match="settings must be a dataclass"):
            register_judge_backend("t-bad-settings", WithSettings, settings=dict)
    finally:
        unregister_judge_backend("t-class-settings")
    with pytest.raises(ValueError, match="unknown judge backend 't-class-settings'"):
        judge_backend_settings("t-class-settings")
