"""Build, verify, open and search a retrieval index folder.

An index folder holds three files::

    <dir>/manifest.json    counts, sources, embedding model identity and digest, FAISS index
                           type and parameters, the sha256 and size of the two files below
    <dir>/index.faiss      FAISS inner-product index over L2-normalised passage vectors
                           (row i = canonical passage i)
    <dir>/passages.sqlite  table ``passages(row, id, title, text, sha256, provenance)``;
                           ``provenance`` is a JSON array of links {source, split, record,
                           position}

The folder is built in a hidden sibling and renamed into place, so a reader sees the old
index or the new one, never a part. The manifest holds no time stamps and no absolute paths:
the same inputs and options on the same software give byte-identical manifests.

Opening verifies everything before a single query: the manifest's format and fields, every
file's size and sha256, the FAISS index's dimension, metric and row count, the SQLite row
count, and that the query embedder is the model the index was built with. Any mismatch is a
:class:`~pytest_provenai.retrieval.RetrievalError` naming the file, the field and the fix.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_provenai._io import (
    atomic_write_json,
    fresh_sibling,
    replace_folder,
    sha256_bytes,
    sha256_file,
    sha256_text,
)
from pytest_provenai.errors import RetrievalError
from pytest_provenai.retrieval.corpus import Corpus, Link, load_corpus
from pytest_provenai.retrieval.embed import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_THREADS,
    PASSAGE_TEMPLATE,
    Embedder,
    model_identity,
)

__all__ = [
    "DEFAULT_INDEX_TYPE",
    "INDEX_TYPES",
    "Hit",
    "RetrievalIndex",
    "build_index",
    "check_index_folder",
    "open_index",
    "read_manifest",
]

FORMAT = "provenai-index"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
INDEX_FILE = "index.faiss"
LOOKUP_FILE = "passages.sqlite"
INDEX_TYPES = ("flat", "ivf")
DEFAULT_INDEX_TYPE = "flat"
"""Exact search. benchmarks/bench_index.py (500k x 384-d): see docs/retrieval.md for why."""
IVF_TRAIN_POINTS_PER_LIST = 256
"""k-means trains on at most this many points per list (faiss's default, sampled with a
fixed seed)."""
IVF_NPROBE = 16


def ivf_lists(rows: int) -> int:
    """Number of IVF lists for ``rows`` vectors: about sqrt(rows), with at least 39 training
    points per list (FAISS's minimum) — 1 list for a tiny corpus."""
    import math

    return max(1, min(round(math.sqrt(rows)), rows // 39))


# --------------------------------------------------------------------------- hits


@dataclass(frozen=True)
class Hit:
    """One retrieved passage: ``rank`` 0 is the best; ``score`` is the cosine similarity."""

    rank: int
    row: int
    passage_id: str
    title: str
    text: str
    sha256: str
    score: float
    links: tuple[Link, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "passage_id": self.passage_id,
            "title": self.title,
            "text": self.text,
            "sha256": self.sha256,
            "score": self.score,
            "provenance": [link.as_dict() for link in self.links],
        }


# --------------------------------------------------------------------------- faiss helpers


def _faiss() -> Any:
    try:
        import faiss
    except ImportError:
        raise RetrievalError(
            "faiss is not installed; install pytest-provenai[retrieval] (faiss-cpu)"
        ) from None
    return faiss


def _make_faiss_index(index_type: str, vectors: Any) -> tuple[Any, dict[str, Any]]:
    """A trained, filled FAISS index of ``index_type`` over ``vectors`` and its parameters."""
    faiss = _faiss()
    rows, dim = vectors.shape
    if index_type == "flat":
        index = faiss.IndexFlatIP(dim)
        params: dict[str, Any] = {"faiss_class": "IndexFlatIP"}
    elif index_type == "ivf":
        nlist = ivf_lists(rows)
        quantizer = faiss.IndexFlatIP(dim)
        index = faiss.IndexIVFFlat(quantizer, dim, nlist, faiss.METRIC_INNER_PRODUCT)
        index.cp.seed = 1234
        index.cp.max_points_per_centroid = IVF_TRAIN_POINTS_PER_LIST
        index.train(vectors)
        index.nprobe = min(IVF_NPROBE, nlist)
        params = {
            "faiss_class": "IndexIVFFlat",
            "nlist": nlist,
            "nprobe": index.nprobe,
            "kmeans_seed": 1234,
            "kmeans_iterations": int(index.cp.niter),
        }
    else:
        raise RetrievalError(f"index type {index_type!r}: use one of {', '.join(INDEX_TYPES)}")
    return index, params


# --------------------------------------------------------------------------- building


def _check_target(out: Path, overwrite: bool) -> None:
    shown = os.fspath(out)
    if not out.exists() and not out.is_symlink():
        return
    if not out.is_dir():
        raise RetrievalError(f"{shown}: exists and is not a folder; choose another --out folder")
    if not any(out.iterdir()):
        return
    if not overwrite:
        raise RetrievalError(
            f"{shown}: folder exists and is not empty; pass --overwrite (overwrite=True) to "
            "replace it"
        )
    try:
        fmt = json.loads((out / MANIFEST).read_text("utf-8")).get("format")
    except (OSError, ValueError, AttributeError):
        fmt = None
    if fmt != FORMAT:
        raise RetrievalError(
            f"{shown}: refusing to overwrite a folder that is not a provenai index (no "
            f"{MANIFEST} with format {FORMAT!r}); choose another --out folder"
        )


def _write_lookup(path: Path, corpus: Corpus) -> None:
    con = sqlite3.connect(path)
    try:
        con.execute(
            "CREATE TABLE passages (row INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, "
            "title TEXT NOT NULL, text TEXT NOT NULL, sha256 TEXT NOT NULL, "
            "provenance TEXT NOT NULL)"
        )
        with con:
            con.executemany(
                "INSERT INTO passages VALUES (?, ?, ?, ?, ?, ?)",
                (
                    (
                        row,
                        p.id,
                        p.title,
                        p.text,
                        p.sha256,
                        json.dumps([link.as_dict() for link in p.links], sort_keys=True),
                    )
                    for row, p in enumerate(corpus.passages)
                ),
            )
    finally:
        con.close()


def _readable_like_the_others(path: Path, like: Path) -> None:
    """The atomic writer's temp file is 0600; give the manifest the mode the other index
    files got from the umask, so whoever can read the index can read its manifest."""
    os.chmod(path, like.stat().st_mode & 0o777)


def _library_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for dist in ("faiss-cpu", "sentence-transformers", "torch"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = "not installed"
    return out


def corpus_digest(corpus: Corpus) -> str:
    """sha256 over the canonical passages in order (id, sha256 of text, links): the
    corpus's content identity, independent of the SQLite file's bytes."""
    lines = (
        json.dumps([p.id, p.sha256, [link.as_dict() for link in p.links]], sort_keys=True)
        for p in corpus.passages
    )
    return sha256_text("\n".join(lines))


def build_index(
    sources: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    *,
    index_type: str = DEFAULT_INDEX_TYPE,
    model: str | os.PathLike[str] | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    threads: int = DEFAULT_THREADS,
    overwrite: bool = False,
    progress: bool = True,
    embedder: Embedder | None = None,
) -> dict[str, Any]:
    """Build an index folder ``out`` from HotpotQA files / fixture set folders ``sources``.

    ``model`` is a local sentence-transformers folder (default: the packaged
    all-MiniLM-L6-v2); ``threads`` fixes torch's and faiss's thread counts during the build
    (part of the manifest, like ``batch_size``: both can change float rounding). Returns the
    manifest.
    """
    if index_type not in INDEX_TYPES:
        raise RetrievalError(f"index type {index_type!r}: use one of {', '.join(INDEX_TYPES)}")
    if batch_size < 1 or threads < 1:
        raise RetrievalError(f"batch size and threads must be >= 1, got {batch_size}, {threads}")
    target = Path(os.path.abspath(out))
    _check_target(target, overwrite)
    corpus = load_corpus(sources)
    if not corpus.passages:
        raise RetrievalError("the sources hold no paragraphs; nothing to index")
    emb = embedder or Embedder(model, threads=threads)
    if embedder is not None:
        emb.threads = threads

    from tqdm import tqdm

    with tqdm(
        total=len(corpus.passages),
        desc="embedding passages",
        unit="passage",
        disable=not progress,
        dynamic_ncols=True,
    ) as bar:
        vectors = emb.embed_passages(
            [(p.title, p.text) for p in corpus.passages],
            batch_size=batch_size,
            progress=bar.update,
        )

    faiss = _faiss()
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(threads)
    try:
        index, params = _make_faiss_index(index_type, vectors)
        index.add(vectors)
    finally:
        faiss.omp_set_num_threads(before)

    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = fresh_sibling(target.parent, target.name, "tmp")
    try:
        faiss.write_index(index, str(tmp / INDEX_FILE))
        _write_lookup(tmp / LOOKUP_FILE, corpus)
        files = {
            name: {"sha256": sha256_file(tmp / name), "bytes": (tmp / name).stat().st_size}
            for name in (INDEX_FILE, LOOKUP_FILE)
        }
        manifest: dict[str, Any] = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "counts": corpus.counts(),
            "sources": [s.as_dict() for s in corpus.sources],
            "skipped_files": corpus.skipped,
            "corpus_sha256": corpus_digest(corpus),
            "embedding": {
                **emb.identity.as_dict(),
                "normalised": True,
                "passage_template": PASSAGE_TEMPLATE,
                "batch_size": batch_size,
                "threads": threads,
            },
            "index": {
                "type": index_type,
                "metric": "inner_product",
                "dimension": emb.identity.dimension,
                "rows": len(corpus.passages),
                **params,
            },
            "files": files,
            "built_with": _library_versions(),
        }
        atomic_write_json(tmp / MANIFEST, manifest)
        _readable_like_the_others(tmp / MANIFEST, tmp / LOOKUP_FILE)
        _check_target(target, overwrite)  # the folder may have changed while we embedded
        replace_folder(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return manifest


# --------------------------------------------------------------------------- verifying


def _field(manifest: dict[str, Any], shown: str, *path: str, kind: type | tuple[type, ...]) -> Any:
    node: Any = manifest
    for part in path:
        if not isinstance(node, dict) or part not in node:
            raise RetrievalError(
                f"{shown}#/{'/'.join(path)}: missing; the manifest is not a provenai index "
                "manifest — rebuild the index with 'provenai index build'"
            )
        node = node[part]
    if not isinstance(node, kind) or (isinstance(node, bool) and kind is int):
        raise RetrievalError(
            f"{shown}#/{'/'.join(path)}: expected {getattr(kind, '__name__', kind)}, got "
            f"{node!r}; rebuild the index with 'provenai index build'"
        )
    return node


def read_manifest(folder: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and check ``<folder>/manifest.json`` (format, version, required fields)."""
    from pytest_provenai.frozen.load import parse_json_bytes

    root = Path(folder)
    shown = os.path.join(os.fspath(folder), MANIFEST)
    if not root.is_dir():
        raise RetrievalError(
            f"{os.fspath(folder)}: no such index folder; build one with "
            "'provenai index build SOURCES... --out DIR'"
        )
    try:
        data = (root / MANIFEST).read_bytes()
    except OSError:
        raise RetrievalError(
            f"{shown}: missing; {os.fspath(folder)} is not an index folder (build one with "
            "'provenai index build SOURCES... --out DIR')"
        ) from None
    try:
        manifest = parse_json_bytes(data, shown)
    except RetrievalError:
        raise
    except Exception as exc:
        raise RetrievalError(f"{exc}; rebuild the index with 'provenai index build'") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        got = manifest.get("format") if isinstance(manifest, dict) else type(manifest).__name__
        raise RetrievalError(f"{shown}#/format: expected {FORMAT!r}, got {got!r}")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise RetrievalError(
            f"{shown}#/format_version: expected {FORMAT_VERSION}, got "
            f"{manifest.get('format_version')!r}; rebuild the index with this version"
        )
    _field(manifest, shown, "counts", "canonical_rows", kind=int)
    _field(manifest, shown, "embedding", "name", kind=str)
    _field(manifest, shown, "embedding", "digest", kind=str)
    _field(manifest, shown, "embedding", "dimension", kind=int)
    itype = _field(manifest, shown, "index", "type", kind=str)
    if itype not in INDEX_TYPES:
        raise RetrievalError(
            f"{shown}#/index/type: expected one of {', '.join(INDEX_TYPES)}, got {itype!r}"
        )
    _field(manifest, shown, "index", "dimension", kind=int)
    for name in (INDEX_FILE, LOOKUP_FILE):
        _field(manifest, shown, "files", name, "sha256", kind=str)
        _field(manifest, shown, "files", name, "bytes", kind=int)
    if manifest["index"]["dimension"] != manifest["embedding"]["dimension"]:
        raise RetrievalError(
            f"{shown}#/index/dimension: {manifest['index']['dimension']} differs from "
            f"/embedding/dimension {manifest['embedding']['dimension']}; rebuild the index"
        )
    return manifest


def check_index_folder(folder: str | os.PathLike[str], *, digests: bool = True) -> dict[str, Any]:
    """Check the manifest and that every listed file exists with its size (and, with
    ``digests``, its sha256). Returns the manifest."""
    manifest = read_manifest(folder)
    root = Path(folder)
    for name, entry in sorted(manifest["files"].items()):
        file = root / name
        pointer = f"{os.path.join(os.fspath(folder), MANIFEST)}#/files/{name}"
        if not file.is_file():
            raise RetrievalError(
                f"{file}: missing (listed in {pointer}); rebuild the index with "
                "'provenai index build'"
            )
        size = file.stat().st_size
        if size != entry["bytes"]:
            raise RetrievalError(
                f"{file}: {size} bytes, but {pointer}/bytes says {entry['bytes']}; the file "
                "changed after the index was built — rebuild it with 'provenai index build'"
            )
        if digests:
            digest = sha256_file(file)
            if digest != entry["sha256"]:
                raise RetrievalError(
                    f"{file}: sha256 {digest}, but {pointer}/sha256 says {entry['sha256']}; "
                    "the file changed after the index was built — rebuild it with "
                    "'provenai index build'"
                )
    return manifest


# --------------------------------------------------------------------------- searching


class RetrievalIndex:
    """A verified index folder, ready to search. Use :func:`open_index`."""

    def __init__(
        self, folder: Path, manifest: dict[str, Any], index: Any, con: Any, embedder: Embedder
    ) -> None:
        self.folder = folder
        self.manifest = manifest
        self.faiss_index = index
        self.con = con
        self.embedder = embedder
        self.digest = sha256_bytes((folder / MANIFEST).read_bytes())

    @property
    def rows(self) -> int:
        return int(self.manifest["counts"]["canonical_rows"])

    def identity(self) -> dict[str, Any]:
        """What a trace records about the index: manifest sha256, type, rows, model."""
        return {
            "manifest_sha256": self.digest,
            "corpus_sha256": self.manifest.get("corpus_sha256"),
            "type": self.manifest["index"]["type"],
            "rows": self.rows,
            "embedding": {
                "name": self.manifest["embedding"]["name"],
                "digest": self.manifest["embedding"]["digest"],
            },
        }

    def search_vectors(self, vectors: Any, k: int) -> list[list[Hit]]:
        import numpy as np

        if k < 1:
            raise RetrievalError(f"k must be >= 1, got {k}")
        scores, rows = self.faiss_index.search(np.ascontiguousarray(vectors, np.float32), k)
        wanted = sorted({int(r) for r in rows.ravel() if r >= 0})
        found: dict[int, tuple[str, str, str, str, str]] = {}
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            marks = ",".join("?" * len(part))
            for row, pid, title, text, sha, prov in self.con.execute(
                f"SELECT row, id, title, text, sha256, provenance FROM passages "
                f"WHERE row IN ({marks})",
                part,
            ):
                found[int(row)] = (pid, title, text, sha, prov)
        out: list[list[Hit]] = []
        for q_scores, q_rows in zip(scores, rows, strict=True):
            hits: list[Hit] = []
            for score, row in zip(q_scores, q_rows, strict=True):
                if row < 0:
                    continue
                if int(row) not in found:
                    raise RetrievalError(
                        f"{self.folder / LOOKUP_FILE}: no passage for FAISS row {int(row)}; "
                        "the lookup does not match the index — rebuild it"
                    )
                pid, title, text, sha, prov = found[int(row)]
                links = tuple(Link(**link) for link in json.loads(prov))
                hits.append(Hit(len(hits), int(row), pid, title, text, sha, float(score), links))
            out.append(hits)
        return out

    def search_many(self, questions: Sequence[str], k: int = 10) -> list[list[Hit]]:
        """Top-``k`` passages for each question, best first."""
        if not questions:
            return []
        return self.search_vectors(self.embedder.embed_queries(list(questions)), k)

    def search(self, question: str, k: int = 10) -> list[Hit]:
        """Top-``k`` passages for ``question``, best first."""
        return self.search_many([question], k)[0]

    def close(self) -> None:
        self.con.close()


def open_index(
    folder: str | os.PathLike[str],
    *,
    model: str | os.PathLike[str] | None = None,
    embedder: Embedder | None = None,
    device: str = "cpu",
) -> RetrievalIndex:
    """Open and verify an index folder for search.

    Queries are embedded with ``embedder`` or the model in ``model`` (default: the packaged
    all-MiniLM-L6-v2); it must be the model the index was built with (same file digest and
    dimension), else a RetrievalError says which model the index needs.
    """
    root = Path(folder)
    shown = os.fspath(folder)
    manifest = check_index_folder(root)
    want = manifest["embedding"]
    have = embedder.identity if embedder is not None else model_identity(model)
    if have.digest != want["digest"] or have.dimension != want["dimension"]:
        raise RetrievalError(
            f"{os.path.join(shown, MANIFEST)}#/embedding: the index was built with "
            f"{want['name']} (digest {want['digest'][:16]}…, {want['dimension']}-d) but "
            f"queries would be embedded with {have.name} (digest {have.digest[:16]}…, "
            f"{have.dimension}-d); use the model the index was built with, or rebuild the "
            "index with this one"
        )
    faiss = _faiss()
    try:
        index = faiss.read_index(str(root / INDEX_FILE))
    except Exception as exc:
        raise RetrievalError(
            f"{root / INDEX_FILE}: FAISS cannot read it ({exc}); rebuild the index"
        ) from None
    rows = manifest["counts"]["canonical_rows"]
    if index.d != manifest["index"]["dimension"]:
        raise RetrievalError(
            f"{root / INDEX_FILE}: {index.d}-d vectors, but {MANIFEST}#/index/dimension says "
            f"{manifest['index']['dimension']}; rebuild the index"
        )
    if index.ntotal != rows:
        raise RetrievalError(
            f"{root / INDEX_FILE}: {index.ntotal} vectors, but {MANIFEST}#/counts/"
            f"canonical_rows says {rows}; rebuild the index"
        )
    if index.metric_type != faiss.METRIC_INNER_PRODUCT:
        raise RetrievalError(
            f"{root / INDEX_FILE}: not an inner-product index (metric {index.metric_type}); "
            "rebuild the index with 'provenai index build'"
        )
    if manifest["index"]["type"] == "ivf":
        index.nprobe = int(manifest["index"].get("nprobe", IVF_NPROBE))
    uri = (root / LOOKUP_FILE).resolve().as_uri() + "?mode=ro"
    try:
        con = sqlite3.connect(uri, uri=True, check_same_thread=False)
        (count,) = con.execute("SELECT count(*) FROM passages").fetchone()
    except sqlite3.Error as exc:
        raise RetrievalError(
            f"{root / LOOKUP_FILE}: not a readable passage lookup ({exc}); rebuild the index"
        ) from None
    if count != rows:
        con.close()
        raise RetrievalError(
            f"{root / LOOKUP_FILE}: {count} passages, but {MANIFEST}#/counts/canonical_rows "
            f"says {rows}; rebuild the index"
        )
    return RetrievalIndex(root, manifest, index, con, embedder or Embedder(model, device=device))
