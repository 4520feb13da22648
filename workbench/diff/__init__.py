"""IR diff that ignores renumbering: normalization, line diff, per-step diffs and changed flags.

UI-free: nothing here imports textual or rich.
"""
