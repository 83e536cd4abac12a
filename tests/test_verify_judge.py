"""The LLM judge (``--provenai-verify-judge``, issue 23): strict parsing of both formats, the
requests it sends, every way a judge server can fail (HTTP error, timeout, dropped connection,
unparseable verdict, no logprobs) → that claim ``failed``, the answer blocked, one line naming
the server; the attribution cache (a warm rerun asks nothing, a failed record is never
stored); the options; and one end-to-end run of the plugin against the real llama.cpp server
(slow). The scripted servers are loopback HTTP servers (tests/served.py: ``Scripted``)."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

import pytest
from project import FIXTURES, results, run, write_ini
from served import API_KEY, MODEL_ALIAS, Scripted

from pytest_provenai import options as opt
from pytest_provenai._io import sha256_text
from pytest_provenai.attribution.lexical import LexicalEncoder
from pytest_provenai.attribution.pipeline import ClaimJudge, Verifier
from pytest_provenai.errors import ConfigError
from pytest_provenai.frozen.load import load_fixture_set
from pytest_provenai.frozen.traces import (
    ToolCall,
    ToolOutput,
    TraceCase,
    canonical_arguments,
    collect_evidence,
)
from pytest_provenai.options import AttributionSettings
from pytest_provenai.subject.backends.http import JSONClient
from pytest_provenai.verify.cache import RecordCache
from pytest_provenai.verify.judge import (
    JUDGE_API_KEY_ENV,
    ForestNotConsulted,
    JudgeError,
    LLMJudge,
    make_judge,
    parse_instruct,
    parse_minicheck,
)
from pytest_provenai.verify.runtime import AttributionRuntime

REPO = Path(__file__).resolve().parents[1]
TOOLS = {"lookup_account": "record", "fetch_policy": "document"}
RECORD = "customer: Velmora Ostrand\nplan: Kestrel Gold\nmonthly fee: 24.50 EUR"
POLICY = "The Kestrel Gold plan includes 40 GB of data. A late payment costs 7 EUR."
TWO_CLAIMS = "Velmora Ostrand is on the Kestrel Gold plan. The Kestrel Gold plan includes 40 GB."


def _call(index: int, tool: str, source: str, text: str) -> ToolCall:
    args = {"i": index}
    out = ToolOutput(source, text, sha256_text(text))
    return ToolCall(index, tool, args, canonical_arguments(args)[1], (out,), False)


EVIDENCE = collect_evidence(
    (_call(0, "lookup_account", "acct-1", RECORD), _call(1, "fetch_policy", "doc-1", POLICY)),
    TOOLS,
)


def chat(text: str) -> tuple[int, bytes]:
    """A chat completion replying ``text``."""
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]}
    return 200, json.dumps(body).encode()


def minicheck(token: str, logprob: float, tops: dict[str, float]) -> tuple[int, bytes]:
    """A one-token chat completion with logprobs in the OpenAI chat format."""
    entry = {
        "token": token,
        "logprob": logprob,
        "top_logprobs": [{"token": t, "logprob": lp} for t, lp in tops.items()],
    }
    body = {
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": token},
                "logprobs": {"content": [entry]},
            }
        ]
    }
    return 200, json.dumps(body).encode()


def judge_for(
    server: Scripted, fmt: str = "instruct", *, timeout: float = 5.0, retries: int = 1
) -> LLMJudge:
    client = JSONClient(server.base_url, timeout=timeout, retries=retries, backoff=0.01)
    return LLMJudge(client, "judge-7b", fmt)


def verifier(judge: LLMJudge) -> Verifier:
    # the forest slot raises if asked: these tests also show it is never consulted
    return Verifier(LexicalEncoder(), ForestNotConsulted(), judge=judge)


# -- strict parsing ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ("Supported", "supported"),
        ("supported.", "supported"),
        ("**Contradicted**", "contradicted"),
        ("  Not enough evidence\nThe document does not mention it.", "not_enough_evidence"),
        ("not_enough_evidence", "not_enough_evidence"),
        ("NOT ENOUGH EVIDENCE!", "not_enough_evidence"),
        ("Supported, because the record says so.", None),
        ("The claim is supported.", None),
        ("Yes", None),
        ("supported contradicted", None),
        ("", None),
        ("\n\n", None),
    ],
)
def test_instruct_verdicts_are_parsed_strictly(reply: str, verdict: str | None) -> None:
    j = parse_instruct(reply)
    if verdict is None:
        assert j is None
        return
    assert j is not None
    assert j.p_support == (1.0 if verdict == "supported" else 0.0)
    assert max(j.head, key=lambda c: j.head[c]) == verdict and sum(j.head.values()) == 1.0


def test_minicheck_yes_no_and_its_logprob() -> None:
    entry = {
        "token": "Yes",
        "logprob": -0.1,
        "top_logprobs": [{"token": "Yes", "logprob": -0.1}, {"token": "No", "logprob": -2.5}],
    }
    j, _ = parse_minicheck(entry)
    assert j is not None
    expected = math.exp(-0.1) / (math.exp(-0.1) + math.exp(-2.5))
    assert j.p_support == pytest.approx(expected, abs=1e-6)
    assert j.head["unsupported"] == pytest.approx(1 - expected, abs=1e-6)
    # No is never support, whatever the alternatives hold
    no, _ = parse_minicheck(
        {"token": " no", "logprob": -0.6, "top_logprobs": [{"token": "Yes", "logprob": -0.8}]}
    )
    assert no is not None and no.p_support < 0.5
    # Yes without No among the alternatives: the rest of the mass counts for No
    alone, _ = parse_minicheck({"token": "Yes", "logprob": math.log(0.7), "top_logprobs": []})
    assert alone is not None and alone.p_support == pytest.approx(0.7, abs=1e-6)
    for bad, why in [
        ({"token": "Maybe", "logprob": -0.1}, "not Yes or No"),
        ({"token": "Yes"}, "no finite logprob"),
        ({"token": "Yes", "logprob": "high"}, "no finite logprob"),
        (None, "no logprobs"),
    ]:
        verdict, reason = parse_minicheck(bad)
        assert verdict is None and why in reason


# -- requests and verdicts through the pipeline -------------------------------------------------
def test_instruct_judge_decides_each_claim_and_sends_the_premise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PROVENAI_API_KEY", "backend-key-5678")
    monkeypatch.setenv(JUDGE_API_KEY_ENV, "judge-key-1234")  # the judge's own key wins
    with Scripted([chat("Supported"), chat("Contradicted")]) as server:
        judge = make_judge(server.base_url, "judge-7b", "instruct")
        assert isinstance(judge, ClaimJudge)
        result = verifier(judge).verify(TWO_CLAIMS, EVIDENCE, TOOLS)
        assert [c.verdict for c in result.claims] == ["supported", "contradicted"]
        assert [c.p_support for c in result.claims] == [1.0, 0.0]
        assert not result.verdict.allowed and result.verdict.blocking == (1,)
        assert [r[:2] for r in server.requests] == [("POST", "/v1/chat/completions")] * 2
        assert server.requests[0][2]["Authorization"] == "Bearer judge-key-1234"
        body = server.bodies[0]
        assert body["model"] == "judge-7b" and body["temperature"] == 0.0
        user = body["messages"][-1]["content"]
        assert "Velmora Ostrand is on the Kestrel Gold plan." in user
        assert "plan: Kestrel Gold" in user  # the routed premise, not the other source
        assert "late payment" not in user
        assert "late payment" in server.bodies[1]["messages"][-1]["content"]
    identity = verifier(judge).identity
    assert identity["judge"] == {
        "kind": "llm_judge",
        "model": "judge-7b",
        "format": "instruct",
        "prompt_version": 1,
        "threshold": 0.5,
    }
    assert identity["checker"]["kind"] == "not_consulted" and identity["threshold"] == 0.5
    assert "127.0.0.1" not in json.dumps(identity)  # records never hold the URL
    assert judge.calls == 2 and judge.failures == 0


def test_minicheck_judge_sends_document_and_claim_and_reads_p_yes() -> None:
    replies = [
        minicheck("Yes", -0.05, {"Yes": -0.05, "No": -3.0}),
        minicheck("No", -0.2, {"No": -0.2, "Yes": -1.8}),
    ]
    with Scripted(replies) as server:
        result = verifier(judge_for(server, "minicheck")).verify(TWO_CLAIMS, EVIDENCE, TOOLS)
        body = server.bodies[0]
    assert [m["role"] for m in body["messages"]] == ["user"]
    assert body["messages"][0]["content"].startswith("Document: customer: Velmora Ostrand")
    assert body["max_tokens"] == 1 and body["logprobs"] is True and body["top_logprobs"] == 5
    assert body["messages"][0]["content"].endswith(
        "\nClaim: Velmora Ostrand is on the Kestrel Gold plan."
    )
    first, second = result.claims
    assert first.verdict == "supported" and first.p_support is not None
    assert first.p_support > 0.9
    assert second.verdict == "unsupported" and second.p_support is not None
    assert second.p_support < 0.5
    assert not result.verdict.allowed


def test_a_repeated_claim_is_not_asked_again() -> None:
    with Scripted([chat("Supported")]) as server:
        judge = judge_for(server)
        v = verifier(judge)
        v.verify("Velmora Ostrand is on the Kestrel Gold plan.", EVIDENCE, TOOLS)
        v.verify("Velmora Ostrand is on the Kestrel Gold plan.", EVIDENCE, TOOLS)
        assert len(server.requests) == 1 and judge.calls == 1


# -- a judge that fails: that claim failed, the answer blocked, one line naming the server ----
def _failed(result: Any, base_url: str) -> list[str]:
    assert not result.verdict.allowed
    assert "failed_component" in result.verdict.reasons
    errors = []
    for c in result.claims:
        assert c.verdict == "failed" and c.reasons == ("failed_component",)
        assert c.error is not None and "\n" not in c.error and base_url in c.error
        errors.append(c.error)
    return errors


def test_a_server_error_fails_the_claim_and_the_dead_server_is_not_asked_again() -> None:
    with Scripted([(500, b'{"error": "model crashed"}')]) as server:
        judge = judge_for(server, retries=1)
        result = verifier(judge).verify(TWO_CLAIMS, EVIDENCE, TOOLS)
        first, second = _failed(result, server.base_url)
        assert first.startswith(f"JudgeError: LLM judge judge-7b at {server.base_url}: POST ")
        assert "HTTP 500" in first and "gave up after 2 attempts" in first
        assert second.endswith("not asked again in this process")
        assert len(server.requests) == 2  # one claim: the request and its retry; then none
    assert judge.failures == 2


def test_a_client_error_fails_only_that_claim() -> None:
    with Scripted([(400, b'{"error": {"message": "context too long"}}'), chat("Supported")]) as s:
        result = verifier(judge_for(s)).verify(TWO_CLAIMS, EVIDENCE, TOOLS)
    assert [c.verdict for c in result.claims] == ["failed", "supported"]
    assert result.claims[0].error is not None and "HTTP 400" in result.claims[0].error
    assert "context too long" in result.claims[0].error
    assert not result.verdict.allowed and result.verdict.blocking == (0,)


def test_a_timeout_fails_the_claim() -> None:
    with Scripted([("sleep", 1.5, *chat("Supported"))]) as server:
        judge = judge_for(server, timeout=0.3, retries=0)
        result = verifier(judge).verify(
            "Velmora Ostrand is on the Kestrel Gold plan.", EVIDENCE, TOOLS
        )
        (error,) = _failed(result, server.base_url)
    assert "timed out" in error


def test_a_dropped_connection_fails_the_claim() -> None:
    with Scripted(["drop"]) as server:
        result = verifier(judge_for(server, retries=0)).verify(
            "Velmora Ostrand is on the Kestrel Gold plan.", EVIDENCE, TOOLS
        )
        (error,) = _failed(result, server.base_url)
    assert "POST" in error


@pytest.mark.parametrize(
    ("fmt", "reply", "why"),
    [
        ("instruct", chat("I think the claim is probably true."), "unparseable verdict"),
        ("instruct", chat("Supported, as the record shows."), "unparseable verdict"),
        ("instruct", (200, b'{"choices": []}'), "no choices[0]"),
        ("instruct", (200, b'{"choices": [{"message": {}}]}'), "no choices[0].message.content"),
        ("minicheck", chat("Yes"), "no logprobs"),
        ("minicheck", minicheck("Maybe", -0.1, {"Maybe": -0.1}), "unparseable verdict"),
        ("instruct", (200, b"<html>busy</html>"), "not JSON"),
    ],
)
def test_an_unreadable_reply_fails_the_claim(fmt: str, reply: Any, why: str) -> None:
    with Scripted([reply]) as server:
        judge = judge_for(server, fmt, retries=0)
        result = verifier(judge).verify(TWO_CLAIMS, EVIDENCE, TOOLS)
        errors = _failed(result, server.base_url)
    assert all(why in e for e in errors), errors


def test_a_key_the_server_echoes_never_reaches_the_line() -> None:
    with Scripted([chat("sk-abcdef123456 supported")]) as server:
        client = JSONClient(server.base_url, api_key="sk-abcdef123456", retries=0)
        result = verifier(LLMJudge(client, "judge-7b")).verify(
            "Velmora Ostrand is on the Kestrel Gold plan.", EVIDENCE, TOOLS
        )
    error = result.claims[0].error
    assert error is not None and "sk-abcdef123456" not in error and "[redacted]" in error


def test_judge_error_is_an_attribution_error() -> None:
    from pytest_provenai.errors import AttributionError

    assert issubclass(JudgeError, AttributionError)


# -- the runtime: cache, costs, a failed record never stored ----------------------------------
def _runtime(root: Path, costs: dict[str, Any], url: str, fmt: str = "instruct") -> Any:
    def nothing() -> Any:
        raise AssertionError("frozen cases need no subject or HotpotQA cases")

    settings = AttributionSettings(judge_url=url, judge_model="judge-7b", judge_format=fmt)
    return AttributionRuntime(
        settings,
        nothing,
        nothing,
        lambda nodeid, c: costs.__setitem__(nodeid, c),
        cache=RecordCache(root),
    )


@pytest.fixture
def lexical_minilm(monkeypatch: pytest.MonkeyPatch) -> None:
    """The runtime's encoder is the model-free lexical one (no MiniLM load in unit tests),
    and so is its conversation model's (the shipped one, fitted on MiniLM, would be refused):
    zero weights, so it never calls a claim small talk."""
    import pytest_provenai.verify.encoder as encoder
    import pytest_provenai.verify.runtime as runtime
    from pytest_provenai.attribution.conversation import ConversationModel

    monkeypatch.setattr(encoder, "MiniLMEncoder", LexicalEncoder)
    silent = ConversationModel(
        weights=(0.0,) * LexicalEncoder().identity["dimension"],
        bias=-10.0,
        threshold=0.8,
        max_shared=0.25,
        encoder=LexicalEncoder().identity,
        sha256="lexical-test",
    )
    monkeypatch.setattr(runtime, "shipped_conversation", lambda: silent)


@pytest.fixture(scope="module")
def trace_case() -> TraceCase:
    case = load_fixture_set(REPO / "fixtures" / "synthetic-mcp-traces").cases[0]
    assert isinstance(case, TraceCase)
    return case


@pytest.mark.usefixtures("lexical_minilm")
def test_a_warm_rerun_makes_no_judge_call(tmp_path: Path, trace_case: TraceCase) -> None:
    costs: dict[str, Any] = {}
    root = tmp_path / "attribution"
    with Scripted([chat("Supported")]) as server:
        first = _runtime(root, costs, server.base_url).record("t[a]", trace_case)
        asked = len(server.requests)
        assert asked > 0 and costs["t[a]"]["judge_calls"] == asked
        assert costs["t[a]"]["judge_failures"] == 0 and not costs["t[a]"]["record_cached"]
        assert first["attribution"]["verifier"]["judge"]["model"] == "judge-7b"
        assert len(list(root.rglob("*.json"))) == 1
        # a fresh process (new runtime) on the same cache: the record, no request
        again = _runtime(root, costs, server.base_url).record("t[b]", trace_case)
        assert len(server.requests) == asked
        assert again == first and costs["t[b]"]["record_cached"]
        assert costs["t[b]"]["judge_calls"] == 0
    # the URL is not part of the key: another server with the same model shares the entry
    with Scripted([chat("Contradicted")]) as other:
        assert _runtime(root, costs, other.base_url).record("t[c]", trace_case) == first
        assert other.requests == []
        # another format is another judge: a miss
        _runtime(root, costs, other.base_url, "minicheck").record("t[d]", trace_case)
        assert other.requests and not costs["t[d]"]["record_cached"]


@pytest.mark.usefixtures("lexical_minilm")
def test_a_record_with_a_failed_judge_call_is_blocked_and_never_stored(
    tmp_path: Path, trace_case: TraceCase
) -> None:
    costs: dict[str, Any] = {}
    root = tmp_path / "attribution"
    with Scripted([(400, b'{"error": "no such model"}')]) as server:
        rec = _runtime(root, costs, server.base_url).record("t[a]", trace_case)
        asked = len(server.requests)
    assert costs["t[a]"]["judge_failures"] > 0 and costs["t[a]"]["judge_calls"] == asked
    answers = rec["attribution"]["answers"]
    for answer in answers:
        assert answer["verdict"]["verdict"] == "block"
        for claim in answer["claims"]:
            if claim["factual"] and claim["route"]["status"] != "no_evidence":
                assert claim["verdict"] == "failed"
                assert server.base_url in claim["error"] and "HTTP 400" in claim["error"]
    assert not list(root.rglob("*.json"))  # the next run asks the server again


# -- options -----------------------------------------------------------------------------------
def settings(**values: object) -> opt.Settings:
    return opt.parse_settings(lambda name: values.get(name), Path("/root/project"))


def test_judge_options_parse_with_defaults() -> None:
    assert settings().attribution.judge_url is None
    s = settings(
        provenai_verify_judge="http://gpu-box:8000/v1/",
        provenai_verify_judge_model="bespoke-minicheck",
        provenai_verify_judge_format="minicheck",
    ).attribution
    assert (s.judge_url, s.judge_model, s.judge_format, s.judge_timeout) == (
        "http://gpu-box:8000/v1",
        "bespoke-minicheck",
        "minicheck",
        120.0,
    )
    assert s.for_results()["verify_judge_format"] == "minicheck"
    d = settings(
        provenai_verify_judge="http://h/v1",
        provenai_verify_judge_model="m",
        provenai_verify_judge_timeout="30",
    ).attribution
    assert (d.judge_format, d.judge_timeout) == ("instruct", 30.0)


J = {"provenai_verify_judge": "http://h:1/v1", "provenai_verify_judge_model": "m"}


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (
            {**J, "provenai_verify_judge_format": "yesno"},
            "--provenai-verify-judge-format: expected one of instruct, minicheck, got 'yesno'",
        ),
        (
            {"provenai_verify_judge": "http://h:1/v1"},
            "--provenai-verify-judge needs --provenai-verify-judge-model ID",
        ),
        (
            {"provenai_verify_judge_model": "m"},
            "--provenai-verify-judge-model is only used with --provenai-verify-judge URL",
        ),
        (
            {"provenai_verify_judge_format": "minicheck"},
            "--provenai-verify-judge-format is only used with --provenai-verify-judge URL",
        ),
        (
            {**J, "provenai_verify_judge": "ftp://h/v1"},
            "--provenai-verify-judge 'ftp://h/v1' is not an http(s) URL",
        ),
        (
            {**J, "provenai_verify_judge": "http://user:pw@h/v1"},
            "--provenai-verify-judge: put no credentials in the URL",
        ),
        (
            {**J, "provenai_verify_judge_timeout": "0"},
            "--provenai-verify-judge-timeout: expected a positive number of seconds",
        ),
        (
            {**J, "provenai_verify_threshold": "0.3"},
            "--provenai-verify-threshold tunes the calibrated forest, which "
            "--provenai-verify-judge replaces",
        ),
        ({**J, "provenai_verify_lm": True}, "--provenai-verify-lm tunes the calibrated forest"),
    ],
)
def test_bad_judge_options_are_one_line_naming_the_option(
    values: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError) as info:
        settings(**values)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


# -- end to end: the plugin against the real llama.cpp server ---------------------------------
TRACE_TEST = """
import pytest

