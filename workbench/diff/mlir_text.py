"""MLIR text normalization (custom or generic form, as `mlir-opt`-like tools print it).

Facts of the printer this relies on: one operation a line; a region opens at the end of its
op's line (`{`, `({`) and closes on a line starting with `}` (`}`, `} -> type`, `}) : ...`,
`} else {`); values are `%name` (`%5`, `%cst_3`, `%arg0`, `%0#1` for the second result of
`%0:2`), blocks `^bb1(...)`; the printer numbers values per isolated-from-above op and makes
hint names unique with `_<n>` (`%cst`, `%cst_0`, ...); entry block arguments are `%arg<n>`.
`loc(...)` trails an op with `--mlir-print-debuginfo`, and `#loc<n> = loc(...)` alias
definitions follow the module. Attribute and type aliases (`#map1 = affine_map<...>`) stay.
"""

from __future__ import annotations

import re
from itertools import compress, repeat
from operator import or_

from workbench.diff.normalized_text import (
    LineMap,
    NormalizedText,
    NormalizeOptions,
    Section,
    keep_lines,
    split_lines,
)

_STRING = r'"(?:[^"\\\n]|\\.)*"'


def _parenthesized(depth: int) -> str:
    inner = r"[^()\"\n]"
    pattern = r"\((?:" + inner + "|" + _STRING + r")*\)"
    for _ in range(depth - 1):
        pattern = r"\((?:" + inner + "|" + _STRING + "|" + pattern + r")*\)"
    return pattern


_LOCATION = re.compile(r" ?\bloc" + _parenthesized(6))
# After a newline (a literal the engine scans for quickly); the first line is tried apart.
_ALIAS_LINE = re.compile(r"\n([#!][\w$.\-]+) = ([^\n]*)")
_ALIAS_DEFINITION = re.compile(r"([#!][\w$.\-]+) = ([^\n]*)")
_ALIAS_USE = re.compile(r"[#!][\w$.\-]+")
# Stems: `%5` and `%arg3` -> `%`, `^bb2` -> `^bb`, `%cst_3` -> `%cst`. Each pattern starts with
# a literal (a fast scan) and the first two replace with a literal (no per-match Python).
_NUMBERED = re.compile(r"%(?:arg)?\d+(?![\w$.\-])")
_BLOCK = re.compile(r"\^bb\d+(?![\w$.\-])")
_UNIQUED_HINT = re.compile(r"(%[A-Za-z_$.\-][\w$.\-]*?)_\d+(?![\w$.\-])")
NAME_TOKEN = re.compile(r"[%^][\w$.\-]+")
_SYMBOL = re.compile(r'@([\w$.\-]+|"[^"]*")|sym_name = "([^"]*)"')
_OP_NAME = re.compile(r'\s*(?:%[^=]* = )?"?([\w.$\-]+)')
_MODULE_OPS = frozenset(("module", "builtin.module"))


def normalize_mlir(text: str, options: NormalizeOptions) -> NormalizedText:
    """Structure from the lines that open or close a region (C-level passes pick them out);
    nothing else is read until the diff asks for it.

    Alias definitions (`#map1 = affine_map<...>`, `!t = ...`) are numbered in print order
    like values, and a dump of one function prints the same attributes inline: so, comparing
    modulo names, an alias use compares as its definition and the definition lines are left
    out (the text shown keeps them). `#loc` aliases are left out with the locations.
    """
    original = split_lines(text)
    dropped: list[int] = []
    aliases: dict[str, str] = {}
    if ("#" in text or "!" in text) and (options.locations or options.names):
        for number, name, value in _alias_definitions(text):
            if name.startswith("#loc") and options.locations:
                dropped.append(number)
            elif options.names:
                aliases[name] = _expand(value, aliases)
                dropped.append(number)
    raw, origin = keep_lines(original, [(n, n + 1) for n in dropped])
    sections = _structure(raw)
    strip_locations = options.locations and "loc" in text
    return NormalizedText("mlir", options, original, raw, origin, sections,
                          strip_function=_strip_function(strip_locations, aliases),
                          key_function=mlir_keys if options.names else None,
                          canonical_function=canonical_mlir_lines)


def _alias_definitions(text: str) -> list[tuple[int, str, str]]:
    """(line number, alias, definition) of the alias definitions at column 0."""
    found = []
    first = _ALIAS_DEFINITION.match(text)
    if first:
        found.append((0, first.group(1), first.group(2)))
    line = position = 0
    for match in _ALIAS_LINE.finditer(text):
        line += text.count("\n", position, match.start() + 1)
        position = match.start() + 1
        found.append((line, match.group(1), match.group(2)))
    return found


