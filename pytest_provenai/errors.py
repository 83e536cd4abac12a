"""Error types shared by the domain layers (no pytest import here).

Every error carries one human-readable line that names the file / field / option and the fix.
The plugin turns them into collection errors or ``pytest.UsageError``.
"""

from __future__ import annotations


class ProvenaiError(Exception):
    """Base class of every error pytest-provenai raises on bad input."""


class FixtureError(ProvenaiError):
    """A frozen fixture file or set is invalid.

    ``path`` is the offending file, ``pointer`` a JSON pointer into it ("" for the whole
    document), ``expected``/``actual`` describe the mismatch.
    """

    def __init__(self, path: str, pointer: str, expected: str, actual: str) -> None:
        self.path = path
        self.pointer = pointer
        self.expected = expected
        self.actual = actual
        where = f"{path}#{pointer}" if pointer else path
        super().__init__(f"{where}: expected {expected}, got {actual}")


class BackendError(ProvenaiError):
    """A generation backend, model or pipeline cannot be used; the message says the fix."""


class ConfigError(ProvenaiError):
    """An option or marker value is invalid; the plugin raises it as pytest.UsageError."""


class ResultsError(ProvenaiError):
    """A file that should be a results JSON is not one (the message names file and problem)."""


class RetrievalError(ProvenaiError):
    """An index folder, a retrieval source or the embedding model cannot be used; the
    message names the file or field and the fix."""


class GoldenError(ProvenaiError):
    """A golden snapshot file or folder cannot be used (a symlink under the golden folder);
    the message names it and the fix."""


class AttributionError(ProvenaiError):
    """The attribution layer cannot run as asked (a missing extra, a bad calibration table, a
    case of the wrong kind, an MCP session that failed); the message names the input and the
    fix."""


class FixtureSetError(Exception):
    """Raised at setup of the test standing for a fixture set that failed to load."""


class CaseTimeout(Exception):
    """A case's test ran past ``--provenai-timeout``."""


class ProvenaiCacheWarning(UserWarning):
    """A cache entry was unreadable and has been dropped (it will be recomputed)."""
