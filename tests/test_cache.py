"""The content-addressed generation cache: keys, round trip, corruption, concurrent writers."""

from __future__ import annotations

import json
import multiprocessing
import warnings
from pathlib import Path
from typing import Any

import pytest
from scripted import ScriptedGenerator

from pytest_provenai.errors import ProvenaiCacheWarning
from pytest_provenai.subject.backends.base import Decoding, Generation, Identity
from pytest_provenai.subject.cache import (
    DEFAULT_ROOT,
    SCHEMA_VERSION,
    GenerationCache,
)

IDENTITY = Identity(
    backend="transformers",
    name="SmolLM2-135M-Instruct",
    weights_sha256="ab" * 32,
    dtype="float32",
    decoding=Decoding(),
)
GEN = Generation(
    text="Answer: yes [R1]\nEvidence: é漢字 [R1]",
    token_ids=[1, 2, 3],
    logprobs=[-0.5, -1.25, float("-inf")],
    finish_reason="length",
)


def key_of(**over: Any) -> str:
    args: dict[str, Any] = {
        "model_key": IDENTITY.model_key(),
        "prompt": "<|im_start|>user\nq<|im_end|>\n",
        "decoding": Decoding().as_dict(),
        "prompt_version": "provenai-prompt/1",
    }
    args.update(over)
    return GenerationCache.key(**args)


def test_round_trip(tmp_path: Path) -> None:
    cache = GenerationCache(tmp_path)
    k = key_of()
    assert cache.get(k) is None
    path = cache.put(k, GEN, {"case_id": "c1", "prompt_version": "provenai-prompt/1"})
    assert path == tmp_path / k[:2] / f"{k}.json"
    got = cache.get(k)
    assert got == GEN
    assert (cache.hits, cache.misses, cache.corrupt) == (1, 1, 0)
    entry = json.loads(path.read_text(encoding="utf-8"))
    assert entry["schema_version"] == SCHEMA_VERSION and entry["key"] == k
    assert entry["meta"]["case_id"] == "c1"
    assert cache.meta(k) == {"case_id": "c1", "prompt_version": "provenai-prompt/1"}
    # another instance (another worker) sees the same entry
    assert GenerationCache(tmp_path).get(k) == GEN
    assert not list(tmp_path.rglob("*.tmp"))


def test_key_is_stable_hex_and_independent_of_dict_order() -> None:
    k = key_of()
    assert len(k) == 64 and int(k, 16) >= 0 and k == key_of()
    reordered = dict(reversed(list(IDENTITY.model_key().items())))
    assert key_of(model_key=reordered) == k


@pytest.mark.parametrize(
    "change",
    [
        {"model_key": {**IDENTITY.model_key(), "weights_sha256": "cd" * 32}},
        {"model_key": {**IDENTITY.model_key(), "name": "other"}},
        {"prompt": "<|im_start|>user\nq?<|im_end|>\n"},
        {"prompt": "<|im_start|>user\nq<|im_end|>\n "},
        {"decoding": Decoding(max_new_tokens=Decoding().max_new_tokens + 1).as_dict()},
        {"decoding": {**Decoding().as_dict(), "strategy": "beam"}},
        {"prompt_version": "provenai-prompt/2"},
    ],
    ids=[
        "weights",
        "name",
        "prompt",
        "prompt-whitespace",
        "max_new_tokens",
        "strategy",
        "prompt_version",
    ],
)
def test_key_changes_with_each_component(change: dict[str, Any]) -> None:
    assert key_of(**change) != key_of()


def test_key_rejects_values_json_cannot_pin() -> None:
    with pytest.raises(ValueError):
        key_of(decoding={"temperature": float("nan")})
    with pytest.raises(TypeError):
        key_of(decoding={"stop": {1, 2}})


def test_bad_key_is_a_value_error(tmp_path: Path) -> None:
    cache = GenerationCache(tmp_path)
    for bad in ("", "../etc/passwd", "AB" * 32, "a" * 63):
        with pytest.raises(ValueError, match="64 lowercase hex"):
            cache.get(bad)


def test_default_root_is_relative_to_cwd() -> None:
    assert GenerationCache().root == DEFAULT_ROOT == Path(".provenai-cache/generations")


