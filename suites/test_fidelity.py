"""Shipped audit: answer correctness and citation fidelity on frozen HotpotQA cases.

Each case is one test. The record (answer EM/F1/correct, citation P/R/F at tau 1.0 and 0.34)
is compared with its golden snapshot, so a model change shows which verdicts flipped; the
marker's gates hold the population means to floor values measured on the default model.
"""

from typing import Any

import pytest

from pytest_provenai.api import Case, RecordFn, Subject, fidelity_record


@pytest.mark.fidelity(answer_accuracy=0.10, citation_recall_semantic=0.02, citation_free_rate=0.90)
def test_fidelity(
    provenai_case: Case,
    provenai_subject: Subject,
    provenai_record: RecordFn,
    provenai_snapshot: Any,
) -> None:
    trace = provenai_subject.answer(provenai_case)
    record = provenai_record(fidelity_record(provenai_case, trace), trace=trace)
    assert record == provenai_snapshot
