"""Strict loading of frozen fixture sets: every problem names file, pointer, expected, actual."""

from __future__ import annotations

import copy
import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fixture_edit import (
    delete_at,
    edit_case,
    load_error,
    read_json,
    set_at,
    write_case_bytes,
    write_manifest,
)
from jsonschema import Draft202012Validator

from pytest_provenai._io import sha256_bytes, sha256_text
from pytest_provenai.errors import FixtureError
from pytest_provenai.frozen.freeze import freeze_hotpotqa
from pytest_provenai.frozen.kind_hotpotqa import case_surely_valid
from pytest_provenai.frozen.load import (
    json_pointer,
    load_fixture_set,
    load_fixture_sets,
    load_schema,
    manifest_kind,
    parse_case,
    parse_json_bytes,
)
from pytest_provenai.frozen.model import Case

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "fixtures" / "hotpotqa-dev60"


def make_records(n: int = 3) -> list[dict[str, Any]]:
    records = []
    for i in range(n):
        titles = [f"Doc {i}.{k}" for k in range(5)]
        records.append(
            {
                "_id": f"case{i}",
                "answer": f"answer {i}",
                "question": f"What is {i}?",
                "supporting_facts": [[titles[0], 0], [titles[2], 1]],
                "context": [[t, [f"{t} starts here.", " Then “more” follows."]] for t in titles],
                "type": "bridge",
                "level": "medium",
            }
        )
    return records


@pytest.fixture
def set_dir(tmp_path: Path) -> Path:
    src = tmp_path / "dev.json"
    src.write_text(json.dumps(make_records()), encoding="utf-8")
    out = tmp_path / "demo"
    freeze_hotpotqa(src, out)
    return out


CASE1 = "cases/case1.json"


# --------------------------------------------------------------------------- good sets


def test_loads_a_frozen_set(set_dir: Path) -> None:
    fs = load_fixture_set(set_dir)
    assert fs.name == "demo"
    assert fs.path == str(set_dir)
    assert [c.id for c in fs.cases] == ["case0", "case1", "case2"]
    assert list(fs.manifest["files"]) == [f"cases/case{i}.json" for i in range(3)]
    case = fs.cases[1]
    assert isinstance(case, Case)
    assert case.fixture_set == "demo"
    assert case.path == os.path.join(str(set_dir), CASE1)
    assert case.supporting_titles == ("Doc 1.0", "Doc 1.2")
    assert case.sources[2].text == "Doc 1.2 starts here. Then “more” follows."
    assert case.sources[2].sha256 == sha256_text(case.sources[2].text)


