import doctest

import pytest

from groundrl.curate import OnlineFilterBuffer, group_accepted, group_keep_mask
from groundrl.curate import accuracy_filter as online_filter_module


def test_keep_mask_per_completion():
    accs = [1, 0, 0, 0] + [1, 1, 1, 1] + [0, 0, 0, 0] + [1, 1, 0, 0]
    # 1/4 kept, 4/4 dropped, 0/4 dropped, 2/4 kept
    assert group_keep_mask(accs, 4) == [True] * 4 + [False] * 8 + [True] * 4


def test_bounds_are_inclusive():
    g = 10
    assert [group_accepted([1] * n + [0] * (g - n)) for n in range(g + 1)] == [False] + [True] * 9 + [False]
    # 2/20 and 18/20 land on the bounds in floats too
    assert group_accepted([1] * 2 + [0] * 18) and group_accepted([1] * 18 + [0] * 2)
    # G = 8: 1/8 = 0.125 … 7/8 = 0.875 kept
    assert group_keep_mask([1] + [0] * 7 + [1] * 7 + [0], 8) == [True] * 16
    assert group_accepted([1, 0], lo=0.5, hi=0.5) and not group_accepted([1, 1, 0], lo=0.5, hi=0.5)


def test_full_accuracy_threshold():
    # 0.99 is not full accuracy; unreadable values count as not full
    assert group_keep_mask([0.99, 0.99, 1.0, 1.0], 2) == [False, False, False, False]
    assert group_keep_mask([0.99, 1.0, None, float("nan"), "1", 1.0], 2) == [
        True,
        True,
        False,
        False,
        True,
        True,
    ]
    assert group_keep_mask([0.6, 0.4], 2, full=0.5) == [True, True]
    assert group_keep_mask([], 4) == []
    assert not group_accepted([])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"group_size": 3}, "groups of 3"),
        ({"group_size": 0}, "group_size"),
        ({"group_size": 2, "lo": 0.6, "hi": 0.5}, "lo must be"),
        ({"group_size": 2, "lo": -0.1}, "lo"),
        ({"group_size": 2, "hi": 1.1}, "hi"),
        ({"group_size": 2, "full": float("nan")}, "full"),
    ],
)
def test_bad_config_raises(kwargs, match):
    with pytest.raises(ValueError, match=match):
        group_keep_mask([1, 0, 1, 0], **kwargs)


def test_buffer_fills_a_step_and_counts():
    buf = OnlineFilterBuffer(capacity=2)
    assert buf.stats() == {"seen": 0, "kept": 0, "kept_fraction": 0.0, "buffered": 0}
    assert buf.offer("g1", [1, 0, 0, 0]) is True
    assert buf.offer("g2", [1, 1, 1, 1]) is False and not buf.ready
    with pytest.raises(RuntimeError, match="1 of 2"):
        buf.take()
    assert buf.offer("g3", [0, 1, 0, 1]) and buf.offer("g4", [0, 0, 0, 1])
    assert buf.ready and len(buf) == 3
    assert buf.take() == ["g1", "g3"]
    assert not buf.ready and len(buf) == 1  # g4 waits for the next step
    assert buf.offer("g5", [0, 0, 0, 0]) is False and buf.offer("g6", [1, 0])
    assert buf.take() == ["g4", "g6"]
    assert buf.stats() == {"seen": 6, "kept": 4, "kept_fraction": 4 / 6, "buffered": 0}


def test_buffer_config():
    with pytest.raises(ValueError, match="capacity"):
        OnlineFilterBuffer(0)
    with pytest.raises(ValueError, match="lo must be"):
        OnlineFilterBuffer(4, lo=0.9, hi=0.1)
    buf = OnlineFilterBuffer(1, lo=0.0, hi=1.0)
    assert buf.offer({"prompt": "p"}, [0, 0]) and buf.take() == [{"prompt": "p"}]


def test_docstring_example():
    res = doctest.testmod(online_filter_module)
    assert res.attempted == 4 and res.failed == 0


def test_released_criterion_uses_mean_accuracy():
    # RR accuracy is dense (prefix credit): [0.5, 0.5, 0.5, 0.5] has no fully correct answer
    # (paper: 0/4 -> dropped) but a mean of 0.5 (released: kept)
    accs = [0.5, 0.5, 0.5, 0.5] + [1.0, 1.0, 1.0, 0.95]
    assert group_keep_mask(accs, 4) == [False] * 4 + [True] * 4  # paper: 0/4, 3/4
    # released: means 0.5 (kept) and 0.9875 (> 0.9, dropped)
    assert group_keep_mask(accs, 4, criterion="released") == [True] * 4 + [False] * 4
    with pytest.raises(ValueError, match="criterion"):
        group_keep_mask(accs, 4, criterion="mean")
    buf = OnlineFilterBuffer(1, criterion="released")
    assert buf.offer("g", [0.5, 0.5]) and buf.take() == ["g"]
