"""Sharding one audit over several machines: which shard a case belongs to, and what a
shard's results JSON says about its share of the run.

* :class:`ShardSpec` — ``--provenai-shard K/N`` (1 <= K <= N), parsed strictly.
* :func:`case_key` / :func:`shard_of` — the documented assignment: a case's key is
  ``<fixture set name>/<case id>``; its shard is ``int(sha256(key, UTF-8)[:8], big-endian)
  mod N + 1``. It depends on the key alone, never on sampling order, the machine, the worker
  layout or the Python version (no ``hash()``), so every suite of one case lands in the same
  shard and shares that machine's cache.
* :class:`ShardSection` — the ``shard`` object of a shard's results JSON: the spec, the run
  fingerprint (:func:`fingerprint`), the case keys this shard was responsible for, and the
  plan of the *whole* run before the shard's deselection (every gate, every gated case item
  with its case key), so ``provenai merge`` can judge every gate on the union, name the cases
  of a shard that never reported and report golden files no case claims.

No pytest import.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_provenai.errors import ConfigError, ResultsError

__all__ = [
    "RECORD_OPTIONS_DROPPED",
    "ShardSection",
    "ShardSpec",
    "case_key",
    "fingerprint",
    "package_version",
    "shard_of",
]

_SPEC = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


@dataclass(frozen=True, order=True)
class ShardSpec:
    """Shard ``index`` of ``count`` (1-based)."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    @classmethod
    def parse(cls, text: Any, name: str = "--provenai-shard") -> ShardSpec:
        """``"K/N"`` -> ShardSpec; ConfigError naming ``name`` for anything else."""
        match = _SPEC.fullmatch(str(text))
        if match is not None:
            index, count = int(match.group(1)), int(match.group(2))
            if 1 <= index <= count:
                return cls(index, count)
        raise ConfigError(
            f"{name}: expected K/N with 1 <= K <= N, e.g. 2/3 for the second of three "
            f"shards, got {str(text)!r}"
        )


def case_key(fixture_set: str, case_id: str) -> str:
    """A case's key across machines: its fixture set's name and its id."""
    return f"{fixture_set}/{case_id}"


def shard_of(key: str, count: int) -> int:
    """The shard (1..count) that audits the case with ``key`` (module docstring)."""
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pytest-provenai")
    except PackageNotFoundError:  # a source tree that was never installed
        return "unknown"


# Options that never change a record: where files go (paths differ between machines; the
# model's identity and the fixture sets' digests are compared instead of the model and
# fixture paths), which device or server computes, how long to wait. Everything else in
# the results' ``options`` must be equal across the shards of one run.
RECORD_OPTIONS_DROPPED: dict[str, tuple[str, ...]] = {
    "": ("fixtures", "model", "golden", "cache", "device", "devices", "timeout", "report"),
    "served": ("base_urls", "max_concurrency", "request_timeout"),
    "attribution": ("mcp_traces", "verify_judge_timeout"),
}


def _record_options(options: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in options.items() if k not in RECORD_OPTIONS_DROPPED[""]}
    for part in ("served", "attribution"):
        if isinstance(out.get(part), Mapping):
            out[part] = {
                k: v for k, v in out[part].items() if k not in RECORD_OPTIONS_DROPPED[part]
            }
    return out


def fingerprint(
    options: Mapping[str, Any],
    fixture_sets: Mapping[str, str],
    models: Iterable[Mapping[str, Any]],
) -> dict[str, Any]:
    """What must be equal for two shards to be parts of one run: the package version, the
    options that change records (``options`` is the results' ``options``), each fixture
    set's manifest sha256 (``fixture_sets``: set name -> digest; the manifest pins every case
    file), and the model identities (name, weights sha256, decoding) the shard loaded."""
    keys = {
        json.dumps({k: m.get(k) for k in ("name", "weights_sha256", "decoding")}, sort_keys=True)
        for m in models
    }
    return {
        "package_version": package_version(),
        "options": _record_options(options),
        "fixture_sets": dict(sorted(fixture_sets.items())),
        "models": [json.loads(k) for k in sorted(keys)],
    }


@dataclass
class ShardSection:
    """The ``shard`` object of a shard's results JSON (module docstring).

    ``cases``: the keys of the cases this shard audited. ``case_keys``: every case name of
    the whole run (its test id and golden name) -> case key. ``gates`` (the GateSpec dicts)
    and ``expected`` (node id -> [test, case name]) are the whole run's plan: what a single
    run of the same selection would have planned. ``golden_unused``: golden files no
    configured case claims, as this shard's golden bookkeeping found them."""

    spec: ShardSpec
    fingerprint: dict[str, Any]
    cases: list[str]
    case_keys: dict[str, str]
    gates: list[dict[str, Any]]
    expected: dict[str, tuple[str, str]]
    fixture_errors: list[str] = field(default_factory=list)
    golden_unused: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "spec": str(self.spec),
            "assignment": "sha256('<fixture set>/<case id>')[:8] big-endian mod N + 1",
            "fingerprint": self.fingerprint,
            "cases": sorted(self.cases),
            "case_keys": dict(sorted(self.case_keys.items())),
            "gates": self.gates,
            "expected": {n: list(v) for n, v in sorted(self.expected.items())},
            "fixture_errors": self.fixture_errors,
            "golden_unused": sorted(self.golden_unused),
        }

    @classmethod
    def from_json(cls, data: Any, source: str) -> ShardSection:
        """Read back :meth:`to_json`'s object; ResultsError naming ``source`` and the field."""
        where = f"{source}#/shard"
        if not isinstance(data, dict):
            raise ResultsError(f"{where}: expected a JSON object")
        try:
            spec = ShardSpec.parse(data.get("spec"), f"{where}/spec")
        except ConfigError as exc:
            raise ResultsError(str(exc)) from None
        checks: dict[str, type] = {
            "fingerprint": dict,
            "cases": list,
            "case_keys": dict,
            "gates": list,
            "expected": dict,
        }
        for key, kind in checks.items():
            if not isinstance(data.get(key), kind):
                name = "object" if kind is dict else "array"
                raise ResultsError(f"{where}/{key}: expected a JSON {name}")
        expected: dict[str, tuple[str, str]] = {}
        for nodeid, entry in data["expected"].items():
            pair = isinstance(entry, list) and len(entry) == 2
            if not pair or not all(isinstance(e, str) for e in entry):
                raise ResultsError(f"{where}/expected/{nodeid}: expected [test, case name]")
            expected[nodeid] = (entry[0], entry[1])
        if not all(isinstance(c, str) for c in data["cases"]) or not all(
            isinstance(v, str) for v in data["case_keys"].values()
        ):
            raise ResultsError(f"{where}: case keys must be strings")
        return cls(
            spec=spec,
            fingerprint=data["fingerprint"],
            cases=list(data["cases"]),
            case_keys=dict(data["case_keys"]),
            gates=list(data["gates"]),
            expected=expected,
            fixture_errors=[str(e) for e in data.get("fixture_errors", [])],
            golden_unused=[str(p) for p in data.get("golden_unused", [])],
        )
