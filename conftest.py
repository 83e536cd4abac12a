"""Repository conftest.

The shipped suites (suites/) are pointed at fixtures/ and golden/ by the ini options in
pyproject.toml (provenai_fixtures, provenai_golden) — the same way a user's project would
configure them. benchmarks/ hold scripts, not tests.
"""

collect_ignore = ["benchmarks"]
