"""Sizes as people write them (limits on the command line) and read them (messages)."""

from __future__ import annotations

import pytest

from workbench.sizes import format_size, parse_size, size_from_environment


def test_parse_size() -> None:
    assert parse_size("4G") == 4 << 30
    assert parse_size("512m") == 512 << 20
    assert parse_size("1.5GiB") == 3 << 29
    assert parse_size("1000") == 1000
    for bad in ("", "lots", "-1G", "0", "4X"):
        with pytest.raises(ValueError):
            parse_size(bad)


def test_format_size() -> None:
    assert format_size(7_730_941_132) == "7.2 GB"
    assert format_size(512 << 20) == "512 MB"
    assert format_size(999) == "999 bytes"


def test_a_size_from_the_environment_is_read_and_a_bad_one_falls_back(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKBENCH_TEST_SIZE", "3M")
    assert size_from_environment("WORKBENCH_TEST_SIZE") == 3 << 20
    monkeypatch.setenv("WORKBENCH_TEST_SIZE", "lots")
    assert size_from_environment("WORKBENCH_TEST_SIZE") is None
    monkeypatch.delenv("WORKBENCH_TEST_SIZE")
    assert size_from_environment("WORKBENCH_TEST_SIZE") is None
