"""Run-to-run comparison: what changed between a base run and a new run.

Cases are paired by test and case (fixture set + case id). For every metric both runs have
for a test, the **paired difference** new − base over the cases both runs recorded, with a
percentile-bootstrap 95% CI resampling cases (one resampling of case indices serves both
runs; pooled metrics resample a case's numerator and denominator together), seeded with the
new run's seed. A difference is a **metric regression** when its CI lies wholly on the worse
side of zero (below for a higher-is-better metric, above for a lower-is-better one).

The **regressions** (:class:`Regression`, what ``provenai compare --fail-on-regression`` fails
on) are those metric regressions and everything else that says the new run lost ground: a
gate that passed in the base run and fails in the new one; a test of the base run absent
from the new one; a case of the base run absent from the new one, unless the new run sampled
its cases deliberately (``--provenai-sample``, recorded in the results' options) with another
sample size or seed than the base, in which case it is listed as *sampled out*; and a case
whose record the new run lost (a ``"missing"`` placeholder where the base has a record).

Also listed: what makes the runs hard to compare (different models, fixture sets, options —
said first), cases only in one run, and verdict flips (answers right → wrong and back,
resources whose influence verdict changed, exposure treatments that started or stopped
leaking the aid's value, quotation/derivation agreement, attribution answer verdicts, gates).

Pure: works on two :class:`RunResults`; no pytest import. Its terminal text is rendered in
``report/summary.py`` (:func:`~pytest_provenai.report.summary.compare_lines`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_provenai.audit.metrics import Metric
from pytest_provenai.audit.stats import (
    DEFAULT_SEED,
    paired_bootstrap_ci,
    paired_combined_bootstrap_ci,
    paired_ratio_bootstrap_ci,
    sum_counts,
)
from pytest_provenai.metric_registry import METRICS, layer_metrics
from pytest_provenai.report.results import RunResults, TestResults

__all__ = [
    "REGRESSION_KINDS",
    "Comparison",
    "MetricDiff",
    "Regression",
    "compare_runs",
    "number_text",
]

# Options whose difference changes what a metric measures.
COMPARED_OPTIONS = (
    "backend",
    "model",
    "pipeline",
    "sample",
    "max_new_tokens",
    "ablation",
    "theta_floor",
    "retrieval",
    "index",
    "k",
)


@dataclass(frozen=True)
class MetricDiff:
    test: str
    metric: str
    direction: str
    n: int  # paired cases
    base: float | None  # the metric over the paired cases in each run
    new: float | None
    diff: float | None
    ci: tuple[float, float] | None
    error: str | None = None

    @property
    def regression(self) -> bool:
        if self.ci is None:
            return False
        return self.ci[1] < 0 if self.direction == "higher" else self.ci[0] > 0

    @property
    def improvement(self) -> bool:
        if self.ci is None:
            return False
        return self.ci[0] > 0 if self.direction == "higher" else self.ci[1] < 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "test": self.test,
            "metric": self.metric,
            "direction": self.direction,
            "n": self.n,
            "base": self.base,
            "new": self.new,
            "diff": self.diff,
            "ci": list(self.ci) if self.ci else None,
            "regression": self.regression,
            "improvement": self.improvement,
            "error": self.error,
        }


#: The kinds of :class:`Regression`, in the order they are listed.
REGRESSION_KINDS = ("metric", "gate", "lost test", "lost case", "lost record")


@dataclass(frozen=True)
class Regression:
    """One way the new run is worse than the base: ``kind`` (one of
    :data:`REGRESSION_KINDS`), the ``test`` it concerns, ``what`` regressed (the metric, the
    gate ``marker.metric``, the case id; empty for a lost test) and ``text``, the one line
    that says it."""

    kind: str
    test: str
    what: str
    text: str

    def as_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "test": self.test, "what": self.what, "text": self.text}


@dataclass
class Comparison:
    base_name: str
    new_name: str
    base_run: dict[str, Any]
    new_run: dict[str, Any]
    differences: list[str] = field(default_factory=list)
    metrics: list[MetricDiff] = field(default_factory=list)
    tests_only_in_base: list[str] = field(default_factory=list)
    tests_only_in_new: list[str] = field(default_factory=list)
    only_in_base: dict[str, list[str]] = field(default_factory=dict)
    only_in_new: dict[str, list[str]] = field(default_factory=dict)
    paired: dict[str, int] = field(default_factory=dict)
    answer_flips: list[dict[str, Any]] = field(default_factory=list)
    influence_flips: list[dict[str, Any]] = field(default_factory=list)
    leak_flips: list[dict[str, Any]] = field(default_factory=list)
    agreement_flips: list[dict[str, Any]] = field(default_factory=list)
    attribution_flips: list[dict[str, Any]] = field(default_factory=list)
    lost_records: list[dict[str, Any]] = field(default_factory=list)
    gate_changes: list[dict[str, Any]] = field(default_factory=list)
    # why base cases absent from the new run are not regressions ("" when they are): the new
    # run's deliberate sample ("--provenai-sample 20, seed 42"); and those cases per test
    sampled: str = ""
    sampled_out: dict[str, list[str]] = field(default_factory=dict)
    # every regression, computed once by compare_runs (see the module docstring)
    regressions: list[Regression] = field(default_factory=list)

    @property
    def metric_regressions(self) -> list[MetricDiff]:
        return [m for m in self.metrics if m.regression]

    def regression_counts(self) -> dict[str, int]:
        """How many regressions of each kind, every kind present (0 when none)."""
        return {k: sum(r.kind == k for r in self.regressions) for k in REGRESSION_KINDS}

    def as_dict(self) -> dict[str, Any]:
        return {
            "base": {"name": self.base_name, "run": self.base_run},
            "new": {"name": self.new_name, "run": self.new_run},
            "differences": self.differences,
            "metrics": [m.as_dict() for m in self.metrics],
            "tests_only_in_base": self.tests_only_in_base,
            "tests_only_in_new": self.tests_only_in_new,
            "only_in_base": self.only_in_base,
            "only_in_new": self.only_in_new,
            "paired": self.paired,
            "answer_flips": self.answer_flips,
            "influence_flips": self.influence_flips,
            "leak_flips": self.leak_flips,
            "agreement_flips": self.agreement_flips,
            "attribution_flips": self.attribution_flips,
            "lost_records": self.lost_records,
            "gate_changes": self.gate_changes,
            "sampled": self.sampled,
            "sampled_out": self.sampled_out,
            "regressions": [r.as_dict() for r in self.regressions],
        }


# -- identity ---------------------------------------------------------------------------
def _models(r: RunResults) -> list[str]:
    out = {
        f"{m.get('name')} (weights {str(m.get('weights_sha256') or '')[:12] or 'n/a'})"
        for m in r.models.values()
    }
    return sorted(out)


def _fixture_sets(r: RunResults) -> set[str]:
    return {
        str(rec.get("fixture_set"))
        for recs in r.records.values()
        for rec in recs
        if rec.get("fixture_set")
    }


def identity_differences(base: RunResults, new: RunResults) -> list[str]:
    """What makes the two runs measure different things, one line each (empty when the
    models, fixture sets and measuring options are the same)."""
    out: list[str] = []
    if base.run.get("id") and base.run.get("id") == new.run.get("id"):
        out.append(f"both files are the same run (id {base.run['id']})")
    bm, nm = _models(base), _models(new)
    if bm != nm:
        out.append(f"models differ: base {', '.join(bm) or 'none'}; new {', '.join(nm) or 'none'}")
    bs, ns = _fixture_sets(base), _fixture_sets(new)
    if bs != ns:
        parts = []
        if bs - ns:
            parts.append("only in base: " + ", ".join(sorted(bs - ns)))
        if ns - bs:
            parts.append("only in new: " + ", ".join(sorted(ns - bs)))
        out.append("fixture sets differ: " + "; ".join(parts))
    for name in COMPARED_OPTIONS:
        a, b = base.options.get(name), new.options.get(name)
        if a != b:
            out.append(f"option {name} differs: base {a!r}, new {b!r}")
    return out


# -- metrics ----------------------------------------------------------------------------
def _metrics_for(bt: TestResults, nt: TestResults) -> list[Metric]:
    """The metrics both runs summarised for this test, in the summaries' order."""
    names: list[str] = []
    if bt.fidelity is not None and nt.fidelity is not None:
        names += list(layer_metrics("fidelity"))
    if bt.retrieval is not None and nt.retrieval is not None:
        names += list(layer_metrics("retrieval"))
    if bt.influence and nt.influence and bt.influence.metrics and nt.influence.metrics:
        names += list(layer_metrics("influence"))
    if bt.provenance and nt.provenance:
        names += [n for n in nt.provenance.metrics if n in bt.provenance.metrics]
    if bt.attribution is not None and nt.attribution is not None:
        names += [n for n in nt.attribution if n in bt.attribution]
    seen: dict[str, Metric] = {}
    for n in names:
        if n in METRICS and n not in seen:
            seen[n] = METRICS[n].metric
    return list(seen.values())