def _corrupt(path: Path, how: str) -> None:
    entry = json.loads(path.read_text(encoding="utf-8"))
    if how == "bad-json":
        path.write_text('{"schema_version": 1, "key": ', encoding="utf-8")
    elif how == "not-utf8":
        path.write_bytes(b"\xff\xfe\x00garbage")
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "list":
        path.write_text("[1, 2]", encoding="utf-8")
    elif how == "schema":
        entry["schema_version"] = 99
        path.write_text(json.dumps(entry), encoding="utf-8")
    elif how == "key":
        entry["key"] = "0" * 64
        path.write_text(json.dumps(entry), encoding="utf-8")
    elif how == "generation":
        entry["generation"] = {"token_ids": "nope"}
        path.write_text(json.dumps(entry), encoding="utf-8")
    elif how == "token-ids":
        entry["generation"]["token_ids"] = [1, "2"]
        path.write_text(json.dumps(entry), encoding="utf-8")
    elif how == "meta":
        del entry["meta"]
        path.write_text(json.dumps(entry), encoding="utf-8")
    else:  # pragma: no cover
        raise AssertionError(how)


@pytest.mark.parametrize(
    "how",
    ["bad-json", "not-utf8", "empty", "list", "schema", "key", "generation", "token-ids", "meta"],
)
def test_corrupt_entry_warns_is_dropped_and_recomputed(tmp_path: Path, how: str) -> None:
    cache = GenerationCache(tmp_path)
    k = key_of()
    path = cache.put(k, GEN, {})
    _corrupt(path, how)
    with pytest.warns(ProvenaiCacheWarning, match=str(path.name)) as record:
        assert cache.get(k) is None
    assert str(path) in str(record[0].message)
    assert record[0].filename == __file__  # attributed to the caller of get()
    assert not path.exists()
    assert (cache.hits, cache.misses, cache.corrupt) == (0, 1, 1)
    # the caller recomputes and stores; the next read is a clean hit
    cache.put(k, GEN, {})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cache.get(k) == GEN
    assert (cache.hits, cache.misses, cache.corrupt) == (1, 1, 1)


def test_entry_copied_under_another_key_is_rejected(tmp_path: Path) -> None:
    cache = GenerationCache(tmp_path)
    k1, k2 = key_of(), key_of(prompt_version="other")
    p1 = cache.put(k1, GEN, {})
    p2 = cache.path(k2)
    p2.parent.mkdir(parents=True, exist_ok=True)
    p2.write_bytes(p1.read_bytes())
    with pytest.warns(ProvenaiCacheWarning, match="not the key of its file name"):
        assert cache.get(k2) is None
    assert cache.get(k1) == GEN


def test_directory_in_place_of_an_entry_is_reported_not_raised(tmp_path: Path) -> None:
    cache = GenerationCache(tmp_path)
    k = key_of()
    cache.path(k).mkdir(parents=True)
    with pytest.warns(ProvenaiCacheWarning, match="cannot be read"):
        assert cache.get(k) is None
    assert cache.corrupt == 1


def test_put_of_unserialisable_meta_leaves_no_file(tmp_path: Path) -> None:
    cache = GenerationCache(tmp_path)
    k = key_of()
    with pytest.raises(TypeError):
        cache.put(k, GEN, {"bad": object()})
    assert not cache.path(k).exists()
    assert not list(tmp_path.rglob("*.tmp"))


# ---------------------------------------------------------------- concurrent writers


def _writer(root: str, key: str, n: int, barrier: Any) -> None:
    cache = GenerationCache(root)
    gen = Generation(text="same text " * 2000, token_ids=list(range(3000)), logprobs=[-0.1] * 3000)
    barrier.wait()
    for i in range(n):
        cache.put(key, gen, {"writer": "any"})
        got = cache.get(key)  # a reader racing the writers sees a whole entry or none
        assert got is not None and got.text == gen.text, i


def test_concurrent_writers_of_the_same_key(tmp_path: Path) -> None:
    k = key_of()
    # fork where the platform has it (fast); spawn elsewhere
    methods = multiprocessing.get_all_start_methods()
    ctx = (
        multiprocessing.get_context("fork")
        if "fork" in methods
        else multiprocessing.get_context("spawn")
    )
    workers = 4
    barrier = ctx.Barrier(workers)
    procs = [
        ctx.Process(target=_writer, args=(str(tmp_path), k, 10, barrier)) for _ in range(workers)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=60)
    assert [p.exitcode for p in procs] == [0] * workers
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = GenerationCache(tmp_path).get(k)
    assert got is not None and len(got.token_ids) == 3000
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert files == [tmp_path / k[:2] / f"{k}.json"]  # no temporary files left behind


