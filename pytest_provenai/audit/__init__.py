"""Pure audit functions (no pytest import): answer, citation, statistics, records."""
