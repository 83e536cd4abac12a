"""Freezing datasets into fixture sets: HotpotQA (distractor setting).

``freeze_hotpotqa`` turns an official HotpotQA JSON file (a list of records with ``_id``,
``question``, ``answer``, ``type``, ``level``, ``supporting_facts`` and ``context``) into a
fixture set folder: one ``cases/<_id>.json`` per record, a ``manifest.json`` with the sha256
of every case file, and a ``README.md`` carrying the CC BY-SA 4.0 licence and attribution.
The output depends only on the input bytes and the arguments (no time stamps, no absolute
paths), so freezing twice with the same seed gives byte-identical folders.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
from pathlib import Path
from typing import Any

from pytest_provenai._io import (
    dumps_stable,
    fresh_sibling,
    replace_folder,
    sha256_bytes,
    sha256_text,
)
from pytest_provenai.errors import FixtureError, ProvenaiError
from pytest_provenai.frozen.jsonread import describe_value, what_is_there
from pytest_provenai.frozen.load import (
    CASES_DIR,
    ID_MAX_LENGTH,
    ID_RE,
    MANIFEST_NAME,
    SCHEMA_VERSION,
    PathLike,
    json_pointer,
    load_fixture_set,
    parse_json_bytes,
    read_set_manifest,
)
from pytest_provenai.frozen.model import FixtureSet

__all__ = ["HOTPOTQA_ATTRIBUTION", "HOTPOTQA_LICENCE", "freeze_hotpotqa", "infer_split"]

HOTPOTQA_LICENCE_URL = "https://creativecommons.org/licenses/by-sa/4.0/"
HOTPOTQA_ATTRIBUTION = (
    "HotpotQA (Yang et al., EMNLP 2018, https://hotpotqa.github.io), CC BY-SA 4.0 — "
    f"{HOTPOTQA_LICENCE_URL}; frozen by pytest-provenai; "
    "changes: reformatted into per-case JSON with sha256 digests"
)
HOTPOTQA_LICENCE: dict[str, str] = {
    "name": "CC BY-SA 4.0",
    "url": HOTPOTQA_LICENCE_URL,
    "attribution": HOTPOTQA_ATTRIBUTION,
}

_SPLIT_WORDS = {"dev": "dev", "validation": "dev", "train": "train", "test": "test"}


def infer_split(file_name: str) -> str:
    """``dev`` / ``train`` / ``test`` from words in a file name, e.g.
    ``hotpot_dev_distractor_v1.json`` → ``dev``. Raises ProvenaiError when it is not clear."""
    words = {w for w in re.split(r"[^a-z0-9]+", Path(file_name).name.lower()) if w}
    found = sorted({split for word, split in _SPLIT_WORDS.items() if word in words})
    if len(found) != 1:
        raise ProvenaiError(
            f"cannot tell the split from the file name {file_name!r} "
            f"({'words for ' + ' and '.join(found) if found else 'no dev/train/test in it'}); "
            "pass split= (--split) explicitly"
        )
    return found[0]


# --------------------------------------------------------------------------- input checks


class _Checker:
    """Structural checks of HotpotQA records; errors name the input file and /<index>/<key>."""

    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, parts: tuple[str | int, ...], expected: str, actual: str) -> FixtureError:
        return FixtureError(self.path, json_pointer(*parts), expected, actual)

    def string(self, value: Any, parts: tuple[str | int, ...], *, non_empty: bool) -> str:
        if not isinstance(value, str):
            raise self.fail(
                parts, "a non-empty string" if non_empty else "a string", describe_value(value)
            )
        if non_empty and not value:
            raise self.fail(parts, "a non-empty string", "the empty string")
        return value

    def array(self, value: Any, parts: tuple[str | int, ...], what: str) -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(parts, what, describe_value(value))
        return value

    def record(self, rec: Any, i: int) -> None:
        if not isinstance(rec, dict):
            raise self.fail((i,), "a HotpotQA record (a JSON object)", describe_value(rec))
        for key in ("_id", "question", "answer", "type", "level", "supporting_facts", "context"):
            if key not in rec:
                raise self.fail((i, key), f"the HotpotQA key {key!r}", "none (missing)")
        rid = self.string(rec["_id"], (i, "_id"), non_empty=True)
        if not ID_RE.fullmatch(rid) or len(rid) > ID_MAX_LENGTH:
            raise self.fail(
                (i, "_id"),
                f"an id of letters, digits, '.', '_' and '-' (at most {ID_MAX_LENGTH}; it names "
                "the case file)",
                describe_value(rid),
            )
        self.string(rec["question"], (i, "question"), non_empty=True)
        self.string(rec["answer"], (i, "answer"), non_empty=False)
        self.string(rec["type"], (i, "type"), non_empty=True)
        self.string(rec["level"], (i, "level"), non_empty=True)
        facts = self.array(
            rec["supporting_facts"], (i, "supporting_facts"), "an array of [title, sentence]"
        )
        for j, fact in enumerate(facts):
            where = (i, "supporting_facts", j)
            if not isinstance(fact, list) or len(fact) != 2:
                raise self.fail(where, "a [title, sentence index] pair", describe_value(fact))
            self.string(fact[0], (*where, 0), non_empty=True)
            index = fact[1]
            if not isinstance(index, int) or isinstance(index, bool) or index < 0:
                raise self.fail(
                    (*where, 1), "a sentence index (an integer >= 0)", describe_value(index)
                )
        context = self.array(rec["context"], (i, "context"), "an array of [title, sentences]")
        if not context:
            raise self.fail((i, "context"), "at least one [title, sentences] paragraph", "[]")
        for j, para in enumerate(context):
            where = (i, "context", j)
            if not isinstance(para, list) or len(para) != 2:
                raise self.fail(where, "a [title, sentences] pair", describe_value(para))
            self.string(para[0], (*where, 0), non_empty=True)
            sentences = self.array(para[1], (*where, 1), "an array of sentence strings")
            for k, sentence in enumerate(sentences):
                self.string(sentence, (*where, 1, k), non_empty=False)


def _case_from_record(rec: dict[str, Any], i: int, checker: _Checker) -> dict[str, Any]:
    titles = {para[0] for para in rec["context"]}
    supporting_titles: list[str] = []
    for j, (title, _sentence) in enumerate(rec["supporting_facts"]):
        if title not in titles:
            raise checker.fail(
                (i, "supporting_facts", j, 0),
                "the title of one of the record's context paragraphs",
                describe_value(title),
            )
        if title not in supporting_titles:
            supporting_titles.append(title)
    sources = []
    for title, sentences in rec["context"]:
        text = "".join(sentences)
        sources.append(
            {
                "title": title,
                "sentences": list(sentences),
                "text": text,
                "sha256": sha256_text(text),
                "version": 1,
            }
        )
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "hotpotqa",
        "id": rec["_id"],
        "question": rec["question"],
        "answer": rec["answer"],
        "type": rec["type"],
        "level": rec["level"],
        "supporting_facts": [{"title": t, "sentence": s} for t, s in rec["supporting_facts"]],
        "supporting_titles": supporting_titles,
        "sources": sources,
    }


# --------------------------------------------------------------------------- writing


def _readme(manifest: dict[str, Any]) -> str:
    sample = (
        f"a sample of {manifest['sample']} records drawn with seed {manifest['seed']} "
        "(kept in dataset order)"
        if manifest["sample"] is not None
        else f"the first {manifest['first']} records"
        if manifest.get("first") is not None
        else "every record"
    )
    again = f" --sample {manifest['sample']} --seed {manifest['seed']}" * (
        manifest["sample"] is not None
    ) + f" --first {manifest.get('first')}" * (manifest.get("first") is not None)
    return (
        f"# {manifest['name']}\n"
        "\n"
        f"{manifest['count']} HotpotQA {manifest['split']} cases (distractor setting): "
        f"{sample} of `{manifest['source_file']}` (sha256 `{manifest['source_sha256']}`).\n"
        "\n"
        "## Licence and attribution\n"
        "\n"
        f"{manifest['licence']['attribution']}\n"
        "\n"
        f"The cases are licensed under {manifest['licence']['name']} "
        f"({manifest['licence']['url']}), like the dataset they come from.\n"
        "\n"
        "## Layout\n"
        "\n"
        "- `cases/<id>.json`: one question with its gold answer, supporting facts and its "
        "context paragraphs as sources, each pinned by the sha256 of its text.\n"
        "- `manifest.json`: provenance, licence, and the sha256 of every case file. "
        "pytest-provenai refuses to load the set if any byte changed.\n"
        "\n"
        "Recreate it with:\n"
        "\n"
        "```\n"
        f"provenai freeze hotpotqa {manifest['source_file']} --out <folder>{again}\n"
        "```\n"
    )


def _check_target(out: Path, shown: str, overwrite: bool) -> None:
    if not out.exists() and not out.is_symlink():
        return
    if not out.is_dir():
        raise ProvenaiError(f"{shown}: exists and is not a folder; choose another output folder")
    if not any(out.iterdir()):
        return
    if not overwrite:
        raise ProvenaiError(
            f"{shown}: folder exists and is not empty; pass --overwrite (overwrite=True) "
            "to replace it"
        )
    if not (out / MANIFEST_NAME).is_file():
        raise ProvenaiError(
            f"{shown}: refusing to overwrite a folder that is not a fixture set "
            f"(it has no {MANIFEST_NAME}); choose another output folder"
        )
    try:  # any folder may hold a manifest.json (an index, another tool): it must be a set's
        read_set_manifest(out)
    except FixtureError as exc:
        raise ProvenaiError(
            f"{shown}: refusing to overwrite a folder that is not a fixture set ({exc}); "
            "choose another output folder"
        ) from None


def _write_set(out: Path, shown: str, files: dict[str, bytes], overwrite: bool) -> None:
    """Build the set in a hidden sibling folder, then rename it into place."""
    _check_target(out, shown, overwrite)
    out = Path(os.path.abspath(out))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = fresh_sibling(out.parent, out.name, "tmp")
    try:
        for rel, data in files.items():
            target = tmp / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        replace_folder(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


# --------------------------------------------------------------------------- entry point


def freeze_hotpotqa(
    input_path: PathLike,
    out_dir: PathLike,
    *,
    sample: int | None = None,
    seed: int = 42,
    name: str | None = None,
    split: str | None = None,
    overwrite: bool = False,
    first: int | None = None,
) -> FixtureSet:
    """Freeze HotpotQA records from ``input_path`` into the fixture set folder ``out_dir``.

    ``sample`` records (all when None) are drawn with ``random.Random(seed)`` and kept in
    dataset order; ``first`` instead keeps the first ``first`` records of the file (the
    manifest then records ``"first"``). ``name`` (default: the folder name) and ``split``
    (default: inferred from the input file name) are recorded in the manifest. An existing
    non-empty ``out_dir`` is refused unless ``overwrite`` (and then only if it is a fixture
    set). Every input record is checked first; a bad one raises :class:`FixtureError` naming
    the input file and ``/<index>/<key>``. Returns the written set, loaded back with
    ``load_fixture_set``.
    """
    shown_in = os.fspath(input_path)
    shown_out = os.fspath(out_dir)
    src = Path(input_path)
    out = Path(out_dir)
    if sample is not None and (not isinstance(sample, int) or isinstance(sample, bool)):
        raise ProvenaiError(f"sample must be a whole number of records, got {sample!r}")
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ProvenaiError(f"seed must be an integer, got {seed!r}")
    if sample is not None and sample < 1:
        raise ProvenaiError(f"sample must be at least 1, got {sample}")
    if first is not None:
        if not isinstance(first, int) or isinstance(first, bool) or first < 1:
            raise ProvenaiError(f"first must be a whole number of records >= 1, got {first!r}")
        if sample is not None:
            raise ProvenaiError("give either sample or first, not both")
    set_name = name if name is not None else Path(os.path.abspath(out)).name
    if not set_name:
        raise ProvenaiError("the fixture set name must not be empty")
    what = what_is_there(src)
    if what is not None:
        raise FixtureError(shown_in, "", "a HotpotQA JSON file", what)
    if split is None:
        split = infer_split(src.name)
    elif not split:
        raise ProvenaiError("split must not be empty")
    _check_target(out, shown_out, overwrite)  # fail fast, before reading the input
    data = src.read_bytes()
    records = parse_json_bytes(data, shown_in)
    checker = _Checker(shown_in)
    if not isinstance(records, list):
        raise FixtureError(
            shown_in, "", "a JSON array of HotpotQA records", describe_value(records)
        )
    if not records:
        raise FixtureError(shown_in, "", "at least one HotpotQA record", "an empty array")
    first_index: dict[str, int] = {}
    for i, rec in enumerate(records):
        checker.record(rec, i)
        folded = rec["_id"].lower()  # case files must not collide on case-insensitive disks
        if folded in first_index:
            raise checker.fail(
                (i, "_id"),
                "an _id no other record uses (ignoring letter case)",
                f"{json.dumps(rec['_id'])}, as record {first_index[folded]}",
            )
        first_index[folded] = i

    if sample is not None and sample > len(records):
        raise ProvenaiError(
            f"{shown_in}: cannot sample {sample} records, the file has only {len(records)}"
        )
    chosen = (
        range(min(first, len(records)))
        if first is not None
        else range(len(records))
        if sample is None
        else sorted(random.Random(seed).sample(range(len(records)), sample))
    )

    files: dict[str, bytes] = {}
    digests: dict[str, str] = {}
    for i in chosen:
        case = _case_from_record(records[i], i, checker)
        rel = f"{CASES_DIR}/{case['id']}.json"
        payload = dumps_stable(case).encode("utf-8")
        files[rel] = payload
        digests[rel] = sha256_bytes(payload)

    manifest: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "name": set_name,
        "dataset": "hotpotqa",
        "split": split,
        "source_file": src.name,
        "source_sha256": sha256_bytes(data),
        "licence": dict(HOTPOTQA_LICENCE),
        "seed": seed,
        "sample": sample,
        "count": len(files),
        "files": digests,
    }
    if first is not None:
        manifest["first"] = first
    files[MANIFEST_NAME] = dumps_stable(manifest).encode("utf-8")
    files["README.md"] = _readme(manifest).encode("utf-8")
    _write_set(out, shown_out, files, overwrite)
    return load_fixture_set(out_dir)
