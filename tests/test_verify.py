"""The model-backed verifier: the shipped feature table reproduces (a slice, byte for byte),
the forest calibrator (threshold on validation, fitted once per process, fails on a changed
table), the LM feature on the real default model, and a local NLI folder — a tiny randomly
initialised classifier this test saves itself."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_provenai.attribution.lexical import FeatureChecker, LexicalEncoder
from pytest_provenai.attribution.pipeline import Verifier
from pytest_provenai.errors import AttributionError
from pytest_provenai.frozen.traces import collect_evidence
from pytest_provenai.verify.derive import derive_table, row_line
from pytest_provenai.verify.forest import (
    SEED_THRESHOLD,
    THRESHOLD_GRID,
    choose_threshold,
    fit_calibrator,
    is_handwritten,
    load_table,
)
from pytest_provenai.verify.runtime import SHIPPED_LM_TABLE, SHIPPED_TABLE

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data" / "hotpotqa"
EXCLUDE = [REPO / "fixtures" / "hotpotqa-dev60", REPO / "fixtures" / "hotpotqa-dev-first1"]


@pytest.mark.skipif(
    not SHARED_DATA.is_dir(), reason="../shared/data/hotpotqa is not beside the checkout"
)
def test_a_slice_of_the_shipped_table_is_derived_byte_for_byte() -> None:
    """`provenai verify derive --limit 1` recomputes the first record of every split; its
    rows must equal the shipped table's rows for those records (the full command is in the
    README: the whole table takes about 25 minutes on 2 cores) — to the last rounded digit of
    an embedding cosine, which another CPU may flip."""
    from pytest_provenai.verify.encoder import MiniLMEncoder
    from pytest_provenai.verify.sets import load_pool

    shipped = json.loads(SHIPPED_TABLE.read_text(encoding="utf-8"))
    pool = load_pool(SHARED_DATA, exclude=EXCLUDE)
    assert pool.identity() == {**shipped["pool"], "splits": pool.identity()["splits"]}
    table = derive_table(pool, MiniLMEncoder(), limit=1)
    records = {r[0] for r in table["rows"]}
    assert len(records) == 3
    expected = [r for r in shipped["rows"] if r[0] in records]
    assert len(table["rows"]) == len(expected)
    for got, want in zip(table["rows"], expected, strict=True):
        # everything but the features exactly; the features' MiniLM cosines (float32, rounded
        # to 6 places) may flip their last digit on another CPU's kernels
        assert row_line(got[:-1]) == row_line(want[:-1])
        assert len(got[-1]) == len(want[-1])
        for a, b in zip(got[-1], want[-1], strict=True):
            assert a == b if isinstance(b, str) else abs(a - b) <= 2e-6, (got[4], a, b)
    for key in ("producer", "features", "columns"):
        assert table[key] == shipped[key]


def test_the_calibrator_is_fitted_once_and_chooses_its_threshold_on_validation() -> None:
    cal = fit_calibrator(SHIPPED_TABLE)
    assert fit_calibrator(SHIPPED_TABLE) is cal  # cached per process
    assert cal.threshold in THRESHOLD_GRID
    points = {p["threshold"]: p for p in cal.sweep}
    assert SEED_THRESHOLD in points
    best = max(p["reject_f1"] for p in cal.sweep)
    assert points[cal.threshold]["reject_f1"] == best
    # an exact tie goes to the higher threshold
    assert all(p["reject_f1"] < best for t, p in points.items() if t > cal.threshold)
    # the sweep is over the hand-written validation rows only: their support counts add up
    validation = load_table(SHIPPED_TABLE).split("validation")
    hand = [r for r in validation if is_handwritten(r)]
    assert 0 < len(hand) < len(validation)
    assert sum(points[cal.threshold]["counts"].values()) == len(hand)
    assert not is_handwritten({"record": "5ab700ca5542991d32223736"})
    assert is_handwritten({"record": "beekeeping-coop-news"})
    assert cal.identity["table_rows_sha256"] == load_table(SHIPPED_TABLE).rows_sha256
    rows = [r["features"] for r in load_table(SHIPPED_TABLE).split("test")[:5]]
    first, again = cal.predict(rows), cal.predict(rows)
    assert [j.p_support for j in first] == [j.p_support for j in again]
    assert all(0.0 <= j.p_support <= 1.0 for j in first)
    assert all(abs(sum(j.head.values()) - 1.0) < 1e-9 for j in first)


def test_the_threshold_is_the_max_reject_f1_and_an_exact_tie_goes_higher() -> None:
    def point(t: float, f1: float) -> dict[str, float]:
        return {"threshold": t, "reject_f1": f1, "accuracy": 0.5}

    # no near-tie window since the thirteenth round: 0.840 beside 0.847 does not win
    near = [point(0.5, 0.82), point(0.55, 0.847), point(0.6, 0.840), point(0.65, 0.827)]
    assert choose_threshold(near) == 0.55
    tied = [point(0.5, 0.82), point(0.55, 0.86), point(0.6, 0.86), point(0.65, 0.84)]
    assert choose_threshold(tied) == 0.6  # an exact tie: the higher blocks more


def test_the_shipped_lm_table_fits_the_current_features() -> None:
    """``--provenai-verify-lm`` works out of the box: the LM table carries the same rows as
    the shipped table (the same derivation, plus the LM columns), so the forest accepts it;
    a stale LM table was refused for two sessions without a test noticing."""
    shipped, lm = load_table(SHIPPED_TABLE), load_table(SHIPPED_LM_TABLE)
    assert lm.has_lm and not shipped.has_lm
    assert len(lm.rows) == len(shipped.rows)
    for a, b in zip(shipped.rows, lm.rows, strict=True):
        assert (a["record"], a["claim"], a["verdict"]) == (b["record"], b["claim"], b["verdict"])
    cal = fit_calibrator(SHIPPED_LM_TABLE, use_lm=True)
    assert cal.threshold in THRESHOLD_GRID
    rows = [r["features"] for r in lm.split("validation")[:5]]
    assert all(0.0 <= j.p_support <= 1.0 for j in cal.predict(rows))


def test_a_changed_table_is_refused(tmp_path: Path) -> None:
    data = json.loads(SHIPPED_TABLE.read_text(encoding="utf-8"))
    data["rows"][0][6] = 1 - data["rows"][0][6]
    changed = tmp_path / "table.json"
    changed.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(AttributionError, match=r"rows_sha256 .* the table was changed"):
        fit_calibrator(changed)
    with pytest.raises(AttributionError, match="no such feature table"):
        load_table(tmp_path / "none.json")
    with pytest.raises(AttributionError, match="no LM features"):
        fit_calibrator(SHIPPED_TABLE, use_lm=True)


def _tiny_nli(folder: Path, labels: dict[int, str]) -> Path:
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    folder.mkdir()
    words = "kestrel gold plan fee is the a of euro record not velmora ostrand".split()
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    BertTokenizer(vocab_file=str(folder / "vocab.txt")).save_pretrained(folder)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        id2label=labels,
        label2id={v: k for k, v in labels.items()},
    )
    torch.manual_seed(0)
    BertForSequenceClassification(config).save_pretrained(folder)
    return folder


def test_a_local_nli_folder_feeds_the_decisions(tmp_path: Path) -> None:
    from test_attribution import CALLS, TOOLS

    from pytest_provenai.verify.checkers import NLIFolder

    nli = NLIFolder(
        _tiny_nli(tmp_path / "nli", {0: "ENTAILMENT", 1: "neutral", 2: "contradiction"})
    )
    probs = nli.judge("the kestrel gold plan fee", "the fee is not euro")
    assert set(probs) == {"entailment", "neutral", "contradiction"}
    assert abs(sum(probs.values()) - 1.0) < 1e-6
    assert nli.identity["labels"] == {"contradiction": 2, "entailment": 0, "neutral": 1}
    v = Verifier(LexicalEncoder(), FeatureChecker("premise_overlap", 0.5), nli=nli)
    result = v.verify("Velmora Ostrand is on Kestrel Gold.", collect_evidence(CALLS, TOOLS), TOOLS)
    assert result.claims[0].nli is not None and set(result.claims[0].nli) == set(probs)
    assert v.identity["nli"]["sha256"] == nli.identity["sha256"]


def test_an_nli_folder_with_other_labels_is_refused(tmp_path: Path) -> None:
    from pytest_provenai.verify.checkers import NLIFolder

    folder = _tiny_nli(tmp_path / "sentiment", {0: "negative", 1: "neutral", 2: "positive"})
    with pytest.raises(AttributionError, match="must name entailment, neutral and contradiction"):
        NLIFolder(folder)
    shutil.rmtree(folder)
    folder.mkdir()
    with pytest.raises(AttributionError, match=r"no config\.json"):
        NLIFolder(folder)


@pytest.mark.slow
def test_the_lm_feature_prefers_a_supporting_premise() -> None:
    from pytest_provenai.subject.backends import load_generator
    from pytest_provenai.verify.checkers import LMFeature

    lm = LMFeature(load_generator("transformers"))  # type: ignore[arg-type]
    claim = "Scott Derrickson is an American director."
    support = lm.features("Scott Derrickson (born July 16, 1966) is an American director.", claim)
    other = lm.features("Woodson is a census-designated place in Pulaski County, Arkansas.", claim)
    assert support["lm_logprob"] < 0 and other["lm_logprob"] < 0
    assert support["lm_gain"] > other["lm_gain"]
    assert lm.identity["model"]["name"] == "SmolLM2-135M-Instruct"


def _record(titles: tuple[str, str]) -> dict[str, object]:
    return {
        "_id": "r1",
        "question": "Which year links them?",
        "answer": "1920",
        "type": "bridge",
        "level": "hard",
        "supporting_facts": [[titles[0], 0], [titles[1], 0]],
        "context": [
            [titles[0], ["The first film was released in 1920 by an American studio."]],
            [titles[1], ["The series began in 1920 with an American producer."]],
        ],
    }


def test_probe_pairs_need_two_distinct_subjects() -> None:
    """Two gold paragraphs that share a value make a probe, unless their titles differ only
    by a parenthesised qualifier ("1920 (film)" / "1920 (film series)"): then each nearly
    states the other's facts and no verifier can tell which one a claim came from."""
    from pytest_provenai.verify.claims import bare_title
    from pytest_provenai.verify.probes import shared_values
    from pytest_provenai.verify.sets import case_from_record

    distinct = shared_values(case_from_record(_record(("Alpha (film)", "Beta Studios"))))
    assert {v for v, *_ in distinct} == {"1920", "American"}
    same = case_from_record(_record(("1920 (film)", "1920 (film series)")))
    assert shared_values(same) == []
    probes = sorted((REPO / "fixtures" / "hotpotqa-conflation-probes" / "cases").glob("*.json"))
    assert len(probes) == 50
    for path in probes:  # the shipped probes hold none of those pairs
        doc = json.loads(path.read_text(encoding="utf-8"))
        titles = {
            out["source"]: bare_title(out["text"].split("\n", 1)[0]).casefold()
            for call in doc["calls"]
            for out in call.get("outputs", [])
            if out.get("source")
        }
        assert titles[doc["fact_source"]] != titles[doc["other_source"]], path.name


