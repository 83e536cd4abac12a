"""--provenai-shard K/N and `provenai merge`: a run spread over shards, joined into one
verdict that equals the single run's (records, aggregates, CIs, gates), and every bad merge
refused with one line before anything is written."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from project import freeze_records, results, run, use_scripted, write_ini

from pytest_provenai.cli import main
from pytest_provenai.errors import ConfigError
from pytest_provenai.sharding import ShardSpec, case_key, fingerprint, shard_of

pytest_plugins = ["pytester"]

N_CASES = 12


def _records() -> list[dict[str, Any]]:
    out = []
    for i in range(N_CASES):
        town = f"Town{i:02d}"
        out.append(
            {
                "_id": f"case-{i:02d}",
                "question": f"Which river flows through {town}?",
                "answer": f"River {i}",
                "type": "bridge",
                "level": "easy",
                "supporting_facts": [[town, 0], [f"River {i}", 0]],
                "context": [
                    [town, [f"{town} is a town.", f" River {i} flows through it."]],
                    [f"River {i}", [f"River {i} is long.", " It is 300 km long."]],
                    ["Other", ["Other is unrelated.", " Nothing here."]],
                ],
            }
        )
    return out


# two of three cases right; half cite both paragraphs
SCRIPT = {
    "name": "scripted-shards",
    "script": {
        f"Town{i:02d}?": (
            f"Answer: River {i} [R0]" + (" [R1]" if i % 2 else "") if i % 3 else "Answer: unknown"
        )
        for i in range(N_CASES)
    },
}

TEST_FILE = """
import pytest
from pytest_provenai.api import fidelity_record

@pytest.mark.fidelity(answer_accuracy=0.5, citation_f1=0.9)
def test_fid(provenai_case, provenai_subject, provenai_record, provenai_snapshot):
    trace = provenai_subject.answer(provenai_case)
    record = provenai_record(fidelity_record(provenai_case, trace))
    assert record == provenai_snapshot

def test_plain():
    assert True
"""


def _project(pytester: pytest.Pytester) -> Path:
    root = pytester.path
    freeze_records(root, _records())
    use_scripted(root, SCRIPT)
    write_ini(pytester, ["fixtures/mini"])
    pytester.makepyfile(test_audit=TEST_FILE)
    return root


def _merge(*args: str | Path) -> int:
    return main(["merge", *(str(a) for a in args)])


# -- the assignment --------------------------------------------------------------------------
def test_the_assignment_is_the_documented_hash_and_never_changes() -> None:
    key = case_key("mini", "case-07")
    digest = hashlib.sha256(b"mini/case-07").digest()
    assert shard_of(key, 5) == int.from_bytes(digest[:8], "big") % 5 + 1
    # pinned: a release that changed the assignment would split old shards differently
    ids = ("5a8b57f25542995d1e6f1371", "5a8c7595554299585d9e36b6", "5abd94525542992ac4f382d2")
    assert [shard_of(case_key("hotpotqa-dev60", i), 3) for i in ids] == [3, 1, 1]
    assert shard_of("mini/case-00", 3) == 2
    counts = [0, 0, 0]
    for i in range(3000):
        counts[shard_of(f"set/{i}", 3) - 1] += 1
    assert all(900 < c < 1100 for c in counts)  # an even split


@pytest.mark.parametrize("text", ["1/3", " 3/3 ", "1/1"])
def test_a_shard_spec_parses(text: str) -> None:
    spec = ShardSpec.parse(text)
    assert 1 <= spec.index <= spec.count


@pytest.mark.parametrize("text", ["0/3", "4/3", "1/0", "abc", "1/3/2", "-1/3", ""])
def test_a_bad_shard_spec_is_one_line_naming_the_option(text: str) -> None:
    with pytest.raises(ConfigError, match=r"^--provenai-shard: expected K/N with 1 <= K <= N"):
        ShardSpec.parse(text)


@pytest.mark.parametrize("value", ["0/3", "4/3", "1/0", "two"])
def test_a_bad_shard_option_is_a_usage_error(pytester: pytest.Pytester, value: str) -> None:
    _project(pytester)
    result = run(pytester, "-p", "no:xdist", f"--provenai-shard={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--provenai-shard: expected K/N*got '{value}'*"])


# -- three shards equal one run ---------------------------------------------------------------
INI = """[pytest]
provenai_fixtures = fixtures/mini
provenai_backend = scripted:factory
provenai_model = script.json
provenai_results = results.json
"""


def _pytest(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """pytest in ``root`` as a user's shell runs it (no xdist worker variables inherited)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )


