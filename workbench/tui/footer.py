"""The footer, showing only the keys that fit whole.

Textual's footer draws its keys in a row and lets the screen edge cut the last one (`… Computati`,
a stray `v`): a cut key reads as a wrong key. This one hides every key from the first one that
does not fit; the main screen lists the keys that matter most first (see `MainScreen`). The
command palette's key, docked at the right, always shows: the keys stop before it.
"""

from __future__ import annotations

from textual.widgets import Footer
from textual.widgets._footer import FooterKey


class WholeKeysFooter(Footer):
    async def recompose(self) -> None:
        await super().recompose()
        self.call_after_refresh(self.hide_cut_keys)

    def on_resize(self) -> None:
        for key in self.query(FooterKey):
            key.display = True
        self.call_after_refresh(self.hide_cut_keys)

    def hide_cut_keys(self) -> None:
        palette = self.query("FooterKey.-command-palette")
        right = palette.first().region.x if palette else self.region.right
        cut = False
        for key in self.query(FooterKey):
            if key.has_class("-command-palette"):
                continue
            cut = cut or key.region.right > right
            if cut:
                key.display = False
