"""CLI subcommands, one module each; see `workbench.cli`."""