def test_cases_follow_manifest_order(set_dir: Path) -> None:
    def reverse(m: dict[str, Any]) -> None:
        m["files"] = dict(reversed(list(m["files"].items())))

    manifest = read_json(set_dir / "manifest.json")
    reverse(manifest)
    (set_dir / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert [c.id for c in load_fixture_set(set_dir).cases] == ["case2", "case1", "case0"]


def test_non_case_files_are_ignored(set_dir: Path) -> None:
    (set_dir / "NOTES.txt").write_text("hi", encoding="utf-8")
    (set_dir / "cases" / ".DS_Store").write_bytes(b"\0")
    assert len(load_fixture_set(set_dir).cases) == 3


def test_shipped_set_loads() -> None:
    fs = load_fixture_set(SHIPPED)
    assert fs.name == "hotpotqa-dev60"
    assert len(fs.cases) == 60 == fs.manifest["count"]
    assert fs.manifest["licence"]["name"] == "CC BY-SA 4.0"
    assert {c.type for c in fs.cases if isinstance(c, Case)} == {"bridge", "comparison"}


def test_schemas_are_valid_draft_2020_12() -> None:
    for name in ("case", "manifest"):
        schema = load_schema(name)
        Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_every_kind_has_one_row_in_the_kind_table() -> None:
    from pytest_provenai.frozen.kinds import FIXTURE_KINDS
    from pytest_provenai.frozen.model import KINDS
    from pytest_provenai.frozen.validate import SCHEMA_NAMES

    assert tuple(FIXTURE_KINDS) == KINDS
    for kind in FIXTURE_KINDS.values():
        assert {kind.case_schema, kind.manifest_schema} <= set(SCHEMA_NAMES)


def test_json_pointer_escapes() -> None:
    assert json_pointer() == ""
    assert json_pointer("files", "cases/a~b.json") == "/files/cases~1a~0b.json"
    assert json_pointer("sources", 3, "sha256") == "/sources/3/sha256"


# --------------------------------------------------------------------------- folder


def test_missing_folder(tmp_path: Path) -> None:
    err = load_error(tmp_path / "nope")
    assert (err.path, err.pointer, err.actual) == (str(tmp_path / "nope"), "", "no such folder")
    assert "manifest.json" in err.expected


def test_path_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x", encoding="utf-8")
    assert load_error(tmp_path / "f").actual == "a file"


def test_missing_manifest(set_dir: Path) -> None:
    (set_dir / "manifest.json").unlink()
    err = load_error(set_dir)
    assert (err.path, err.pointer) == (str(set_dir / "manifest.json"), "")
    assert err.actual == "no such file"


def test_a_case_file_that_is_a_fifo_is_named_for_what_it_is_and_never_opened(
    set_dir: Path,
) -> None:
    (set_dir / CASE1).unlink()
    os.mkfifo(set_dir / CASE1)  # opening it for reading would block forever
    err = load_error(set_dir)
    assert err.pointer == "/files/cases~1case1.json"
    assert err.actual == "a FIFO (named pipe), not a regular file"


def test_a_hotpotqa_input_that_is_a_fifo_is_named_for_what_it_is(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "dev.json")
    with pytest.raises(FixtureError) as info:
        freeze_hotpotqa(tmp_path / "dev.json", tmp_path / "out")
    assert info.value.actual == "a FIFO (named pipe), not a regular file"


# --------------------------------------------------------------------------- bytes and JSON


def test_invalid_json_case_gives_line_and_column(set_dir: Path) -> None:
    text = (set_dir / CASE1).read_text(encoding="utf-8").replace('"answer":', '"answer"', 1)
    write_case_bytes(set_dir, CASE1, text.encode("utf-8"), pin=False)
    err = load_error(set_dir)
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if '"answer"' in ln)
    assert (err.path, err.pointer, err.expected) == (str(set_dir / CASE1), "", "valid JSON")
    assert err.actual == f"invalid JSON at line {line}:12: Expecting ':' delimiter"


def test_invalid_json_manifest(set_dir: Path) -> None:
    (set_dir / "manifest.json").write_text('{"count": 3,,}', encoding="utf-8")
    err = load_error(set_dir)
    assert err.path == str(set_dir / "manifest.json")
    assert err.actual.startswith("invalid JSON at line 1:13: ")


def test_non_utf8_bytes(set_dir: Path) -> None:
    data = (set_dir / CASE1).read_bytes().replace("“more”".encode(), b"\x93more\x94", 1)
    write_case_bytes(set_dir, CASE1, data)
    err = load_error(set_dir)
    offset = data.index(b"\x93")
    line = data.count(b"\n", 0, offset) + 1
    col = offset - data.rindex(b"\n", 0, offset)
    assert (err.path, err.pointer, err.expected) == (str(set_dir / CASE1), "", "UTF-8 text")
    assert err.actual == f"byte 0x93 that is not UTF-8 at line {line}:{col} (byte offset {offset})"


def test_byte_order_mark(set_dir: Path) -> None:
    write_case_bytes(set_dir, CASE1, b"\xef\xbb\xbf" + (set_dir / CASE1).read_bytes())
    assert load_error(set_dir).actual == "a BOM at line 1:1"