# -- issue 23: no label leak ----------------------------------------------------------------
def _states_a_source(text: str) -> bool:
    from pytest_provenai.attribution.families import find_attribution

    return find_attribution(text, {}).span is not None


def test_attribution_phrases_occur_in_every_class_of_the_calibration_rows() -> None:
    """Rows whose claim states a source occur in every verdict-head class of train and
    validation, and rows without one too; no feature says whether a source is stated; and
    the phrase alone hardly predicts the support label (the leak of issue 23 gave 1.0)."""
    table = load_table(SHIPPED_TABLE)
    assert not any("attribution" in name for name in table.header["features"]["order"])
    for split in ("train", "validation"):
        rows = table.split(split)
        for head in ("supported", "not_enough_evidence", "unsupported", "contradicted"):
            stated = [_states_a_source(r["text"]) for r in rows if r["head"] == head]
            assert any(stated) and not all(stated), (split, head)
        positives = [_states_a_source(r["text"]) for r in rows if r["support"] == 1]
        negatives = [_states_a_source(r["text"]) for r in rows if r["support"] == 0]
        balanced = (sum(positives) / len(positives) + 1 - sum(negatives) / len(negatives)) / 2
        # 0.656 on train since the twelfth round: its new domains' authors were asked to
        # name the source in about half their supported claims, and contradictions seldom
        # do. The phrase is stripped before scoring and is no feature, so this is a fact
        # of the data the forest cannot read (the phrase test below guards the model).
        assert balanced < 0.7, (split, balanced)


