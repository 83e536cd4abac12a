"""Option and ini names, and parsing of their values into a ``Settings`` object.

Every ``--provenai-*`` option has an ini twin ``provenai_*``; the command line wins. Parsing
raises :class:`pytest_provenai.errors.ConfigError` with one line naming the option and the
fix; the plugin re-raises it as ``pytest.UsageError``. This module does not import pytest:
it works on a getter ``get(name) -> value`` that the plugin builds from ``pytest.Config``.
"""

from __future__ import annotations

import contextlib
import math
import os
import platform
import re
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_provenai import cache_layout
from pytest_provenai.audit.influence import DEFAULT_THETA_FLOOR
from pytest_provenai.audit.stats import DEFAULT_SEED
from pytest_provenai.errors import ConfigError
from pytest_provenai.golden_rules import Tolerances, check_tolerances
from pytest_provenai.sharding import ShardSpec
from pytest_provenai.subject.ablation import MODES as ABLATION_MODES
from pytest_provenai.subject.backends.base import Decoding
from pytest_provenai.subject.backends.http import DEFAULT_TIMEOUT as DEFAULT_REQUEST_TIMEOUT
from pytest_provenai.subject.backends.registry import REGISTRY
from pytest_provenai.subject.backends.served.generator import BACKEND_NAME as SERVED_BACKEND
from pytest_provenai.subject.backends.served.settings import (
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_SCORE_VIA,
    DEFAULT_TOP_LOGPROBS,
    SCORE_VIA,
    ServedOptions,
    ServedSettings,
)

# (option dest/ini name, command-line flag, help, kind) — kind drives ini registration.
BACKEND = "provenai_backend"
MODEL = "provenai_model"
PIPELINE = "provenai_pipeline"
FIXTURES = "provenai_fixtures"
SAMPLE = "provenai_sample"
SEED = "provenai_seed"
RESULTS = "provenai_results"
GOLDEN = "provenai_golden"
CACHE = "provenai_cache"
NO_CACHE = "provenai_no_cache"
DEVICE = "provenai_device"
DEVICES = "provenai_devices"
MAX_NEW_TOKENS = "provenai_max_new_tokens"
ABLATION = "provenai_ablation"
THETA_FLOOR = "provenai_theta_floor"
RETRIEVAL = "provenai_retrieval"
INDEX = "provenai_index"
K = "provenai_k"
TIMEOUT = "provenai_timeout"
REPORT = "provenai_report"
PROGRESS = "provenai_progress"
PROGRESS_EVERY = "provenai_progress_every"
SHARD = "provenai_shard"
TOLERANCE = "provenai_tolerance"

