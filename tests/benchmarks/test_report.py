"""Report cells and tables (benchmarks/report.py), expected text written out by hand."""

from groundrl.benchmarks.report import fmt, md_table


def test_fmt_cells():
    assert fmt(0.5) == "0.500" and fmt(float("nan")) == "—" and fmt(None) == "—" and fmt(True) == "True"
    assert fmt([0.1234, None]) == "—" and fmt((0, 1)) == "[0.000, 1.000]" and fmt("a|b") == "a|b"


def test_md_table_escapes_pipes_and_rounds():
    table = md_table(["metric", "|Δ| ≤ 2"], [("acc |Δ|", 0.12345), ("n", 3)])
    assert table == ("| metric | \\|Δ\\| ≤ 2 |\n|---|---|\n| acc \\|Δ\\| | 0.123 |\n| n | 3 |")
