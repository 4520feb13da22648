"""Counts in words for the screen: `1 module`, `3 modules`."""

from __future__ import annotations


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """`count` and `noun`, in the plural (`nouns`, or `noun` + "s") unless it is 1."""
    return f"{count:,} {noun if count == 1 else nouns or noun + 's'}"