def test_duplicate_json_key(set_dir: Path) -> None:
    text = (set_dir / CASE1).read_text(encoding="utf-8")
    text = text.replace('"answer": "answer 1",', '"answer": "answer 1",\n  "answer": "other",')
    write_case_bytes(set_dir, CASE1, text.encode("utf-8"))
    err = load_error(set_dir)
    assert (err.expected, err.actual) == ("JSON objects with unique keys", 'duplicate key "answer"')


def test_nan_is_not_json(set_dir: Path) -> None:
    text = (set_dir / CASE1).read_text(encoding="utf-8").replace('"version": 1', '"version": NaN')
    write_case_bytes(set_dir, CASE1, text.encode("utf-8"))
    assert load_error(set_dir).actual == "NaN (not JSON)"


# JSON the parser itself cannot hold: nesting deeper than the recursion limit, integers longer
# than Python's int/str limit, escaped lone surrogates (valid JSON, not Unicode text). Each
# must be one FixtureError naming the file, never RecursionError / ValueError /
# UnicodeEncodeError out of the loader.

DEEP = b"[" * 100_000 + b"]" * 100_000
BIG_INT = b"9" * 5_000


def _replace(old: bytes, new: bytes) -> Callable[[bytes], bytes]:
    def edit(data: bytes) -> bytes:
        assert old in data
        return data.replace(old, new)

    return edit


ESCAPING_CASE_FILES = {
    "deep-nesting": (
        _replace(b'"level": "medium"', b'"level": ' + DEEP),
        "",
        "JSON nested at most 64 levels deep",
        "nesting deeper than 64 levels at line ",
    ),
    "long-integer": (
        _replace(b'"level": "medium"', b'"level": ' + BIG_INT),
        "/level",
        "an integer of at most 640 digits",
        "an integer of 5000 digits",
    ),
    "lone-surrogate-in-source": (  # sentence and text alike, so only the surrogate is wrong
        _replace(b"Doc 1.2 starts here.", b"Doc 1.2 starts\\ud800 here."),
        "/sources/2/sentences/0",
        "Unicode text (UTF-8 has no lone surrogates)",
        "a lone surrogate U+D800 at character 14",
    ),
    "lone-surrogate-in-question": (
        _replace(b'"What is 1?"', b'"What is 1\\udfff?"'),
        "/question",
        "Unicode text (UTF-8 has no lone surrogates)",
        "a lone surrogate U+DFFF at character 9",
    ),
    "lone-surrogate-in-a-key": (
        _replace(b'"level":', b'"lev\\ud800el":'),
        "",
        "Unicode text (UTF-8 has no lone surrogates)",
        "a member name with a lone surrogate U+D800 at character 3",
    ),
}


@pytest.mark.parametrize(
    ("edit", "pointer", "expected", "actual"),
    list(ESCAPING_CASE_FILES.values()),
    ids=list(ESCAPING_CASE_FILES),
)
def test_json_the_parser_cannot_hold_is_a_fixture_error_in_a_case_file(
    set_dir: Path, edit: Callable[[bytes], bytes], pointer: str, expected: str, actual: str
) -> None:
    write_case_bytes(set_dir, CASE1, edit((set_dir / CASE1).read_bytes()))
    err = load_error(set_dir)
    assert (err.path, err.pointer, err.expected) == (str(set_dir / CASE1), pointer, expected)
    assert err.actual.startswith(actual), err.actual


ESCAPING_MANIFESTS = {
    "deep-nesting": (b'"seed": 42', b'"seed": ' + DEEP, ""),
    "long-integer": (b'"seed": 42', b'"seed": ' + BIG_INT, "/seed"),
    "lone-surrogate": (b'"split": "dev"', b'"split": "d\\udc00ev"', "/split"),
}


