"""Issue 42, Low items on the judge path: a cache that cannot be written (disk full) no
longer discards the judge's good answers; a cache that cannot be read is a miss."""

from groundrl.judges.cache import ResponseCache
from groundrl.testing.judge_backend import make_backend


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


def test_health_recovers_once_the_outage_leaves_the_window():
    """Judge recovery lag: the recent window held an outage's failures until 200 good
    scores had come, so a quiet server stayed "degraded" long after its judge was back.
    Scores older than RECENT_S now leave it (times given, not waited for)."""
    from groundrl.serve.metrics import RECENT_S, Metrics

    m = Metrics(("/score",))
    m.add_judge("r", ok=0, failed=100, seconds=1.0, now=1000.0)  # the outage
    m.add_judge("r", ok=10, failed=0, seconds=1.0, now=1000.0 + RECENT_S / 2)  # the judge is back
    assert m.judge_failure_rate(now=1000.0 + RECENT_S / 2) == (100 / 110, 110)
    assert m.judge_failure_rate(now=1000.0 + RECENT_S + 1) == (0.0, 10)
    assert m.judge_failure_rate(now=1000.0 + 2 * RECENT_S) is None  # nothing recent: no rate
    assert sum(m.judge.values()) == 110  # the counters /metrics exports keep everything


def test_a_full_disk_leaves_no_partial_worker_config(tmp_path, monkeypatch):
    """ENOSPC while `groundrl serve --workers N` writes its owner-only config: the error is
    the OSError the CLI prints as one line, and no half-written file (holding part of the
    token) is left behind."""
    import errno
    import tempfile

    import pytest

    from groundrl.serve import factory

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    def full_disk(obj, f):
        f.write('{"recipe": "eqa_rm", "token": "s3')
        f.flush()
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(factory.json, "dump", full_disk)
    with pytest.raises(OSError) as got:
        factory.write_config_file({"recipe": "eqa_rm", "token": "s3cret"})
    assert got.value.errno == errno.ENOSPC
    assert list(tmp_path.iterdir()) == []