@pytest.fixture(scope="module")
def sharded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One project, run once whole (goldens recorded) and as 3 shards under three worker
    layouts, plus a shard of another run (other --provenai-max-new-tokens); shared by the
    merge tests below, which write only into their own folders."""
    root = tmp_path_factory.mktemp("sharded")
    freeze_records(root, _records())
    use_scripted(root, SCRIPT)
    (root / "tox.ini").write_text(INI, encoding="utf-8")
    (root / "test_audit.py").write_text(TEST_FILE, encoding="utf-8")
    single = _pytest(root, "-p", "no:xdist", "--snapshot-update")
    assert single.returncode == 1, single.stdout  # citation_f1 >= 0.9 fails
    (root / "results.json").rename(root / "single.json")
    layouts = {1: ["-p", "no:xdist"], 2: ["-n", "0"], 3: ["-n", "2"]}
    out: dict[str, Any] = {"root": root, "single": root / "single.json", "stdout": {}}
    for k, layout in layouts.items():
        path = root / f"shard-{k}.json"
        r = _pytest(root, *layout, f"--provenai-shard={k}/3", f"--provenai-results={path}")
        out[str(k)], out["stdout"][k] = path, (r.returncode, r.stdout)
    other = root / "other-2.json"
    r = _pytest(
        root,
        "-p",
        "no:xdist",
        "--provenai-shard=2/3",
        "--provenai-max-new-tokens=16",
        f"--provenai-results={other}",
        "--provenai-golden=golden-other",
        "--snapshot-update",
    )
    assert r.returncode == 0, r.stdout
    out["other"] = other
    return out


def test_three_shards_merged_equal_one_run(sharded: dict[str, Any], tmp_path: Path) -> None:
    one = json.loads(sharded["single"].read_text(encoding="utf-8"))
    shard_cases: list[set[str]] = []
    for k in (1, 2, 3):
        code, stdout = sharded["stdout"][k]
        # its own tests and golden comparisons pass: exit 0, the gates provisional (skipped)
        assert code == 0, stdout
        assert f"shard {k}/3: " in stdout and f" of {N_CASES} cases; gates provisional" in stdout
        assert "unused" not in stdout  # other shards' goldens are not "unused"
        data = json.loads(sharded[str(k)].read_text(encoding="utf-8"))
        assert all(g["provisional"] for g in data["gates"])
        assert data["shard"]["spec"] == f"{k}/3"
        shard_cases.append(set(data["shard"]["cases"]))
        assert {r["case_id"] for r in data["records"]["test_audit.py::test_fid"]} == {
            c.removeprefix("mini/") for c in data["shard"]["cases"]
        }
    assert all(shard_cases), "every shard holds a case of twelve"
    assert set().union(*shard_cases) == {f"mini/case-{i:02d}" for i in range(N_CASES)}
    assert sum(len(c) for c in shard_cases) == N_CASES  # each case in exactly one shard

    shards = [sharded[k] for k in ("3", "1", "2")]  # any order
    merged_path = tmp_path / "merged.json"
    code = _merge(*shards, "--out", merged_path, "--junitxml", tmp_path / "gates.xml")
    assert code == 1  # the failed gate fails the merge, as it failed the single run
    merged = json.loads(merged_path.read_text(encoding="utf-8"))
    assert merged["records"] == one["records"]
    assert merged["aggregates"] == one["aggregates"]
    assert merged["gates"] == one["gates"]
    assert "shard" not in merged
    assert [g["passed"] for g in merged["gates"]] == [True, False]
    junit = (tmp_path / "gates.xml").read_text(encoding="utf-8")
    assert junit.count("<testcase") == 2 and junit.count("<failure") == 1
    assert 'name="gate[fidelity.citation_f1]"' in junit

    # the merged file is a normal results file: report and compare take it
    assert main(["report", str(merged_path), "--out", str(tmp_path / "m.html")]) == 0
    base = str(sharded["single"])
    assert main(["compare", base, str(merged_path), "--fail-on-regression"]) == 0


# -- bad merges: one line, exit 2, nothing written --------------------------------------------
def _refused(capsys: pytest.CaptureFixture[str], out: Path, *args: str | Path) -> str:
    code = _merge(*args, "--out", out)
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and err.startswith("provenai: error: ")
    assert not out.exists()
    return err


def test_bad_merges_are_refused(
    sharded: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "merged.json"
    s1, s2, s3 = sharded["1"], sharded["2"], sharded["3"]

    err = _refused(capsys, out, s1, s2)
    assert "shard(s) 3/3 not given" in err and "mini/case-" in err and "--allow-missing" in err
    err = _refused(capsys, out, s1, s2, s2, s3)
    assert f"{s2} and {s2} are both shard 2/3" in err
    err = _refused(capsys, out, s1, sharded["other"], s3)
    assert "are not shards of one run: " in err and "options.max_new_tokens (128 vs 16)" in err
    err = _refused(capsys, out, s1, s2, sharded["single"], s3)
    assert "not a shard's results" in err

    truncated = tmp_path / "truncated.json"
    truncated.write_text(s3.read_text(encoding="utf-8")[:-40], encoding="utf-8")
    err = _refused(capsys, out, s1, s2, truncated)
    assert str(truncated) in err

    foreign = tmp_path / "foreign.json"
    data = json.loads(s3.read_text(encoding="utf-8"))
    moved = json.loads(s1.read_text(encoding="utf-8"))["records"]["test_audit.py::test_fid"][0]
    data["records"]["test_audit.py::test_fid"].append(moved)
    foreign.write_text(json.dumps(data), encoding="utf-8")
    err = _refused(capsys, out, s1, s2, foreign)
    assert f"{foreign}#/records/test_audit.py::test_fid/" in err and "not in shard 3/3" in err

    edited = tmp_path / "edited.json"
    data = json.loads(s3.read_text(encoding="utf-8"))
    data["shard"]["cases"] = data["shard"]["cases"][1:]
    edited.write_text(json.dumps(data), encoding="utf-8")
    err = _refused(capsys, out, s1, s2, edited)
    assert f"{edited}: its cases are not shard 3/3's" in err


def test_allow_missing_fails_the_gates_closed(
    sharded: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "merged.json"
    assert _merge(sharded["1"], sharded["3"], "--out", out, "--allow-missing") == 1
    assert "not audited (shards missing; their gates fail closed)" in capsys.readouterr().out
    merged = json.loads(out.read_text(encoding="utf-8"))
    gates = merged["gates"]
    assert not any(g["passed"] for g in gates)
    assert all("produced no record (fail closed)" in g["reason"] for g in gates)
    holes = [r for r in merged["records"]["test_audit.py::test_fid"] if "missing" in r]
    two = json.loads(sharded["2"].read_text(encoding="utf-8"))["shard"]["cases"]
    assert sorted("mini/" + h["case_id"] for h in holes) == sorted(two)
    assert all("shard 2/3 was not merged" in h["missing"] for h in holes)


def test_unused_golden_files_are_reported_by_the_merge(
    sharded: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "project"
    shutil.copytree(sharded["root"], root)
    goldens = [p for p in (root / "golden").rglob("*.json") if p.name == "test_fid[case-00].json"]
    shutil.copy(goldens[0], goldens[0].with_name("test_fid[case-gone].json"))
    out = root / "g-1.json"
    r = _pytest(root, "-p", "no:xdist", "--provenai-shard=1/3", f"--provenai-results={out}")
    assert r.returncode == 1, r.stdout  # the shard sees the orphan, as a single run would
    assert _merge(out, sharded["2"], sharded["3"], "--out", root / "merged.json") == 1
    text = capsys.readouterr().out
    assert "1 golden file(s) unused" in text and "test_fid[case-gone].json" in text


# -- the CI recipes (docs/ci) -----------------------------------------------------------------
CI = Path(__file__).parent.parent / "docs" / "ci"
RECIPES = [("github-actions.yml", "vendor.github-workflows"), ("gitlab-ci.yml", "vendor.gitlab-ci")]


def _check_jsonschema(schema: str, path: Path) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "check-jsonschema"
    return subprocess.run(
        [str(exe), "--builtin-schema", schema, str(path)], capture_output=True, text=True
    )


@pytest.mark.parametrize(("name", "schema"), RECIPES)
def test_the_ci_recipes_validate_and_use_real_options(
    name: str, schema: str, tmp_path: Path
) -> None:
    recipe = CI / name
    checked = _check_jsonschema(schema, recipe)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    broken = tmp_path / name  # the check is real: a misspelt key fails it
    broken.write_text(
        recipe.read_text(encoding="utf-8")
        .replace("script:", "scirpt:")
        .replace("runs-on:", "runs_on:"),
        encoding="utf-8",
    )
    assert _check_jsonschema(schema, broken).returncode != 0
    text = " ".join(recipe.read_text(encoding="utf-8").split())
    assert "--provenai-shard" in text and "--provenai-results" in text
    # every provenai command the recipe runs parses with this release's command line
    from pytest_provenai.cli import build_parser

    commands = re.findall(r"provenai (merge|compare) ([^;\n]*?)(?=$| - | \|\| |; | fi)", text)
    assert {c for c, _ in commands} == {"merge", "compare"}
    for command, rest in commands:
        argv = [command, *(a.strip("'\"") for a in rest.split())]
        build_parser().parse_args(argv)  # SystemExit on an unknown option


# -- a served fleet at shard scale ------------------------------------------------------------
@pytest.mark.slow
def test_shards_over_two_llama_servers_give_the_single_runs_records(
    pytester: pytest.Pytester, llama_base_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Two llama.cpp server instances; one run with -n 2 (gw0 -> first, gw1 -> second) and
    two shards with -n 2 pointed at the same servers: the merged records are the single
    run's, byte for byte (records leave the endpoint out; README, "Scaling out")."""
    from served import API_KEY, MODEL_ALIAS, llama_server

    monkeypatch.setenv("PROVENAI_API_KEY", API_KEY)
    root = pytester.path
    freeze_records(root, _records()[:4])  # case-00..03: two in each of 2 shards
    shutil.copy(Path(__file__).parents[1] / "suites" / "test_fidelity.py", root)
    pytester.makeini(
        f"""
        [pytest]
        provenai_fixtures = fixtures/mini
        provenai_backend = openai
        provenai_model = {MODEL_ALIAS}
        provenai_tokenizer = default
        provenai_max_new_tokens = 12
        """
    )
    with llama_server(log=tmp_path / "second.log") as second:
        urls = ["--provenai-base-urls", f"{llama_base_url},{second}", "-n", "2"]
        single = run(pytester, *urls, "--snapshot-update", "--provenai-results=single.json")
        assert single.ret in (0, 1), single.stdout.str()  # gates on 4 cases: the model's business
        for k in (1, 2):
            shard = run(pytester, *urls, f"--provenai-shard={k}/2", f"--provenai-results=s{k}.json")
            assert shard.ret == 0, shard.stdout.str()
    assert _merge(root / "s1.json", root / "s2.json", "--out", root / "merged.json") in (0, 1)
    one = json.loads((root / "single.json").read_text(encoding="utf-8"))
    merged = json.loads((root / "merged.json").read_text(encoding="utf-8"))
    assert len(merged["records"]["test_fidelity.py::test_fidelity"]) == 4
    assert merged["records"] == one["records"]
    assert merged["gates"] == one["gates"]
    endpoints = {m["endpoint"] for m in merged["models"].values()}
    assert endpoints == {llama_base_url, second}  # both servers served both shards


