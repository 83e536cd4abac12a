"""The Subject: the system under audit, answering a case with a Trace.

Two kinds:

* :class:`ModelSubject` — the reference ProvenAI generation step: prompt with the resources
  the harness chose, greedy generation through a :class:`Generator`, parsing, and a
  content-addressed generation cache.
* :class:`PipelineSubject` — a user's own RAG generator (``--provenai-pipeline
  module:callable``). It receives the question and the harness's resources, so ablation and
  exposure stay under the harness's control. No logits: surface signals only.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from pytest_provenai.errors import BackendError
from pytest_provenai.frozen.model import Case
from pytest_provenai.subject.backends.base import (
    FAST_PATH_VERSION,
    BatchGenerating,
    Capabilities,
    Decoding,
    Generation,
    Generator,
    Identity,
    KVAblation,
    Tokenizing,
)
from pytest_provenai.subject.backends.lazy import LazyGenerator
from pytest_provenai.subject.backends.served.settings import ServedOptions
from pytest_provenai.subject.cache import PRODUCER_GENERATE, GenerationCache
from pytest_provenai.subject.near_ties import NearTie, near_ties
from pytest_provenai.subject.parse import parse_output
from pytest_provenai.subject.prompt import PROMPT_VERSION, build_prompt, make_resources
from pytest_provenai.subject.trace import Resource, Trace

TRUSTED_PRODUCERS = frozenset({PRODUCER_GENERATE, FAST_PATH_VERSION})
"""Cached generations a subject trusts: made by ``generate``, or by the current version of
the fast paths. Anything else (an older fast path, an entry that names no producer) is
recomputed."""


class ModelRunner(Protocol):
    """The seam between a model-backed subject and the layers that run its model on prompts
    of their own (leave-one-out ablation, exposure treatments): exactly what they use.

    ``generate`` and ``generate_many`` go through the generation cache;
    ``cached_generation`` / ``store_generation`` read and fill it under the same keys for
    results computed another way (the ablation fast path, which names itself as the
    ``producer``); ``model_calls`` counts real model work (cache misses, scoring passes, fast
    path calls)."""

    model_calls: int

    @property
    def identity(self) -> Identity: ...

    @property
    def capabilities(self) -> Capabilities: ...

    def render_chat(self, messages: list[dict[str, str]]) -> str: ...

    def generate(self, prompt: str) -> tuple[Generation, bool]: ...

    def generate_many(self, prompts: list[str]) -> list[tuple[Generation, bool]]: ...

    def cached_generation(self, prompt: str) -> Generation | None: ...

    def store_generation(self, prompt: str, generation: Generation, *, producer: str) -> None: ...

    def score(self, prompt: str, continuation_ids: list[int]) -> Any: ...

    def kv_ablation(self) -> KVAblation | None: ...

    def answer_positions(self, token_ids: list[int]) -> int: ...

    def count_tokens(self, prompt: str) -> int: ...

    def near_ties(self, generation: Generation) -> list[NearTie] | None: ...


class Subject(Protocol):
    """The system under audit: answers a case with a :class:`Trace`. ``runner()`` is its
    model side for ablation and exposure, or None when the harness cannot prompt its model
    itself (a ``--provenai-pipeline``). ``model_calls`` counts real model work in this
    process, ``cache_hits`` generations read back from the cache instead, ``model_loads``
    how many times model weights were loaded."""

    @property
    def identity(self) -> Identity: ...

    @property
    def capabilities(self) -> Capabilities: ...

    @property
    def model_calls(self) -> int: ...

    @property
    def model_loads(self) -> int: ...

    @property
    def cache_hits(self) -> int: ...

    def answer(self, case: Case, resources: Sequence[Resource] | None = None) -> Trace: ...

    def runner(self) -> ModelRunner | None: ...


class ModelSubject:
    """Prompt → generator (through the cache) → parse. ``model_calls`` counts real
    generations (cache misses), scoring passes and fast path calls. It is its own
    :class:`ModelRunner`."""

    def __init__(self, generator: Generator, cache: GenerationCache | None = None) -> None:
        self.generator = generator
        self.cache = cache
        self.model_calls = 0
        self.cache_hits = 0

    @property
    def model_loads(self) -> int:
        """Weight loads in this process: a lazily loaded built-in backend counts its loads
        (0 in a fully warm run); any other generator was built, so counts 1."""
        if isinstance(self.generator, LazyGenerator):
            return self.generator.loads
        return 1

    @property
    def identity(self) -> Identity:
        return self.generator.identity

    @property
    def capabilities(self) -> Capabilities:
        return self.generator.capabilities

    def runner(self) -> ModelRunner:
        return self

    def render_chat(self, messages: list[dict[str, str]]) -> str:
        return self.generator.render_chat(messages)

    def _key(self, prompt: str) -> str | None:
        if self.cache is None:
            return None
        identity = self.generator.identity
        return self.cache.key(
            identity.cache_key(), prompt, identity.decoding.as_dict(), PROMPT_VERSION
        )

    def cached_generation(self, prompt: str) -> Generation | None:
        key = self._key(prompt)
        if key is None or self.cache is None:
            return None
        hit = self.cache.get(key, producers=TRUSTED_PRODUCERS)
        if hit is not None:
            self.cache_hits += 1
        return hit

    def store_generation(self, prompt: str, generation: Generation, *, producer: str) -> None:
        key = self._key(prompt)
        if key is not None and self.cache is not None:
            meta = {"model": self.generator.identity.model_key(), "producer": producer}
            self.cache.put(key, generation, meta)

    def generate(self, prompt: str) -> tuple[Generation, bool]:
        """Greedy generation for a rendered prompt; returns (generation, from_cache)."""
        hit = self.cached_generation(prompt)
        if hit is not None:
            return hit, True
        generation = self.generator.generate(prompt)
        self.model_calls += 1
        self.store_generation(prompt, generation, producer=PRODUCER_GENERATE)
        return generation, False

    def generate_many(self, prompts: list[str]) -> list[tuple[Generation, bool]]:
        """:meth:`generate` for several prompts: cached ones are read back; the rest go to the
        backend's shared-prefix batch (``generate_many``, one model call) where it has one,
        else one by one. Returns (generation, from_cache) per prompt, in order."""
        out: dict[str, tuple[Generation, bool]] = {}
        for p in prompts:
            if p not in out:
                hit = self.cached_generation(p)
                if hit is not None:
                    out[p] = (hit, True)
        missing = [p for p in dict.fromkeys(prompts) if p not in out]
        if len(missing) > 1 and isinstance(self.generator, BatchGenerating):
            batch = self.generator.generate_many(missing)
            self.model_calls += 1
            for p, generation in zip(missing, batch.generations, strict=True):
                self.store_generation(p, generation, producer=FAST_PATH_VERSION)
                out[p] = (generation, False)
        for p in missing:
            if p not in out:
                out[p] = self.generate(p)
        return [out[p] for p in prompts]

    def score(self, prompt: str, continuation_ids: list[int]) -> Any:
        self.model_calls += 1
        return self.generator.score(prompt, continuation_ids)

    def kv_ablation(self) -> KVAblation | None:
        return self.generator if isinstance(self.generator, KVAblation) else None

    def answer_positions(self, token_ids: list[int]) -> int:
        """How many leading output tokens make up the answer: those up to and including the
        one that ends the output's first non-empty line (the ``Answer:`` line the prompt asks
        for); 0 (= all positions) when the generator has no tokenizer or the output is one
        line."""
        if not isinstance(self.generator, Tokenizing):
            return 0
        for n in range(1, len(token_ids) + 1):
            if "\n" in self.generator.decode(token_ids[:n]).lstrip():
                return n
        return 0

    def count_tokens(self, prompt: str) -> int:
        """Tokens the model reads for ``prompt`` (0 when the generator has no tokenizer)."""
        return len(self.generator.encode(prompt)) if isinstance(self.generator, Tokenizing) else 0

    def near_ties(self, generation: Generation) -> list[NearTie] | None:
        """``generation``'s marked near ties (None: no margins, or no tokenizer to place
        them in the text)."""
        decode = self.generator.decode if isinstance(self.generator, Tokenizing) else None
        return near_ties(generation, decode)

    def answer(self, case: Case, resources: Sequence[Resource] | None = None) -> Trace:
        res = list(resources) if resources is not None else make_resources(case.sources)
        view = build_prompt(case.question, res, self.generator.render_chat)
        start = time.perf_counter()
        generation, cached = self.generate(view.prompt)
        seconds = time.perf_counter() - start
        parsed = parse_output(generation.text, len(res), valid_ids=[r.id for r in res])
        return Trace(
            case_id=case.id,
            resources=res,
            raw_output=generation.text,
            answer=parsed.answer,
            cited_ids=list(parsed.cited_ids),
            invalid_citations=list(parsed.invalid_citations),
            identity=self.generator.identity,
            view=view,
            generation=generation,
            near_ties=self.near_ties(generation),
            repairs=list(parsed.repairs),
            cached=cached,
            seconds=seconds,
        )


PipelineFn = Callable[[str, list[Resource]], Any]

PIPELINE_CONTRACT = (
    "a pipeline is called as fn(question: str, resources: list[Resource]) and returns either "
    "raw text (parsed like model output) or a mapping {'answer': str, 'citations': [resource "
    "ids such as 'R0']}"
)


def import_callable(spec: str, what: str) -> Callable[..., Any]:
    """Import ``module:attr.path``; a clear BackendError if it fails."""
    module_name, _, attr = spec.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
    except Exception as exc:
        raise BackendError(
            f"{what} {spec!r}: cannot import module {module_name!r} ({type(exc).__name__}: "
            f"{exc}); check the module is on sys.path (e.g. run pytest from its folder)"
        ) from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise BackendError(
                f"{what} {spec!r}: module {module_name!r} has no attribute {attr!r}"
            ) from None
    if not callable(obj):
        raise BackendError(f"{what} {spec!r}: {attr!r} is not callable")
    return obj  # type: ignore[no-any-return]


def read_reply(out: object) -> tuple[str, list[str] | None] | None:
    """A user pipeline's or agent's reply: ``(text, None)`` for a plain string (its
    citations, if any, are in the text), ``(answer, citations)`` for ``{"answer": str,
    "citations": [...]}`` (citations absent: none); None when it is neither (citations not a
    list or tuple included). Shared by :class:`PipelineSubject` and the MCP agent driver."""
    if isinstance(out, str):
        return out, None
    if isinstance(out, Mapping) and isinstance(out.get("answer"), str):
        citations = out.get("citations", [])
        if isinstance(citations, (list, tuple)):
            return str(out["answer"]), [str(c) for c in citations]
    return None


class PipelineSubject:
    """Audits a user's own RAG generator; identity says ``pipeline``; no logits."""

    def __init__(self, spec: str, fn: PipelineFn | None = None) -> None:
        self.spec = spec
        self.fn: PipelineFn = fn or import_callable(spec, "--provenai-pipeline")
        self.model_calls = 0
        self.cache_hits = 0  # a pipeline is never cached
        self._identity = Identity(
            backend="pipeline",
            name=f"pipeline-{spec}",
            weights_sha256="",
            dtype="none",
            decoding=Decoding(max_new_tokens=0, strategy="external"),
        )

    @property
    def identity(self) -> Identity:
        return self._identity

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(token_ids=False, logprobs=False, score=False)

    @property
    def model_loads(self) -> int:
        """A pipeline's model is its own business: the harness loads none."""
        return 0

    def runner(self) -> None:
        """A pipeline chooses its own prompt: the harness cannot prompt its model."""
        return None

    def answer(self, case: Case, resources: Sequence[Resource] | None = None) -> Trace:
        res = list(resources) if resources is not None else make_resources(case.sources)
        start = time.perf_counter()
        out = self.fn(case.question, list(res))
        self.model_calls += 1
        seconds = time.perf_counter() - start
        ids = {r.id for r in res}
        reply = read_reply(out)
        if reply is None:
            raise BackendError(
                f"--provenai-pipeline {self.spec!r} returned {type(out).__name__}: "
                f"{PIPELINE_CONTRACT}"
            )
        text, citations = reply
        if citations is None:  # a plain string: citations are tags in the text
            parsed = parse_output(text, len(res), valid_ids=ids)
            raw, answer = text, parsed.answer
            cited, invalid, repairs = (
                list(parsed.cited_ids),
                list(parsed.invalid_citations),
                list(parsed.repairs),
            )
        else:
            raw, answer, repairs = text, text, []
            cited, invalid = [], []
            for c in citations:
                if c in ids and c not in cited:
                    cited.append(c)
                elif c not in ids:
                    invalid.append(c)
        return Trace(
            case_id=case.id,
            resources=res,
            raw_output=raw,
            answer=answer,
            cited_ids=cited,
            invalid_citations=invalid,
            identity=self._identity,
            repairs=repairs,
            seconds=seconds,
        )


