"""``provenai verify``: derive the calibration table and the HotpotQA attribution sets.

    provenai verify derive DATA --exclude SET... --out TABLE.json [--limit N] [--seed 42]
                                [--lm] [--model PATH] [--handwritten SET...]
    provenai verify sets DATA --exclude SET... --claims-test DIR --probes DIR [--overwrite]
    provenai verify fit TABLE.json [--lm]          (fit, print the threshold sweep)
    provenai verify conversation --handwritten SET... [--out FILE]

``DATA`` is the folder holding HotpotQA's ``dev_distractor.json`` and
``train_distractor.json``; ``--exclude`` names the shipped HotpotQA fixture sets whose
records must never be used for calibration (the probe records are always excluded).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from pytest_provenai._argtypes import positive_int

__all__ = ["add_verify"]

DEFAULT_TABLE = Path(__file__).parent / "data" / "hotpotqa-features.json"
DEFAULT_LM_TABLE = Path(__file__).parent / "data" / "hotpotqa-features-lm.json"


def _pool(args: argparse.Namespace) -> object:
    from pytest_provenai.verify.sets import load_pool

    return load_pool(Path(args.data), exclude=[Path(p) for p in args.exclude], seed=args.seed)


def _derive(args: argparse.Namespace) -> int:
    from pytest_provenai.attribution import require_extra
    from pytest_provenai.verify.derive import derive_table, write_table
    from pytest_provenai.verify.encoder import MiniLMEncoder
    from pytest_provenai.verify.sets import RecordPool

    require_extra("sklearn")
    pool = _pool(args)
    assert isinstance(pool, RecordPool)
    extra = []
    if args.lm:
        from pytest_provenai.subject.backends import load_generator
        from pytest_provenai.verify.checkers import LMFeature

        generator = load_generator("transformers", args.model)
        extra.append(LMFeature(generator))  # type: ignore[arg-type]
    started = time.perf_counter()

    def progress(split: str, done: int, total: int) -> None:
        if args.progress and (done % 25 == 0 or done == total):
            elapsed = time.perf_counter() - started
            print(f"{split}: {done}/{total} records ({elapsed:.0f} s)", file=sys.stderr)

    table = derive_table(
        pool,
        MiniLMEncoder(),
        extra=extra,
        limit=args.limit,
        progress=progress,
        handwritten=args.handwritten,
    )
    write_table(args.out, table)
    counts = ", ".join(f"{k} {v}" for k, v in table["counts"].items())
    print(
        f"derived {len(table['rows'])} claim rows ({counts}) into {args.out} in "
        f"{time.perf_counter() - started:.1f} s; rows sha256 {table['rows_sha256']}"
    )
    return 0


def _sets(args: argparse.Namespace) -> int:
    from pytest_provenai.verify.sets import RecordPool
    from pytest_provenai.verify.write_sets import write_claims_test, write_probes

    pool = _pool(args)
    assert isinstance(pool, RecordPool)
    test = write_claims_test(pool, Path(args.claims_test), overwrite=args.overwrite)
    probes = write_probes(pool, Path(args.probes), overwrite=args.overwrite)
    print(
        f"wrote {len(test.cases)} HotpotQA claim traces to {args.claims_test} and "
        f"{len(probes.cases)} conflation probes to {args.probes}"
    )
    return 0


def _fit(args: argparse.Namespace) -> int:
    from pytest_provenai.verify.forest import SEED_THRESHOLD, fit_calibrator

    cal = fit_calibrator(args.table, use_lm=args.lm)
    print(f"fitted in {cal.fit_seconds:.2f} s; chosen threshold {cal.threshold:g}")
    print("threshold  reject_P  reject_R  reject_F1  accuracy")
    for s in cal.sweep:
        mark = " <- chosen" if s["threshold"] == cal.threshold else ""
        mark += " (seed)" if s["threshold"] == SEED_THRESHOLD else ""
        print(
            f"{s['threshold']:9.2f}  {s['reject_precision']:8.3f}  {s['reject_recall']:8.3f}  "
            f"{s['reject_f1']:9.3f}  {s['accuracy']:8.3f}{mark}"
        )
    return 0


def _conversation(args: argparse.Namespace) -> int:
    from pytest_provenai.attribution import require_extra
    from pytest_provenai.verify.conversation import fit_conversation, write_conversation
    from pytest_provenai.verify.encoder import MiniLMEncoder
    from pytest_provenai.verify.runtime import SHIPPED_CONVERSATION

    require_extra("sklearn")
    out = args.out or SHIPPED_CONVERSATION
    body = fit_conversation(MiniLMEncoder(), args.handwritten)
    write_conversation(out, body)
    print(
        f"{'threshold':>9}  {'split':<10}  {'candidates':>10}  {'conv taken':>10}  "
        f"{'factual taken':>13}"
    )
    for row in body["sweep"]:
        for split in ("train", "validation"):
            t = row[split]
            mark = " <- chosen" if row["threshold"] == body["threshold"] else ""
            print(
                f"{row['threshold']:9.2f}  {split:<10}  {t['candidates']:10d}  "
                f"{t['non_factual_taken']:>4d}/{t['non_factual']:<5d}  "
                f"{t['factual_taken']:13d}{mark}"
            )
    print(f"wrote {out} (threshold {body['threshold']})")
    return 0


def add_verify(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    verify = commands.add_parser(
        "verify",
        help="the attribution verifier: calibration table and HotpotQA attribution sets",
        description="Derive the attribution verifier's calibration data from HotpotQA.",
    )
    sub = verify.add_subparsers(dest="verify_command", metavar="ACTION", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("data", metavar="DATA", help="folder with the HotpotQA JSON files")
        p.add_argument(
            "--exclude",
            nargs="*",
            default=[],
            metavar="SET",
            help="fixture sets whose records are never used (the shipped HotpotQA sets)",
        )
        p.add_argument("--seed", type=int, default=42, help="split seed (default: 42)")

    derive = sub.add_parser(
        "derive",
        help="derive the feature table (byte-for-byte reproducible)",
        description="Derive the labelled-claim feature table the calibrator is fitted on.",
    )
    common(derive)
    derive.add_argument("--out", required=True, metavar="TABLE", help="table JSON to write")
    derive.add_argument(
        "--limit", type=positive_int, metavar="N", help="only the first N records of each split"
    )
    derive.add_argument(
        "--lm", action="store_true", help="add the default model's LM features (slow)"
    )
    derive.add_argument("--model", help="model for --lm (default: the embedded SmolLM2-135M)")
    derive.add_argument("--progress", action="store_true", help="print progress to stderr")
    derive.add_argument(
        "--handwritten",
        nargs="*",
        default=[],
        metavar="SET",
        help="hand-written mcp_trace sets named *-train / *-validation whose claims add rows "
        "to that split (a test split is refused)",
    )
    derive.set_defaults(handler=_derive)

    sets = sub.add_parser(
        "sets",
        help="write the HotpotQA claims test set and the conflation probes",
        description="Write the held-out HotpotQA claims traces and the 50 conflation probes.",
    )
    common(sets)
    sets.add_argument("--claims-test", required=True, metavar="DIR")
    sets.add_argument("--probes", required=True, metavar="DIR")
    sets.add_argument("--overwrite", action="store_true")
    sets.set_defaults(handler=_sets)

    conv = sub.add_parser(
        "conversation",
        help="fit the conversation model on hand-written train/validation sets",
        description="Fit the model that tells conversation from assertions on the "
        "hand-written train sets; choose its threshold on train and validation.",
    )
    conv.add_argument(
        "--handwritten",
        nargs="+",
        required=True,
        metavar="SET",
        help="hand-written mcp_trace sets named *-train / *-validation (a test split is refused)",
    )
    conv.add_argument(
        "--out",
        metavar="FILE",
        help="model file to write (default: the shipped pytest_provenai/verify/data/"
        "conversation.json)",
    )
    conv.set_defaults(handler=_conversation)

    fit = sub.add_parser("fit", help="fit the calibrator on a table and print the sweep")
    fit.add_argument("table", nargs="?", default=str(DEFAULT_TABLE), metavar="TABLE")
    fit.add_argument("--lm", action="store_true", help="use the LM features")
    fit.set_defaults(handler=_fit)