@pytest.mark.parametrize(
    ("old", "new", "pointer"), list(ESCAPING_MANIFESTS.values()), ids=list(ESCAPING_MANIFESTS)
)
def test_json_the_parser_cannot_hold_is_a_fixture_error_in_a_manifest(
    set_dir: Path, old: bytes, new: bytes, pointer: str
) -> None:
    manifest = set_dir / "manifest.json"
    manifest.write_bytes(_replace(old, new)(manifest.read_bytes()))
    err = load_error(set_dir)
    assert (err.path, err.pointer) == (str(manifest), pointer)
    assert manifest_kind(set_dir) in ("hotpotqa", None)  # never raises


@pytest.mark.parametrize("depth", [64, 65, 500])
def test_nesting_limit(depth: int) -> None:
    data = b"[" * depth + b"]" * depth
    if depth <= 64:
        assert parse_json_bytes(data, "x.json") is not None
        return
    with pytest.raises(FixtureError) as info:
        parse_json_bytes(data, "x.json")
    assert (info.value.pointer, info.value.expected) == (
        "/0" * 64,
        "JSON nested at most 64 levels deep",
    )
    assert info.value.actual == "an array of " + ("1 item" if depth > 65 else "0 items") + (
        " at level 65"
    )


def test_limits_leave_ordinary_json_alone() -> None:
    doc = parse_json_bytes(
        b'{"n": ' + b"9" * 640 + b', "pair": "\\ud83d\\ude00", "esc": "\\\\ud800"}', "x.json"
    )
    assert doc == {"n": int("9" * 640), "pair": "\U0001f600", "esc": "\\ud800"}


# --------------------------------------------------------------------------- schemas


CASE_SCHEMA_VIOLATIONS = [
    (delete_at("question"), "/question", 'required property "question"', "none"),
    (delete_at("sources", 1, "sha256"), "/sources/1/sha256", 'required property "sha256"', "none"),
    (set_at("sources", 0, "version", value="1"), "/sources/0/version", "an integer", '"1"'),
    (set_at("sources", 0, "version", value=0), "/sources/0/version", ">= 1", "the number 0"),
    (set_at("sources", 1, "url", value="x"), "/sources/1/url", "only the properties", '"url"'),
    (set_at("extra", value=1), "/extra", "only the properties answer, id,", 'property "extra"'),
    (set_at("schema_version", value=2), "/schema_version", "1", "the number 2"),
    (set_at("kind", value="squad"), "/kind", '"hotpotqa"', '"squad"'),
    (
        set_at("sources", 2, "sha256", value="AB" * 32),
        "/sources/2/sha256",
        "a string matching ^[0-9a-f]{64}$",
        '"ABAB',
    ),
    (
        set_at("supporting_facts", 1, "sentence", value=-1),
        "/supporting_facts/1/sentence",
        "a number >= 0",
        "-1",
    ),
    (set_at("sources", value=[]), "/sources", "at least 1 items", "0 items"),
    (set_at("question", value=""), "/question", "at least 1 characters", "0 characters"),
    (
        set_at("supporting_titles", value=["Doc 1.0", "Doc 1.0"]),
        "/supporting_titles/1",
        "unique items",
        'a repeat of the string "Doc 1.0"',
    ),
    (set_at("id", value="../x"), "/id", "a string matching", '"../x"'),
    (set_at("id", value="case1\n"), "/id", "a string matching", '"case1\\n"'),
]


@pytest.mark.parametrize(("mutate", "pointer", "expected", "actual"), CASE_SCHEMA_VIOLATIONS)
def test_case_schema_violation(
    set_dir: Path, mutate: Any, pointer: str, expected: str, actual: str
) -> None:
    edit_case(set_dir, CASE1, mutate)
    err = load_error(set_dir)
    assert (err.path, err.pointer) == (str(set_dir / CASE1), pointer)
    assert expected in err.expected
    assert actual in err.actual


