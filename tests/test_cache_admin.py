"""``provenai cache info | prune | clear`` (cache_admin.py), and that clearing the cache
while an audit uses it never corrupts the audit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from test_influence_plugin import influence_project

from pytest_provenai._io import STALE_TEMP_SECONDS
from pytest_provenai.cache_admin import DAY, cache_info, clear_cache, prune_cache
from pytest_provenai.cli import main
from pytest_provenai.subject.backends.base import Generation
from pytest_provenai.subject.cache import GenerationCache


def fill(root: Path) -> dict[str, Path]:
    gens = GenerationCache(root / "generations")
    paths = {}
    for i, model in enumerate(["alpha", "alpha", "beta"]):
        key = GenerationCache.key({"name": model}, f"prompt {i}", {}, "v1")
        paths[f"gen{i}"] = gens.put(key, Generation(text=f"out {i}"), {"model": {"name": model}})
    kl = root / "influence" / "ab" / ("ab" + "0" * 62 + ".json")
    kl.parent.mkdir(parents=True)
    kl.write_text(json.dumps({"key": "x", "kl": {}}), encoding="utf-8")
    paths["kl"] = kl
    return paths


def age(path: Path, days: float) -> None:
    t = time.time() - days * DAY
    os.utime(path, (t, t))


def test_info_counts_entries_by_kind_and_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fill(tmp_path)
    (tmp_path / "generations" / "ab").mkdir(exist_ok=True)
    (tmp_path / "generations" / "ab" / ".x.123.tmp").write_text("partial")
    info = cache_info(tmp_path)
    assert info.entries == 4 and info.temp_files == 1
    assert {k: v[0] for k, v in info.groups.items()} == {
        ("generations", "alpha"): 2,
        ("generations", "beta"): 1,
        ("influence", "(not recorded)"): 1,
    }
    assert main(["cache", "info", "--cache", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"cache {tmp_path}: 4 entries" in out
    assert "generations  alpha" in out and "1 temporary file(s)" in out
    assert main(["cache", "info", "--cache", str(tmp_path / "none")]) == 0
    assert "no cache folder" in capsys.readouterr().out


def test_prune_removes_entries_unused_for_longer_than_days(tmp_path: Path) -> None:
    paths = fill(tmp_path)
    age(paths["gen0"], 40)
    age(paths["kl"], 10)
    removed = prune_cache(tmp_path, 30)
    assert removed.entries == 1 and not paths["gen0"].exists() and paths["kl"].exists()
    assert main(["cache", "prune", "--older-than", "7", "--cache", str(tmp_path)]) == 0
    assert not paths["kl"].exists() and paths["gen1"].exists() and paths["gen2"].exists()
    assert main(["cache", "prune", "--older-than", "-1", "--cache", str(tmp_path)]) == 2


def test_clear_removes_entries_keeps_folders_and_young_temp_files(tmp_path: Path) -> None:
    paths = fill(tmp_path)
    folder = paths["gen0"].parent
    young = folder / ".entry.young.tmp"
    old = folder / ".entry.old.tmp"
    young.write_text("a writer is at it")
    old.write_text("its writer died")
    t = time.time() - STALE_TEMP_SECONDS - 60
    os.utime(old, (t, t))
    removed = clear_cache(tmp_path)
    assert removed.entries == 4 and removed.temp_files == 1
    assert folder.is_dir() and young.exists() and not old.exists()
    assert cache_info(tmp_path).entries == 0
    # the cache keeps working: a put after the clear lands in the kept folder
    GenerationCache(tmp_path / "generations").put(
        paths["gen0"].stem, Generation(text="again"), {"model": {"name": "alpha"}}
    )
    assert cache_info(tmp_path).entries == 1


def test_a_cache_path_that_is_a_file_is_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "file"
    f.write_text("x")
    assert main(["cache", "clear", "--cache", str(f)]) == 2
    assert "not a folder" in capsys.readouterr().err


def test_clearing_the_cache_during_an_audit_never_corrupts_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A warm naive-ablation run reads 11 entries and writes back what it must recompute
    while the cache is cleared and pruned over and over: the run passes and its records
    equal the reference run's."""
    root = influence_project(pytester)
    run = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:xdist",
        "-q",
        "--provenai-ablation=naive",
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    ref = subprocess.run(
        [*run, "--snapshot-update"], cwd=root, env=env, capture_output=True, text=True, timeout=300
    )
    assert ref.returncode == 0, ref.stdout[-2000:]
    reference = json.loads((root / "results.json").read_text())["records"]
    assert cache_info(root / ".provenai-cache").entries == 11  # 3 answers + 8 ablations
    env["PROVENAI_SCRIPTED_DELAY"] = "0.02"
    stop = threading.Event()
    cleared = [0]

    def churn() -> None:  # entries vanish while the run reads (hits) and writes (misses)
        while not stop.is_set():
            clear_cache(root / ".provenai-cache")
            prune_cache(root / ".provenai-cache", 0)
            cleared[0] += 1
            time.sleep(0.005)

    t = threading.Thread(target=churn)
    t.start()
    try:
        proc = subprocess.run(run, cwd=root, env=env, capture_output=True, text=True, timeout=300)
    finally:
        stop.set()
        t.join()
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert json.loads((root / "results.json").read_text())["records"] == reference
    assert cleared[0] > 10