def _expand(text: str, aliases: dict[str, str]) -> str:
    """`text` with every alias use replaced by the alias's definition."""
    if not aliases:
        return text

    def definition(match: re.Match[str]) -> str:
        return aliases.get(match.group(0), match.group(0))

    return _ALIAS_USE.sub(definition, text)


def _strip_function(locations: bool, aliases: dict[str, str]) -> LineMap | None:
    if not locations and not aliases:
        return None

    def strip(lines: list[str]) -> list[str]:
        if not lines:
            return []
        text = "\n".join(lines)
        if locations:
            text = _LOCATION.sub("", text)
        return _expand(text, aliases).split("\n")

    return strip


def _structure(raw: list[str]) -> list[Section]:
    """Sections: symbol ops with a region, in print order (nested ones after their parent)."""
    total = len(raw)
    opens = map(str.endswith, raw, repeat("{"))
    closes = map(str.startswith, map(str.lstrip, raw), repeat("}"))
    candidates = compress(range(total), map(or_, opens, closes))
    sections = [Section("(module)", None, "module")]
    # One entry per open region: the section its lines belong to, and the section it opened.
    stack: list[tuple[int, int | None]] = []
    current = 0
    for number in candidates:
        body = raw[number].strip()
        if body.startswith("}"):
            opened = None
            if stack:
                _, opened = stack.pop()
            current = stack[-1][0] if stack else 0
            if body.endswith("{"):  # `} else {`, `}, {`: the next region of the same op
                stack.append((opened if opened is not None else current, opened))
                current = stack[-1][0]
            elif opened is not None:
                sections[opened].end = number + 1
            continue
        if "@" in body or "sym_name" in body:
            op = _OP_NAME.match(body)
            symbol = _SYMBOL.search(body)
            if symbol and op and op.group(1) not in _MODULE_OPS:
                name = "@" + (symbol.group(1) or symbol.group(2)).strip('"')
                sections.append(Section(f"{op.group(1)} {name}", number, "function"))
                current = len(sections) - 1
                stack.append((current, current))
                continue
        stack.append((current, None))
    for section in sections:
        if section.header is not None and section.end is None:  # cut short: runs to the end
            section.end = total
    return sections


def mlir_keys(lines: list[str]) -> list[str]:
    """Lines with value and block names cut to their stems (`%cst_3` -> `%cst`)."""
    if not lines:
        return []
    text = _NUMBERED.sub("%", "\n".join(lines))
    if "^bb" in text:
        text = _BLOCK.sub("^bb", text)
    return _UNIQUED_HINT.sub(_hint, text).split("\n")


def _hint(match: re.Match[str]) -> str:
    return match.group(1)


_DEFINED_BEFORE = re.compile(r"\s*((?:%[\w$.\-]+(?::\d+)?(?:, )?)+) = ")


def canonical_mlir_lines(normalized: NormalizedText) -> list[str]:
    """Names renamed by definition order per region: values `%v<depth>.<k>`, block labels
    `^bb<depth>.<k>`; every region restarts its count, so an op added in one region does
    not renumber its sibling regions."""
    out: list[str] = []
    scopes: list[dict[str, str]] = [{}]
    counters: list[list[int]] = [[0, 0]]

    def lookup(token: str) -> str | None:
        for scope in reversed(scopes):
            found = scope.get(token)
            if found is not None:
                return found
        return None

    def define(token: str) -> str:
        depth = len(scopes) - 1
        counter = counters[-1]
        if token[0] == "^":
            name = f"^bb{depth}.{counter[1]}"
            counter[1] += 1
        else:
            name = f"%v{depth}.{counter[0]}"
            counter[0] += 1
        scopes[-1][token] = name
        return name

    for line in normalized.lines:
        body = line.strip()
        if body.startswith("}") and len(scopes) > 1:
            scopes.pop()
            counters.pop()
            if body.endswith("{"):
                scopes.append({})
                counters.append([0, 0])
        defined = _DEFINED_BEFORE.match(line)
        limit = defined.end() if defined else 0

        def rename(match: re.Match[str], limit: int = limit, line: str = line) -> str:
            token = match.group(0)
            after = line[match.end():match.end() + 2]
            if match.start() < limit or token[0] == "^" or (after.startswith((": ", " = ")) \
                    and not after.startswith(" ==")):
                existing = scopes[-1].get(token)
                if token[0] == "^" and existing is not None:
                    return existing
                return define(token)
            return lookup(token) or token

        out.append(NAME_TOKEN.sub(rename, line))
        if body.endswith("{") and not body.startswith("}"):
            scopes.append({})
            counters.append([0, 0])
    return out
