"""Turn an `IRDiff` (workbench.diff) into the rows the IR view scrolls.

The whole newer text is shown, changed lines in place (not only hunks), so scrolling the diff
is reading the IR; `]`/`[` jump between runs of changes. Lines are shown as the compiler
wrote them (the diff pairs normalized lines; `origin` maps them back).
"""

from __future__ import annotations

from workbench.diff.ir_diff import IRDiff
from workbench.tui.ir_view import Row, TextRow, ViewDocument, clipped


def _width(diff: IRDiff) -> int:
    return len(str(max(len(diff.a.original), len(diff.b.original), 1)))


def diff_document(diff: IRDiff, side_by_side: bool = False, section: str | None = None
                  ) -> ViewDocument:
    """Rows of `diff`, unified or side by side; with `section`, only the lines of that
    computation or function (by its name on either side)."""
    a, b = diff.a, diff.b
    w = _width(diff)

    def section_a(i: int) -> str:
        return a.sections[a.line_section[i]].name

    def section_b(j: int) -> str:
        return b.sections[b.line_section[j]].name

    def keep(name: str) -> bool:
        return section is None or name == section

    rows: list[Row] = []
    hunks: list[int] = []
    line_rows: dict[int, int] = {}  # line of the newer text (1-based) -> its row
    blank = TextRow("blank", " " * (w + 3), "")
    for tag, i1, i2, j1, j2 in diff.opcodes:
        if tag == "equal":
            for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                if not keep(section_b(j)):
                    continue
                text = clipped(b.original[b.origin[j]])
                line_rows[b.origin[j] + 1] = len(rows)
                if side_by_side:
                    rows.append((TextRow("same", f"{a.origin[i] + 1:>{w}}   ", text),
                                 TextRow("same", f"{b.origin[j] + 1:>{w}}   ", text)))
                else:
                    rows.append(TextRow("same", f"{a.origin[i] + 1:>{w}} {b.origin[j] + 1:>{w}}"
                                                "   ", text))
            continue
        removed = [TextRow("removed", f"{a.origin[i] + 1:>{w}} - ",
                           clipped(a.original[a.origin[i]]))
                   for i in range(i1, i2) if keep(section_a(i))]
        kept = [j for j in range(j1, j2) if keep(section_b(j))]
        added = [TextRow("added", f"{b.origin[j] + 1:>{w}} + ",
                         clipped(b.original[b.origin[j]])) for j in kept]
        if not removed and not added:
            continue
        hunks.append(len(rows))
        first_added = len(rows) + (0 if side_by_side else len(removed))
        line_rows.update((b.origin[j] + 1, first_added + n) for n, j in enumerate(kept))
        if side_by_side:
            for index in range(max(len(removed), len(added))):
                rows.append((removed[index] if index < len(removed) else blank,
                             added[index] if index < len(added) else blank))
        else:
            pad = " " * (w + 1)
            rows.extend(TextRow(r.kind, r.gutter[: w + 1] + pad + r.gutter[w + 1:], r.text)
                        for r in removed)
            rows.extend(TextRow(r.kind, pad + r.gutter, r.text) for r in added)
    return ViewDocument(rows, side_by_side=side_by_side, hunks=hunks, line_rows=line_rows)
