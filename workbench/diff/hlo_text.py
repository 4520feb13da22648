"""HLO text normalization (XLA's `*.txt` dumps), line by line, without parsing.

Facts of the format this relies on: one instruction a line, indented
(`  [ROOT ]%name = shape opcode(...)`, attributes after the operands); a computation starts
with a line `[ENTRY ]%name (params) -> shape {` at column 0 and ends with a line `}`;
instruction and computation names get XLA's uniquing suffixes (`.12`) and clone suffixes
(`.clone`); the module header is followed by the source location tables `FileNames`,
`FunctionNames`, `FileLocations` and `StackFrames`, each ending at a blank line. Newer XLA
prints names without the `%` sigil (`add.3 = f32[] add(x.1, y.2)`, `calls=fused_computation`);
compared modulo names, the stripped lines of such text have the sigils put back, so both
styles compare alike.
"""

from __future__ import annotations

import re
from itertools import compress, repeat
from operator import add, itemgetter, lt

from workbench.diff.normalized_text import (
    LineMap,
    NormalizedText,
    NormalizeOptions,
    Section,
    keep_lines,
    split_lines,
)

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
_HEADER_NAME = re.compile(r"(?:ENTRY )?(%?[\w.\-]+) ")

# Names without sigils (see the module doc): where a name stands is known from the line's
# shape, so the sigil goes back in at those places only.
_BARE_DEFINITION = re.compile(r"^([ \t]+(?:ROOT )?)([A-Za-z_][\w.\-]*)(?= = )", re.MULTILINE)
_BARE_HEADER = re.compile(r"^((?:ENTRY )?)([A-Za-z_][\w.\-]*)(?= \()", re.MULTILINE)
_OPERANDS = re.compile(r"(?<=[\]})] )([a-z][a-z0-9\-]*)\(([^()\n]*)\)")
_BARE_OPERAND = re.compile(r"(?<![\w.\-%])([A-Za-z_][\w.\-]*)(?![\w.\-\[=])")
_COMPUTATION_ATTRIBUTE = re.compile(
    r"(?<=[ ,])((?:calls|to_apply|condition|body|select|scatter|true_computation|"
    r"false_computation)=)([A-Za-z_][\w.\-]*)")
_NAME_LIST_ATTRIBUTE = re.compile(
    r"(?<=[ ,])((?:branch_computations|called_computations|control-predecessors)=\{)"
    r"([^{}\n]*)\}")
_SIGILED_DEFINITION = re.compile(r"\n[ \t]+(?:ROOT )?%[\w.\-]+ = ")
_ANY_DEFINITION = re.compile(r"\n[ \t]+(?:ROOT )?[%A-Za-z_][\w.\-]* = ")


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


def _sigil_operands(match: re.Match[str]) -> str:
    opcode, operands = match.group(1), match.group(2)
    if opcode == "constant" or not operands:
        return match.group(0)
    return f"{opcode}({_BARE_OPERAND.sub(_sigil, operands)})"


def _sigil(match: re.Match[str]) -> str:
    return "%" + match.group(0)


def _sigil_list(match: re.Match[str]) -> str:
    names = ", ".join("%" + name.strip() if name.strip() else name
                      for name in match.group(2).split(","))
    return f"{match.group(1)}{names}}}"


def add_sigils(text: str) -> str:
    """Text printed without `%` on names, with the sigils where XLA's default printer puts
    them: definitions, computation headers, operands and computation references."""
    text = _BARE_DEFINITION.sub(r"\1%\2", text)
    text = _BARE_HEADER.sub(r"\1%\2", text)
    text = _OPERANDS.sub(_sigil_operands, text)
    text = _COMPUTATION_ATTRIBUTE.sub(r"\1%\2", text)
    return _NAME_LIST_ATTRIBUTE.sub(_sigil_list, text)


def _strip_function(options: NormalizeOptions, bare_names: bool) -> LineMap | None:
    """The per-line noise removal for these options (patterns never cross a line end)."""
    strip = _strip_pattern(options)
    if strip is None and not bare_names:
        return None

    def strip_lines(lines: list[str]) -> list[str]:
        if not lines:
            return []
        text = "\n".join(lines)
        if strip is not None:
            text = strip.sub("", text)
        if bare_names:
            text = add_sigils(text)
        return text.split("\n")

    return strip_lines


# What stripping and key making may delete: stripping, the attributes of `_ATTRIBUTE_PATTERNS`
# (a span from the `, name=` that starts it); key making, name suffixes (`.12`, `.clone`): spans
# of the characters below only, in ASCII text.
_KEY_DELETES = str.maketrans("", "", ".0123456789clone")
_STRIPPED_STARTS = tuple(f", {name}=" for name in _ATTRIBUTE_PATTERNS)


def hlo_signatures(lines: list[str]) -> list[str | None]:
    """Signatures of lines (see `workbench.diff.normalize`): the line up to its first `(`
    (an instruction's opcode, a computation's name), without the characters key making may
    delete.

    Why equal keys give equal signatures: when no attribute that stripping removes starts
    before the first `(`, stripping changes nothing up to and including it, and key making
    deletes only those characters; so the key, without them, reads the signature up to its
    first `(`. Otherwise the signature is unknown, as for non-ASCII lines (`\\d` matches other
    digits there).
    """
    if not lines:
        return []
    heads = list(map(itemgetter(0), map(str.partition, lines, repeat("("))))
    text = "\n".join(heads)
    signatures: list[str | None] = [*text.translate(_KEY_DELETES).split("\n")]
    if not text.isascii() or any(start in text for start in _STRIPPED_STARTS):
        for index, head in enumerate(heads):
            if not head.isascii() or any(start in head for start in _STRIPPED_STARTS):
                signatures[index] = None
    return signatures


