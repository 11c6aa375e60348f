"""The agentic verifier's outcome tool sends free-form misses (and only those) to the
semantic judge in one batch, over a real OpenAI-compatible server on 127.0.0.1."""

from groundrl.judges.openai_backend import OpenAIBackend
from groundrl.testing.chat_server import ChatServer
from groundrl.verify import AgenticVerifier


def _text(messages):
    c = messages[-1]["content"]
    return c if isinstance(c, str) else " ".join(p.get("text", "") for p in c if isinstance(p, dict))


def test_free_form_misses_go_to_the_semantic_judge_with_their_question_if_any():
    asked = []

    def responder(messages, body):
        text = _text(messages)
        asked.append(text)
        return "yes" if "Predicted answer: a ceramic cup" in text else "no"

    samples = [
        {"question": "What holds the tea?", "answer": "the mug"},  # miss, judged the same
        {"answer": "the kettle"},  # miss without a question, judged different
        {"question": "Which room?", "answer": "kitchen"},  # exact hit: not asked
    ]
    completions = ["<answer>a ceramic cup</answer>", "<answer>a pot</answer>", "<answer>kitchen</answer>"]
    with ChatServer(responder=responder) as srv, OpenAIBackend("m", srv.base_url, max_retries=0) as backend:
        results = AgenticVerifier(backend, tools=["outcome"]).verify(completions, samples)
    outcome = [r.parts["outcome"] for r in results]
    assert [s.value for s in outcome] == [1.0, 0.0, 1.0]
    assert outcome[0].reason == "free: semantic judge"
    assert len(asked) == 2
    by_prediction = {("a ceramic cup" in t): t for t in asked}
    assert "Question: What holds the tea?" in by_prediction[True]
    assert "Reference answer: the mug" in by_prediction[True]
    assert "Question:" not in by_prediction[False] and "Reference answer: the kettle" in by_prediction[False]
