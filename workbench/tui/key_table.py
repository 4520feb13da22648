"""The key table of the documentation, generated from the bindings: the same declarations the
footer, the help screen and the palette read, so the docs cannot list a key the app does not
have. `python -m workbench.tui.key_table` prints it; `python docs/gen_reference.py` writes it
into docs/reference/keys.md, which tests/tui/test_docs_keys.py keeps equal to it."""

from __future__ import annotations

from textual.binding import Binding
from textual.keys import format_key

from workbench.tui.keys import all_bindings

BEGIN = "<!-- keys: generated from the bindings (python -m workbench.tui.key_table) -->"
END = "<!-- end of the generated keys -->"


def cell(text: str) -> str:
    """`text` for a Markdown table cell (a `|` would end the cell)."""
    return text.replace("|", "\\|")


def key_display(binding: Binding) -> str:
    """`ctrl+t`, `?`, `]`: the binding's key as the footer writes it."""
    if binding.key_display:
        return binding.key_display
    *modifiers, name = binding.key.strip().split("+")
    return "+".join([*modifiers, format_key(name)])


def table_rows() -> list[tuple[str, str, str]]:
    """(keys, where, what) for the app's keys, then each pane's, in screen order."""
    from workbench.tui.app import WorkbenchApp
    from workbench.tui.panes import LEFT_PANES, RIGHT_PANES

    # (keys, what) -> where: the list keys every table shares make one row, not one a pane.
    rows: dict[tuple[str, str], list[str]] = {}

    def add(bindings: list[Binding], where: str) -> None:
        keys: dict[str, list[str]] = {}  # action -> its keys (`up,k` is two bindings)
        what: dict[str, str] = {}
        for binding in bindings:
            if not binding.description:
                continue
            key = key_display(binding)
            if key not in keys.setdefault(binding.action, []):
                keys[binding.action].append(key)
            what.setdefault(binding.action, binding.tooltip or binding.description)
        for action, shown in keys.items():
            rows.setdefault((" ".join(f"`{cell(k)}`" for k in shown), what[action]),
                            []).append(where)

    everywhere = all_bindings(WorkbenchApp)
    add([b for b in everywhere if not b.priority], "everywhere")
    add([b for b in everywhere if b.priority], "during a manual bisection (`B`)")
    for pane_type in (*LEFT_PANES, *RIGHT_PANES):
        pane = pane_type()
        add(all_bindings(pane_type) + all_bindings(type(pane.focus_target())), pane.TITLE)
    return [(keys, ", ".join(where), what) for (keys, what), where in rows.items()]


def markdown() -> str:
    lines = [BEGIN, "| keys | where | what |", "|---|---|---|"]
    lines += [f"| {keys} | {where} | {cell(what)} |" for keys, where, what in table_rows()]
    return "\n".join([*lines, END])


if __name__ == "__main__":
    print(markdown())