MANIFEST_SCHEMA_VIOLATIONS = [
    (delete_at("licence"), "/licence", 'required property "licence"', "none"),
    (set_at("licence", "name", value="MIT"), "/licence/name", '"CC BY-SA 4.0"', '"MIT"'),
    (set_at("count", value="3"), "/count", "an integer", '"3"'),
    (set_at("sample", value=0), "/sample", ">= 1", "the number 0"),
    (set_at("sample", value="all"), "/sample", "an integer or null", '"all"'),
    (set_at("source_file", value="data/dev.json"), "/source_file", "matching", "data/dev.json"),
    (
        set_at("files", "cases/case1.json", value="0" * 63),
        "/files/cases~1case1.json",
        "matching ^[0-9a-f]{64}$",
        "0" * 63,
    ),
    (set_at("files", value={}), "/files", "at least 1 properties", "0 properties"),
    (set_at("dataset", value="squad"), "/dataset", '"hotpotqa"', '"squad"'),
    (set_at("seed", value=True), "/seed", "an integer", "true"),
    (
        set_at("source_sha256", value="a" * 64 + "\n"),
        "/source_sha256",
        "a string matching",
        '"aaaa',
    ),
]


@pytest.mark.parametrize(("mutate", "pointer", "expected", "actual"), MANIFEST_SCHEMA_VIOLATIONS)
def test_manifest_schema_violation(
    set_dir: Path, mutate: Any, pointer: str, expected: str, actual: str
) -> None:
    write_manifest(set_dir, mutate)
    err = load_error(set_dir)
    assert (err.path, err.pointer) == (str(set_dir / "manifest.json"), pointer)
    assert expected in err.expected
    assert actual in err.actual


# --------------------------------------------------------------------------- digests


def test_case_file_digest_mismatch(set_dir: Path) -> None:
    pinned = read_json(set_dir / "manifest.json")["files"][CASE1]
    data = (set_dir / CASE1).read_bytes() + b"\n"  # same JSON, different bytes
    write_case_bytes(set_dir, CASE1, data, pin=False)
    err = load_error(set_dir)
    assert (err.path, err.pointer) == (str(set_dir / CASE1), "")
    assert err.expected == (
        f"sha256 {pinned} (from {set_dir / 'manifest.json'} /files/cases~1case1.json)"
    )
    assert err.actual == f"sha256 {sha256_bytes(data)}"


def test_source_digest_mismatch(set_dir: Path) -> None:
    text = read_json(set_dir / CASE1)["sources"][3]["text"]
    edit_case(set_dir, CASE1, set_at("sources", 3, "sha256", value="0" * 64))
    err = load_error(set_dir)
    assert (err.path, err.pointer) == (str(set_dir / CASE1), "/sources/3/sha256")
    assert err.expected == f"{sha256_text(text)} (sha256 of /sources/3/text)"
    assert err.actual == "0" * 64


def test_source_text_edited_consistently_is_caught_by_its_digest(set_dir: Path) -> None:
    def edit(obj: dict[str, Any]) -> None:
        src = obj["sources"][4]
        src["sentences"][0] = "Doc 1.4 starts elsewhere."
        src["text"] = "".join(src["sentences"])

    edit_case(set_dir, CASE1, edit)
    err = load_error(set_dir)
    assert err.pointer == "/sources/4/sha256"


def test_text_is_not_the_joined_sentences(set_dir: Path) -> None:
    edit_case(set_dir, CASE1, set_at("sources", 2, "text", value="Doc 1.2 starts here.Then more."))
    err = load_error(set_dir)
    assert (err.path, err.pointer) == (str(set_dir / CASE1), "/sources/2/text")
    assert err.expected == '"".join(/sources/2/sentences) (41 characters)'
    assert err.actual == "a text that differs from it at character 20 (30 characters)"


# --------------------------------------------------------------------------- manifest entries


