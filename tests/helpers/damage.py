"""Damaged copies of real corpus files, made the ways files get damaged: cut short (a dump still
being written, a copy interrupted, possibly inside a UTF-8 character or a protobuf varint),
bits flipped, overwritten with garbage, emptied, non-UTF-8 bytes spliced in, line ends turned
to CRLF, one line grown huge. Each damage is a pure function of the original bytes, so a
failing example is reproduced from its description alone.

Also: a manifest of a folder (every entry's kind, size, modification time and content hash),
to prove a command left a dump folder exactly as it found it.
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import subprocess
import sys
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from hypothesis import strategies as st

_CONTINUATION = re.compile(rb"[\x80-\xbf]")


@dataclass(frozen=True)
class Damage:
    """What was done to a file (shown when an example fails) and the bytes it left."""

    what: str
    data: bytes = field(repr=False)


@cache
def utf8_inner_offsets(data: bytes) -> tuple[int, ...]:
    """Offsets that cut a UTF-8 multibyte character in two (before a continuation byte)."""
    return tuple(m.start() for m in _CONTINUATION.finditer(data))


def _varint_end(data: bytes, pos: int, end: int) -> int:
    """Offset after the varint starting at `pos`; ValueError when it runs past `end`."""
    for index in range(pos, min(pos + 10, end)):
        if not data[index] & 0x80:
            return index + 1
    raise ValueError("not a varint")


def _message_varints(data: bytes, start: int, end: int, depth: int,
                     found: list[tuple[int, int]]) -> bool:
    """Adds (start, end) of every varint (keys, values, lengths) of the message in
    data[start:end], recursing into length-delimited fields that parse as messages; False
    when data[start:end] is not a message."""
    own: list[tuple[int, int]] = []
    payloads: list[tuple[int, int]] = []
    pos = start
    try:
        while pos < end:
            key_end = _varint_end(data, pos, end)
            own.append((pos, key_end))
            key = _decode(data[pos:key_end])
            wire = key & 7
            if key >> 3 == 0:
                return False
            if wire == 0:
                value_end = _varint_end(data, key_end, end)
                own.append((key_end, value_end))
                pos = value_end
            elif wire == 1:
                pos = key_end + 8
            elif wire == 5:
                pos = key_end + 4
            elif wire == 2:
                length_end = _varint_end(data, key_end, end)
                own.append((key_end, length_end))
                length = _decode(data[key_end:length_end])
                pos = length_end + length
                payloads.append((length_end, pos))
            else:
                return False
        if pos != end:
            return False
    except ValueError:
        return False
    found.extend(own)
    if depth < 32:
        for payload_start, payload_end in payloads:
            if payload_end > payload_start:
                _message_varints(data, payload_start, payload_end, depth + 1, found)
    return True


def _decode(varint: bytes) -> int:
    value = 0
    for shift, byte in enumerate(varint):
        value |= (byte & 0x7F) << (7 * shift)
    return value


@cache
def proto_varints(data: bytes) -> tuple[tuple[int, int], ...]:
    """(start, end) of every varint in a serialized protobuf message, nested ones too."""
    found: list[tuple[int, int]] = []
    _message_varints(data, 0, len(data), 0, found)
    return tuple(sorted(found))


@cache
def varint_inner_offsets(data: bytes) -> tuple[int, ...]:
    """Offsets that cut a multi-byte varint of a protobuf message in two."""
    return tuple(offset for start, end in proto_varints(data) for offset in range(start + 1, end))


# --- the damages ----------------------------------------------------------------------------

def truncate(data: bytes, at: int) -> Damage:
    return Damage(f"cut at byte {at} of {len(data)}", data[:at])


def flip_bits(data: bytes, bits: list[int]) -> Damage:
    damaged = bytearray(data)
    for bit in bits:
        damaged[bit // 8] ^= 1 << (bit % 8)
    return Damage(f"bits {bits} flipped", bytes(damaged))


def garbage(data: bytes, seed: int) -> Damage:
    return Damage(f"random bytes (seed {seed}) of the same size",
                  random.Random(seed).randbytes(len(data)))


def splice(data: bytes, at: int, inserted: bytes) -> Damage:
    return Damage(f"{inserted!r} spliced in at byte {at}", data[:at] + inserted + data[at:])


def crlf(data: bytes) -> Damage:
    return Damage("line ends turned to CRLF", data.replace(b"\n", b"\r\n"))


def huge_line(data: bytes, at: int, size: int) -> Damage:
    """One line grown to `size` bytes by repeating the real line around `at`."""
    start = data.rfind(b"\n", 0, at) + 1
    end = data.find(b"\n", at)
    end = len(data) if end < 0 else end
    line = data[start:end] or b"x"
    grown = (line * (size // len(line) + 1))[:size]
    return Damage(f"line at byte {start} grown to {size} bytes", data[:start] + grown + data[end:])


def varint_value(data: bytes, start: int, end: int, seed: int) -> Damage:
    """The payload bits of one varint replaced, its length kept: every enclosing length
    stays right, so the message still parses with one number changed."""
    rng = random.Random(seed)
    damaged = bytearray(data)
    for index in range(start, end):
        damaged[index] = (damaged[index] & 0x80) | rng.randrange(128)
    return Damage(f"varint at bytes {start}-{end} set at random (seed {seed})", bytes(damaged))


NON_UTF8 = (b"\xff", b"\xc3", b"\xe2\x94", b"\xed\xa0\x80", b"\x00\xfe\xff")


@st.composite
def damaged(draw: st.DrawFn, data: bytes, *, text: bool = False,
            proto: bool = False) -> Damage:
    """A damaged copy of `data`; `text` and `proto` add the damages that matter for them."""
    kinds = ["cut", "flip", "garbage", "empty", "splice"]
    if utf8_inner_offsets(data):
        kinds.append("utf8-cut")
    if text:
        kinds += ["crlf", "huge-line"]
    if proto and proto_varints(data):
        kinds += ["varint-cut", "varint-value"]
    kind = draw(st.sampled_from(kinds))
    size = len(data)
    if kind == "empty" or size == 0:
        return Damage("emptied", b"")
    if kind == "cut":
        return truncate(data, draw(st.integers(0, size - 1)))
    if kind == "utf8-cut":
        return truncate(data, draw(st.sampled_from(utf8_inner_offsets(data))))
    if kind == "varint-cut":
        return truncate(data, draw(st.sampled_from(varint_inner_offsets(data) or (0,))))
    if kind == "flip":
        bits = draw(st.lists(st.integers(0, 8 * size - 1), min_size=1, max_size=8))
        return flip_bits(data, bits)
    if kind == "garbage":
        return garbage(data, draw(st.integers(0, 2**32)))
    if kind == "splice":
        return splice(data, draw(st.integers(0, size)), draw(st.sampled_from(NON_UTF8)))
    if kind == "crlf":
        return crlf(data)
    if kind == "huge-line":
        return huge_line(data, draw(st.integers(0, size - 1)), draw(st.sampled_from(
            (64 * 1024, 1024 * 1024))))
    start, end = draw(st.sampled_from(proto_varints(data)))
    return varint_value(data, start, end, draw(st.integers(0, 2**32)))


# --- readers that must end ------------------------------------------------------------------

def output_within(seconds: float, script: str, data: bytes) -> str:
    """What `script` (Python, reading `sys.stdin.buffer`) prints for `data`, run in a child
    process: a regular expression that backtracks at length holds the GIL, so only a process
    can be stopped. Fails the test when the script does not end in time, or raises."""
    import pytest

    try:
        done = subprocess.run([sys.executable, "-c", script], input=data, capture_output=True,
                              timeout=seconds, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail(f"did not end in {seconds} s")
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return done.stdout.decode()


# --- folders --------------------------------------------------------------------------------

def manifest(folder: Path) -> dict[str, tuple]:
    """Every entry under `folder` (not following links): kind, size, modification time and,
    for files, a hash of the content. Equal manifests: nothing was created, changed,
    renamed or deleted."""
    entries: dict[str, tuple] = {}
    for directory, folders, files in os.walk(folder):
        for name in folders + files:
            path = Path(directory, name)
            info = path.lstat()
            relative = os.fsdecode(path.relative_to(folder))
            if path.is_symlink():
                entries[relative] = ("link", os.readlink(path))
            elif path.is_dir():
                entries[relative] = ("folder", info.st_mtime_ns, info.st_mode)
            elif path.is_file():
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                entries[relative] = ("file", info.st_size, info.st_mtime_ns, info.st_mode,
                                     digest)
            else:
                entries[relative] = ("other", info.st_mode)
    root = folder.lstat()
    entries["."] = ("folder", root.st_mtime_ns, root.st_mode)
    return entries
