"""HLO text normalization (XLA's `*.txt` dumps), line by line, without parsing.

Facts of the format this relies on: one instruction a line (`  [ROOT ]%name = shape opcode(...)`,
attributes after the operands), a computation starts with a line `[ENTRY ]%name (params) -> shape {`
and ends with a line `}`; instruction and computation names get XLA's uniquing suffixes
(`.12`) and clone suffixes (`.clone`); the module header is followed by the source location
tables `FileNames`, `FunctionNames`, `FileLocations` and `StackFrames`, each ending at a blank
line.
"""

from __future__ import annotations

import re

from workbench.diff.normalize import NormalizedText, NormalizeOptions, Section, split_lines

_STRING = r'"(?:[^"\\\n]++|\\.)*+"'


def _braced(depth: int) -> str:
    """`{...}` with strings and up to `depth` levels of nested braces, all on one line.
    Possessive quantifiers: the scan never backtracks, so it stays linear."""
    inner = r"[^{}\"\n]++"
    pattern = r"\{(?:" + inner + "|" + _STRING + r")*+\}"
    for _ in range(depth - 1):
        pattern = r"\{(?:" + inner + "|" + _STRING + "|" + pattern + r")*+\}"
    return pattern


_ATTRIBUTE_PATTERNS = {
    "metadata": r", metadata=" + _braced(2),
    "backend_config": r", backend_config=(?:" + _STRING + "|" + _braced(6) + ")",
    "frontend_attributes": r", frontend_attributes=" + _braced(2),
}
_strip_cache: dict[tuple[str, ...], re.Pattern[str]] = {}

# XLA's uniquing and clone suffixes of a name (`%add.12`, `%region_0.2.clone`, `x.1: f32[]` in
# a header). The match starts at the dot (a fast literal search) and looks back to tell a
# name (`%param_0.1`) from a number (`constant(0.125)`).
_NAME_SUFFIX = re.compile(
    r"\.(?:(?<=[A-Za-z_\-]\.)|(?<=[A-Za-z_]\d\.)|(?<=[A-Za-z_]\d\d\.))"
    r"(?:\d+|clone)(?:\.(?:\d+|clone))*(?![\w.\-])")
NAME_TOKEN = re.compile(r"%[\w.\-]+")
_DEFINITION = re.compile(r"\s*(?:ROOT )?(%[\w.\-]+) = ")
# Both start with a newline, a literal the regular expression engine scans for quickly.
_HEADER = re.compile(r"\n(?:(?:ENTRY )?(%?[\w.\-]+) [^\n]*\{(?=\n)|\}(?=\n|$))")
_SOURCE_TABLE = re.compile(r"\n(?:FileNames|FunctionNames|FileLocations|StackFrames)\n(?:.+\n)*")


def _strip_pattern(options: NormalizeOptions) -> re.Pattern[str] | None:
    parts = tuple(name for name in _ATTRIBUTE_PATTERNS if getattr(options, name))
    if not parts:
        return None
    pattern = _strip_cache.get(parts)
    if pattern is None:
        pattern = _strip_cache[parts] = re.compile(
            "|".join(_ATTRIBUTE_PATTERNS[name] for name in parts))
    return pattern


def hlo_keys(lines: list[str]) -> list[str]:
    """Lines with names cut to their stems (`%add.12` -> `%add`)."""
    if not lines:
        return []
    return _NAME_SUFFIX.sub("", "\n".join(lines)).split("\n")