def test_manifest_entry_without_file(set_dir: Path) -> None:
    (set_dir / CASE1).unlink()
    err = load_error(set_dir)
    assert (err.path, err.pointer) == (str(set_dir / "manifest.json"), "/files/cases~1case1.json")
    assert err.expected == f"an existing file {os.path.join(str(set_dir), CASE1)}"
    assert err.actual == "no such file"


@pytest.mark.parametrize("rel", ["cases/extra.json", "cases/sub/deeper.json"])
def test_unlisted_case_file(set_dir: Path, rel: str) -> None:
    (set_dir / rel).parent.mkdir(exist_ok=True)
    shutil.copy(set_dir / CASE1, set_dir / rel)
    err = load_error(set_dir)
    assert (err.path, err.pointer) == (os.path.join(str(set_dir), rel), "")
    assert err.expected == f"an entry for {rel} in {set_dir / 'manifest.json'} /files"
    assert err.actual == "a case file the manifest does not list"


def _replace_entry(set_dir: Path, new_key: str) -> None:
    def mutate(m: dict[str, Any]) -> None:
        m["files"][new_key] = m["files"].pop(CASE1)

    write_manifest(set_dir, mutate)


@pytest.mark.parametrize(
    ("key", "expected", "actual"),
    [
        ("/etc/passwd", "a relative POSIX path", '"/etc/passwd"'),
        ("cases\\case1.json", "a relative POSIX path", "non-POSIX"),
        ("C:/cases/case1.json", "a relative POSIX path", "absolute"),
        ("cases/../../outside.json", "a path inside the set folder", 'escapes it through ".."'),
        ("../demo/cases/case1.json", "a path inside the set folder", ".."),
        ("README.md", "a path of the form cases/<id>.json", '"README.md"'),
        ("cases/./case1.json", "a path of the form cases/<id>.json", "cases/./case1.json"),
        ("cases/case1.txt", "a path of the form cases/<id>.json", "case1.txt"),
    ],
)
def test_manifest_path_must_stay_in_the_set(
    set_dir: Path, key: str, expected: str, actual: str
) -> None:
    (set_dir.parent / "outside.json").write_bytes((set_dir / CASE1).read_bytes())
    _replace_entry(set_dir, key)
    err = load_error(set_dir)
    assert (err.path, err.pointer) == (str(set_dir / "manifest.json"), json_pointer("files", key))
    assert expected in err.expected
    assert actual in err.actual


def test_symlink_resolving_outside_the_set(set_dir: Path) -> None:
    outside = set_dir.parent / "outside.json"
    (set_dir / CASE1).rename(outside)
    try:
        (set_dir / CASE1).symlink_to(outside)
    except OSError:  # pragma: no cover - no symlinks on this platform
        pytest.skip("symlinks not available")
    err = load_error(set_dir)
    assert (err.path, err.pointer) == (str(set_dir / "manifest.json"), "/files/cases~1case1.json")
    assert err.expected == "a path inside the set folder"
    assert err.actual == f'"{CASE1}", which resolves to {outside.resolve()} through a symlink'


def test_symlink_inside_the_set_is_fine(set_dir: Path) -> None:
    (set_dir / "store").mkdir()
    (set_dir / CASE1).rename(set_dir / "store" / "c1.json")
    (set_dir / CASE1).symlink_to(Path("..") / "store" / "c1.json")
    assert len(load_fixture_set(set_dir).cases) == 3


def test_count_differs_from_entries(set_dir: Path) -> None:
    write_manifest(set_dir, set_at("count", value=4))
    err = load_error(set_dir)
    assert (err.path, err.pointer) == (str(set_dir / "manifest.json"), "/count")
    assert (err.expected, err.actual) == ("3 (the number of entries in /files)", "4")


# --------------------------------------------------------------------------- case semantics