# -- only a provenai cache, and only its entries, are ever touched ---------------------------------
def project_folder(root: Path) -> list[Path]:
    """A project folder given as --cache by mistake: fixtures, goldens, results — JSON all."""
    files = [
        root / "fixtures" / "set" / "manifest.json",
        root / "fixtures" / "set" / "cases" / "a.json",
        root / "golden" / "model" / "test_x" / "test[a].json",
        root / "results.json",
        root / "generations" / "ab" / ("ab" + "0" * 62 + ".json"),  # even a cache-like name
    ]
    for f in files:
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("{}", encoding="utf-8")
    return files


@pytest.mark.parametrize(
    "argv",
    [["cache", "clear"], ["cache", "prune", "--older-than", "0"], ["cache", "info"]],
)
def test_a_folder_that_is_not_a_cache_is_refused_and_nothing_is_touched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    files = project_folder(tmp_path)
    assert main([*argv, "--cache", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("provenai: error: --cache ")
    assert "not a pytest-provenai cache (no CACHEDIR.TAG marker; it holds fixtures/" in err[0]
    assert all(f.exists() for f in files)


def test_the_first_stored_entry_marks_the_cache_and_a_marked_cache_is_cleared(
    tmp_path: Path,
) -> None:
    root = tmp_path / "cache"
    fill(root)
    marker = root / "CACHEDIR.TAG"
    assert marker.read_text(encoding="utf-8").startswith(
        "Signature: 8a477f597d28d172789f06886806bc55"
    )
    # foreign files inside the cache (not of an entry's shape) are left alone
    foreign = [
        root / "notes.json",
        root / "generations" / "readme.json",
        root / "generations" / "ab" / "not-a-key.json",
        root / "generations" / "cd" / ("ab" + "1" * 62 + ".json"),  # in the wrong folder
        root / "influence" / "ab" / "deeper" / ("ab" + "2" * 62 + ".json"),
    ]
    for f in foreign:
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("{}", encoding="utf-8")
    assert cache_info(root).entries == 4
    removed = clear_cache(root)
    assert removed.entries == 4 and marker.exists() and all(f.exists() for f in foreign)


def test_a_cache_written_before_the_marker_is_still_recognised(tmp_path: Path) -> None:
    paths = fill(tmp_path)
    (tmp_path / "CACHEDIR.TAG").unlink()
    assert clear_cache(tmp_path).entries == 4 and not paths["gen0"].exists()


def test_symbolic_links_are_never_followed_out_of_the_cache(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    fill(root)
    outside = tmp_path / "outside"
    (outside / "ab").mkdir(parents=True)
    victim = outside / "ab" / ("ab" + "3" * 62 + ".json")
    victim.write_text("{}", encoding="utf-8")
    (root / "attribution").symlink_to(outside)  # a kind folder that is a link
    (root / "influence" / "cd").symlink_to(outside / "ab")  # a shard folder that is a link
    link = root / "generations" / "ab" / ("ab" + "4" * 62 + ".json")
    link.parent.mkdir(exist_ok=True)
    link.symlink_to(victim)  # an entry that is a link
    assert cache_info(root).entries == 4
    assert clear_cache(root).entries == 4
    assert victim.exists() and link.is_symlink()


def test_info_does_not_refresh_last_use_so_a_later_prune_still_removes_old_entries(
    tmp_path: Path,
) -> None:
    paths = fill(tmp_path)
    for p in paths.values():
        age(p, 40)
    assert main(["cache", "info", "--cache", str(tmp_path)]) == 0
    assert paths["gen0"].stat().st_atime < time.time() - 30 * DAY
    assert prune_cache(tmp_path, 30).entries == 4


def test_minus_zero_days_reads_as_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fill(tmp_path)
    assert main(["cache", "prune", "--older-than=-0", "--cache", str(tmp_path)]) == 0
    out = capsys.readouterr().out.replace(str(tmp_path), "CACHE")  # "pytest-0" holds "-0"
    assert "unused > 0 days" in out and "-0" not in out


def test_info_into_a_closed_pipe_exits_quietly(tmp_path: Path) -> None:
    """`provenai cache info | head -1`: more lines than a pipe holds, the reader gone after
    the first one; no broken-pipe error, exit 0."""
    (tmp_path / "CACHEDIR.TAG").write_text("Signature: 8a477f597d28d172789f06886806bc55\n")
    for i in range(1500):  # one model each: 1,500 lines of ~80 characters, > a 64 KB pipe
        key = f"{i:064x}"
        entry = tmp_path / "generations" / key[:2] / f"{key}.json"
        entry.parent.mkdir(parents=True, exist_ok=True)
        entry.write_text(json.dumps({"meta": {"model": {"name": f"model-{i:05d}"}}}))
    cmd = f"{sys.executable} -m pytest_provenai.cli cache info --cache {tmp_path} | head -1"
    done = subprocess.run(
        ["bash", "-c", cmd + "; exit ${PIPESTATUS[0]}"], capture_output=True, text=True
    )
    assert done.stdout.startswith(f"cache {tmp_path}: 1500 entries")
    assert done.stderr == "" and done.returncode == 0
