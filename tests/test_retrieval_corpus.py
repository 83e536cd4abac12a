"""The canonical corpus: dedup counts, provenance links, input errors, retrieval metrics.
Pure Python (no model, no faiss)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from retrieval_data import ALPHA, BLUE, BLUE_OTHER, COUNTS, write_inputs

from pytest_provenai.audit.retrieval import RETRIEVAL_METRICS, retrieval_scores
from pytest_provenai.errors import FixtureError, ProvenaiError, RetrievalError
from pytest_provenai.frozen.freeze import freeze_hotpotqa
from pytest_provenai.retrieval.corpus import Link, load_corpus, passage_id


def test_dedup_counts_on_known_duplicates(tmp_path: Path) -> None:
    dev, train = write_inputs(tmp_path)
    corpus = load_corpus([dev, train])
    assert corpus.counts() == COUNTS
    titles = [p.title for p in corpus.passages]
    assert titles == sorted(titles)  # canonical order: by (title, text)
    assert titles.count("Blue River") == 2  # same title, different text: not a duplicate
    assert len({p.id for p in corpus.passages}) == len(corpus.passages)


def test_provenance_links_survive_dedup(tmp_path: Path) -> None:
    dev, train = write_inputs(tmp_path)
    corpus = load_corpus([train, dev])  # order of the sources does not matter
    by_text = {(p.title, p.text): p for p in corpus.passages}
    blue = by_text[("Blue River", "".join(BLUE))]
    assert blue.links == (
        Link("hotpot_dev_mini.json", "dev", "r1", 1),
        Link("hotpot_dev_mini.json", "dev", "r2", 1),
        Link("hotpot_train_mini.json", "train", "t1", 0),
    )
    alpha = by_text[("Alphaville", "".join(ALPHA))]
    assert {(link.split, link.record) for link in alpha.links} == {("dev", "r1"), ("train", "t2")}
    other = by_text[("Blue River", "".join(BLUE_OTHER))]
    assert other.links == (Link("hotpot_dev_mini.json", "dev", "r3", 1),)
    assert blue.id == passage_id("Blue River", "".join(BLUE)) != other.id
    assert corpus.passages == load_corpus([dev, train]).passages


def test_fixture_set_rows_link_to_the_set_and_dedup_against_the_file(tmp_path: Path) -> None:
    dev, _ = write_inputs(tmp_path)
    freeze_hotpotqa(dev, tmp_path / "mini-set", seed=1)
    corpus = load_corpus([dev, tmp_path / "mini-set"])
    c = corpus.counts()
    assert (c["source_rows"], c["canonical_rows"]) == (18, 7)  # the set repeats all 9 rows
    zeta = next(p for p in corpus.passages if p.title == "Zeta Corp")
    assert {(link.source, link.record) for link in zeta.links} == {
        ("hotpot_dev_mini.json", "r1"),
        ("hotpot_dev_mini.json", "r2"),
        ("mini-set", "r1"),
        ("mini-set", "r2"),
    }
    kinds = {s.name: s.kind for s in corpus.sources}
    assert kinds == {"hotpot_dev_mini.json": "hotpotqa", "mini-set": "fixture_set"}


def test_folder_source_reads_record_files_and_skips_other_json(tmp_path: Path) -> None:
    write_inputs(tmp_path / "data")
    (tmp_path / "data" / "provenance.json").write_text('{"r1": {"dev_index": 0}}', "utf-8")
    corpus = load_corpus([tmp_path / "data"])
    assert corpus.counts() == COUNTS
    assert corpus.skipped == ["provenance.json"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"r1": {}}', "*expected a HotpotQA JSON file (an array of records)*got an object*"),
        ('[{"_id": "x", "context": [["T", "not a list"]]}]', "*#/0/context/0/1: expected*"),
        ("[1, 2", "*invalid JSON*"),
    ],
)
def test_bad_hotpotqa_file_names_file_and_pointer(
    tmp_path: Path, content: str, message: str
) -> None:
    bad = tmp_path / "bad_dev.json"
    bad.write_text(content, encoding="utf-8")
    with pytest.raises(FixtureError) as err:
        load_corpus([bad])
    assert "bad_dev.json" in str(err.value)
    from fnmatch import fnmatch

    assert fnmatch(str(err.value), message), str(err.value)


def test_same_source_twice_and_missing_path_are_errors(tmp_path: Path) -> None:
    dev, _ = write_inputs(tmp_path)
    with pytest.raises(RetrievalError, match="given twice"):
        load_corpus([dev, dev])
    with pytest.raises(RetrievalError, match="no such file or folder"):
        load_corpus([tmp_path / "nope.json"])
    with pytest.raises(ProvenaiError, match="no sources"):
        load_corpus([])


def _retrieval(titles: list[str]) -> dict[str, object]:
    return {
        "k": len(titles),
        "index": {"corpus_sha256": "c", "type": "flat", "rows": 10, "embedding": {"name": "m"}},
        "passages": [
            {"id": f"R{i}", "passage_id": f"p{i}", "title": t, "sha256": "s", "score": 0.5}
            for i, t in enumerate(titles)
        ],
    }


def test_retrieval_scores_recall_ranks_and_miss_flag() -> None:
    section = retrieval_scores(_retrieval(["B", "X", "B", "Y"]), ["A", "B"], False)
    assert section["gold_ranks"] == [{"title": "A", "rank": None}, {"title": "B", "rank": 0}]
    assert section["recall_at_k"] == 0.5
    assert section["all_gold_retrieved"] is False
    assert section["answer_failed_retrieval_miss"] is True
    assert section["retrieved"][1] == {"id": "R1", "passage_id": "p1", "title": "X"}
    assert "score" not in json.dumps(section)  # scores stay in the trace, out of snapshots

    hit = retrieval_scores(_retrieval(["A", "B"]), ["A", "B"], False)
    assert (hit["recall_at_k"], hit["answer_failed_retrieval_miss"]) == (1.0, False)
    right = retrieval_scores(_retrieval(["X"]), ["A"], True)
    assert right["answer_failed_retrieval_miss"] is False  # a right answer never "failed"
    values = [RETRIEVAL_METRICS[m]({"retrieval": section}) for m in sorted(RETRIEVAL_METRICS)]
    assert values == [0.0, 1.0, 0.5]  # all_gold_rate, miss_failure_rate, recall_at_k
    assert retrieval_scores(_retrieval(["A"]), [], True)["recall_at_k"] is None
