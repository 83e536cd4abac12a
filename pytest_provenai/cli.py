"""The ``provenai`` command.

Subcommands register themselves in :func:`build_parser` with ``set_defaults(handler=...)``;
a handler takes the parsed arguments and returns the exit status. Bad input
(:class:`~pytest_provenai.errors.ProvenaiError`) prints one line ``provenai: error: ...`` to
stderr and exits 2, without a traceback; usage errors exit 2 the argparse way.

    provenai freeze hotpotqa PATH --out DIR [--sample N] [--seed 42] [--name NAME]
                                            [--split SPLIT] [--overwrite]
    provenai index build SOURCES... --out DIR    (see pytest_provenai/retrieval/cli.py)
    provenai index search DIR QUESTION [-k 10] / provenai index verify DIR
    provenai mcp serve|replay ...               (see pytest_provenai/toolserver/cli.py)
    provenai verify derive|sets|fit ...         (see pytest_provenai/verify/cli.py)
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import TypeAlias

from pytest_provenai.errors import ProvenaiError

__all__ = ["build_parser", "main"]

PROG = "provenai"
EXIT_OK = 0
EXIT_ERROR = 2

Handler: TypeAlias = Callable[[argparse.Namespace], int]


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, got {value}")
    return value


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


# --------------------------------------------------------------------------- main


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="pytest-provenai: frozen fixtures and provenance audits."
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    _add_freeze(commands)
    from pytest_provenai.retrieval.cli import add_index  # no faiss/torch import here

    add_index(commands)
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
    except ProvenaiError as exc:
        print(f"{PROG}: error: {_one_line(str(exc))}", file=sys.stderr)
        return EXIT_ERROR
    except OSError as exc:
        print(f"{PROG}: error: {_one_line(str(exc))}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    raise SystemExit(main())
