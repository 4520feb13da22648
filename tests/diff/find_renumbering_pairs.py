"""Search the corpus for IR pairs whose only differences are renumbering (and noise the
normalization strips): equal modulo normalization, different as printed.

    python tests/diff/find_renumbering_pairs.py [CORPUS]

Every step of every module the index finds (XLA per-pass files, MLIR logs, IR trees, plain
`.mlir` files) is a candidate. Prints one line per pair found. The tests in this folder use
pairs it found.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

from workbench.diff.ir_diff import same_ir
from workbench.diff.normalize import NormalizeOptions, normalize
from workbench.index import scan
from workbench.loader import ReadError, read_text


def candidates(corpus: Path) -> dict[str, list[tuple[str, str]]]:
    """Step texts grouped by IR kind: (label, text)."""
    groups: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for folder in sorted(p for p in corpus.rglob("*") if p.is_dir() and p.parent.parent == corpus):
        dump = scan(folder)
        for module in dump.modules:
            for step in module.steps:
                if step.text is None:
                    continue
                try:
                    text = read_text(dump.root, step.text)
                except ReadError:
                    continue
                label = f"{folder.relative_to(corpus)}:{module.key}:{step.index}"
                groups[step.ir].append((label, text))
    return groups


def main(corpus: Path) -> None:
    raw = NormalizeOptions.raw()
    for kind, items in candidates(corpus).items():
        by_keys: dict[int, list[tuple[str, str]]] = defaultdict(list)
        for label, text in items:
            normalized = normalize(text, kind)  # type: ignore[arg-type]  # the kind, as the dump names it
            by_keys[hash(tuple(normalized.keys))].append((label, text))
        for group in by_keys.values():
            texts = {}
            for label, text in group:
                texts.setdefault(tuple(normalize(text, kind, raw).lines), (label, text))  # type: ignore[arg-type]  # the kind, as the dump names it
            if len(texts) < 2:
                continue
            (label_a, a), *others = texts.values()
            for label_b, b in others:
                if same_ir(normalize(a, kind), normalize(b, kind)):  # type: ignore[arg-type]  # the kind, as the dump names it
                    print(f"{kind}\t{label_a}\t{label_b}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parents[1] / "data" / "corpus")
