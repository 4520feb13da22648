"""Plain-text renderings of an `IRDiff` (the JSON one is `workbench.output.json_shapes`;
colour is added by the CLI, not here).

Every rendering shows the original lines (as the compiler printed them); the pairing behind
it is the normalized comparison. Hunk headers give original line numbers, and a hunk's counts
span original lines, so lines left out by normalization (source tables, `#loc` aliases) are
counted but not shown.
"""

from __future__ import annotations

from workbench.diff.ir_diff import Hunk, IRDiff, section_counts


def unified(diff: IRDiff, label_a: str, label_b: str, context: int = 3) -> list[str]:
    """`diff -u` style lines (no trailing newlines); empty when the texts are equal."""
    hunks = diff.hunks(context)
    if not hunks:
        return []
    out = [f"--- {label_a}", f"+++ {label_b}"]
    for hunk in hunks:
        out.append(hunk_header(hunk))
        out += hunk.text_lines()
    return out


def hunk_header(hunk: Hunk) -> str:
    a_start = hunk.a_start + 1 if hunk.a_count else hunk.a_start
    b_start = hunk.b_start + 1 if hunk.b_count else hunk.b_start
    suffix = f" {hunk.section}" if hunk.section else ""
    return f"@@ -{a_start},{hunk.a_count} +{b_start},{hunk.b_count} @@{suffix}"


def side_by_side(diff: IRDiff, label_a: str, label_b: str, context: int = 3,
                 width: int = 160) -> list[str]:
    """Two columns, `diff -y` style markers: `|` changed, `<` removed, `>` added."""
    hunks = diff.hunks(context)
    if not hunks:
        return []
    column = max(20, (width - 3) // 2)
    out = [f"{_fit(label_a, column)} | {_fit(label_b, column)}"]
    removed: list[str] = []
    added: list[str] = []
    for hunk in hunks:
        out.append(hunk_header(hunk))
        for line in hunk.lines:
            if line.op == "-":
                removed.append(line.text)
            elif line.op == "+":
                added.append(line.text)
            else:
                _flush(out, removed, added, column)
                right = diff.b.original[line.b] if line.b is not None else line.text
                out.append(f"{_fit(line.text, column)}   {_fit(right, column)}".rstrip())
        _flush(out, removed, added, column)
    return out


def _flush(out: list[str], removed: list[str], added: list[str], column: int) -> None:
    """Removed lines beside the added lines that replace them."""
    for k in range(max(len(removed), len(added))):
        left = removed[k] if k < len(removed) else None
        right = added[k] if k < len(added) else None
        mark = "|" if left is not None and right is not None else (
            "<" if left is not None else ">")
        out.append(f"{_fit(left or '', column)} {mark} {_fit(right or '', column)}".rstrip())
    removed.clear()
    added.clear()


def _fit(text: str, width: int) -> str:
    text = text.expandtabs(4)
    if len(text) > width:
        return text[:width - 1] + "…"
    return text.ljust(width)


def summary_lines(diff: IRDiff) -> list[str]:
    """One line of counts, then one line per computation/function that is not unchanged."""
    sections = diff.sections()
    counts = section_counts(sections)
    out = [f"{counts['changed']} changed, {counts['added']} added, {counts['removed']} removed, "
           f"{counts['unchanged']} unchanged computations/functions; "
           f"-{diff.removed} +{diff.added} lines"]
    for s in sections:
        if s.status == "unchanged":
            continue
        renamed = f" (was {s.old_name})" if s.old_name else ""
        out.append(f"  {s.status:9} {s.name}{renamed}  -{s.removed_lines} +{s.added_lines}")
    return out
