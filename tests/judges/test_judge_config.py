"""The judge block is parsed by the one settings parser (issue 40): an unknown key names the
nearest setting, a wrong type names ``judge.<setting>``, and what the hand-written parser
accepted (``-`` for ``_``, ``None`` as unset, text from flags and environment variables)
is still accepted."""

import pytest

from groundrl.judges.config import JudgeConfig

BASE = {"backend": "openai", "model": "m", "url": "http://127.0.0.1:8000/v1"}


@pytest.mark.parametrize(
    "extra, message",
    [
        ({"retry": 1}, r"judge: unknown key 'retry' \(did you mean 'retries'\?\); allowed: backend, model"),
        ({"temprature": 0.5}, r"judge: unknown key 'temprature' \(did you mean 'temperature'\?\)"),
        ({"batch_size": 1.5}, r"judge.batch_size must be an integer, got 1.5"),
        ({"allow_image_urls": 1}, r"judge.allow_image_urls must be true or false, got 1"),
        ({"options": "[1]"}, r"judge.options must be a mapping or null, got \[1\]"),
        ({"retries": "many"}, r"judge retries must be a number, got 'many'"),
    ],
)
def test_bad_settings_name_the_setting(extra, message):
    with pytest.raises(ValueError, match=message):
        JudgeConfig.from_mapping({**BASE, **extra})


def test_missing_backend_or_model_say_what_to_give():
    with pytest.raises(ValueError, match=r"needs backend \(openai or transformers"):
        JudgeConfig.from_mapping({"model": "m"})
    with pytest.raises(ValueError, match="the judge needs a model"):
        JudgeConfig.from_mapping({"backend": "openai"})


def test_flag_and_environment_spellings_still_parse():
    cfg = JudgeConfig.from_mapping(
        {**BASE, "batch-size": "4", "timeout": "30", "allow_image_urls": "yes", "cache": None}
    )
    assert (cfg.batch_size, cfg.timeout, cfg.allow_image_urls, cfg.cache) == (4, 30.0, True, None)
    env = {"GROUNDRL_JUDGE_BACKEND": "openai", "GROUNDRL_JUDGE_MODEL": "m"}
    env |= {"GROUNDRL_JUDGE_URL": BASE["url"], "GROUNDRL_JUDGE_RETRIES": "0"}
    assert JudgeConfig.from_env(env) == JudgeConfig(**BASE, retries=0)
    assert JudgeConfig.from_mapping({**BASE, "temperature": 1}).temperature == 1.0
