"""The MCP side of the attribution layer (named so it never shadows the ``mcp`` SDK).

* :mod:`~pytest_provenai.toolserver.tools` — the six HotpotQA tools as plain functions over
  frozen fixture cases and, when given, the retrieval index (no MCP here);
* :mod:`~pytest_provenai.toolserver.server` — the MCP server on the ``mcp`` SDK's
  ``MCPServer`` (``provenai mcp serve``, stdio);
* :mod:`~pytest_provenai.toolserver.capture` — the recording client session: every call of an
  answering session, its canonical arguments and result digests, into a trace graph;
  ``provenai mcp replay``;
* :mod:`~pytest_provenai.toolserver.subject` — answering HotpotQA cases through the tools
  (the harness drives the calls, the model writes the answer) and
  ``--provenai-mcp-pipeline``: a user's agent answering with ``(question, tools)``.

Importing this package does not import ``mcp``; a missing SDK is one line naming the
``attribution`` extra.
"""
