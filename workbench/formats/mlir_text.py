"""Small facts read from printed MLIR text without parsing it: which operation a dump shows.

A dump starts with alias definitions (`#map = ...`, `!type = ...`, `#loc3 = loc(...)`), then
the top operation on one line: custom form (`func.func public @main(...)`, `module @jit_f {`)
or generic form (`"builtin.module"() <{sym_name = "jit_f"}> ({`). The builtin dialect's
prefix is elided in custom form (`module` is `builtin.module`).
"""

from __future__ import annotations

import re

# An op on its line: optional results `%a, %b:2 =`, then `dialect.op` or `"dialect.op"` (group 1).
# The one pattern for counting ops and attributing them to source locations.
OP_LINE = re.compile(
    r"^\s*(?:%[\w$.#:]+(?:\s*,\s*%[\w$.#:]+)*\s*=\s*)?\"?([A-Za-z_][\w$]*\.[\w$.]+)\"?[\s(<{:]"
)
_GENERIC_RE = re.compile(r'"(?P<op>[^"]+)"\(')
_SYM_NAME_RE = re.compile(r'sym_name = "(?P<sym>(?:[^"\\]|\\.)*)"')
_CUSTOM_RE = re.compile(
    r"(?:%[^=]*= )?(?P<op>[A-Za-z_][\w$]*(?:\.[\w$]+)*)"
    r"(?P<visibility>(?: (?:public|private|nested))*)"
    r"(?: @(?P<sym>\"(?:[^\"\\]|\\.)*\"|[\w$.-]+))?"
)


def first_operation_line(text: str) -> str | None:
    """The line holding the top operation of a dump (aliases and blank lines skipped)."""
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", "!", "//", "{-#")):
            continue
        return stripped
    return None


def operation_of_line(line: str) -> tuple[str, str | None] | None:
    """(operation name, symbol or None) of an operation's first printed line."""
    if line.startswith('"'):
        match = _GENERIC_RE.match(line)
        if match is None:
            return None
        symbol = _SYM_NAME_RE.search(line)
        return match["op"], symbol["sym"] if symbol else None
    match = _CUSTOM_RE.match(line)
    if match is None:
        return None
    op = match["op"]
    if "." not in op:
        op = f"builtin.{op}"
    sym = match["sym"]
    if sym and sym.startswith('"'):
        sym = sym[1:-1]
    return op, sym


def scope_label(op: str, symbol: str | None) -> str:
    """How the model names an operation: `func.func @main`, or just `builtin.module`."""
    return f"{op} @{symbol}" if symbol else op


def scope_of_text(text: str) -> str | None:
    """The scope label of the operation a dump shows, or None when no operation is found."""
    line = first_operation_line(text)
    if line is None:
        return None
    found = operation_of_line(line)
    return scope_label(*found) if found else None