OPTIONS: tuple[tuple[str, str, str], ...] = (
    (
        BACKEND,
        "string",
        "generation backend: transformers, mlx, or module:factory "
        "(default: mlx on Apple Silicon, else transformers)",
    ),
    (
        MODEL,
        "string",
        "model: a local HF folder, a .gguf file or a hub id already in the "
        "local HF cache (default: the embedded SmolLM2-135M-Instruct)",
    ),
    (PIPELINE, "string", "audit your own RAG generator: module:callable (see README)"),
    (FIXTURES, "paths", "frozen fixture set folder(s) to audit"),
    (SAMPLE, "string", "audit a deterministic sample of N cases (default: all)"),
    (SEED, "string", "seed for --provenai-sample and bootstrap CIs (default: 42)"),
    (RESULTS, "string", "write the run's results JSON to this path"),
    (GOLDEN, "string", "folder of golden verdict snapshots (default: golden)"),
    (CACHE, "string", "generation cache folder (default: .provenai-cache)"),
    (NO_CACHE, "bool", "do not read or write the generation cache"),
    (DEVICE, "string", "device for the model: cpu, cuda:N, mps or auto (default: cpu)"),
    (DEVICES, "string", "under xdist, comma list of devices; worker gwN takes N mod len"),
    (MAX_NEW_TOKENS, "string", "greedy decoding budget in new tokens (default: 128)"),
    (
        ABLATION,
        "string",
        "leave-one-resource-out ablation: exact (fast path, same results as naive), naive "
        "(k+1 full generations) or off (influence not measured) (default: exact)",
    ),
    (
        THETA_FLOOR,
        "string",
        "floor of the per-case influence threshold theta = max(median phi, floor) (default: 0.05)",
    ),
    (
        RETRIEVAL,
        "string",
        "where a case's resources come from: distractor (the case's own paragraphs) or "
        "index (top-k from --provenai-index) (default: distractor)",
    ),
    (
        INDEX,
        "string",
        "index folder built by 'provenai index build' (for --provenai-retrieval index)",
    ),
    (K, "string", "resources retrieved per question in index mode, 1..10 (default: 10)"),
    (
        TIMEOUT,
        "string",
        "seconds a case's test may run before it fails with a timeout (default: no limit)",
    ),
    (REPORT, "string", "write the run's self-contained HTML report to this path"),
    (
        PROGRESS,
        "string",
        "progress of the audit: auto (a live line on a terminal, a plain line every "
        "--provenai-progress-every seconds otherwise), live, plain or off (default: auto; "
        "-q -q silences it)",
    ),
    (PROGRESS_EVERY, "string", "seconds between plain progress lines (default: 30)"),
    (
        SHARD,
        "string",
        "audit only shard K of N (e.g. 2/3): the cases whose key (fixture set/case id) hashes "
        "to K, every suite of a case in one shard, after --provenai-sample and -k; the "
        "results JSON is partial (gates provisional) until 'provenai merge' joins the shards",
    ),
    (
        TOLERANCE,
        "string",
        "golden comparison: widen or narrow a measured field's tolerance, KEY=ABS[+REL%] "
        "comma list (e.g. kl_sum=2e-3+2%,p_support=0.02); verdicts stay exact "
        "(default: the table in golden_rules.py)",
    ),
)

# -- the attribution layer (claim-level source verification, MCP traces) --------------------
REPAIR_ITERATIONS = "provenai_repair_iterations"
VERIFY_LM = "provenai_verify_lm"
NLI_MODEL = "provenai_nli_model"
MCP_PIPELINE = "provenai_mcp_pipeline"
VERIFY_TABLE = "provenai_verify_table"
VERIFY_THRESHOLD = "provenai_verify_threshold"
MCP_TRACES = "provenai_mcp_traces"
VERIFY_JUDGE = "provenai_verify_judge"
VERIFY_JUDGE_MODEL = "provenai_verify_judge_model"
VERIFY_JUDGE_FORMAT = "provenai_verify_judge_format"
VERIFY_JUDGE_TIMEOUT = "provenai_verify_judge_timeout"
JUDGE_FORMATS = ("instruct", "minicheck")  # pytest_provenai.verify.judge.JUDGE_FORMATS
DEFAULT_JUDGE_TIMEOUT = 120.0  # pytest_provenai.verify.judge.DEFAULT_JUDGE_TIMEOUT
OPTIONS += (
    (
        REPAIR_ITERATIONS,
        "string",
        "attribution: revise-and-reverify rounds for a blocked answer, 1..3 (default: 1)",
    ),
    (
        VERIFY_LM,
        "bool",
        "attribution: add the default model's log-likelihood of each claim given its premise "
        "as a verifier feature (needs a table derived with --lm)",
    ),
    (
        NLI_MODEL,
        "string",
        "attribution: a local NLI classifier folder (id2label naming entailment, neutral, "
        "contradiction); a contradiction at >= 0.9 blocks the claim",
    ),
    (
        MCP_PIPELINE,
        "string",
        "attribution: your agent answering through the MCP tools, module:callable called as "
        "fn(question, tools); every tool call is recorded",
    ),
    (
        VERIFY_TABLE,
        "string",
        "attribution: calibration feature table (default: the shipped HotpotQA table; "
        "'provenai verify derive' writes one)",
    ),
    (
        VERIFY_THRESHOLD,
        "string",
        "attribution: support threshold in [0, 1] (default: the one chosen on validation)",
    ),
    (
        MCP_TRACES,
        "string",
        "attribution: folder for the captured MCP trace graphs (default: "
        "<cache>/mcp-traces; none with --provenai-no-cache)",
    ),
    (
        VERIFY_JUDGE,
        "string",
        "attribution: an LLM judge decides each claim's support instead of the calibrated "
        "forest: the API root of an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1 "
        "(key: $PROVENAI_JUDGE_API_KEY, else $PROVENAI_API_KEY)",
    ),
    (
        VERIFY_JUDGE_MODEL,
        "string",
        "attribution: the model id the judge server serves (required with --provenai-verify-judge)",
    ),
    (
        VERIFY_JUDGE_FORMAT,
        "string",
        "attribution: the judge's format: instruct (a verdict among supported / contradicted "
        "/ not enough evidence) or minicheck (Document/Claim -> Yes/No with its logprob) "
        "(default: instruct)",
    ),
    (
        VERIFY_JUDGE_TIMEOUT,
        "string",
        "attribution: seconds one judge request may take before it is retried or fails "
        "(default: 120)",
    ),
)