def normalize_hlo(text: str, options: NormalizeOptions) -> NormalizedText:
    """Whole-text regular expressions and C-level counting; no Python loop over lines."""
    original = split_lines(text)
    strip = _strip_pattern(options)
    stripped_text = strip.sub("", text) if strip else text
    lines = split_lines(stripped_text) if strip else original
    if len(lines) != len(original):  # an attribute that spans lines: leave the text as is
        lines, stripped_text = original, text
    total = len(lines)

    dropped: list[tuple[int, int]] = []  # [start, end) line ranges left out
    if options.source_tables and ("\nFileNames\n" in stripped_text
                                  or "\nStackFrames\n" in stripped_text):
        line = position = 0
        for match in _SOURCE_TABLE.finditer(stripped_text):
            line += stripped_text.count("\n", position, match.start() + 1)
            length = match.group(0).count("\n") - 1
            dropped.append((line, line + length))
            line += length
            position = match.end()

    sections = [Section("(module)", None, "module")]
    runs: list[tuple[int, int, int]] = []  # (first line, end line, section) of computations
    line = position = 0
    opened: tuple[int, str, str] | None = None
    for match in _HEADER.finditer(stripped_text):
        line += stripped_text.count("\n", position, match.start() + 1)
        position = match.start() + 1
        name = match.group(1)
        if name is not None:
            if not match.group(0).startswith("\nHloModule"):
                kind = "entry" if match.group(0).startswith("\nENTRY") else "computation"
                opened = (line, name, kind)
        elif opened is not None:
            start, name, kind = opened
            sections.append(Section(name, start, kind))
            runs.append((start, line + 1, len(sections) - 1))
            opened = None

    if dropped:
        keep = []
        previous = 0
        for start, end in dropped:
            keep.append((previous, start))
            previous = end
        keep.append((previous, total))
        origin = [n for start, end in keep for n in range(start, end)]
        lines = [lines[n] for n in origin]
        renumber = {n: k for k, n in enumerate(origin)}
        for section in sections[1:]:
            section.header = renumber.get(section.header, section.header)
        runs = [(renumber[s], renumber[e - 1] + 1, k) for s, e, k in runs]
    else:
        origin = list(range(total))
    line_section: list[int] = []
    previous = 0
    for start, end, index in runs:
        line_section += [0] * (start - previous)
        line_section += [index] * (end - start)
        previous = end
    line_section += [0] * (len(lines) - previous)
    return NormalizedText("hlo", options, original, lines, origin, sections, line_section,
                          key_function=hlo_keys if options.names else None)


def canonical_hlo_lines(normalized: NormalizedText) -> list[str]:
    """Names renamed `<stem>.<k>`: the k-th definition of that stem in its computation
    (computations: the k-th computation of that stem in the module)."""
    lines = normalized.lines
    computation_names: dict[str, str] = {}
    seen: dict[str, int] = {}
    for section in normalized.sections[1:]:
        assert section.header is not None
        name = section.name if section.name.startswith("%") else "%" + section.name
        stem = _stem(name)
        computation_names[name] = f"{stem}.{seen.get(stem, 0)}"
        seen[stem] = seen.get(stem, 0) + 1

    out = list(lines)
    by_section: dict[int, list[int]] = {}
    for index, section in enumerate(normalized.line_section):
        by_section.setdefault(section, []).append(index)
    for section, indices in by_section.items():
        names = dict(computation_names)
        if section:
            counts: dict[str, int] = {}
            for index in indices:
                match = _DEFINITION.match(lines[index])
                if match:
                    name = match.group(1)
                    stem = _stem(name)
                    names[name] = f"{stem}.{counts.get(stem, 0)}"
                    counts[stem] = counts.get(stem, 0) + 1
        params = {key[1:]: value[1:] for key, value in names.items()}

        def rename(match: re.Match[str], names: dict[str, str] = names) -> str:
            token = match.group(0)
            return names.get(token, token)

        def rename_param(match: re.Match[str], params: dict[str, str] = params) -> str:
            token = match.group(0)
            return params.get(token, token)

        for index in indices:
            line = NAME_TOKEN.sub(rename, lines[index])
            if index == normalized.sections[section].header:
                line = _HEADER_PARAM.sub(rename_param, line)
            out[index] = line
    return out


_HEADER_PARAM = re.compile(r"(?:(?<=\()|(?<=, ))[A-Za-z_][\w.\-]*(?=: )")


def _stem(name: str) -> str:
    return _NAME_SUFFIX.sub("", name)
