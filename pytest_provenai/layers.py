"""The layer runners: the audit layers that prompt the subject's model themselves.

* :func:`measure_influence` — the influence layer of a case's trace: leave-one-resource-out
  ablations of a :class:`~pytest_provenai.subject.subject.Subject` under
  ``--provenai-ablation`` (``subject/ablation.py``), scored by ``audit/influence.py``.
* :func:`attribution_runtime` — the attribution runtime (``verify/runtime.py``): one
  verifier per process, and for MCP sessions the subject.

What a layer cost goes out with its case's reports (the session's outbox), never into a
record.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from pytest_provenai import cache_layout
from pytest_provenai.frozen.model import Case
from pytest_provenai.options import Settings
from pytest_provenai.progress import LiveStatus
from pytest_provenai.subject.subject import Subject
from pytest_provenai.subject.trace import Trace

if TYPE_CHECKING:  # the runtime imports the attribution layer; built on first use only
    from pytest_provenai.verify.runtime import AttributionRuntime

__all__ = ["attribution_runtime", "measure_influence"]


def measure_influence(
    subject: Callable[[], Subject],
    case: Any,
    trace: Trace,
    settings: Settings,
    live: LiveStatus | None,
    note_costs: Callable[[dict[str, Any]], None],
) -> dict[str, Any]:
    """The influence layer of ``trace``'s record; what its ablations cost goes to
    ``note_costs``. Under ``--provenai-ablation off`` the subject is not even built."""
    from pytest_provenai.audit.influence import influence_layer, not_measured
    from pytest_provenai.subject.ablation import KLCache, run_ablation

    mode = settings.ablation
    if mode == "off":
        return not_measured("--provenai-ablation off: influence was not measured")
    kl_cache = KLCache(settings.cache / cache_layout.INFLUENCE) if settings.cache else None
    model = subject()
    if live is not None:
        live.influence(len(trace.resources), mode, model.runner())
    run = run_ablation(model, case, trace, mode=mode, kl_cache=kl_cache)
    note_costs(run.costs())
    return influence_layer(
        [r.id for r in trace.resources],
        trace.answer,
        trace.cited_ids,
        run.outputs,
        signals=run.signals,
        theta_floor=settings.theta_floor,
    )


def attribution_runtime(
    settings: Settings,
    subject: Callable[[], Subject],
    hotpot_cases: Callable[[], Sequence[Case]],
    note_costs: Callable[[str, dict[str, Any]], None],
    note_trace: Callable[[str, Trace], None],
) -> AttributionRuntime:
    """The attribution runtime over the run's settings. The tools serve ``hotpot_cases()``,
    every HotpotQA case of the run's sets: ``--provenai-sample`` chooses what is tested, not
    what the tools serve (a sampled record is the full run's record of that case)."""
    from pytest_provenai.verify.cache import RecordCache
    from pytest_provenai.verify.runtime import AttributionRuntime

    index_mode = settings.retrieval == "index"
    return AttributionRuntime(
        settings.attribution,
        subject,
        hotpot_cases,
        note_costs,
        note_trace,
        backend=settings.backend,
        model=settings.model,
        retrieval_k=settings.k if index_mode else None,
        index=settings.index if index_mode else None,
        cache=RecordCache(settings.cache / cache_layout.ATTRIBUTION) if settings.cache else None,
    )