BUILTIN_BACKENDS: tuple[str, ...] = tuple(REGISTRY)  # transformers, mlx, openai
_DEVICE_RE = re.compile(r"^(cpu|mps|auto|cuda(:\d+)?)$")
_PIPELINE_RE = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")

DEFAULT_MAX_NEW_TOKENS = Decoding().max_new_tokens
RETRIEVAL_MODES = ("distractor", "index")
DEFAULT_K = 10
PROGRESS_MODES = ("auto", "live", "plain", "off")
DEFAULT_PROGRESS_EVERY = 30.0


def flag(name: str) -> str:
    """``provenai_no_cache`` -> ``--provenai-no-cache``."""
    return "--" + name.replace("_", "-")


def default_backend() -> str:
    if sys.platform == "darwin" and platform.machine() == "arm64":
        return "mlx"
    return "transformers"


@dataclass(frozen=True)
class AttributionSettings:
    """The attribution layer's options (see the attribution block of :data:`OPTIONS`)."""

    repair_iterations: int = 1
    verify_lm: bool = False
    nli_model: Path | None = None
    mcp_pipeline: str | None = None
    table: Path | None = None  # None: the shipped table
    threshold: float | None = None  # None: chosen on validation
    traces: Path | None = None
    judge_url: str | None = None  # --provenai-verify-judge: the judge replaces the forest
    judge_model: str | None = None
    judge_format: str = "instruct"
    judge_timeout: float = DEFAULT_JUDGE_TIMEOUT

    def for_results(self) -> dict[str, Any]:
        return {
            "repair_iterations": self.repair_iterations,
            "verify_lm": self.verify_lm,
            "nli_model": str(self.nli_model) if self.nli_model else None,
            "mcp_pipeline": self.mcp_pipeline,
            "verify_table": str(self.table) if self.table else None,
            "verify_threshold": self.threshold,
            "mcp_traces": str(self.traces) if self.traces else None,
            "verify_judge": self.judge_url,
            "verify_judge_model": self.judge_model,
            "verify_judge_format": self.judge_format if self.judge_url else None,
            "verify_judge_timeout": self.judge_timeout if self.judge_url else None,
        }


