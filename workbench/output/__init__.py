"""What the workbench writes for people and programs: the one JSON layer, and nothing else."""
