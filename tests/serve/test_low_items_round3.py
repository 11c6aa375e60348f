"""Issue 42, Low items on the judge path: a cache that cannot be written (disk full) no
longer discards the judge's good answers; a cache that cannot be read is a miss."""

from groundrl.judges import make_backend
from groundrl.judges.cache import ResponseCache


def _full_cache(path) -> ResponseCache:
    cache = ResponseCache(path)
    # at most the pages it has now: the next answer of a few KB is "database or disk is full"
    cache._db.execute("PRAGMA max_page_count = 1")
    return cache


def test_a_full_cache_keeps_the_judges_answers(tmp_path, chat_server):
    answer = "yes " * 4000
    chat_server.responder = lambda msgs, body: answer
    cache = _full_cache(tmp_path / "judge.sqlite")
    judge = make_backend("openai", "m", chat_server.base_url, cache=cache, max_retries=0)
    gens = judge.generate([[{"role": "user", "content": "is it?"}], [{"role": "user", "content": "and it?"}]])
    assert [g.texts for g in gens] == [[answer], [answer]] and all(g.error is None for g in gens)
    assert cache.write_failures == 2 and len(cache) == 0


def test_a_cache_that_cannot_be_read_is_a_miss(tmp_path, chat_server):
    chat_server.responder = lambda msgs, body: "yes"
    cache = ResponseCache(tmp_path / "judge.sqlite")
    cache._db.execute("DROP TABLE responses")  # reads and writes now fail
    judge = make_backend("openai", "m", chat_server.base_url, cache=cache, max_retries=0)
    assert judge.generate([[{"role": "user", "content": "is it?"}]])[0].texts == ["yes"]
    assert cache.read_failures == 1 and cache.write_failures == 1
    assert cache.get("k") is None and cache.read_failures == 2