@dataclass(frozen=True)
class Settings:
    backend: str
    model: str | None
    pipeline: str | None
    fixtures: tuple[Path, ...]
    sample: int | None
    seed: int
    results: Path | None
    golden: Path
    cache: Path | None
    device: str
    devices: tuple[str, ...]
    max_new_tokens: int
    ablation: str = "exact"
    theta_floor: float = DEFAULT_THETA_FLOOR
    retrieval: str = "distractor"
    index: Path | None = None
    k: int = DEFAULT_K
    timeout: float | None = None
    report: Path | None = None
    progress: str = "auto"
    progress_every: float = DEFAULT_PROGRESS_EVERY
    served: ServedSettings | None = None  # --provenai-backend openai
    attribution: AttributionSettings = field(default_factory=AttributionSettings)
    shard: ShardSpec | None = None  # --provenai-shard K/N; never in for_results (a shard's
    # results carry it in their "shard" section, and a merged run has none)
    tolerances: Tolerances = ()  # --provenai-tolerance overrides of golden_rules.TOLERANCES
    raw: dict[str, Any] = field(default_factory=dict)

    def for_results(self) -> dict[str, Any]:
        """The options as they go into the results JSON (paths as strings)."""
        return {
            "backend": self.backend,
            "model": self.model,
            "pipeline": self.pipeline,
            "fixtures": [str(p) for p in self.fixtures],
            "sample": self.sample,
            "seed": self.seed,
            "golden": str(self.golden),
            "cache": str(self.cache) if self.cache else None,
            "device": self.device,
            "devices": list(self.devices),
            "max_new_tokens": self.max_new_tokens,
            "ablation": self.ablation,
            "theta_floor": self.theta_floor,
            "retrieval": self.retrieval,
            "index": str(self.index) if self.index else None,
            "k": self.k,
            "timeout": self.timeout,
            "report": str(self.report) if self.report else None,
            "tolerances": {k: str(t) for k, t in self.tolerances},
            **({"served": self.served.for_results()} if self.served else {}),
            "attribution": self.attribution.for_results(),
        }


def _int(name: str, value: Any, *, minimum: int) -> int:
    try:
        number = int(str(value).strip())
    except ValueError:
        raise ConfigError(
            f"{flag(name)}: expected an integer >= {minimum}, got {value!r}"
        ) from None
    if number < minimum:
        raise ConfigError(f"{flag(name)}: expected an integer >= {minimum}, got {number}")
    return number


def _choice(name: str, value: Any, choices: tuple[str, ...], default: str) -> str:
    text = default if value in (None, "") else str(value).strip()
    if text not in choices:
        raise ConfigError(f"{flag(name)}: expected one of {', '.join(choices)}, got {text!r}")
    return text


def _fraction(name: str, value: Any, default: float) -> float:
    if value in (None, ""):
        return default
    try:
        number = float(str(value).strip())
    except ValueError:
        raise ConfigError(f"{flag(name)}: expected a number in [0, 1], got {value!r}") from None
    if not 0.0 <= number <= 1.0:
        raise ConfigError(f"{flag(name)}: expected a number in [0, 1], got {number}")
    return number


def _seconds(name: str, value: Any, default: float | None) -> float | None:
    if value in (None, ""):
        return default
    try:
        number = float(str(value).strip())
    except ValueError:
        number = math.nan
    if not (math.isfinite(number) and number > 0):
        raise ConfigError(f"{flag(name)}: expected a positive number of seconds, got {value!r}")
    return number


def _device(name: str, value: str) -> str:
    value = value.strip()
    if not _DEVICE_RE.match(value):
        raise ConfigError(f"{flag(name)}: unknown device {value!r}; use cpu, cuda:N, mps or auto")
    return value


def _callable_spec(name: str, value: Any, example: str) -> str | None:
    """A ``module:callable`` option value (None when not given)."""
    if not value:
        return None
    spec = str(value).strip()
    if not _PIPELINE_RE.match(spec):
        raise ConfigError(f"{flag(name)}: expected module:callable (e.g. {example}), got {spec!r}")
    return spec