def _pair_key(rec: Mapping[str, Any]) -> tuple[str, str]:
    return (str(rec.get("fixture_set") or ""), str(rec.get("case_id")))


def _align_placeholders(
    bmap: dict[tuple[str, str], dict[str, Any]], nmap: dict[tuple[str, str], dict[str, Any]]
) -> None:
    """A run's placeholder for a case without a record (``{"case_id", "missing"}``) carries
    no fixture set; pair it with the other run's record of that case id (when exactly one
    record of the other run has that id and is unpaired), so a lost record reads as lost,
    not as one case only in base and another only in new."""
    for side, other in ((nmap, bmap), (bmap, nmap)):
        for key in [k for k, r in side.items() if "missing" in r and not k[0]]:
            if key in other:
                continue
            match = [k for k in other if k[1] == key[1] and k not in side]
            if len(match) == 1:
                side[match[0]] = side.pop(key)


def _label(key: tuple[str, str]) -> str:
    return key[1]


def _diff(
    test: str,
    metric: Metric,
    pairs: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]],
    seed: int,
) -> MetricDiff:
    def out(
        base: float | None = None,
        new: float | None = None,
        ci: tuple[float, float] | None = None,
        error: str | None = None,
    ) -> MetricDiff:
        diff = None if base is None or new is None else new - base
        return MetricDiff(
            test, metric.name, metric.direction, len(pairs), base, new, diff, ci, error
        )

    if not pairs:
        return out(error="no paired cases")
    try:
        if metric.ratio is not None:
            rb = [_ratio(metric, b) for b, _ in pairs]
            rn = [_ratio(metric, n) for _, n in pairs]
            db, dn = math.fsum(d for _, d in rb), math.fsum(d for _, d in rn)
            if not db or not dn:
                return out(error="pooled ratio undefined (no denominator)")
            vb = math.fsum(x for x, _ in rb) / db
            vn = math.fsum(x for x, _ in rn) / dn
            ci = paired_ratio_bootstrap_ci(rn, rb, seed=seed)
        elif metric.counts is not None:  # one statistic of pooled counts (macro F1)
            assert metric.combine is not None
            cb = [metric.counts(b) for b, _ in pairs]
            cn = [metric.counts(n) for _, n in pairs]
            pb, pn = metric.combine(sum_counts(cb)), metric.combine(sum_counts(cn))
            if pb is None or pn is None:
                return out(error="pooled statistic undefined")
            vb, vn = pb, pn
            ci = paired_combined_bootstrap_ci(cn, cb, metric.combine, seed=seed)
        else:
            xb = [_value(metric, b) for b, _ in pairs]
            xn = [_value(metric, n) for _, n in pairs]
            vb, vn = math.fsum(xb) / len(xb), math.fsum(xn) / len(xn)
            ci = paired_bootstrap_ci(xn, xb, seed=seed)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        return out(error=f"{type(exc).__name__}: {exc}")
    return out(vb, vn, ci)


