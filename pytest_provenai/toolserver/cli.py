"""``provenai mcp``: serve the HotpotQA tools over stdio; replay a captured trace graph.

    provenai mcp serve --fixtures DIR... [--index DIR]
    provenai mcp replay GRAPH.json --fixtures DIR... [--index DIR]

``serve`` speaks MCP on stdin/stdout (log lines go to stderr). ``replay`` reissues every call
of a graph captured by the audit and exits 1 naming each call whose result digest or error
flag changed; a file that is not a captured graph is one ``provenai: error:`` line naming
the file and the JSON pointer, exit 2 (1 means "calls changed" only).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pytest_provenai.errors import AttributionError

__all__ = ["add_mcp", "load_tools"]


def load_tools(fixtures: list[str], index: str | None) -> object:
    """HotpotTools over the HotpotQA cases of the fixture sets (and the index)."""
    from pytest_provenai.frozen.load import load_fixture_set
    from pytest_provenai.frozen.model import Case
    from pytest_provenai.toolserver.tools import HotpotTools

    cases: list[Case] = []
    for folder in fixtures:
        fixture_set = load_fixture_set(folder)
        cases += [c for c in fixture_set.cases if isinstance(c, Case)]
    if not cases:
        raise AttributionError(
            f"--fixtures {' '.join(fixtures)}: no HotpotQA cases; the tools serve HotpotQA "
            "fixture sets (kind hotpotqa)"
        )
    opened = None
    if index:
        from pytest_provenai.retrieval.index import open_index

        opened = open_index(index)
    return HotpotTools(cases, opened)


def _serve(args: argparse.Namespace) -> int:
    from pytest_provenai.attribution import require_extra
    from pytest_provenai.toolserver.server import build_server
    from pytest_provenai.toolserver.stdio import serve_stdio
    from pytest_provenai.toolserver.tools import HotpotTools

    require_extra("mcp")
    tools = load_tools(args.fixtures, args.index)
    assert isinstance(tools, HotpotTools)
    serve_stdio(build_server(tools).mcp)
    return 0


def _replay(args: argparse.Namespace) -> int:
    from pytest_provenai.toolserver.capture import read_graph, replay
    from pytest_provenai.toolserver.server import build_server
    from pytest_provenai.toolserver.tools import HotpotTools

    graph = read_graph(Path(args.graph))
    tools = load_tools(args.fixtures, args.index)
    assert isinstance(tools, HotpotTools)
    mismatches = replay(graph, build_server(tools).mcp)
    calls = sum(1 for n in graph["nodes"] if n.get("type") == "call")
    if mismatches:
        for m in mismatches:
            print(f"provenai: changed: {m.line()}", file=sys.stderr)
        print(f"{len(mismatches)} of {calls} calls changed", file=sys.stderr)
        return 1
    print(f"replayed {calls} calls: every result digest matches")
    return 0


def add_mcp(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mcp = commands.add_parser(
        "mcp",
        help="the HotpotQA MCP server (stdio) and trace replay",
        description="Serve the ProvenAI HotpotQA tools over MCP, or replay a trace graph.",
    )
    sub = mcp.add_subparsers(dest="mcp_command", metavar="ACTION", required=True)
    for name, handler, text in (
        ("serve", _serve, "serve the six tools on stdio"),
        ("replay", _replay, "reissue a captured graph's calls; exit 1 on a changed digest"),
    ):
        p = sub.add_parser(name, help=text, description=text)
        if name == "replay":
            p.add_argument("graph", metavar="GRAPH", help="trace graph JSON written by the audit")
        p.add_argument(
            "--fixtures", nargs="+", required=True, metavar="DIR", help="HotpotQA fixture sets"
        )
        p.add_argument("--index", metavar="DIR", help="retrieval index for search_hotpotqa")
        p.set_defaults(handler=handler)