def parse_settings(get: Callable[[str], Any], rootdir: Path) -> Settings:
    """Build ``Settings`` from ``get(name)`` (command line first, then ini, else None).

    Relative ini/option paths are resolved against ``rootdir``.
    """

    def path(value: Any) -> Path:
        p = Path(str(value)).expanduser()
        return p if p.is_absolute() else rootdir / p

    backend = str(get(BACKEND) or default_backend()).strip()
    pipeline = _callable_spec(PIPELINE, get(PIPELINE), "my_rag.audit:answer")
    if not pipeline and backend not in BUILTIN_BACKENDS and not _PIPELINE_RE.match(backend):
        raise ConfigError(
            f"{flag(BACKEND)}: unknown backend {backend!r}; use one of "
            f"{', '.join(BUILTIN_BACKENDS)} or module:factory"
        )

    raw_fixtures = get(FIXTURES) or ()
    if isinstance(raw_fixtures, (str, Path)):
        raw_fixtures = [raw_fixtures]
    fixtures = tuple(path(p) for p in raw_fixtures)

    sample_raw = get(SAMPLE)
    sample = None if sample_raw in (None, "") else _int(SAMPLE, sample_raw, minimum=1)
    seed_raw = get(SEED)
    seed = DEFAULT_SEED if seed_raw in (None, "") else _int(SEED, seed_raw, minimum=0)
    mnt_raw = get(MAX_NEW_TOKENS)
    max_new_tokens = (
        DEFAULT_MAX_NEW_TOKENS
        if mnt_raw in (None, "")
        else _int(MAX_NEW_TOKENS, mnt_raw, minimum=1)
    )

    results_raw = get(RESULTS)
    results = path(results_raw) if results_raw else None
    if results is not None:
        check_writable_file(RESULTS, results)
    golden = path(get(GOLDEN) or "golden")
    cache = None if get(NO_CACHE) else path(get(CACHE) or ".provenai-cache")

    device = _device(DEVICE, str(get(DEVICE) or "cpu"))
    devices_raw = get(DEVICES)
    devices: tuple[str, ...] = ()
    if devices_raw:
        parts = [p for p in str(devices_raw).split(",") if p.strip()]
        if not parts:
            raise ConfigError(f"{flag(DEVICES)}: expected a comma list like cpu,cuda:0")
        devices = tuple(_device(DEVICES, p) for p in parts)

    ablation = _choice(ABLATION, get(ABLATION), ABLATION_MODES, "exact")
    theta_floor = _fraction(THETA_FLOOR, get(THETA_FLOOR), DEFAULT_THETA_FLOOR)
    retrieval = _choice(RETRIEVAL, get(RETRIEVAL), RETRIEVAL_MODES, "distractor")
    index_raw = get(INDEX)
    index = path(index_raw) if index_raw else None
    if retrieval == "index" and index is None:
        raise ConfigError(
            f"{flag(RETRIEVAL)} index needs {flag(INDEX)}=DIR, a folder built by "
            "'provenai index build'"
        )
    k_raw = get(K)
    k = DEFAULT_K if k_raw in (None, "") else _int(K, k_raw, minimum=1)
    if k > 10:
        raise ConfigError(f"{flag(K)}: the prompt shows at most 10 resources, got {k}")

    timeout = _seconds(TIMEOUT, get(TIMEOUT), None)
    report_raw = get(REPORT)
    report = path(report_raw) if report_raw else None
    if report is not None:
        check_writable_file(REPORT, report)
        if results is not None and report == results:
            raise ConfigError(
                f"{flag(REPORT)}: {report} is also the results JSON; give another path"
            )
    progress = _choice(PROGRESS, get(PROGRESS), PROGRESS_MODES, "auto")
    shard_raw = get(SHARD)
    shard = None if shard_raw in (None, "") else ShardSpec.parse(shard_raw, flag(SHARD))
    progress_every = _seconds(PROGRESS_EVERY, get(PROGRESS_EVERY), DEFAULT_PROGRESS_EVERY)
    try:
        tolerances = check_tolerances(str(get(TOLERANCE) or ""))
    except ValueError as exc:
        raise ConfigError(f"{flag(TOLERANCE)}: {exc}") from None

    return Settings(
        backend="pipeline" if pipeline else backend,
        model=str(get(MODEL)) if get(MODEL) else None,
        pipeline=pipeline or None,
        fixtures=fixtures,
        sample=sample,
        seed=seed,
        results=results,
        golden=golden,
        cache=cache,
        device=device,
        devices=devices,
        max_new_tokens=max_new_tokens,
        ablation=ablation,
        theta_floor=theta_floor,
        tolerances=tolerances,
        retrieval=retrieval,
        index=index,
        k=k,
        timeout=timeout,
        report=report,
        progress=progress,
        progress_every=progress_every if progress_every is not None else DEFAULT_PROGRESS_EVERY,
        served=parse_served(get, backend),
        attribution=parse_attribution(get, path, cache),
        shard=shard,
    )