def _value(metric: Metric, record: Mapping[str, Any]) -> float:
    """A case's value as the run's aggregate counts it (undefined counts as 0)."""
    v = metric(record)
    return 0.0 if v is None else v


def _ratio(metric: Metric, record: Mapping[str, Any]) -> tuple[float, float]:
    assert metric.ratio is not None
    num, den = metric.ratio(record)
    return float(num), float(den)


# -- flips ------------------------------------------------------------------------------
def _flips(
    c: Comparison, test: str, key: tuple[str, str], b: Mapping[str, Any], n: Mapping[str, Any]
) -> None:
    case = _label(key)
    ba, na = b.get("answer"), n.get("answer")
    if isinstance(ba, Mapping) and isinstance(na, Mapping) and "correct" in ba and "correct" in na:
        if bool(ba["correct"]) != bool(na["correct"]):
            c.answer_flips.append(
                {
                    "test": test,
                    "case_id": case,
                    "base": bool(ba["correct"]),
                    "new": bool(na["correct"]),
                    "base_answer": ba.get("prediction"),
                    "new_answer": na.get("prediction"),
                    "gold": na.get("gold"),
                }
            )
    bi, ni = b.get("influence"), n.get("influence")
    if (
        isinstance(bi, Mapping)
        and isinstance(ni, Mapping)
        and bi.get("measured")
        and ni.get("measured")
    ):
        br, nr = bi.get("resources") or {}, ni.get("resources") or {}
        for rid in sorted(set(br) & set(nr), key=lambda x: (len(x), x)):
            bv, nv = br[rid].get("verdict"), nr[rid].get("verdict")
            if bv != nv:
                c.influence_flips.append(
                    {"test": test, "case_id": case, "resource": rid, "base": bv, "new": nv}
                )
    be, ne = b.get("exposure"), n.get("exposure")
    if isinstance(be, Mapping) and isinstance(ne, Mapping):
        for t in ne:
            if t not in be:
                continue
            bl = bool((be[t] or {}).get("aid_value_leak"))
            nl = bool((ne[t] or {}).get("aid_value_leak"))
            if bl != nl:
                c.leak_flips.append(
                    {
                        "test": test,
                        "case_id": case,
                        "treatment": t,
                        "base": bl,
                        "new": nl,
                        "leaked": list((ne[t] or {}).get("leaked_values") or []),
                    }
                )
    for layer in ("quotation", "derivation"):
        bq, nq = b.get(layer), n.get(layer)
        if isinstance(bq, Mapping) and isinstance(nq, Mapping):
            if bool(bq.get("agrees")) != bool(nq.get("agrees")):
                c.agreement_flips.append(
                    {
                        "test": test,
                        "case_id": case,
                        "layer": layer,
                        "base": bool(bq.get("agrees")),
                        "new": bool(nq.get("agrees")),
                    }
                )
    bat, nat = b.get("attribution"), n.get("attribution")
    if isinstance(bat, Mapping) and isinstance(nat, Mapping):
        bv = {
            a.get("id"): (a.get("verdict") or {}).get("verdict") for a in bat.get("answers") or []
        }
        for a in nat.get("answers") or []:
            nv = (a.get("verdict") or {}).get("verdict")
            if a.get("id") in bv and bv[a.get("id")] != nv:
                c.attribution_flips.append(
                    {
                        "test": test,
                        "case_id": case,
                        "answer": a.get("id"),
                        "base": bv[a.get("id")],
                        "new": nv,
                    }
                )


