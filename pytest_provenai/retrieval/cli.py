"""``provenai index``: build, search and verify retrieval index folders.

provenai index build SOURCES... --out DIR [--index-type flat|ivf] [--batch-size 16]
                                          [--threads 2] [--model DIR] [--overwrite]
                                          [--no-progress]
provenai index search DIR QUESTION [-k 10] [--json] [--model DIR]
provenai index verify DIR [--model DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from pytest_provenai._argtypes import positive_int

__all__ = ["add_index"]


def _build(args: argparse.Namespace) -> int:
    from pytest_provenai.retrieval.index import build_index

    started = time.perf_counter()
    manifest = build_index(
        args.sources,
        args.out,
        index_type=args.index_type,
        model=args.model,
        batch_size=args.batch_size,
        threads=args.threads,
        overwrite=args.overwrite,
        progress=not args.no_progress,
    )
    seconds = time.perf_counter() - started
    c = manifest["counts"]
    skipped = manifest["skipped_files"]
    note = f"; skipped {', '.join(skipped)} (not an array of HotpotQA records)" if skipped else ""
    print(
        f"indexed {c['canonical_rows']} canonical passages ({c['source_rows']} source rows from "
        f"{c['records']} records in {c['sources']} sources, {c['duplicates_removed']} "
        f"duplicates removed) into {args.out} in {seconds:.1f} s "
        f"({manifest['index']['type']}, {manifest['embedding']['name']}){note}"
    )
    return 0


def _hit_lines(hits: list[Any]) -> list[str]:
    lines = []
    for h in hits:
        text = h.text if len(h.text) <= 200 else h.text[:199] + "…"
        sources = sorted({f"{link.source}:{link.record}" for link in h.links})
        more = f" +{len(sources) - 2}" if len(sources) > 2 else ""
        lines.append(f"{h.rank + 1:>3}  {h.score:.4f}  {h.title}  [{h.passage_id}]")
        lines.append(f"     {text}")
        lines.append(f"     from {', '.join(sources[:2])}{more}")
    return lines


def _search(args: argparse.Namespace) -> int:
    from pytest_provenai.retrieval.index import open_index

    index = open_index(args.dir, model=args.model)
    try:
        hits = index.search(args.question, args.k)
    finally:
        index.close()
    if args.json:
        print(json.dumps([h.as_dict() for h in hits], indent=2, ensure_ascii=False))
    else:
        print(f"top {len(hits)} of {index.rows} passages for: {args.question}")
        for line in _hit_lines(hits):
            print(line)
    return 0


def _verify(args: argparse.Namespace) -> int:
    from pytest_provenai.retrieval.index import open_index

    index = open_index(args.dir, model=args.model)
    index.close()
    m = index.manifest
    print(
        f"ok: {args.dir}: {m['counts']['canonical_rows']} passages, {m['index']['type']} "
        f"index, {m['embedding']['name']} ({m['embedding']['dimension']}-d), every file "
        f"matches its sha256; manifest sha256 {index.digest}"
    )
    return 0


def add_index(commands: Any) -> None:
    """Register ``provenai index {build,search,verify}`` on the subcommand action."""
    from pytest_provenai.retrieval.embed import DEFAULT_BATCH_SIZE, DEFAULT_THREADS
    from pytest_provenai.retrieval.index import DEFAULT_INDEX_TYPE, INDEX_TYPES

    index = commands.add_parser(
        "index",
        help="build and search a retrieval index (FAISS + SQLite)",
        description="Build, search and verify retrieval index folders.",
    )
    actions = index.add_subparsers(dest="action", metavar="ACTION", required=True)
    build = actions.add_parser(
        "build",
        help="build an index folder from HotpotQA files and fixture sets",
        description=(
            "Read HotpotQA JSON files, folders of them and fixture set folders; deduplicate "
            "paragraphs on (title, text) keeping provenance links; embed them with "
            "all-MiniLM-L6-v2 (offline); write index.faiss, passages.sqlite and manifest.json."
        ),
    )
    build.add_argument("sources", nargs="+", metavar="SOURCE", help="file or folder")
    build.add_argument("--out", required=True, metavar="DIR", help="index folder to write")
    build.add_argument(
        "--index-type",
        choices=INDEX_TYPES,
        default=DEFAULT_INDEX_TYPE,
        help=f"FAISS index: flat (exact) or ivf (approximate) (default: {DEFAULT_INDEX_TYPE})",
    )
    build.add_argument(
        "--batch-size",
        type=positive_int,
        default=DEFAULT_BATCH_SIZE,
        help=f"embedding batch size (default: {DEFAULT_BATCH_SIZE})",
    )
    build.add_argument(
        "--threads",
        type=positive_int,
        default=DEFAULT_THREADS,
        help=f"torch/faiss threads during the build (default: {DEFAULT_THREADS})",
    )
    build.add_argument(
        "--model", metavar="DIR", help="sentence-transformers folder (default: packaged MiniLM)"
    )
    build.add_argument("--overwrite", action="store_true", help="replace DIR if it holds an index")
    build.add_argument("--no-progress", action="store_true", help="no progress bar")
    build.set_defaults(handler=_build)

    search = actions.add_parser(
        "search", help="print the top-k passages for a question", description="Search an index."
    )
    search.add_argument("dir", metavar="DIR", help="index folder")
    search.add_argument("question", metavar="QUESTION")
    search.add_argument("-k", type=positive_int, default=10, help="passages to show (default: 10)")
    search.add_argument("--json", action="store_true", help="print the hits as JSON")
    search.add_argument("--model", metavar="DIR", help="query embedding model folder")
    search.set_defaults(handler=_search)

    verify = actions.add_parser(
        "verify",
        help="check an index folder (digests, dimension, row counts, embedding model)",
        description="Verify an index folder the way the harness does before using it.",
    )
    verify.add_argument("dir", metavar="DIR", help="index folder")
    verify.add_argument("--model", metavar="DIR", help="query embedding model folder")
    verify.set_defaults(handler=_verify)


if __name__ == "__main__":  # pragma: no cover
    sys.exit("use: provenai index ...")
