"""The triage path's measure (`tests/helpers/triage_path.py`) counts what it says."""

from __future__ import annotations

from tests.helpers.triage_path import returns, stays


def test_consecutive_functions_of_a_file_are_one_stay_and_a_revisit_a_return() -> None:
    entries = [("a.py", "f"), ("a.py", "g"), ("b.py", "h"), ("a.py", "i"), ("c.py", "j"),
               ("b.py", "k"), ("b.py", "l")]
    path = stays(entries)
    assert [(stay.file, stay.functions) for stay in path] == [
        ("a.py", ("f", "g")), ("b.py", ("h",)), ("a.py", ("i",)), ("c.py", ("j",)),
        ("b.py", ("k", "l"))]
    assert returns(path) == 2
    assert returns(stays([("a.py", "f"), ("b.py", "g")])) == 0