def _collected(pytester: pytest.Pytester, *args: str) -> set[str]:
    result = run(pytester, "-p", "no:xdist", "--collect-only", "-q", *args)
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED), (
        result.stdout.str()
    )
    return {line for line in result.stdout.lines if "::" in line}


def test_shards_split_the_sample_after_k_and_keep_a_case_together(
    pytester: pytest.Pytester,
) -> None:
    _project(pytester)
    pytester.makepyfile(
        test_second="""
        def test_other(provenai_case):
            assert provenai_case.id
        """
    )
    for args in (["--provenai-sample=7", "-k", "not case-03"],):
        whole = _collected(pytester, *args)
        parts = [_collected(pytester, *args, f"--provenai-shard={k}/3") for k in (1, 2, 3)]
        assert set().union(*parts) == whole  # sample first, then -k, then the shard
        assert sum(len(p) for p in parts) == len(whole)
        for part in parts:  # every suite of a case in the same shard
            cases = {line.split("[", 1)[1] for line in part if "[" in line}
            for case in cases:
                assert f"test_audit.py::test_fid[{case}" in part
                assert f"test_second.py::test_other[{case}" in part
    assert not parts[0]  # the sample holds no case of shard 1 (case-08 is its only one)


def test_a_shard_that_draws_no_case_exits_0_and_still_merges(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _project(pytester)
    assert run(pytester, "-p", "no:xdist", "--provenai-sample=7", "--snapshot-update").ret == 1
    one = results(root)
    paths = []
    for k in (1, 2, 3):
        out = root / f"s{k}.json"
        r = run(pytester, "-p", "no:xdist", "--provenai-sample=7", f"--provenai-shard={k}/3",
                f"--provenai-results={out}")  # fmt: skip
        assert r.ret == pytest.ExitCode.OK, r.stdout.str()
        paths.append(out)
    assert json.loads(paths[0].read_text(encoding="utf-8"))["shard"]["cases"] == []
    assert _merge(*paths, "--out", root / "merged.json") == 1
    merged = json.loads((root / "merged.json").read_text(encoding="utf-8"))
    assert merged["records"] == one["records"] and merged["gates"] == one["gates"]


def test_the_fingerprint_ignores_where_files_are_and_sees_what_changes_records() -> None:
    base = {
        "backend": "transformers",
        "model": "/home/a/model.gguf",
        "fixtures": ["/home/a/fixtures/mini"],
        "cache": "/home/a/.provenai-cache",
        "golden": "golden",
        "device": "cpu",
        "sample": None,
        "seed": 42,
        "max_new_tokens": 128,
        "served": {"base_urls": ["http://a/v1"], "top_logprobs": 20},
        "attribution": {"mcp_traces": "/home/a/t", "verify_threshold": None},
    }
    model = [{"name": "m", "weights_sha256": "ab", "decoding": {}, "device": "cpu"}]
    moved = {
        **base,
        "model": "/srv/b/model.gguf",
        "fixtures": ["/srv/b/mini"],
        "cache": "/tmp/c",
        "device": "cuda:0",
        "served": {"base_urls": ["http://b/v1"], "top_logprobs": 20},
        "attribution": {"mcp_traces": None, "verify_threshold": None},
    }
    other_gpu = [{**model[0], "device": "cuda:0"}]
    assert fingerprint(base, {"mini": "1"}, model) == fingerprint(moved, {"mini": "1"}, other_gpu)
    for changed in (
        {**base, "max_new_tokens": 32},
        {**base, "seed": 7},
        {**base, "served": {"base_urls": [], "top_logprobs": 5}},
    ):
        assert fingerprint(changed, {"mini": "1"}, model) != fingerprint(base, {"mini": "1"}, model)
    assert fingerprint(base, {"mini": "2"}, model) != fingerprint(base, {"mini": "1"}, model)
    other_weights = [{**model[0], "weights_sha256": "cd"}]
    assert fingerprint(base, {"mini": "1"}, other_weights) != fingerprint(
        base, {"mini": "1"}, model
    )