# -- the KL cache of the influence layer -----------------------------------------------------
@pytest.mark.parametrize(
    "content",
    [
        "[]",
        "{}",
        '{"key": "KEY", "kl": []}',
        '{"key": "KEY", "kl": {"per_position": "x", "eps": 0}}',
        '{"key": "KEY", "kl": {"per_position": [0.1], "eps": "x"}}',
        "not json",
    ],
)
def test_kl_cache_entry_of_the_wrong_shape_warns_is_dropped_and_recomputed(
    tmp_path: Path, content: str
) -> None:
    from pytest_provenai.subject.ablation import KLCache
    from pytest_provenai.subject.kl import KLProfile

    cache = KLCache(tmp_path)
    key = KLCache.key({"name": "m"}, "full", "ablated", [1, 2])
    path = tmp_path / key[:2] / f"{key}.json"
    path.parent.mkdir(parents=True)
    path.write_text(content.replace("KEY", key), encoding="utf-8")
    with pytest.warns(ProvenaiCacheWarning, match="dropped and recomputed"):
        assert cache.get(key) is None
    assert not path.exists()
    profile = KLProfile((0.5, 0.25), None, None, 0.1)
    cache.put(key, profile)
    assert cache.get(key) == profile


def test_an_entry_of_an_untrusted_producer_is_stale_a_miss_and_replaced(tmp_path: Path) -> None:
    cache = GenerationCache(tmp_path)
    k = key_of()
    cache.put(k, GEN, {"producer": "provenai-fast-path/1"})
    trusted = {"generate", "provenai-fast-path/2"}
    assert cache.get(k, producers=trusted) is None
    assert (cache.hits, cache.misses, cache.stale, cache.corrupt) == (0, 1, 1, 0)
    assert cache.get(k) == GEN  # a caller that names no producers trusts any entry
    cache.put(k, GEN, {"producer": "generate"})
    assert cache.get(k, producers=trusted) == GEN
    cache.put(k, GEN, {})  # written by a release that recorded no producer
    assert cache.get(k, producers=trusted) is None


def test_a_generation_cached_by_an_older_fast_path_is_ignored_and_recomputed(
    tmp_path: Path,
) -> None:
    from pytest_provenai.subject.backends.base import FAST_PATH_VERSION
    from pytest_provenai.subject.cache import PRODUCER_GENERATE
    from pytest_provenai.subject.subject import ModelSubject

    # answers every prompt with the same text and counts its calls
    gen = ScriptedGenerator(
        {"*": "Answer: fresh"}, IDENTITY.name, Decoding(), "cpu", identity=IDENTITY
    )
    subject = ModelSubject(gen, GenerationCache(tmp_path))
    stale = Generation(text="Answer: written by an older fast path")
    for producer in ("provenai-fast-path/1", "generate", None):
        meta = {"producer": producer} if producer else {}
        key = subject._key("p")
        assert key is not None
        GenerationCache(tmp_path).put(key, stale, meta)
        assert subject.cached_generation("p") is None
        generation, cached = subject.generate("p")
        assert (generation.text, cached) == ("Answer: fresh", False)
        assert GenerationCache(tmp_path).meta(key) == {
            "model": IDENTITY.model_key(),
            "producer": PRODUCER_GENERATE,
        }
    assert gen.calls == 3
    # the current fast path's entries are trusted
    subject.store_generation("q", stale, producer=FAST_PATH_VERSION)
    assert subject.generate("q") == (stale, True)
    assert gen.calls == 3


def test_kl_profiles_of_an_older_ablation_version_are_not_found(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pytest_provenai.subject import ablation

    now = ablation.KLCache.key({"name": "m"}, "full", "ablated", [1, 2])
    monkeypatch.setattr(ablation, "ABLATION_VERSION", "provenai-ablation/2")
    assert ablation.KLCache.key({"name": "m"}, "full", "ablated", [1, 2]) != now