def make_subject(
    *,
    backend: str,
    model: str | None,
    pipeline: str | None,
    device: str,
    max_new_tokens: int,
    cache_root: Any = None,
    served: ServedOptions | None = None,
) -> Subject:
    """Build the subject the options ask for.

    ``backend`` is a built-in name (transformers, mlx), ``pipeline`` (with ``pipeline`` set),
    or ``module:factory`` — a callable ``factory(model=, device=, decoding=) -> Generator``,
    the extension point for other inference stacks.
    """
    if pipeline:
        return PipelineSubject(pipeline)
    decoding = Decoding(max_new_tokens=max_new_tokens)
    cache = GenerationCache(cache_root) if cache_root is not None else None
    if ":" in backend:
        factory = import_callable(backend, "--provenai-backend")
        generator = factory(model=model, device=device, decoding=decoding)
        if not isinstance(generator, Generator):
            raise BackendError(
                f"--provenai-backend {backend!r} returned {type(generator).__name__}, which "
                "does not implement the Generator protocol (identity, capabilities, "
                "render_chat, generate, score)"
            )
    else:  # a built-in backend (the registry's): local weights load on the first cache miss
        from pytest_provenai.subject.backends import OpenRequest, open_backend

        generator = open_backend(
            backend, OpenRequest(model=model, device=device, decoding=decoding, served=served)
        )
    return ModelSubject(generator, cache)


def preflight(*, backend: str, model: str | None, pipeline: str | None) -> None:
    """Cheap checks of explicitly given options before any test runs (no heavy imports):
    the pipeline imports, the backend's libraries are installed, the model path exists."""
    from pathlib import Path

    from pytest_provenai.subject.backends import backend_entry, check_backend

    if pipeline:
        import_callable(pipeline, "--provenai-pipeline")
        return
    entry = backend_entry(backend)
    if entry is not None and not entry.local:
        return  # a served model: the plugin probes the server (served.check_servers)
    if ":" in backend:
        import_callable(backend, "--provenai-backend")
    else:
        try:
            check_backend(backend)
        except BackendError as exc:
            raise BackendError(f"--provenai-backend {backend}: {exc}") from None
    if model and (model.startswith((".", "/", "~")) or model.endswith(".gguf")):
        path = Path(model).expanduser()
        if not path.exists():
            raise BackendError(f"--provenai-model {model}: no such file or folder")
        if path.is_dir() and not (path / "config.json").is_file():
            raise BackendError(
                f"--provenai-model {model}: the folder has no config.json, so it is not a "
                "Hugging Face model folder; pass a model folder or a .gguf file"
            )
