"""The ``provenai`` command.

Subcommands register themselves in :func:`build_parser` with ``set_defaults(handler=...)``;
a handler takes the parsed arguments and returns the exit status. Bad input
(:class:`~pytest_provenai.errors.ProvenaiError`) prints one line ``provenai: error: ...`` to
stderr and exits 2, without a traceback; usage errors exit 2 the argparse way.

    provenai freeze hotpotqa PATH --out DIR [--sample N] [--seed 42] [--name NAME]
                                            [--split SPLIT] [--overwrite]
    provenai index build SOURCES... --out DIR    (see pytest_provenai/retrieval/cli.py)
    provenai index search DIR QUESTION [-k 10] / provenai index verify DIR
    provenai report RESULTS.json [--out report.html]
    provenai compare BASE.json NEW.json [--fail-on-regression] [--report compare.html]
    provenai merge SHARD.json... --out results.json [--report report.html]
                                 [--junitxml gates.xml] [--allow-missing]
    provenai cache info | prune --older-than DAYS | clear   [--cache DIR]
    provenai mcp serve|replay ...               (see pytest_provenai/toolserver/cli.py)
    provenai verify derive|sets|fit ...         (see pytest_provenai/verify/cli.py)
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeAlias

from pytest_provenai._argtypes import days, positive_int
from pytest_provenai.errors import ProvenaiError

__all__ = ["build_parser", "main"]

PROG = "provenai"
EXIT_OK = 0
EXIT_ERROR = 2
EXIT_REGRESSION = 1

Handler: TypeAlias = Callable[[argparse.Namespace], int]


def _one_line(message: str) -> str:
    return " ".join(message.split("\n"))


# --------------------------------------------------------------------------- freeze


def _freeze_hotpotqa(args: argparse.Namespace) -> int:
    from pytest_provenai.frozen.freeze import freeze_hotpotqa

    started = time.perf_counter()
    fixture_set = freeze_hotpotqa(
        args.path,
        args.out,
        sample=args.sample,
        seed=args.seed,
        name=args.name,
        split=args.split,
        overwrite=args.overwrite,
        first=args.first,
    )
    seconds = time.perf_counter() - started
    split = fixture_set.manifest["split"]
    print(
        f"froze {len(fixture_set.cases)} HotpotQA {split} cases into {args.out} in {seconds:.2f} s"
    )
    return EXIT_OK


def _add_freeze(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    freeze = commands.add_parser(
        "freeze",
        help="freeze a dataset into a fixture set folder",
        description="Freeze a dataset into a digest-pinned fixture set folder.",
    )
    datasets = freeze.add_subparsers(dest="dataset", metavar="DATASET", required=True)
    hotpotqa = datasets.add_parser(
        "hotpotqa",
        help="HotpotQA distractor-setting JSON (a list of records)",
        description=(
            "Freeze an official HotpotQA distractor JSON file into cases/<id>.json files, "
            "a manifest.json with their sha256 digests and a README.md with the "
            "CC BY-SA 4.0 licence and attribution."
        ),
    )
    hotpotqa.add_argument("path", metavar="PATH", help="HotpotQA JSON file")
    hotpotqa.add_argument("--out", required=True, metavar="DIR", help="fixture set folder")
    hotpotqa.add_argument(
        "--sample", type=positive_int, metavar="N", help="freeze N records (default: all)"
    )
    hotpotqa.add_argument(
        "--first",
        type=positive_int,
        metavar="N",
        help="freeze the first N records in file order (instead of --sample)",
    )
    hotpotqa.add_argument("--seed", type=int, default=42, help="sampling seed (default: 42)")
    hotpotqa.add_argument("--name", help="set name in the manifest (default: folder name)")
    hotpotqa.add_argument(
        "--split", help="split recorded in the manifest (default: from the file name)"
    )
    hotpotqa.add_argument(
        "--overwrite", action="store_true", help="replace DIR if it holds a fixture set"
    )
    hotpotqa.set_defaults(handler=_freeze_hotpotqa)


# --------------------------------------------------------------------------- report, compare


def _html_target(path: str, *, flag: str, sources: list[str]) -> Path:
    """Where an HTML page goes; one line naming the option when it cannot go there."""
    target = Path(path)
    if target.is_dir():
        raise ProvenaiError(f"{flag} {target}: is a folder; give a file path such as report.html")
    for source in sources:
        if target.exists() and Path(source).exists() and target.samefile(source):
            raise ProvenaiError(f"{flag} {target}: is the results JSON itself; give another path")
    return target


def _report(args: argparse.Namespace) -> int:
    from pytest_provenai.report.html import render_report, write_html
    from pytest_provenai.report.results import load_results

    out = args.out or str(Path(args.results).with_suffix(".html"))
    target = _html_target(out, flag="--out", sources=[args.results])
    started = time.perf_counter()
    results = load_results(args.results)
    page = render_report(results)
    write_html(target, page)
    n = sum(len(r) for r in results.records.values())
    print(
        f"wrote {target} ({len(page.encode('utf-8')) / 1024:.0f} KB, {n} case records) in "
        f"{time.perf_counter() - started:.2f} s"
    )
    return EXIT_OK


def _compare(args: argparse.Namespace) -> int:
    from pytest_provenai.report.compare import compare_runs
    from pytest_provenai.report.results import load_results
    from pytest_provenai.report.summary import compare_lines

    target = (
        _html_target(args.report, flag="--report", sources=[args.base, args.new])
        if args.report
        else None
    )
    base = load_results(args.base)
    new = load_results(args.new)
    comparison = compare_runs(
        base, new, base_name=str(args.base), new_name=str(args.new), seed=args.seed
    )
    lines = compare_lines(comparison)
    for line in lines[:-1]:
        print(line)
    if target is not None:
        from pytest_provenai.report.html import render_compare, write_html

        write_html(target, render_compare(comparison))
        print(f"wrote {target}")
    print(lines[-1])  # "regressions: N (...)" stays the last line
    if args.fail_on_regression and comparison.regressions:
        return EXIT_REGRESSION
    return EXIT_OK


def _add_report(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    report = commands.add_parser(
        "report",
        help="render a results JSON as a self-contained HTML report",
        description="Render a results JSON (--provenai-results) as one self-contained HTML "
        "file: overview, gates, aggregates with CIs, charts and a drill-down per case.",
    )
    report.add_argument("results", metavar="RESULTS.json", help="results JSON of a run")
    report.add_argument(
        "--out", metavar="PATH", help="HTML file to write (default: RESULTS with .html)"
    )
    report.set_defaults(handler=_report)
    compare = commands.add_parser(
        "compare",
        help="compare two runs case by case (paired differences, verdict flips)",
        description="Compare NEW against BASE: paired differences with bootstrap CIs by case, "
        "cases only in one run, verdict flips. Differences in model, fixture sets or "
        "options are said first; the regressions (see --fail-on-regression) last.",
    )
    compare.add_argument("base", metavar="BASE.json", help="results JSON of the base run")
    compare.add_argument("new", metavar="NEW.json", help="results JSON of the new run")
    compare.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when the new run regressed: a metric's difference CI lies wholly on its "
        "worse side of 0, a gate went PASS -> FAIL, a test or a case of the base run is "
        "absent from the new one (unless the new run's --provenai-sample left the case out), "
        "or a case lost its record",
    )
    compare.add_argument("--report", metavar="PATH", help="also write the comparison as HTML")
    compare.add_argument(
        "--seed", type=int, default=None, help="bootstrap seed (default: the new run's seed)"
    )
    compare.set_defaults(handler=_compare)


def _merge(args: argparse.Namespace) -> int:
    from pytest_provenai._io import atomic_write_json, atomic_write_text
    from pytest_provenai.report.merge import gates_junit_xml, merge_shards
    from pytest_provenai.report.summary import summary_lines

    shards = [str(s) for s in args.shards]
    out = Path(args.out)
    if out.is_dir():
        raise ProvenaiError(f"--out {out}: is a folder; give a file path such as results.json")
    if any(out.exists() and Path(s).exists() and out.samefile(s) for s in shards):
        raise ProvenaiError(f"--out {out}: is one of the shards' results; give another path")
    report = _html_target(args.report, flag="--report", sources=shards) if args.report else None
    junit = (
        _html_target(args.junitxml, flag="--junitxml", sources=shards) if args.junitxml else None
    )
    started = time.perf_counter()
    merged = merge_shards([Path(s) for s in shards], allow_missing=args.allow_missing)
    results = merged.results
    atomic_write_json(out, results.to_json())  # nothing is written before every check passed
    if report is not None:
        from pytest_provenai.report.html import render_report, write_html

        write_html(report, render_report(results))
    if junit is not None:
        atomic_write_text(junit, gates_junit_xml(results))
    n = sum(len(r) for r in results.records.values())
    print(
        f"merged {len(shards)} shard(s), {n} case records, in {time.perf_counter() - started:.2f} s"
    )
    if merged.missing:
        print(
            f"not audited (shards missing; their gates fail closed): {len(merged.missing)} case(s)"
        )
    for line in summary_lines(results, results_path=out):
        print(line)
    if report is not None:
        print(f"report: {report}")
    if junit is not None:
        print(f"junitxml: {junit}")
    if merged.golden_unused:
        n_unused = len(merged.golden_unused)
        print(f"{n_unused} golden file(s) unused: the case is in no configured fixture set")
        for path in merged.golden_unused:
            print(f"Unused {path}")
    return EXIT_REGRESSION if results.failed_gates or merged.golden_unused else EXIT_OK


def _add_merge(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    merge = commands.add_parser(
        "merge",
        help="join the results of a sharded run (--provenai-shard K/N) and judge its gates",
        description="Join the results JSON of every shard of one run (--provenai-shard K/N) "
        "into one results JSON, judging every gate on the whole population exactly as one "
        "run of the same cases would. The shards must come from one run (same model, "
        "options and fixture sets) and cover every case once. Exit 0 when every gate passes, "
        "1 when one fails (or golden files are unused), 2 on bad input (nothing written).",
    )
    merge.add_argument("shards", nargs="+", metavar="SHARD.json", help="each shard's results")
    merge.add_argument("--out", required=True, metavar="PATH", help="merged results JSON")
    merge.add_argument("--report", metavar="PATH", help="also write the HTML report")
    merge.add_argument("--junitxml", metavar="PATH", help="also write the gates as JUnit XML")
    merge.add_argument(
        "--allow-missing",
        action="store_true",
        help="merge even when shards are missing: their cases get no record and every gate "
        "over them fails closed, as a single run's crashed worker's do",
    )
    merge.set_defaults(handler=_merge)


# --------------------------------------------------------------------------- cache


def _cache(args: argparse.Namespace) -> int:
    from pytest_provenai import cache_admin

    root = Path(args.cache)
    if args.action == "info":
        for line in cache_admin.info_lines(cache_admin.cache_info(root)):
            print(line)
        return EXIT_OK
    if args.action == "prune":
        removed = cache_admin.prune_cache(root, args.older_than)
        print(
            cache_admin.removed_line(f"pruned (unused > {args.older_than:g} days)", root, removed)
        )
        return EXIT_OK
    removed = cache_admin.clear_cache(root)
    print(cache_admin.removed_line("cleared", root, removed))
    return EXIT_OK


def _add_cache(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cache = commands.add_parser(
        "cache",
        help="show, prune or clear the run cache (safe while an audit runs)",
        description="The run cache (--provenai-cache): generations and KL profiles. Safe "
        "while an audit uses it: entries are unlinked one by one, folders kept.",
    )
    actions = cache.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, text in (
        ("info", "entries and size, by kind and model"),
        ("prune", "remove entries not used for more than DAYS days"),
        ("clear", "remove every entry"),
    ):
        sub = actions.add_parser(name, help=text, description=text)
        sub.add_argument(
            "--cache",
            default=".provenai-cache",
            metavar="DIR",
            help="cache folder (default: .provenai-cache)",
        )
        if name == "prune":
            sub.add_argument("--older-than", type=days, required=True, metavar="DAYS")
        sub.set_defaults(handler=_cache)


# --------------------------------------------------------------------------- main


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="pytest-provenai: frozen fixtures and provenance audits."
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    _add_freeze(commands)
    from pytest_provenai.retrieval.cli import add_index  # no faiss/torch import here

    add_index(commands)
    _add_report(commands)
    _add_merge(commands)
    _add_cache(commands)
    # the attribution layer: no mcp / scikit-learn / torch import here
    from pytest_provenai.toolserver.cli import add_mcp
    from pytest_provenai.verify.cli import add_verify

    add_mcp(commands)
    add_verify(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``provenai`` with ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
        if exc.code is None:
            return EXIT_OK
        return exc.code if isinstance(exc.code, int) else EXIT_ERROR
    handler: Handler = args.handler
    try:
        return handler(args)
    except BrokenPipeError:
        # the reader went away (`provenai cache info | head -1`): what it read is complete;
        # point stdout at /dev/null so the interpreter's final flush does not fail again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except ProvenaiError as exc:
        print(f"{PROG}: error: {_one_line(str(exc))}", file=sys.stderr)
        return EXIT_ERROR
    except OSError as exc:
        print(f"{PROG}: error: {_one_line(str(exc))}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    raise SystemExit(main())