def test_no_single_feature_separates_the_support_classes() -> None:
    """A one-split stump on any one numeric feature stays well below separating the train
    rows' support classes (balanced accuracy < 0.9): the label is not written into any
    feature the way the old stated-attribution flag wrote it."""
    table = load_table(SHIPPED_TABLE)
    rows = table.split("train")
    labels = [int(r["support"]) for r in rows]
    n_pos, n_neg = sum(labels), len(labels) - sum(labels)
    worst = {}
    for name in table.header["features"]["numeric"]:
        values = sorted({float(r["features"][name]) for r in rows})
        best = 0.5
        for cut in values:
            pos_above = sum(
                1
                for r, y in zip(rows, labels, strict=True)
                if y and float(r["features"][name]) >= cut
            )
            neg_above = sum(
                1
                for r, y in zip(rows, labels, strict=True)
                if not y and float(r["features"][name]) >= cut
            )
            score = (pos_above / n_pos + 1 - neg_above / n_neg) / 2
            best = max(best, score, 1 - score)
        worst[name] = best
    assert max(worst.values()) < 0.9, sorted(worst.items(), key=lambda kv: -kv[1])[:3]


def test_adding_or_removing_an_attribution_phrase_hardly_moves_p_support() -> None:
    """The fitted calibrator scores a claim with and without a recognised attribution
    phrase within 0.05 of each other: support is judged on the factual content only."""
    from pytest_provenai.attribution.decompose import claim_at
    from pytest_provenai.attribution.pipeline import prepare_claims
    from pytest_provenai.frozen.load import load_fixture_set
    from pytest_provenai.frozen.traces import TraceCase

    cal = fit_calibrator(SHIPPED_TABLE)
    cases = [
        c
        for c in load_fixture_set(REPO / "fixtures" / "synthetic-mcp-traces").cases
        if isinstance(c, TraceCase)
    ][:12]
    phrases = {
        "record": "According to the record,",
        "search": "According to the search results,",
        "database": "According to the database,",
        "document": "According to the document,",
        "metadata": "According to the metadata,",
    }
    gaps = []
    encoder = LexicalEncoder()
    for case in cases:
        evidence = collect_evidence(case.calls, case.families)
        for answer in case.answers:
            for gold in answer.claims:
                plain = claim_at(answer.text, gold.range, case.families)
                if not plain.factual or plain.attribution.span is not None:
                    continue
                family = next(iter(sorted(set(case.families.values()))))
                body = plain.text[:1].lower() + plain.text[1:]
                text = f"{phrases[family]} {body}"
                stated = claim_at(text, (0, len(text.encode("utf-8"))), case.families, 1)
                assert stated.attribution.status == "stated"
                rows = [
                    p.row
                    for p in prepare_claims(encoder, [plain, stated], evidence)
                    if p.row is not None
                ]
                a, b = cal.predict(rows)
                gaps.append(abs(a.p_support - b.p_support))
    assert len(gaps) >= 20
    assert max(gaps) < 0.05


def test_only_train_and_validation_sets_add_calibration_rows() -> None:
    from pytest_provenai.verify.derive import handwritten_split

    assert handwritten_split(REPO / "fixtures" / "handwritten-claims-train") == "train"
    assert handwritten_split(REPO / "fixtures" / "handwritten-claims-validation") == "validation"
    with pytest.raises(AttributionError, match="handwritten-claims-test: only sets named"):
        handwritten_split(REPO / "fixtures" / "handwritten-claims-test")
    table = load_table(SHIPPED_TABLE)
    assert set(table.header["handwritten"]) == {
        "handwritten-claims-train",
        "handwritten-claims-validation",
    }
    test_ids = {
        p.stem for p in (REPO / "fixtures" / "handwritten-claims-test" / "cases").glob("*.json")
    }
    assert test_ids and not test_ids & {r["record"] for r in table.rows}