def parse_attribution(
    get: Callable[[str], Any], path: Callable[[Any], Path], cache: Path | None
) -> AttributionSettings:
    """The attribution options; cheap checks only (folders exist, values in range)."""
    from pytest_provenai.attribution.repair import MAX_ITERATIONS

    raw = get(REPAIR_ITERATIONS)
    iterations = 1 if raw in (None, "") else _int(REPAIR_ITERATIONS, raw, minimum=1)
    if iterations > MAX_ITERATIONS:
        raise ConfigError(
            f"{flag(REPAIR_ITERATIONS)}: at most {MAX_ITERATIONS} repair rounds, got {iterations}"
        )
    nli = path(get(NLI_MODEL)) if get(NLI_MODEL) else None
    if nli is not None and not (nli / "config.json").is_file():
        raise ConfigError(
            f"{flag(NLI_MODEL)}: {nli} is not a model folder (no config.json); pass a local "
            "sequence-classification folder"
        )
    agent = _callable_spec(MCP_PIPELINE, get(MCP_PIPELINE), "my_agent:answer")
    table = path(get(VERIFY_TABLE)) if get(VERIFY_TABLE) else None
    if table is not None and not table.is_file():
        raise ConfigError(
            f"{flag(VERIFY_TABLE)}: {table} does not exist; write one with 'provenai verify derive'"
        )
    raw_threshold = get(VERIFY_THRESHOLD)
    threshold = (
        None if raw_threshold in (None, "") else _fraction(VERIFY_THRESHOLD, raw_threshold, 0.0)
    )
    traces_raw = get(MCP_TRACES)
    traces = (
        path(traces_raw) if traces_raw else (cache / cache_layout.MCP_TRACES if cache else None)
    )
    judge_url, judge_model, judge_format, judge_timeout = parse_judge(get)
    return AttributionSettings(
        repair_iterations=iterations,
        verify_lm=bool(get(VERIFY_LM)),
        nli_model=nli,
        mcp_pipeline=agent or None,
        table=table,
        threshold=threshold,
        traces=traces,
        judge_url=judge_url,
        judge_model=judge_model,
        judge_format=judge_format,
        judge_timeout=judge_timeout,
    )


def parse_judge(get: Callable[[str], Any]) -> tuple[str | None, str | None, str, float]:
    """(URL, model id, format, timeout) of the LLM judge; ConfigError for a bad value, a
    judge option without ``--provenai-verify-judge``, or a forest option beside it (the judge
    replaces the forest, so its table, threshold and LM feature would be silently unused)."""
    from pytest_provenai.errors import BackendError
    from pytest_provenai.subject.backends.http import parse_base_url

    raw = get(VERIFY_JUDGE)
    if raw in (None, ""):
        for name in (VERIFY_JUDGE_MODEL, VERIFY_JUDGE_FORMAT, VERIFY_JUDGE_TIMEOUT):
            if get(name) not in (None, ""):
                raise ConfigError(
                    f"{flag(name)} is only used with {flag(VERIFY_JUDGE)} URL; remove it or "
                    "give the judge server"
                )
        return None, None, "instruct", DEFAULT_JUDGE_TIMEOUT
    try:
        url = parse_base_url(str(raw), flag(VERIFY_JUDGE))
    except BackendError as exc:
        raise ConfigError(str(exc)) from None
    model = str(get(VERIFY_JUDGE_MODEL) or "").strip()
    if not model:
        raise ConfigError(
            f"{flag(VERIFY_JUDGE)} needs {flag(VERIFY_JUDGE_MODEL)} ID, the model id the "
            "server serves (it is part of the records' verifier identity and cache key)"
        )
    fmt = _choice(VERIFY_JUDGE_FORMAT, get(VERIFY_JUDGE_FORMAT), JUDGE_FORMATS, "instruct")
    timeout = _seconds(VERIFY_JUDGE_TIMEOUT, get(VERIFY_JUDGE_TIMEOUT), DEFAULT_JUDGE_TIMEOUT)
    for name in (VERIFY_LM, VERIFY_TABLE, VERIFY_THRESHOLD):
        if get(name) not in (None, "", False):
            raise ConfigError(
                f"{flag(name)} tunes the calibrated forest, which {flag(VERIFY_JUDGE)} "
                "replaces; pass one of them"
            )
    return url, model, fmt, timeout or DEFAULT_JUDGE_TIMEOUT