def test_duplicate_case_id_across_files(set_dir: Path) -> None:
    data = (set_dir / CASE1).read_bytes()
    (set_dir / "cases" / "zcopy.json").write_bytes(data)

    def add(m: dict[str, Any]) -> None:
        m["files"]["cases/zcopy.json"] = sha256_bytes(data)
        m["count"] = 4

    write_manifest(set_dir, add)
    err = load_error(set_dir)
    assert (err.path, err.pointer) == (os.path.join(str(set_dir), "cases/zcopy.json"), "/id")
    assert err.expected == "a case id no other case file in the set uses"
    assert err.actual == f'"case1", already the id of {os.path.join(str(set_dir), CASE1)}'


def test_supporting_title_not_a_source(set_dir: Path) -> None:
    edit_case(set_dir, CASE1, set_at("supporting_titles", 1, value="Elsewhere"))
    err = load_error(set_dir)
    assert (err.path, err.pointer) == (str(set_dir / CASE1), "/supporting_titles/1")
    assert err.expected == "the title of one of the case's sources"
    assert err.actual == 'the string "Elsewhere"'


def test_supporting_fact_title_not_a_source(set_dir: Path) -> None:
    edit_case(set_dir, CASE1, set_at("supporting_facts", 0, "title", value="Elsewhere"))
    err = load_error(set_dir)
    assert err.pointer == "/supporting_facts/0/title"
    assert err.actual == 'the string "Elsewhere"'


# --------------------------------------------------------------------------- several sets


def test_load_fixture_sets_keeps_going(tmp_path: Path, set_dir: Path) -> None:
    good2 = tmp_path / "second"
    shutil.copytree(set_dir, good2)
    broken = tmp_path / "broken"
    shutil.copytree(set_dir, broken)
    (broken / CASE1).write_bytes(b"{}")
    sets, errors = load_fixture_sets([set_dir, tmp_path / "missing", broken, good2])
    assert [s.name for s in sets] == ["demo", "second"]
    assert [e.path for e in errors] == [str(tmp_path / "missing"), str(broken / CASE1)]
    assert all(isinstance(e, FixtureError) for e in errors)


# --------------------------------------------------------------------------- fast path


def _mutations(doc: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """(path, replacement) pairs: every node swapped for every odd value, keys added/removed."""
    odd: list[Any] = [None, True, False, 0, 1, -1, 1.0, 2.5, "", "x", "a" * 64, [], {}, ["x"]]
    odd += ["case1\n", "A" * 64, "a" * 63, {"title": "t", "sentence": 0}]
    for value in odd:
        yield path, value
    if isinstance(doc, dict):
        for key, child in doc.items():
            yield from _mutations(child, (*path, key))
            yield (*path, key), _DELETE
        yield (*path, "unexpected"), 1
    elif isinstance(doc, list):
        for index, child in enumerate(doc[:2]):
            yield from _mutations(child, (*path, index))
        if doc:
            yield path, [*doc, doc[0]]
            yield path, doc[:1]


_DELETE = object()


def _apply(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    doc = copy.deepcopy(doc)
    target = doc
    for step in path[:-1]:
        target = target[step]
    if value is _DELETE:
        del target[path[-1]]
    elif isinstance(target, dict) or path[-1] < len(target):
        target[path[-1]] = value
    return doc


def test_fast_path_never_accepts_what_the_schema_rejects(set_dir: Path) -> None:
    doc = read_json(set_dir / CASE1)
    validator = Draft202012Validator(load_schema("case"))
    assert case_surely_valid(doc) and validator.is_valid(doc)
    checked = 0
    for path, value in _mutations(doc):
        mutated = _apply(doc, path, value)
        if case_surely_valid(mutated):
            assert validator.is_valid(mutated), (path, value)
        checked += 1
    assert checked > 500


def test_parse_case_falls_back_to_schema_errors() -> None:
    with pytest.raises(FixtureError) as info:
        parse_case(b'{"schema_version": 1}', "x.json")
    assert str(info.value).startswith('x.json#/kind: expected required property "kind"')
