"""keyword_match: 1 when the sample's ``answer`` occurs in the completion (any case),
plus the ``bonus`` option; a ``fields`` metric records which sample fields the
``**fields`` part received (the completion must never be among them)."""

from groundrl import Option, Part, Recipe, Rubric, Score


def build(bonus: float = 0.0, case_sensitive: bool = False) -> Rubric:
    def match(completion, **fields):
        answer, text = str(fields.get("answer", "")), completion
        if not case_sensitive:
            answer, text = answer.lower(), text.lower()
        return Score("match", float(bool(answer) and answer in text) + bonus, f"looked for {answer!r}")

    def seen(completion, **fields):
        return Score("fields", float(len(fields)), ",".join(sorted(fields)))

    return Rubric([Part("match", match), Part("fields", seen, weight=0.0)], name="keyword_match")


RECIPE = Recipe(
    name="keyword_match",
    paper="(third-party example)",
    summary="answer substring match + bonus",
    build=build,
    required=("answer",),
    label_field="answer",
    options=(
        Option("bonus", "float", 0.0, "added to every match score"),
        Option("case_sensitive", "bool", False, "match case exactly"),
    ),
)
