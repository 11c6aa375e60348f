"""One list of judge settings (issue 23 item 2): every JudgeConfig field is a `--judge-*` flag, with
its help, on every command that runs a judge — serve included (docs/serve.md documents
`--judge-image-root` and the `--judge-allow-*` flags)."""

import pytest
from typer.testing import CliRunner

from groundrl.cli.main import app
from groundrl.cli.recipe_options import RecipeArgs, judge_config
from groundrl.judges.config import JudgeConfig

COMMANDS = [["serve"], ["score"], ["train"], ["bench", "score-rm"], ["curate", "verifier-filter"]]


@pytest.mark.parametrize("cmd", COMMANDS, ids=" ".join)
def test_every_judge_setting_is_a_flag_on_every_judge_command(cmd):
    r = CliRunner().invoke(app, [*cmd, "--help"], env={"COLUMNS": "240", "NO_COLOR": "1"})
    assert r.exit_code == 0, r.output
    for name, _, help_ in JudgeConfig.settings():
        flag = f"--judge-{name.replace('_', '-')}"
        assert flag in r.output, (cmd, flag)
        assert help_, f"JudgeConfig.{name} has no help text"
    assert "--judge-no-allow-image-urls" in r.output


def test_explicit_flags_survive_the_trip_to_server_workers():
    given = {"backend": "openai", "model": "m", "url": "http://127.0.0.1:9/v1", "allow_local_images": True}
    args = RecipeArgs([], judge_config(given), given)
    # to_dict() leaves defaults out; the explicit True must reach the server, which otherwise turns
    # local images off (serve/factory.py)
    assert "allow_local_images" not in args.judge.to_dict()
    assert args.judge_spec()["allow_local_images"] is True
    rooted = RecipeArgs(
        [], judge_config({**given, "image_root": "/data/frames"}), {"image_root": "/data/frames"}
    )
    assert JudgeConfig.from_mapping(rooted.judge_spec()).image_policy().root is not None


def test_bool_flags_parse_both_ways():
    from groundrl.cli.recipe_options import _flag_decls

    assert _flag_decls("allow_image_urls") == ["--judge-allow-image-urls/--judge-no-allow-image-urls"]
    assert _flag_decls("image_root") == ["--judge-image-root"]