def worker_device(settings: Settings, worker_id: str | None) -> str:
    """The device this process uses: gwN takes devices[N mod len] when --provenai-devices
    is set; otherwise --provenai-device."""
    if settings.devices and worker_id and worker_id.startswith("gw"):
        try:
            index = int(worker_id[2:])
        except ValueError:
            index = 0
        return settings.devices[index % len(settings.devices)]
    if settings.devices and not worker_id:
        return settings.devices[0]
    return settings.device


def sample_indices(n: int, sample: int | None, seed: int) -> list[int]:
    """Deterministic sample of ``sample`` indices out of ``n``, kept in original order."""
    import random

    if sample is None or sample >= n:
        return list(range(n))
    return sorted(random.Random(seed).sample(range(n), sample))


def check_writable_file(name: str, target: Path) -> None:
    """Fail now, not after the whole run, when ``target`` cannot be written: it is a folder,
    a parent on its path is a file, or the place is not writable."""
    if target.is_dir():
        raise ConfigError(f"{flag(name)}: {target} is a folder; give a file path")
    parent = target.parent
    while not parent.exists():
        if parent.is_symlink() or parent == parent.parent:
            break
        parent = parent.parent
    if parent.exists() and not parent.is_dir():
        raise ConfigError(f"{flag(name)}: {parent} is a file, so {target} cannot be created")
    if target.exists() and not os.access(target, os.W_OK):
        raise ConfigError(f"{flag(name)}: {target} is not writable; give a writable path")
    if parent.is_dir() and not os.access(parent, os.W_OK | os.X_OK):
        raise ConfigError(
            f"{flag(name)}: cannot write in {parent} (permission denied); give a writable path"
        )
    if parent.is_dir():  # access() says yes for root or /proc: create and remove a real file
        try:
            fd, probe = tempfile.mkstemp(prefix=".provenai-probe.", suffix=".tmp", dir=parent)
        except OSError as exc:
            raise ConfigError(
                f"{flag(name)}: cannot write in {parent} ({exc.strerror or exc}); give a "
                "writable path"
            ) from None
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(probe)


# -- served models (--provenai-backend openai) -------------------------------------------------
BASE_URL = "provenai_base_url"
BASE_URLS = "provenai_base_urls"
TOKENIZER = "provenai_tokenizer"
TOP_LOGPROBS = "provenai_top_logprobs"
MAX_CONCURRENCY = "provenai_max_concurrency"
REQUEST_TIMEOUT = "provenai_request_timeout"
SERVED_SCORE = "provenai_served_score"

