"""Breakpoint specs: parsing, numbering, enabling."""

from __future__ import annotations

import pytest

from workbench.debug.breakpoints import BreakpointError, BreakpointList, parse_spec


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("pass:fusion", ("pass", "fusion")),
        ("  pass:^cse$ ", ("pass", "^cse$")),
        ("action:apply-pattern", ("action", "apply-pattern")),
        ("loc:model.py:12", ("loc", "model.py:12")),
        ("loc:/abs/path/to/m.py:3", ("loc", "/abs/path/to/m.py:3")),
        ("op:stablehlo.rsqrt", ("op", "stablehlo.rsqrt")),
        ("op-change:fusion", ("op-change", "fusion")),
        ("mismatch", ("mismatch", "")),
    ],
)
def test_specs(spec: str, expected: tuple[str, str]) -> None:
    assert parse_spec(spec) == expected


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ("fusion", "KIND:PATTERN"),
        ("break:x", "KIND:PATTERN"),
        ("pass:", "nothing after"),
        ("pass:(", "not a regular expression"),
        ("loc:model.py", "FILE:LINE"),
        ("loc:model.py:x", "FILE:LINE"),
    ],
)
def test_bad_specs_say_why(spec: str, reason: str) -> None:
    with pytest.raises(BreakpointError, match=reason):
        parse_spec(spec)


def test_numbering_enable_disable_delete() -> None:
    breakpoints = BreakpointList()
    first = breakpoints.add("pass:fusion")
    second = breakpoints.add("loc:program.py:4")
    assert (first.id, second.id) == (1, 2) and second.location == ("program.py", 4)
    assert first.regex.search("fusion") and first.spec == "pass:fusion"
    breakpoints.enable(1, False)
    assert breakpoints.active() == [second]
    assert not breakpoints.wants("pass") and breakpoints.wants("loc")
    breakpoints.remove(2)
    assert breakpoints.add("mismatch").id == 3  # numbers are not reused
    assert [b.id for b in breakpoints] == [1, 3]
    with pytest.raises(KeyError):
        breakpoints.remove(2)
