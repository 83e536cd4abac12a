"""Freezing HotpotQA into fixture sets, and the ``provenai freeze`` command."""

from __future__ import annotations

import json
import random
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_provenai import cli
from pytest_provenai._io import sha256_bytes, sha256_text
from pytest_provenai.errors import FixtureError, ProvenaiError
from pytest_provenai.frozen.freeze import HOTPOTQA_ATTRIBUTION, freeze_hotpotqa, infer_split
from pytest_provenai.frozen.load import load_fixture_set
from pytest_provenai.frozen.model import Case

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "fixtures" / "hotpotqa-dev60"
# ../shared/ lies beside the checkout (here and in CI)
DEV_DATA = REPO.parent / "shared" / "data" / "hotpotqa" / "dev_distractor.json"


def make_records(n: int = 12) -> list[dict[str, Any]]:
    """Small HotpotQA-shaped records: 4 paragraphs each, unicode, an empty sentence."""
    records = []
    for i in range(n):
        titles = [f"Title {i}-{k}" for k in range(4)]
        context = [
            [
                title,
                [f"{title} is a thing — “ünïcode” {k}.", f" It has {i + k} parts.", ""],
            ]
            for k, title in enumerate(titles)
        ]
        records.append(
            {
                "_id": f"{i:04x}5a8b57f25542995d",
                "answer": "yes" if i % 2 else f"Answer {i}",
                "question": f"Question {i}: which thing?",
                "supporting_facts": [[titles[1], 0], [titles[3], 1], [titles[1], 1]],
                "context": context,
                "type": "comparison" if i % 2 else "bridge",
                "level": "hard",
            }
        )
    return records