def has_bare_names(text: str) -> bool:
    """True when instructions are printed without the `%` sigil (newer XLA)."""
    return _SIGILED_DEFINITION.search(text) is None and _ANY_DEFINITION.search(text) is not None


def normalize_hlo(text: str, options: NormalizeOptions) -> NormalizedText:
    """Structure from the lines that open (`... {`) and close (`}`) computations, picked out
    by C-level passes; nothing else is read until the diff asks for it."""
    original = split_lines(text)
    dropped: list[tuple[int, int]] = []  # [start, end) line ranges left out
    if options.source_tables:
        dropped = _source_tables(text)
    raw, origin = keep_lines(original, dropped)

    bare = has_bare_names(text)
    sigils = bare and options.names  # stripping puts sigils back: it inserts, so no signatures
    return NormalizedText("hlo", options, original, raw, origin, _sections(raw),
                          strip_function=_strip_function(options, sigils),
                          key_function=hlo_keys if options.names else None,
                          names_in_raw=not bare,
                          signature_function=None if sigils else hlo_signatures,
                          canonical_function=canonical_hlo_lines)


def _sections(raw: list[str]) -> list[Section]:
    """Computations: a header line ending with `{`, up to the next line `}`."""
    total = len(raw)
    closers = _positions(raw, "}")
    openers = _openers(raw, closers)
    sections = [Section("(module)", None, "module")]
    if len(openers) == len(closers) and all(map(lt, openers, closers)) \
            and all(map(lt, closers, openers[1:])):
        # Well formed (the usual case): C-level passes only.
        headers = [raw[k] for k in openers]
        names = list(map(itemgetter(0), map(str.partition, headers, repeat(" "))))
        entry = [k for k, name in enumerate(names) if name == "ENTRY"]
        for k in entry:
            names[k] = headers[k][6:].partition(" ")[0]
        sections += map(Section, names, openers, repeat("computation"),
                        map(add, closers, repeat(1)))
        for k in entry:
            sections[k + 1].kind = "entry"
        return sections
    closer_iter = iter(closers)
    closer = next(closer_iter, total)
    # Not strict: with no header at all (a module cut after its last header) there is no pair.
    for opener, following in zip(openers, [*openers[1:], total], strict=False):
        while closer < opener:
            closer = next(closer_iter, total)
        if closer < following:  # a header without its `}` before the next one is no section
            line = raw[opener]
            match = _HEADER_NAME.match(line)
            if match:
                kind = "entry" if line.startswith("ENTRY ") else "computation"
                sections.append(Section(match.group(1), opener, kind, closer + 1))
    return sections


def _positions(lines: list[str], line: str) -> list[int]:
    """Where `line` occurs in `lines`: `list.index` scans in C between occurrences, cheaper
    than comparing every line through `map` when they are few."""
    found: list[int] = []
    index = lines.index
    position = -1
    try:
        while True:
            position = index(line, position + 1)
            found.append(position)
    except ValueError:
        return found


def _openers(raw: list[str], closers: list[int]) -> list[int]:
    """Header lines. XLA prints one blank line between computations, so each header but the
    first is two lines after a `}`: only those lines (and the ones before the first `}`) are
    looked at, unless the text is laid out otherwise."""
    if closers:
        head = closers[0]
        first = list(compress(range(head), map(str.endswith, raw[:head], repeat("{"))))
        if first:
            guess = [first[-1], *(closer + 2 for closer in closers[:-1])]
            if guess[-1] < closers[-1] and all(map(str.endswith, map(raw.__getitem__, guess),
                                                   repeat("{"))):
                return guess
    openers = list(compress(range(len(raw)), map(str.endswith, raw, repeat("{"))))
    if openers and raw[openers[0]].startswith("HloModule"):
        del openers[0]
    return openers


def _source_tables(text: str) -> list[tuple[int, int]]:
    """Line ranges of the source location tables (each a title line, then entries up to a
    blank line)."""
    dropped: list[tuple[int, int]] = []
    for title in ("\nFileNames\n", "\nFunctionNames\n", "\nFileLocations\n",
                  "\nStackFrames\n"):
        start = text.find(title)
        if start < 0:
            continue
        end = text.find("\n\n", start + 1)
        end = len(text) if end < 0 else end
        first = text.count("\n", 0, start) + 1
        dropped.append((first, first + text.count("\n", start + 1, end) + 1))
    return sorted(dropped)


def canonical_hlo_lines(normalized: NormalizedText) -> list[str]:
    """Names renamed `<stem>.<k>`: the k-th definition of that stem in its computation
    (computations: the k-th computation of that stem in the module)."""
    lines = normalized.lines
    computation_names: dict[str, str] = {}
    seen: dict[str, int] = {}
    for section in normalized.sections[1:]:
        name = section.name if section.name.startswith("%") else "%" + section.name
        stem = _stem(name)
        computation_names[name] = f"{stem}.{seen.get(stem, 0)}"
        seen[stem] = seen.get(stem, 0) + 1

    out = list(lines)
    by_section: dict[int, list[int]] = {}
    for index, section_index in enumerate(normalized.line_section):
        by_section.setdefault(section_index, []).append(index)
    for section_index, indices in by_section.items():
        names = dict(computation_names)
        if section_index:
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
            if index == normalized.sections[section_index].header:
                line = _HEADER_PARAM.sub(rename_param, line)
            out[index] = line
    return out


_HEADER_PARAM = re.compile(r"(?:(?<=\()|(?<=, ))[A-Za-z_][\w.\-]*(?=: )")


def _stem(name: str) -> str:
    return _NAME_SUFFIX.sub("", name)
