"""Faults found while typing train/ (issue 23 item 6): each failed before its fix."""

import dataclasses

import pytest

from groundrl.train.config import plain
from groundrl.train.step_grpo import _with_text


def test_hint_reaches_a_last_message_without_content():
    # was: TypeError iterating None
    msgs = _with_text([{"role": "system", "content": "s"}, {"role": "user"}], lambda t: t + "<hint>")
    assert msgs[-1] == {"role": "user", "content": "<hint>"}
    assert _with_text("plan", str.upper) == "PLAN"


def test_plain_of_a_dataclass_type_with_to_dict_is_its_name():
    @dataclasses.dataclass
    class Block:
        a: int = 1

        def to_dict(self) -> dict:
            return {"a": self.a}

    assert plain(Block(2)) == {"a": 2}
    assert plain({"k": [Block()]}) == {"k": [{"a": 1}]}
    # was: TypeError (to_dict called unbound on the class)
    assert plain(Block) == str(Block)


def test_concat_rows_names_a_key_set_in_one_part_only():
    torch = pytest.importorskip("torch")
    from groundrl.train.online_filter import concat_rows

    def part(ratio):
        return {
            "prompt_ids": torch.ones((1, 2), dtype=torch.long),
            "completion_ids": torch.ones((1, 3), dtype=torch.long),
            "advantages": torch.zeros(1),
            "importance_ratio": ratio,
        }

    both = concat_rows([part(None), part(None)])
    assert both["importance_ratio"] is None and both["advantages"].shape == (2,)
    # was: AttributeError (None has no shape)
    with pytest.raises(ValueError, match="'importance_ratio' is None or missing in some parts"):
        concat_rows([part(torch.ones((1, 1))), part(None)])


@pytest.mark.slow
def test_online_filter_refuses_an_iterable_dataset_at_construction(tmp_path, tiny_vlm_dir):
    pytest.importorskip("trl")
    from datasets import IterableDataset
    from trl import GRPOConfig

    from groundrl.train.online_filter import OnlineFilterConfig
    from groundrl.train.trainer import ground_grpo_trainer_class

    def rows():
        for i in range(4):
            yield {"prompt": f"p{i}"}

    def reward(completions=None, **kw):
        return [0.0 for _ in completions]

    args = GRPOConfig(
        output_dir=str(tmp_path),
        use_cpu=True,
        max_steps=1,
        per_device_train_batch_size=2,
        num_generations=2,
        max_completion_length=2,
        report_to=[],
    )
    # was: built, then TypeError (len of an IterableDataset) at the first buffer refill
    with pytest.raises(ValueError, match="map-style data set"):
        ground_grpo_trainer_class()(
            model=str(tiny_vlm_dir),
            reward_funcs=[reward],
            args=args,
            train_dataset=IterableDataset.from_generator(rows),
            online_filter=OnlineFilterConfig.from_mapping({"reward": "reward"}),
            accuracy_recorder=[],
        )