OPTIONS += (
    (BASE_URL, "string", "openai backend: the server's API root, e.g. http://127.0.0.1:8000/v1"),
    (
        BASE_URLS,
        "string",
        "openai backend under xdist: comma list of API roots; worker gwN takes N mod len",
    ),
    (
        TOKENIZER,
        "string",
        "openai backend: local folder, .gguf or cached hub id of the served model, whose chat "
        "template renders the prompt ('default': the embedded SmolLM2)",
    ),
    (
        TOP_LOGPROBS,
        "string",
        "openai backend: top-k alternatives asked for per position "
        f"(default: {DEFAULT_TOP_LOGPROBS})",
    ),
    (
        MAX_CONCURRENCY,
        "string",
        f"openai backend: most requests in flight per worker (default: {DEFAULT_MAX_CONCURRENCY})",
    ),
    (
        REQUEST_TIMEOUT,
        "string",
        "openai backend: seconds one HTTP request may take before it is retried or fails "
        f"(default: {DEFAULT_REQUEST_TIMEOUT:g})",
    ),
    (
        SERVED_SCORE,
        "string",
        "openai backend: how outputs are scored for KL: steps (generation-time logprobs, "
        "re-prompted where the output leaves the greedy path; fast on llama.cpp servers), echo "
        "(one request with echoed prompt logprobs; fast on vLLM) or auto (steps where the "
        f"server allows it) (default: {DEFAULT_SCORE_VIA})",
    ),
)


def parse_served(get: Callable[[str], Any], backend: str) -> ServedSettings | None:
    """The served-model options; ConfigError for a bad URL or one given without the backend."""
    from pytest_provenai.errors import BackendError
    from pytest_provenai.subject.backends.http import parse_base_url

    given = [
        n
        for n in (
            BASE_URL,
            BASE_URLS,
            TOKENIZER,
            TOP_LOGPROBS,
            MAX_CONCURRENCY,
            REQUEST_TIMEOUT,
            SERVED_SCORE,
        )
        if get(n)
    ]
    if backend != SERVED_BACKEND:
        if given:
            raise ConfigError(
                f"{flag(given[0])} is only used with --provenai-backend openai; remove it or "
                "pass --provenai-backend openai"
            )
        return None
    one, many = get(BASE_URL), get(BASE_URLS)
    if one and many:
        raise ConfigError(f"pass {flag(BASE_URL)} or {flag(BASE_URLS)}, not both")
    if not one and not many:
        raise ConfigError(
            f"--provenai-backend openai needs {flag(BASE_URL)} URL (the server's API root, "
            "e.g. http://127.0.0.1:8000/v1) or {flag(BASE_URLS)} URL1,URL2"
        )
    name = BASE_URL if one else BASE_URLS
    parts = [p.strip() for p in str(one or many).split(",") if p.strip()]
    if not parts or (one and len(parts) != 1):
        raise ConfigError(f"{flag(name)}: expected {'one URL' if one else 'a comma list of URLs'}")
    try:
        urls = tuple(parse_base_url(p, flag(name)) for p in parts)
    except BackendError as exc:
        raise ConfigError(str(exc)) from None
    top_raw, conc_raw = get(TOP_LOGPROBS), get(MAX_CONCURRENCY)
    score_via = str(get(SERVED_SCORE) or DEFAULT_SCORE_VIA).strip()
    if score_via not in SCORE_VIA:
        raise ConfigError(
            f"{flag(SERVED_SCORE)}: expected one of {', '.join(SCORE_VIA)}, got {score_via!r}"
        )
    server = ServedOptions(
        base_url=urls[0],
        model=None,  # filled per server by ServedSettings.options
        tokenizer=str(get(TOKENIZER)).strip() if get(TOKENIZER) else None,
        top_logprobs=(
            DEFAULT_TOP_LOGPROBS
            if top_raw in (None, "")
            else _int(TOP_LOGPROBS, top_raw, minimum=1)
        ),
        max_concurrency=(
            DEFAULT_MAX_CONCURRENCY
            if conc_raw in (None, "")
            else _int(MAX_CONCURRENCY, conc_raw, minimum=1)
        ),
        timeout=_seconds(REQUEST_TIMEOUT, get(REQUEST_TIMEOUT), DEFAULT_REQUEST_TIMEOUT)
        or DEFAULT_REQUEST_TIMEOUT,
        score_via=score_via,
    )
    return ServedSettings(base_urls=urls, server=server)