@pytest.mark.provenai_kind("mcp_trace")
def test_attr(provenai_case, provenai_attribution, provenai_record):
    provenai_record(provenai_attribution(provenai_case))
"""


def _two_claim_set(root: Path) -> None:
    """One shipped trace reduced to one answer with two claims (NEE + supported), as a fixture
    set of its own (manifest re-hashed)."""
    source = FIXTURES / "synthetic-mcp-traces"
    name = "clinic-count-summary"
    case = json.loads((source / "cases" / f"{name}.json").read_text(encoding="utf-8"))
    case["answers"] = [a for a in case["answers"] if a["id"] == "a1"]
    assert sum(len(a["claims"]) for a in case["answers"]) == 2
    folder = root / "fixtures" / "judge-mini"
    (folder / "cases").mkdir(parents=True)
    data = json.dumps(case, indent=1, sort_keys=True).encode("utf-8")
    (folder / "cases" / f"{name}.json").write_bytes(data)
    manifest = json.loads((source / "manifest.json").read_text(encoding="utf-8"))
    manifest.update(
        name="judge-mini",
        count=1,
        files={f"cases/{name}.json": hashlib.sha256(data).hexdigest()},
    )
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")


@pytest.mark.slow
def test_the_judge_asks_the_real_llama_server_and_never_allows_silently(
    pytester: pytest.Pytester, llama_base_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SmolLM2-135M is a poor judge: the plumbing is what is checked. Each factual claim has
    the judge's verdict or is ``failed`` with one line naming the server; an answer is allowed
    only when every factual claim is supported; the records name the judge, not the URL."""
    monkeypatch.setenv("PROVENAI_API_KEY", API_KEY)  # the judge falls back to it
    monkeypatch.delenv(JUDGE_API_KEY_ENV, raising=False)
    root = pytester.path
    _two_claim_set(root)
    write_ini(pytester, ["fixtures/judge-mini"], scripted=False)
    pytester.makepyfile(test_attr=TRACE_TEST)
    result = run(
        pytester,
        "-p",
        "no:xdist",
        f"--provenai-verify-judge={llama_base_url}",
        f"--provenai-verify-judge-model={MODEL_ALIAS}",
    )
    result.assert_outcomes(passed=1)
    data = results(root)
    (record,) = data["records"]["test_attr.py::test_attr"]
    verifier = record["attribution"]["verifier"]
    assert verifier["judge"] == {
        "kind": "llm_judge",
        "model": MODEL_ALIAS,
        "format": "instruct",
        "prompt_version": 1,
        "threshold": 0.5,
    }
    assert verifier["checker"]["kind"] == "not_consulted"
    assert llama_base_url not in json.dumps(verifier)
    (costs,) = data["attribution_costs"].values()
    assert costs["judge_calls"] >= 1  # the requests reached the server
    (answer,) = record["attribution"]["answers"]
    factual = [c for c in answer["claims"] if c["factual"]]
    assert factual
    for claim in factual:
        if claim["verdict"] == "failed":
            assert llama_base_url in claim["error"] and "\n" not in claim["error"]
        elif claim["route"]["status"] != "no_evidence":
            assert claim["p_support"] in (0.0, 1.0)  # an instruct verdict, read strictly
    if answer["verdict"]["verdict"] == "allow":
        assert all(c["verdict"] == "supported" for c in factual)
    else:
        assert answer["verdict"]["blocking_claims"]
    # the fact-checker format against the same server: a Yes/No with its logprob, or one
    # line naming the server (SmolLM2 is no MiniCheck) — never a silent verdict
    client = JSONClient(llama_base_url, api_key=API_KEY, retries=0, timeout=120)
    judge = LLMJudge(client, MODEL_ALIAS, "minicheck")
    try:
        verdict = judge.judge(
            "patient: PT-2290\nclinician: Dr. Osric Vance", "The clinician is Dr. Osric Vance."
        )
    except JudgeError as exc:
        assert llama_base_url in str(exc) and "\n" not in str(exc)
        assert "HTTP" not in str(exc)  # the server took the request; the reply was read
    else:
        assert 0.0 <= verdict.p_support <= 1.0
    assert judge.calls == 1
