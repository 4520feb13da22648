"""Wire-compatible subsets of XLA's protos (`.proto` sources) and their generated modules."""