def _gate_changes(base: RunResults, new: RunResults) -> list[dict[str, Any]]:
    bg = {(g.spec.test, g.spec.marker, g.spec.metric): g for g in base.gates}
    out = []
    for g in new.gates:
        key = (g.spec.test, g.spec.marker, g.spec.metric)
        old = bg.get(key)
        if old is None or old.passed != g.passed:
            out.append(
                {
                    "test": g.spec.test,
                    "gate": f"{g.spec.marker}.{g.spec.metric}",
                    "base": None if old is None else old.passed,
                    "new": g.passed,
                    "line": g.line(),
                }
            )
    return out


def _sampled(base: RunResults, new: RunResults) -> str:
    """Why base cases absent from the new run were left out on purpose (one phrase): the new
    run audited a deliberate sample (``--provenai-sample``) other than the base's (another
    size, or the same size drawn with another seed). Empty when the new run did not sample,
    or sampled exactly as the base did (then the same cases were due: an absent one is
    lost)."""
    size = new.options.get("sample")
    if size is None:
        return ""
    seed = new.options.get("seed")
    if (size, seed) == (base.options.get("sample"), base.options.get("seed")):
        return ""
    return f"--provenai-sample {size}, seed {seed}"


def _regression(kind: str, test: str, what: str, text: str) -> Regression:
    return Regression(kind, test, what, " ".join(text.split()))  # one line whatever the input