def write_input(tmp_path: Path, records: Any, name: str = "hotpot_dev_distractor_v1.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    return path


def tree_bytes(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


# --------------------------------------------------------------------------- round trip


def test_freeze_all_round_trips(tmp_path: Path) -> None:
    records = make_records()
    src = write_input(tmp_path, records)
    out = tmp_path / "sets" / "demo"
    fs = freeze_hotpotqa(src, out)

    assert fs.name == "demo"
    assert fs.path == str(out)
    assert sorted(p.name for p in out.iterdir()) == ["README.md", "cases", "manifest.json"]
    by_id = {case.id: case for case in fs.cases}
    assert list(by_id) == sorted(by_id)  # manifest order: sorted by case file path
    assert len(by_id) == len(records)
    for rec in records:
        case = by_id[rec["_id"]]
        assert isinstance(case, Case)
        assert case.fixture_set == "demo"
        assert case.path == str(out / "cases" / f"{rec['_id']}.json")
        assert (case.question, case.answer, case.type, case.level) == (
            rec["question"],
            rec["answer"],
            rec["type"],
            rec["level"],
        )
        assert [(f.title, f.sentence) for f in case.supporting_facts] == [
            tuple(f) for f in rec["supporting_facts"]
        ]
        assert case.supporting_titles == (rec["context"][1][0], rec["context"][3][0])
        assert [(s.title, list(s.sentences)) for s in case.sources] == [
            (t, s) for t, s in rec["context"]
        ]
        for source in case.sources:
            assert source.text == "".join(source.sentences)
            assert source.sha256 == sha256_text(source.text)
            assert source.version == 1

    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest == fs.manifest
    assert manifest["name"] == "demo"
    assert manifest["dataset"] == "hotpotqa"
    assert manifest["split"] == "dev"
    assert manifest["source_file"] == src.name
    assert manifest["source_sha256"] == sha256_bytes(src.read_bytes())
    assert manifest["licence"] == {
        "name": "CC BY-SA 4.0",
        "url": "https://creativecommons.org/licenses/by-sa/4.0/",
        "attribution": HOTPOTQA_ATTRIBUTION,
    }
    assert (manifest["seed"], manifest["sample"], manifest["count"]) == (42, None, 12)
    for rel, digest in manifest["files"].items():
        assert sha256_bytes((out / rel).read_bytes()) == digest
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert (
        "HotpotQA (Yang et al., EMNLP 2018, https://hotpotqa.github.io), CC BY-SA 4.0 — "
        "https://creativecommons.org/licenses/by-sa/4.0/; frozen by pytest-provenai; "
        "changes: reformatted into per-case JSON with sha256 digests"
    ) in readme
    # the freezer leaves nothing else next to the set
    assert [p.name for p in (tmp_path / "sets").iterdir()] == ["demo"]


def test_case_file_is_stable_json(tmp_path: Path) -> None:
    src = write_input(tmp_path, make_records(2))
    fs = freeze_hotpotqa(src, tmp_path / "demo")
    text = Path(fs.cases[0].path).read_text(encoding="utf-8")
    obj = json.loads(text)
    assert text == json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    assert "“ünïcode”" in text  # UTF-8 kept, not \u-escaped
    assert obj["schema_version"] == 1 and obj["kind"] == "hotpotqa"


def test_sample_is_seeded_and_kept_in_dataset_order(tmp_path: Path) -> None:
    records = make_records(30)
    src = write_input(tmp_path, records)
    fs = freeze_hotpotqa(src, tmp_path / "s", sample=7, seed=3)
    chosen = sorted(random.Random(3).sample(range(30), 7))
    assert {c.id for c in fs.cases} == {records[i]["_id"] for i in chosen}
    assert (fs.manifest["sample"], fs.manifest["seed"], fs.manifest["count"]) == (7, 3, 7)


def test_same_seed_gives_identical_bytes(tmp_path: Path) -> None:
    src = write_input(tmp_path, make_records(30))
    a = tmp_path / "a" / "set"
    b = tmp_path / "b" / "set"
    freeze_hotpotqa(src, a, sample=10, seed=7)
    freeze_hotpotqa(src, b, sample=10, seed=7)
    assert tree_bytes(a) == tree_bytes(b)
    assert len(tree_bytes(a)) == 12  # 10 cases + manifest + README


def test_different_seed_gives_different_sample(tmp_path: Path) -> None:
    src = write_input(tmp_path, make_records(30))
    one = freeze_hotpotqa(src, tmp_path / "one", sample=10, seed=1)
    two = freeze_hotpotqa(src, tmp_path / "two", sample=10, seed=2)
    assert {c.id for c in one.cases} != {c.id for c in two.cases}


def test_name_and_split_arguments(tmp_path: Path) -> None:
    src = write_input(tmp_path, make_records(3), name="records.json")
    fs = freeze_hotpotqa(src, tmp_path / "folder", name="my-set", split="validation")
    assert fs.name == "folder"  # a set is named by its folder
    assert (fs.manifest["name"], fs.manifest["split"]) == ("my-set", "validation")


@pytest.mark.parametrize(
    ("file_name", "split"),
    [
        ("hotpot_dev_distractor_v1.json", "dev"),
        ("dev_distractor.json", "dev"),
        ("hotpot_train_v1.1.json", "train"),
        ("train_distractor.json", "train"),
    ],
)
def test_infer_split(file_name: str, split: str) -> None:
    assert infer_split(file_name) == split


@pytest.mark.parametrize("file_name", ["records.json", "dev_and_train.json", "development.json"])
def test_infer_split_refuses_unclear_names(file_name: str) -> None:
    with pytest.raises(ProvenaiError, match=r"cannot tell the split .*--split"):
        infer_split(file_name)


# --------------------------------------------------------------------------- output folder


def test_refuses_non_empty_folder_without_overwrite(tmp_path: Path) -> None:
    src = write_input(tmp_path, make_records(3))
    out = tmp_path / "set"
    freeze_hotpotqa(src, out)
    before = tree_bytes(out)
    with pytest.raises(ProvenaiError, match=r"not empty; pass --overwrite"):
        freeze_hotpotqa(src, out, sample=1)
    assert tree_bytes(out) == before


def test_overwrite_replaces_the_set(tmp_path: Path) -> None:
    src = write_input(tmp_path, make_records(5))
    out = tmp_path / "set"
    freeze_hotpotqa(src, out)
    (out / "cases" / "stale.txt").write_text("old", encoding="utf-8")
    fs = freeze_hotpotqa(src, out, sample=2, overwrite=True)
    assert len(fs.cases) == 2
    assert not (out / "cases" / "stale.txt").exists()
    assert len(list((out / "cases").iterdir())) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == [src.name, "set"]


def test_overwrite_refuses_a_folder_that_is_not_a_set(tmp_path: Path) -> None:
    src = write_input(tmp_path, make_records(2))
    out = tmp_path / "precious"
    out.mkdir()
    (out / "notes.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(ProvenaiError, match=r"not a fixture set \(it has no manifest.json\)"):
        freeze_hotpotqa(src, out, overwrite=True)
    assert (out / "notes.txt").read_text(encoding="utf-8") == "keep me"


NOT_SET_MANIFESTS = {
    # what `provenai index build` writes, and other folders that merely hold a manifest.json
    "index-manifest": json.dumps({"schema_version": 1, "kind": "index", "rows": 10}),
    "other-tool": json.dumps({"name": "my app", "version": "1.0"}),
    "array": "[]",
    "not-json": "manifest, version 2",
    "deep-nesting": "[" * 100_000 + "]" * 100_000,
}


@pytest.mark.parametrize("content", list(NOT_SET_MANIFESTS.values()), ids=list(NOT_SET_MANIFESTS))
def test_overwrite_refuses_a_folder_whose_manifest_is_not_a_set_manifest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str
) -> None:
    src = write_input(tmp_path, make_records(2))
    out = tmp_path / "precious"
    out.mkdir()
    (out / "manifest.json").write_text(content, encoding="utf-8")
    (out / "data.bin").write_bytes(b"keep me")
    before = tree_bytes(out)
    with pytest.raises(ProvenaiError, match=r"refusing to overwrite a folder that is not a fix"):
        freeze_hotpotqa(src, out, overwrite=True)
    assert tree_bytes(out) == before
    assert cli.main(["freeze", "hotpotqa", str(src), "--out", str(out), "--overwrite"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"provenai: error: {out}: refusing to overwrite a folder that is not")
    assert f"{out / 'manifest.json'}" in err and err.count("\n") == 1
    assert tree_bytes(out) == before


@pytest.mark.parametrize("broken", ["case-digest", "provenance-kind"])
def test_overwrite_replaces_any_fixture_set_even_a_broken_one(tmp_path: Path, broken: str) -> None:
    src = write_input(tmp_path, make_records(3))
    out = tmp_path / "set"
    if broken == "case-digest":  # a set that no longer loads is still a set
        freeze_hotpotqa(src, out)
        next((out / "cases").iterdir()).write_text("{}", encoding="utf-8")
    else:
        shutil.copytree(REPO / "fixtures" / "synthetic-no-answer", out)
    assert len(freeze_hotpotqa(src, out, overwrite=True).cases) == 3


def test_empty_existing_folder_is_fine(tmp_path: Path) -> None:
    src = write_input(tmp_path, make_records(2))
    (tmp_path / "set").mkdir()
    assert len(freeze_hotpotqa(src, tmp_path / "set").cases) == 2


def test_refuses_a_file_as_output(tmp_path: Path) -> None:
    src = write_input(tmp_path, make_records(2))
    (tmp_path / "set").write_text("x", encoding="utf-8")
    with pytest.raises(ProvenaiError, match=r"exists and is not a folder"):
        freeze_hotpotqa(src, tmp_path / "set")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sample": 0}, r"sample must be at least 1, got 0"),
        ({"sample": 13}, r"cannot sample 13 records, the file has only 12"),
        ({"seed": "x"}, r"seed must be an integer"),
    ],
)
def test_bad_arguments(tmp_path: Path, kwargs: dict[str, Any], message: str) -> None:
    src = write_input(tmp_path, make_records())
    with pytest.raises(ProvenaiError, match=message):
        freeze_hotpotqa(src, tmp_path / "set", **kwargs)
    assert not (tmp_path / "set").exists()


# --------------------------------------------------------------------------- bad input


def _drop(key: str) -> Any:
    def mutate(records: list[Any]) -> None:
        del records[1][key]

    return mutate


def _set(path: tuple[Any, ...], value: Any) -> Any:
    def mutate(records: list[Any]) -> None:
        target = records
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value

    return mutate


BAD_RECORDS = [
    (_drop("_id"), "/1/_id", "the HotpotQA key '_id'", "none (missing)"),
    (_drop("context"), "/1/context", "the HotpotQA key 'context'", "none (missing)"),
    (_set((1, "question"), 7), "/1/question", "a non-empty string", "the number 7"),
    (_set((1, "question"), ""), "/1/question", "a non-empty string", "the empty string"),
    (_set((1, "answer"), None), "/1/answer", "a string", "null"),
    (_set((1,), ["not", "a", "record"]), "/1", "a HotpotQA record", "an array of 3 items"),
    (_set((1, "_id"), "../escape"), "/1/_id", "it names the case file", '"../escape"'),
    (_set((2, "_id"), "0001" + "5a8b57f25542995d"), "/2/_id", "no other record uses", "record 1"),
    (_set((2, "_id"), "0001" + "5A8B57F25542995D"), "/2/_id", "ignoring letter case", "record 1"),
    (_set((1, "supporting_facts"), {}), "/1/supporting_facts", "an array", "an object"),
    (
        _set((1, "supporting_facts", 0), ["Title 1-1"]),
        "/1/supporting_facts/0",
        "a [title, sentence index] pair",
        "an array of 1 item",
    ),
    (
        _set((1, "supporting_facts", 0, 1), "0"),
        "/1/supporting_facts/0/1",
        "a sentence index",
        '"0"',
    ),
    (
        _set((1, "supporting_facts", 0, 1), True),
        "/1/supporting_facts/0/1",
        "a sentence index",
        "true",
    ),
    (
        _set((1, "supporting_facts", 1, 0), "Nowhere"),
        "/1/supporting_facts/1/0",
        "the title of one of the record's context paragraphs",
        '"Nowhere"',
    ),
    (_set((1, "context"), []), "/1/context", "at least one", "[]"),
    (_set((1, "context", 2), "para"), "/1/context/2", "a [title, sentences] pair", "string"),
    (_set((1, "context", 2, 0), ""), "/1/context/2/0", "a non-empty string", "empty string"),
    (
        _set((1, "context", 2, 1), "one sentence"),
        "/1/context/2/1",
        "an array of sentence strings",
        '"one sentence"',
    ),
    (_set((1, "context", 2, 1, 0), 3), "/1/context/2/1/0", "a string", "the number 3"),
]


@pytest.mark.parametrize(("mutate", "pointer", "expected", "actual"), BAD_RECORDS)
def test_bad_input_record(
    tmp_path: Path, mutate: Any, pointer: str, expected: str, actual: str
) -> None:
    records = make_records(4)
    mutate(records)
    src = write_input(tmp_path, records)
    with pytest.raises(FixtureError) as info:
        freeze_hotpotqa(src, tmp_path / "set")
    err = info.value
    assert (err.path, err.pointer) == (str(src), pointer)
    assert expected in err.expected
    assert actual in err.actual
    assert str(err) == f"{src}#{pointer}: expected {err.expected}, got {err.actual}"
    assert not (tmp_path / "set").exists()


def test_input_not_an_array(tmp_path: Path) -> None:
    src = write_input(tmp_path, {"data": []})
    with pytest.raises(FixtureError) as info:
        freeze_hotpotqa(src, tmp_path / "set")
    assert str(info.value) == f"{src}: expected a JSON array of HotpotQA records, got an object"


def test_input_invalid_json_gives_line_and_column(tmp_path: Path) -> None:
    src = tmp_path / "dev.json"
    src.write_text('[\n  {"_id": "a",\n   "question" "q"}\n]\n', encoding="utf-8")
    with pytest.raises(FixtureError) as info:
        freeze_hotpotqa(src, tmp_path / "set")
    assert info.value.path == str(src)
    assert info.value.actual == "invalid JSON at line 3:15: Expecting ':' delimiter"


def test_input_not_utf8(tmp_path: Path) -> None:
    src = tmp_path / "dev.json"
    src.write_bytes(b'[{"_id": "caf\xe9"}]')
    with pytest.raises(FixtureError) as info:
        freeze_hotpotqa(src, tmp_path / "set")
    assert info.value.expected == "UTF-8 text"
    assert info.value.actual == "byte 0xe9 that is not UTF-8 at line 1:14 (byte offset 13)"


def test_input_missing(tmp_path: Path) -> None:
    with pytest.raises(FixtureError) as info:
        freeze_hotpotqa(tmp_path / "dev.json", tmp_path / "set")
    assert (
        str(info.value)
        == f"{tmp_path / 'dev.json'}: expected a HotpotQA JSON file, got no such file"
    )


# --------------------------------------------------------------------------- CLI


def test_cli_freeze(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = write_input(tmp_path, make_records(9))
    out = tmp_path / "set"
    code = cli.main(["freeze", "hotpotqa", str(src), "--out", str(out), "--sample", "4"])
    captured = capsys.readouterr()
    assert code == 0
    assert captured.err == ""
    assert re.fullmatch(
        rf"froze 4 HotpotQA dev cases into {re.escape(str(out))} in \d+\.\d\d s\n", captured.out
    )
    assert len(load_fixture_set(out).cases) == 4
    assert load_fixture_set(out).manifest["seed"] == 42


def test_cli_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = write_input(tmp_path, make_records(9), name="data.json")
    out = tmp_path / "set"
    argv = ["freeze", "hotpotqa", str(src), "--out", str(out), "--sample", "3", "--seed", "5"]
    argv += ["--name", "named", "--split", "train"]
    assert cli.main(argv) == 0
    assert cli.main([*argv, "--overwrite"]) == 0
    manifest = load_fixture_set(out).manifest
    assert (manifest["name"], manifest["split"], manifest["seed"]) == ("named", "train", 5)
    assert capsys.readouterr().out.count("froze 3 HotpotQA train cases") == 2


def test_cli_refuses_existing_set(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = write_input(tmp_path, make_records(3))
    out = tmp_path / "set"
    assert cli.main(["freeze", "hotpotqa", str(src), "--out", str(out)]) == 0
    capsys.readouterr()
    assert cli.main(["freeze", "hotpotqa", str(src), "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"provenai: error: {out}: folder exists and is not empty; "
        "pass --overwrite (overwrite=True) to replace it\n"
    )


def test_cli_bad_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = make_records(3)
    records[2]["supporting_facts"][0][1] = -1
    src = write_input(tmp_path, records)
    assert cli.main(["freeze", "hotpotqa", str(src), "--out", str(tmp_path / "set")]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"provenai: error: {src}#/2/supporting_facts/0/1: "
        "expected a sentence index (an integer >= 0), got the number -1\n"
    )


def _escaping_input(how: str) -> bytes:
    """HotpotQA input that the JSON parser cannot hold (see test_frozen_load.py)."""
    if how == "deep-nesting":
        return b"[" * 100_000 + b"]" * 100_000
    records = make_records(3)
    records[1]["supporting_facts"][0][1] = 1234567
    records[1]["context"][0][1][0] = "SURROGATE"
    text = json.dumps(records, ensure_ascii=False)
    if how == "long-integer":
        return text.replace("1234567", "9" * 5000).encode("utf-8")
    return text.replace('"SURROGATE"', '"x\\ud800y"').encode("utf-8")


@pytest.mark.parametrize(
    ("how", "where"),
    [
        ("deep-nesting", ": expected JSON nested at most 64 levels deep, got nesting deeper"),
        ("long-integer", "#/1/supporting_facts/0/1: expected an integer of at most 640 digits"),
        ("lone-surrogate", "#/1/context/0/1/0: expected Unicode text"),
    ],
)
def test_cli_input_the_parser_cannot_hold_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str, where: str
) -> None:
    src = tmp_path / "hotpot_dev.json"
    src.write_bytes(_escaping_input(how))
    out = tmp_path / "set"
    assert cli.main(["freeze", "hotpotqa", str(src), "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"provenai: error: {src}{where}"), captured.err
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert not out.exists()


def test_cli_missing_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["freeze", "hotpotqa", str(tmp_path / "nope.json"), "--out", "x"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("provenai: error: ") and "no such file" in err
    assert "Traceback" not in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["freeze"],
        ["freeze", "squad", "x.json", "--out", "d"],
        ["freeze", "hotpotqa", "x.json"],
        ["freeze", "hotpotqa", "x.json", "--out", "d", "--sample", "0"],
        ["freeze", "hotpotqa", "x.json", "--out", "d", "--seed", "one"],
    ],
)
def test_cli_usage_errors(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "usage: provenai" in err and "error:" in err


def test_cli_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["freeze", "hotpotqa", "--help"]) == 0
    assert "--overwrite" in capsys.readouterr().out


# --------------------------------------------------------------------------- shipped set


@pytest.mark.skipif(not DEV_DATA.is_file(), reason="HotpotQA dev data not on this machine")
def test_shipped_set_is_reproducible(tmp_path: Path) -> None:
    fs = freeze_hotpotqa(DEV_DATA, tmp_path / SHIPPED.name, sample=60, seed=42)
    assert len(fs.cases) == 60
    assert tree_bytes(tmp_path / SHIPPED.name) == tree_bytes(SHIPPED)
