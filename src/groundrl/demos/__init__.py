"""The demo programs behind ``groundrl demo``: each trains tiny models end to end and
writes a report. They sit above ``train/`` (they call its stages), never below it.

- :mod:`.planner`: the household planner demo (SFT → GRPO, simulator-scored).
- :mod:`.rm_demo` (+ ``rm_demo_world``, ``rm_demo_report``): the reward-model demo.
- :mod:`.monitor_demo`: the live-monitor demo.
"""
