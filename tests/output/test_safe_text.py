"""Strings from a dump survive Rich and Textual markup as themselves, control codes visible."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text
from textual.content import Content

from workbench.output.safe_text import markup, plain, visible, visible_text

# Names drawn from what breaks markup and terminals: tags, escapes, brackets, backslashes.
HOSTILE = st.lists(st.sampled_from(
    ["[", "]", "/", "\\", "@", "$", "=", "b", "bold", "red", "link", "click=app.quit", "x",
     "\x1b", "\x07", "\x9b", "\x7f", "\n", "\t", " ", "é", "中", "]0;pwned"]), max_size=30
).map("".join)


@given(HOSTILE)
def test_rich_markup_shows_the_text_itself(name: str) -> None:
    rendered = Text.from_markup(f"[bold]{markup(name)}[/] after")
    # Only the backslashes before a bracket may show differently (Rich has no exact escape).
    assert rendered.plain.replace("\\", "") == f"{visible(name)} after".replace("\\", "")
    assert [(span.start, span.end, span.style) for span in rendered.spans] == [
        (0, len(rendered.plain) - len(" after"), "bold")]  # no style came from the name


@given(HOSTILE)
def test_textual_markup_takes_names_as_variables(name: str) -> None:
    content = Content.from_markup("[b]$name[/b] after", name=visible(name))
    assert content.plain == f"{visible(name)} after"
    assert Content.from_rich_text(plain(name)).plain == visible(name)


@given(HOSTILE)
def test_nothing_reaches_the_terminal_as_a_control_code(name: str) -> None:
    console = Console(force_terminal=True, color_system=None, width=200, file=None)
    with console.capture() as captured:
        console.print(plain(name), Text.from_markup(markup(name)))
    printed = captured.get()
    assert "\x1b" not in printed and "\x07" not in printed and "\x9b" not in printed


def test_visible_forms() -> None:
    assert visible("a\x1b]0;pwned\x07b") == "a␛]0;pwned␇b"
    assert visible("tab\there\nline", lines=True) == "tab\there\nline"
    assert visible("tab\there\nline") == "tab␉here␊line"
    assert visible("\x7f\x9b") == "␡\ufffd"
    # A name that is not UTF-8: its bytes 0x80-0x9f (lone surrogates) too, the others kept.
    assert visible("a\udc9b[31m\udcff") == "a\ufffd[31m\udcff"
    styled = Text.assemble(("a\x1b", "bold"), ("\x9bb", "red"))
    shown = visible_text(styled)
    assert shown.plain == "a␛\ufffdb" and shown.spans == styled.spans
    shown = Text.from_markup("[b]" + markup("jit_ln[bold red]X[@click=app.quit]Q") + "[/b]")
    assert shown.plain == "jit_ln[bold red]X[@click=app.quit]Q"
