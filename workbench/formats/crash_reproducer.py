"""MLIR crash reproducers (`--mlir-pass-pipeline-crash-reproducer=FILE`): pipeline, flags, IR.

Current MLIR writes the IR (before the failing pipeline ran), then a resource block:
`{-# external_resources: { mlir_reproducer: { pipeline: "...", disable_threading: false,
verify_each: true } } #-}` (MLIR's `PassCrashRecovery.cpp`). Older MLIR put the configuration
in a first comment line instead: `// configuration: -pass-pipeline='...' -mlir-disable-threading
-verify-each`, sometimes followed by `// note: verifyPasses=true`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from workbench.formats.mlir_text import scope_of_text
from workbench.model import Source
from workbench.sources import ReadError, decode_text

_CONFIGURATION_RE = re.compile(
    r"^\s*// configuration: (?P<args>.*)$", re.MULTILINE
)
_PIPELINE_ARG_RE = re.compile(r"-pass-pipeline='(?P<pipeline>.*)'")
_FLAG_RE = re.compile(r"(?:^|\s)-(?P<flag>[A-Za-z][\w-]*)(?:=(?P<value>\S+))?")
_NOTE_RE = re.compile(r"^\s*// note: (?P<name>\w+)=(?P<value>\S+)\s*$", re.MULTILINE)
_RESOURCES_RE = re.compile(r"^\{-#\s*$", re.MULTILINE)
_REPRODUCER_BLOCK_RE = re.compile(r"mlir_reproducer\s*:\s*\{")
_ENTRY_RE = re.compile(r'\s*(?P<key>[\w.-]+)\s*:\s*(?P<value>"(?:[^"\\]|\\.)*"|[^,}\s]+)\s*,?')


@dataclass
class CrashReproducer:
    """What a reproducer says: run `pipeline` with `flags` on the IR at `ir`."""

    file: str
    style: str  # "external-resources" (current MLIR) or "configuration-comment" (older)
    pipeline: str | None
    flags: dict[str, str | bool] = field(default_factory=dict)
    ir: Source | None = None
    scope: str | None = None

    @property
    def module_name(self) -> str | None:
        if self.scope and self.scope.startswith("builtin.module @"):
            return self.scope.split("@", 1)[1]
        return None


def _unquote(value: str) -> str | bool:
    if value.startswith('"'):
        return re.sub(r"\\(.)", r"\1", value[1:-1])
    if value in ("true", "false"):
        return value == "true"
    return value


def read_crash_reproducer(data: bytes, file: str) -> CrashReproducer:
    """Read a reproducer's configuration and locate its IR; raises `ReadError` when neither
    configuration style is present or the text is not UTF-8."""
    text = decode_text(data, file)
    if match := _CONFIGURATION_RE.match(text):
        args = match["args"]
        pipeline = _PIPELINE_ARG_RE.search(args)
        rest = _PIPELINE_ARG_RE.sub("", args)
        flags: dict[str, str | bool] = {
            m["flag"]: m["value"] if m["value"] is not None else True
            for m in _FLAG_RE.finditer(rest)
        }
        ir_start = match.end()
        while (note := _NOTE_RE.match(text, ir_start + 1)) is not None:
            flags[note["name"]] = _unquote(note["value"])
            ir_start = note.end()
        start = len(text[:ir_start].encode()) + 1
        ir_text = text[ir_start:]
        return CrashReproducer(file, "configuration-comment",
                               pipeline["pipeline"] if pipeline else None, flags,
                               Source(file, min(start, len(data)), len(data)),
                               scope_of_text(ir_text))
    blocks = list(_RESOURCES_RE.finditer(text))
    for block in reversed(blocks):
        found = _REPRODUCER_BLOCK_RE.search(text, block.end())
        if found is None:
            continue
        entries: dict[str, str | bool] = {}
        position = found.end()
        while (entry := _ENTRY_RE.match(text, position)) is not None:
            entries[entry["key"]] = _unquote(entry["value"])
            position = entry.end()
        if not text[position:].lstrip().startswith("}"):
            raise ReadError(file, "mlir_reproducer block is cut short or malformed at "
                                  f"character {position}")
        pipeline_value = entries.pop("pipeline", None)
        ir_text = text[: block.start()].rstrip()
        end = len(ir_text.encode())
        return CrashReproducer(file, "external-resources",
                               pipeline_value if isinstance(pipeline_value, str) else None,
                               entries, Source(file, 0, end), scope_of_text(ir_text))
    raise ReadError(file, "no reproducer configuration (neither a '// configuration:' line "
                          "nor an mlir_reproducer resource block)")
