"""Tolerant extractors: every function takes any text and returns a value or a reason,
never raising. One module per kind of thing extracted."""

from groundrl.parse.result import Parsed
from groundrl.parse.structured import parse_json_object, parse_literal, parse_literal_list
from groundrl.parse.tags import count_open_tags, find_all_tags, find_tag, has_tag_pair, tags_in_order

__all__ = [
    "Parsed",
    "count_open_tags",
    "find_all_tags",
    "find_tag",
    "has_tag_pair",
    "parse_json_object",
    "parse_literal",
    "parse_literal_list",
    "tags_in_order",
]
