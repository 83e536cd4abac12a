"""Option parsing without pytest in the loop: defaults, paths, devices, worker devices."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_provenai import options as opt
from pytest_provenai.errors import ConfigError


def settings(**values: object) -> opt.Settings:
    return opt.parse_settings(lambda name: values.get(name), Path("/root/project"))


def test_defaults() -> None:
    s = settings()
    assert s.backend in opt.BUILTIN_BACKENDS
    assert s.seed == 42 and s.sample is None and s.max_new_tokens == 128
    assert s.golden == Path("/root/project/golden")
    assert s.cache == Path("/root/project/.provenai-cache")
    assert s.device == "cpu" and s.devices == ()


def test_no_cache_and_relative_paths() -> None:
    s = settings(provenai_no_cache=True, provenai_fixtures=["a", "/abs/b"])
    assert s.cache is None
    assert s.fixtures == (Path("/root/project/a"), Path("/abs/b"))


def test_pipeline_sets_backend() -> None:
    s = settings(provenai_pipeline="my_rag.audit:answer")
    assert s.backend == "pipeline" and s.pipeline == "my_rag.audit:answer"


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"provenai_backend": "vllm"}, "--provenai-backend: unknown backend 'vllm'"),
        ({"provenai_pipeline": "no_colon"}, "--provenai-pipeline: expected module:callable"),
        ({"provenai_sample": "many"}, "--provenai-sample: expected an integer >= 1, got 'many'"),
        ({"provenai_seed": "-1"}, "--provenai-seed: expected an integer >= 0, got -1"),
        ({"provenai_device": "gpu"}, "--provenai-device: unknown device 'gpu'"),
        ({"provenai_devices": "cpu,cuda:x"}, "--provenai-devices: unknown device 'cuda:x'"),
        ({"provenai_max_new_tokens": "0"}, "--provenai-max-new-tokens: expected an integer >= 1"),
        (
            {"provenai_tolerance": "answer=0.1"},
            "--provenai-tolerance: tolerance entry 'answer=0.1': 'answer' is not a measured "
            "field with a tolerance",
        ),
        (
            {"provenai_tolerance": "kl_sum=-1e-3"},
            "--provenai-tolerance: tolerance entry 'kl_sum=-1e-3': a tolerance must be a "
            "finite number >= 0",
        ),
        (
            {"provenai_tolerance": "kl_sum=nan"},
            "--provenai-tolerance: tolerance entry 'kl_sum=nan': a tolerance must be a finite",
        ),
        ({"provenai_tolerance": "kl_sum=inf"}, "--provenai-tolerance: tolerance entry 'kl_sum=i"),
        ({"provenai_tolerance": "kl_sum"}, "--provenai-tolerance: tolerance entry 'kl_sum': exp"),
        (
            {"provenai_tolerance": "eps=small"},
            "--provenai-tolerance: tolerance entry 'eps=small': A",
        ),
    ],
)
def test_bad_values_name_the_option(values: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        settings(**values)


def test_tolerance_overrides_are_checked_and_kept() -> None:
    from pytest_provenai.golden_rules import Tolerance, table

    s = settings(provenai_tolerance="kl_sum=2e-3+2%; p_support = 0.02")
    assert s.tolerances == (
        ("kl_sum", Tolerance(abs=2e-3, rel=0.02)),
        ("p_support", Tolerance(abs=0.02)),
    )
    assert table(s.tolerances)["kl_mean"] == table()["kl_mean"]  # the others as shipped
    assert s.for_results()["tolerances"] == {
        "kl_sum": "|diff| <= 0.002 + 0.02 x |golden|",
        "p_support": "|diff| <= 0.02",
    }
    assert settings().tolerances == ()


def test_worker_devices_round_robin() -> None:
    s = settings(provenai_devices="cpu,cuda:0,cuda:1")
    assert [opt.worker_device(s, f"gw{i}") for i in range(5)] == [
        "cpu",
        "cuda:0",
        "cuda:1",
        "cpu",
        "cuda:0",
    ]
    assert opt.worker_device(s, None) == "cpu"
    assert opt.worker_device(settings(provenai_device="auto"), "gw3") == "auto"


def test_sample_indices_deterministic_and_ordered() -> None:
    a = opt.sample_indices(60, 10, 42)
    assert a == opt.sample_indices(60, 10, 42) == sorted(a) and len(set(a)) == 10
    assert a != opt.sample_indices(60, 10, 43)
    assert opt.sample_indices(5, None, 1) == [0, 1, 2, 3, 4]
    assert opt.sample_indices(5, 9, 1) == [0, 1, 2, 3, 4]


def test_the_writable_preflight_creates_and_removes_a_real_file(tmp_path: Path) -> None:
    from pytest_provenai.errors import ConfigError
    from pytest_provenai.options import check_writable_file

    check_writable_file("provenai_results", tmp_path / "new" / "results.json")
    assert list(tmp_path.iterdir()) == []  # the probe file is gone, no folder was made
    with pytest.raises(ConfigError, match=r"^--provenai-results: cannot write in /proc \("):
        check_writable_file("provenai_results", Path("/proc/r.json"))