def _regressions(c: Comparison, base: RunResults) -> list[Regression]:
    """Every regression of ``c`` (see the module docstring), in REGRESSION_KINDS order."""
    out: list[Regression] = []
    for m in c.metric_regressions:
        assert m.ci is not None
        out.append(
            _regression(
                "metric",
                m.test,
                m.metric,
                f"metric {m.test} {m.metric}: {number_text(m.base)} -> {number_text(m.new)} "
                f"{number_text(m.diff, True)}, "
                f"95% CI [{m.ci[0]:+.4f}, {m.ci[1]:+.4f}] on the worse side of 0",
            )
        )
    for g in c.gate_changes:
        if g["base"] is True and g["new"] is False:
            out.append(_regression("gate", g["test"], g["gate"], f"gate PASS -> {g['line']}"))
    for test in c.tests_only_in_base:
        n = len(base.records[test])
        out.append(
            _regression(
                "lost test",
                test,
                "",
                f"lost test {test}: {n} case(s) in base, the test is absent from new",
            )
        )
    for test, ids in c.only_in_base.items():
        if test in c.sampled_out:
            continue
        for case in ids:
            out.append(
                _regression(
                    "lost case", test, case, f"lost case {test} {case}: in base, absent from new"
                )
            )
    for lost in c.lost_records:
        out.append(
            _regression(
                "lost record",
                lost["test"],
                lost["case_id"],
                f"lost record {lost['test']} {lost['case_id']}: no record in new "
                f"({lost['reason']})",
            )
        )
    return out


def compare_runs(
    base: RunResults,
    new: RunResults,
    *,
    base_name: str = "base",
    new_name: str = "new",
    seed: int | None = None,
) -> Comparison:
    """Compare ``new`` against ``base`` (see the module docstring). ``seed`` defaults to the
    new run's ``--provenai-seed``."""
    if seed is None:
        raw = new.options.get("seed", DEFAULT_SEED)
        seed = raw if isinstance(raw, int) and not isinstance(raw, bool) else DEFAULT_SEED
    c = Comparison(base_name, new_name, dict(base.run), dict(new.run))
    c.differences = identity_differences(base, new)
    c.tests_only_in_base = sorted(set(base.records) - set(new.records))
    c.tests_only_in_new = sorted(set(new.records) - set(base.records))
    if c.tests_only_in_base:
        c.differences.append("tests only in base: " + ", ".join(c.tests_only_in_base))
    if c.tests_only_in_new:
        c.differences.append("tests only in new: " + ", ".join(c.tests_only_in_new))
    for test in sorted(set(base.records) & set(new.records)):
        bmap = {_pair_key(r): r for r in base.records[test]}
        nmap = {_pair_key(r): r for r in new.records[test]}
        _align_placeholders(bmap, nmap)
        only_b = sorted(set(bmap) - set(nmap))
        only_n = sorted(set(nmap) - set(bmap))
        if only_b:
            c.only_in_base[test] = [_label(k) for k in only_b]
        if only_n:
            c.only_in_new[test] = [_label(k) for k in only_n]
        pairs = []
        for key in sorted(set(bmap) & set(nmap)):
            b, n = bmap[key], nmap[key]
            if "missing" in n and "missing" not in b:
                c.lost_records.append(
                    {"test": test, "case_id": _label(key), "reason": n["missing"]}
                )
            if "missing" in b or "missing" in n:
                continue
            pairs.append((b, n))
            _flips(c, test, key, b, n)
        c.paired[test] = len(pairs)
        bt, nt = base.tests.get(test), new.tests.get(test)
        if bt is None or nt is None:
            continue
        for metric in _metrics_for(bt, nt):
            c.metrics.append(_diff(test, metric, pairs, seed))
    c.gate_changes = _gate_changes(base, new)
    c.sampled = _sampled(base, new)
    if c.sampled:
        c.sampled_out = dict(c.only_in_base)
    c.regressions = _regressions(c, base)
    return c


# -- numbers in text ---------------------------------------------------------------------
def number_text(v: float | None, signed: bool = False) -> str:
    if v is None:
        return "n/a"
    return f"{v:+.4f}" if signed else f"{v:.4f}"
