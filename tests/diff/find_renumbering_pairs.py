"""Search the corpus for IR pairs whose only differences are renumbering (and noise the
normalization strips): equal modulo normalization, different as printed.

    python tests/diff/find_renumbering_pairs.py [CORPUS]

Prints one line per pair found. The tests in this folder use pairs it found.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

from workbench.diff.ir_diff import same_ir
from workbench.diff.normalize import NormalizeOptions, normalize

_DUMP_HEADER = re.compile(r"^// -----// IR Dump (?:After|Before) .*$", re.MULTILINE)


def log_sections(text: str) -> list[str]:
    """The IR dumps of a `--mlir-print-ir-*` log, in order."""
    found = list(_DUMP_HEADER.finditer(text))
    starts = [m.end() + 1 for m in found]
    ends = [m.start() for m in found[1:]] + [len(text)] if found else []
    return [text[s:e] for s, e in zip(starts, ends, strict=True)]


def candidates(corpus: Path) -> dict[str, list[tuple[str, str]]]:
    """Texts grouped by kind: (label, text)."""
    groups: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for path in sorted(corpus.rglob("*.txt")):
        text = path.read_text(errors="replace")
        if text.startswith("HloModule"):
            groups["hlo"].append((str(path.relative_to(corpus)), text))
    for path in sorted(corpus.rglob("*.mlir")):
        groups["mlir"].append((str(path.relative_to(corpus)), path.read_text(errors="replace")))
    for path in sorted(corpus.rglob("*.log")):
        text = path.read_text(errors="replace")
        for n, section in enumerate(log_sections(text)):
            groups["mlir"].append((f"{path.relative_to(corpus)}#{n}", section))
    return groups


def main(corpus: Path) -> None:
    raw = NormalizeOptions.raw()
    for kind, items in candidates(corpus).items():
        by_keys: dict[int, list[tuple[str, str]]] = defaultdict(list)
        for label, text in items:
            normalized = normalize(text, kind)
            by_keys[hash(tuple(normalized.keys))].append((label, text))
        for group in by_keys.values():
            texts = {}
            for label, text in group:
                texts.setdefault(tuple(normalize(text, kind, raw).lines), (label, text))
            if len(texts) < 2:
                continue
            (label_a, a), *others = texts.values()
            for label_b, b in others:
                if same_ir(normalize(a, kind), normalize(b, kind)):
                    print(f"{kind}\t{label_a}\t{label_b}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parents[1] / "data" / "corpus")
