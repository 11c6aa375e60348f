"""Argos frame references are 1-based ("frame 1 at 0.00 seconds"); mentions in seconds map
to frames through the sample's fps or timestamps (parse.grounding.frame_index /
segment_indices)."""

import doctest

from groundrl.parse import grounding
from groundrl.parse.grounding import extract_temporal_mentions, frame_index, segment_indices

# A hand-made trace in the paper's style over 8 frames sampled at 0.5 fps (one every 2 s)
TRACE = (
    "Frame 1 at 0.00 seconds shows the hallway. The mug appears in frame 3. "
    "At 6.2 seconds the person picks it up, and from 4.47 to 10.9 seconds it is carried "
    "to the sink. Frame 8 shows the sink."
)


def test_hand_made_trace_maps_to_one_based_frames():
    frames, segments = extract_temporal_mentions(TRACE)
    got = [(m.text, frame_index(m, 8, fps=0.5).value) for m in frames]
    # frame 1 -> index 0; "0.00 seconds" -> index 0; frame 3 -> 2; 6.2 s -> nearest of 6 s (index 3);
    # frame 8 -> 7 (the last frame, valid only 1-based)
    assert [v for _, v in got] == [0, 0, 2, 3, 7], got
    (seg,) = segments
    # 4.47 s -> 4 s (index 2); 10.9 s -> 10 s (index 5)
    assert segment_indices(seg, 8, fps=0.5).value == (2, 5)


def test_timestamps_out_of_range_and_missing_rates():
    frames, _ = extract_temporal_mentions("the cup in frame 0, then frame 9, then at 3.1 seconds")
    f0, f9, sec = frames
    assert frame_index(f0, 8).value is None and "1-based" in frame_index(f0, 8).error
    assert frame_index(f9, 8).value is None
    assert frame_index(sec, 8).value is None and "fps or timestamps" in frame_index(sec, 8).error
    # timestamps win over fps: frames at 0, 1, 3, 7 s -> 3.1 s is the third frame
    assert frame_index(sec, 4, fps=100, timestamps=[0, 1, 3, 7]).value == 2
    assert frame_index(sec, 2, fps=1).value is None  # past the last frame's interval (0, 1 s + 1 s)
    assert frame_index(sec, 3, timestamps=[0, 1]).value is None  # wrong length is a reason


def test_docstring_examples():
    res = doctest.testmod(grounding)
    assert res.failed == 0
