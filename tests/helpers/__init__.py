"""What the tests share: fake backends, damaged files, planted bugs, waiting for a condition."""
