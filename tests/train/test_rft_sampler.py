"""EQA-RM RFT candidates come from an auxiliary evaluator R^aux [EQA-RM §4.2 step 1]: a
judge block (served or local) distinct from the policy; `sampler: policy` only on purpose;
no evaluator is a config error naming the key."""

import pytest

from groundrl.train.rft import RFTConfig, sample_evaluations


def test_no_evaluator_is_a_named_config_error():
    with pytest.raises(ValueError, match=r"rft.sampler is required.*R\^aux.*sampler: policy"):
        RFTConfig.from_mapping({"k": 4})
    assert RFTConfig.from_mapping({"sampler": "policy"}).sampler == "policy"
    aux = RFTConfig.from_mapping(
        {"sampler": {"backend": "openai", "model": "aux", "url": "http://127.0.0.1:1/v1"}}
    )
    assert aux.sampler.model == "aux"
    with pytest.raises(ValueError, match="rft.sampler: `policy` or a judge block"):
        RFTConfig.from_mapping({"sampler": "teacher"})


def test_the_policy_itself_is_refused_as_r_aux():
    cfg = RFTConfig.from_mapping({"sampler": {"backend": "transformers", "model": "runs/x/final"}})
    with pytest.raises(ValueError, match="is the model being trained"):
        sample_evaluations([], [], cfg, "runs/x/final/")


def test_candidates_come_from_the_served_evaluator(chat_server):
    chat_server.responder = lambda msgs, body: (
        f"<critique>c</critique><score>{body['sample_index'] + 6}</score>"
    )
    cfg = RFTConfig.from_mapping(
        {
            "k": 3,
            "max_tokens": 16,
            "sampler": {"backend": "openai", "model": "aux-7b", "url": chat_server.base_url},
        }
    )
    inst = [{"question": "Where is the mug?", "reasoning": "I looked left.", "answer": "on the table"}]
    # the policy path does not exist: nothing is loaded locally, every candidate is R^aux's
    out = sample_evaluations(inst, [[]], cfg, "/nonexistent/policy")
    assert out == [[f"<critique>c</critique><score>{s}</score>" for s in (6, 7, 8)]]
    assert {r["model"] for r in chat_server.requests} == {"aux-7b"}
    # R^aux sees the instance without the ground-truth score [EQA-RM §4.2 step 1]
    text = str(chat_server.requests[0]["messages"])
    assert "Where is the mug?" in text and "gt_score" not in text
