"use strict";
// The report's case table, filters and drill-down. Every text from a record goes into the
// page through textContent (never innerHTML), so case text is shown, never run.
(function () {
  const DATA = JSON.parse(document.getElementById("provenai-data").textContent);
  const CASES = DATA.cases;
  const LABELS = DATA.verdict_labels;
  const VERDICTS = Object.keys(LABELS);
  const $ = (id) => document.getElementById(id);

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    if (attrs) {
      for (const [k, v] of Object.entries(attrs)) {
        if (v === null || v === undefined || v === false) continue;
        if (k === "class") node.className = v;
        else if (k === "text") node.textContent = String(v);
        else if (k === "style") node.setAttribute("style", v);
        else node.setAttribute(k, v === true ? "" : String(v));
      }
    }
    for (const c of children) {
      if (c === null || c === undefined || c === false) continue;
      node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return node;
  }
  const num = (v, d = 3) => (typeof v === "number" && isFinite(v) ? v.toFixed(d) : "n/a");
  const yes = (b) => (b ? "yes" : "");
  const list = (xs) => (Array.isArray(xs) && xs.length ? xs.join(", ") : "—");

  // -- the table ----------------------------------------------------------------------
  const tbody = $("case-rows");
  const rows = new Map();

  function verdictCell(c) {
    const td = el("td", { class: "num" });
    if (!c.verdicts) { td.textContent = "—"; return td; }
    for (const v of VERDICTS) {
      td.append(el("span", { class: "vc " + v, title: LABELS[v], text: c.verdicts[v] || 0 }));
    }
    return td;
  }

  function buildRow(c) {
    const tr = el(
      "tr",
      { "data-id": c.id, "data-status": c.status, "data-case": c.case_id },
      el("td", null, el("code", { text: c.case_id })),
      el("td", { text: c.test.split("::").slice(1).join("::") || c.test, title: c.test }),
      el("td", { text: c.fixture_set }),
      el("td", { class: "st st-" + c.status.replace("/", ""), text: c.status }),
      el("td", { class: "num", text: c.f1 === null || c.f1 === undefined ? "—" : num(c.f1, 2) }),
      verdictCell(c),
      el("td", { class: "num", text: c.gap === null ? "—" : c.gap }),
      el("td", { class: "num", text: c.top_kl ? c.top_kl + " " + num(c.top_kl_value, 3) : "—" }),
      el("td", { class: "q", text: c.question, title: c.question })
    );
    tr.addEventListener("click", () => openCase(c.id));
    return tr;
  }

  function fillSelect(id, values, label) {
    const sel = $(id);
    for (const v of values) sel.append(el("option", { value: v, text: label ? label(v) : v }));
  }

  let sortKey = "case_id";
  let sortDir = 1;

  function sortValue(c, key) {
    if (key === "used") return c.verdicts ? c.verdicts.used || 0 : -1;
    const v = c[key];
    return v === null || v === undefined ? -Infinity : v;
  }

  function compare(a, b) {
    const x = sortValue(a, sortKey);
    const y = sortValue(b, sortKey);
    if (x === y) return a.id - b.id;
    if (typeof x === "string" && typeof y === "string") return sortDir * x.localeCompare(y);
    return sortDir * (x < y ? -1 : 1);
  }

  function matches(c) {
    const test = $("f-test").value;
    const set = $("f-set").value;
    const status = $("f-status").value;
    const tag = $("f-tag").value;
    const gap = $("f-gap").value;
    const q = $("f-search").value.trim().toLowerCase();
    if (test && c.test !== test) return false;
    if (set && c.fixture_set !== set) return false;
    if (status && c.status !== status) return false;
    if (tag && !c.tags.includes(tag)) return false;
    if (gap === "gap" && !(c.gap > 0)) return false;
    if (gap === "nogap" && c.gap !== 0) return false;
    if (gap === "unmeasured" && c.gap !== null) return false;
    if (q && !q.split(/\s+/).every((w) => c.search.includes(w))) return false;
    return true;
  }

  // At most `limit` matching rows are in the table at once ("show more" adds a page), so a
  // run of thousands of cases loads and filters as fast as one of a thousand. Rows are built
  // when first shown.
  const PAGE = 1000;
  let limit = PAGE;
  let ordered = null; // the cases in the current sort order; re-sorted when the sort changes

  function rowOf(c) {
    let tr = rows.get(c.id);
    if (!tr) {
      tr = buildRow(c);
      rows.set(c.id, tr);
    }
    return tr;
  }

  function refresh() {
    if (ordered === null) ordered = CASES.slice().sort(compare);
    const matched = ordered.filter(matches);
    const page = matched.slice(0, limit).map(rowOf);
    tbody.replaceChildren(...page);
    const more = $("more");
    more.hidden = matched.length <= limit;
    more.textContent = "show " + Math.min(PAGE, matched.length - limit) + " more";
    $("shown").textContent =
      "showing " + page.length + (page.length < matched.length ? " (of " + matched.length + " matching)" : "") +
      " of " + CASES.length + " cases";
    $("shown").setAttribute("data-shown", String(matched.length));
    document.body.removeAttribute("data-busy");
  }

  let typing = null;
  function refreshSoon() {
    clearTimeout(typing);
    document.body.setAttribute("data-busy", "true");
    typing = setTimeout(() => { limit = PAGE; refresh(); }, 120);
  }

  // -- the drill-down -----------------------------------------------------------------
  function kv(pairs) {
    const dl = el("dl", { class: "kv" });
    for (const [k, v] of pairs) {
      if (v === undefined || v === null || v === "") continue;
      dl.append(el("dt", { text: k }), el("dd", null, v instanceof Node ? v : String(v)));
    }
    return dl;
  }

  function bar(value, scale, cls) {
    const td = el("td", { class: "barcell" });
    if (typeof value !== "number") { td.textContent = "—"; return td; }
    const w = Math.max(0, Math.min(1, scale > 0 ? value / scale : 0)) * 44;
    const track = el("span", { class: "track" }, el("span", { class: "bar " + (cls || ""), style: "width:" + w.toFixed(1) + "px" }));
    td.append(track, num(value, 3));
    return td;
  }

  function chip(text, cls) {
    return el("span", { class: "chip " + (cls || text || ""), text: String(text).replace(/_/g, " ") });
  }

  function section(title, ...children) {
    return el("section", { class: "dd" }, el("h3", { text: title }), ...children);
  }

  function idOrder(a, b) {
    const na = parseInt(a.replace(/^\D+/, ""), 10);
    const nb = parseInt(b.replace(/^\D+/, ""), 10);
    return (isNaN(na) || isNaN(nb) ? 0 : na - nb) || a.localeCompare(b);
  }

  function resourcesSection(c, rec) {
    const inf = rec.influence && rec.influence.measured ? rec.influence : null;
    const trace = c.trace;
    const titles = {};
    for (const r of (trace && trace.resources) || []) titles[r.id] = r.title;
    const gold = new Set(((rec.citation || {}).gold) || []);
    const citedIds = new Set(((rec.citation || {}).cited_ids) || (trace ? trace.cited_ids : []));
    const ids = inf ? Object.keys(inf.resources).sort(idOrder) : Object.keys(titles).sort(idOrder);
    if (!ids.length) return null;
    let klMax = 0;
    if (inf) for (const id of ids) klMax = Math.max(klMax, inf.resources[id].kl_sum || 0);
    const head = ["id", "title", "gold?", "cited?"];
    if (inf) head.push("Δa", "Δc", "φ", "KL (answer, nats)", "verdict", "answer without it");
    const table = el("table", { class: "resources" }, el("thead", null, el("tr", null, ...head.map((h) => el("th", { text: h })))));
    const body = el("tbody");
    for (const id of ids) {
      const r = inf ? inf.resources[id] : {};
      const title = titles[id];
      const tr = el(
        "tr",
        { "data-rid": id },
        el("td", null, el("code", { text: id })),
        el("td", { text: title === undefined ? "(title not recorded)" : title, class: title === undefined ? "note" : null }),
        el("td", { text: title !== undefined && gold.has(title) ? "yes" : "" }),
        el("td", { text: inf ? yes(r.cited) : yes(citedIds.has(id)) })
      );
      if (inf) {
        tr.append(
          bar(r.delta_answer, 1),
          bar(r.delta_citation, 1),
          bar(r.phi, 1),
          bar(r.kl_sum, klMax, "kl"),
          el("td", null, chip(LABELS[r.verdict] || r.verdict, r.verdict)),
          el("td", null, el("span", { text: r.answer === undefined ? "" : r.answer }), " ", el("span", { class: "note", text: (r.citations || []).map((x) => "[" + x + "]").join(" ") }))
        );
      }
      body.append(tr);
    }
    table.append(body);
    const parts = [];
    if (inf) {
      parts.push(kv([
        ["θ", num(inf.theta, 3) + " = max(median φ " + num(inf.median_phi, 3) + ", floor " + num(inf.theta_floor, 2) + ")"],
        ["signals", list(inf.signals)],
        ["gap", list(inf.gap)],
        ["top KL", inf.top_kl || "—"],
      ]));
    } else if (rec.influence) {
      parts.push(el("p", { class: "bad", text: "influence not measured: " + (rec.influence.reason || "") }));
    }
    return section(inf ? "Resources and their influence" : "Resources", ...parts, el("div", { class: "tablewrap" }, table));
  }

  function retrievalSection(rec) {
    const r = rec.retrieval;
    if (!r) return null;
    const ranks = el("ul");
    for (const g of r.gold_ranks || []) ranks.append(el("li", { text: g.title + ": " + (g.rank === null ? "not retrieved" : "rank " + g.rank) }));
    const hits = el("ol", { start: "0" });
    for (const p of r.retrieved || []) hits.append(el("li", null, el("code", { text: p.id }), " " + p.title + " ", el("span", { class: "note", text: p.passage_id })));
    return section(
      "Retrieval (top " + r.k + ")",
      kv([["recall@k", num(r.recall_at_k, 3)], ["all gold retrieved", r.all_gold_retrieved ? "yes" : "no"], ["wrong answer and a gold title missed", r.answer_failed_retrieval_miss ? "yes" : "no"]]),
      el("h4", { text: "gold titles" }), ranks, el("h4", { text: "retrieved, by rank" }), hits
    );
  }

  function exposureSection(rec) {
    const ex = rec.exposure;
    if (!ex) return null;
    const head = ["treatment", "answer", "cited", "aid citations", "aid value leaked", "abstained", "correct", "fabricated literals"];
    const table = el("table", { class: "exposure" }, el("thead", null, el("tr", null, ...head.map((h) => el("th", { text: h })))));
    const body = el("tbody");
    const order = ["baseline", "omit", "label", "expose", "mislabel"].filter((t) => t in ex).concat(Object.keys(ex).filter((t) => !["baseline", "omit", "label", "expose", "mislabel"].includes(t)));
    for (const t of order) {
      const run = ex[t] || {};
      const fabricated = ((run.abstention || {}).fabricated_values || []).map((v) => v.text);
      body.append(el(
        "tr",
        { "data-treatment": t, class: run.aid_value_leak ? "leak" : null },
        el("th", { text: t }),
        el("td", { text: run.answer || "" }),
        el("td", { text: list(run.cited_ids) }),
        el("td", { text: list(run.aid_citations) }),
        el("td", { class: run.aid_value_leak ? "bad" : null, text: run.aid_value_leak ? "yes: " + list(run.leaked_values) : "no" }),
        el("td", { text: run.abstained ? "yes" : "no" }),
        el("td", { text: run.correct === undefined ? "" : run.correct ? "yes" : "no" }),
        el("td", { text: list(fabricated) })
      ));
    }
    table.append(body);
    return section("Exposure treatments", kv([["expected answer", rec.expected_answer], ["aid-only values", list(rec.aid_only_values)]]), el("div", { class: "tablewrap" }, table));
  }

  function quotationSection(rec) {
    const q = rec.quotation;
    if (!q) return null;
    return section("Quotation", kv([
      ["outcome", chip(q.outcome, q.agrees ? "supported" : "block")],
      ["expected", q.expected],
      ["agrees", q.agrees ? "yes" : "no"],
      ["reason", q.reason],
      ["citation", q.citation ? JSON.stringify(q.citation) : ""],
      ["quote (raw)", q.raw_quote],
      ["target (raw)", q.target_raw],
      ["policy", q.policy_version],
    ]));
  }

  function derivationSection(rec) {
    const d = rec.derivation;
    if (!d) return null;
    const table = el("table", null, el("thead", null, el("tr", null, ...["operand", "value", "outcome", "origin", "reason"].map((h) => el("th", { text: h })))));
    const body = el("tbody");
    for (const op of d.operands || []) body.append(el("tr", null, el("td", { text: op.name }), el("td", { text: op.value }), el("td", { text: op.outcome }), el("td", { text: op.origin }), el("td", { class: "desc", text: op.reason })));
    table.append(body);
    return section("Derivation", kv([
      ["operation", d.operation], ["expected", d.expected], ["recomputed", d.recomputed],
      ["warranted", d.warranted ? "yes" : "no"], ["agrees", d.agrees ? "yes" : "no"], ["reasons", list(d.reasons)],
    ]), table);
  }

  // Claim ranges are UTF-8 byte offsets; the highlight needs string (UTF-16) offsets.
  function byteToChar(text) {
    const bytes = new TextEncoder().encode(text);
    const dec = new TextDecoder();
    return (b) => dec.decode(bytes.slice(0, Math.max(0, Math.min(b, bytes.length)))).length;
  }

  function highlighted(text, claims) {
    const conv = byteToChar(text);
    const spans = claims
      .filter((c) => Array.isArray(c.range) && c.range.length === 2)
      .map((c) => ({ s: conv(c.range[0]), e: conv(c.range[1]), c }))
      .sort((a, b) => a.s - b.s);
    const box = el("div", { class: "answertext" });
    let at = 0;
    for (const sp of spans) {
      if (sp.s < at) continue; // overlapping claims: the first one is drawn
      box.append(text.slice(at, sp.s));
      const label = "#" + sp.c.index + " " + sp.c.verdict + (sp.c.source ? " → " + sp.c.source : "");
      box.append(el("mark", { class: "claim " + (sp.c.factual === false ? "non_factual" : sp.c.verdict), title: label, "data-claim": sp.c.index }, text.slice(sp.s, sp.e)));
      at = sp.e;
    }
    box.append(text.slice(at));
    return box;
  }

  function attributionSection(rec) {
    const a = rec.attribution;
    if (!a) return null;
    const parts = [];
    if (a.graph) parts.push(kv([["trace graph", (a.graph.sha256 || "").slice(0, 16)], ["graph complete", a.graph.complete ? "yes" : "no"]]));
    for (const ans of a.answers || []) {
      const v = ans.verdict || {};
      parts.push(el("h4", null, "answer ", el("code", { text: ans.id || "" }), " ", chip(v.verdict || "?", v.verdict), ans.expected ? el("span", { class: "note", text: " expected " + ans.expected }) : null, v.reasons && v.reasons.length ? el("span", { class: "note", text: " · " + v.reasons.join(", ") }) : null));
      parts.push(highlighted(ans.text || "", ans.claims || []));
      const head = ["#", "claim", "verdict", "routed source", "tool / family", "route score (margin)", "p(support)", "stated attribution", "missing values", "gold"];
      const table = el("table", { class: "claims" }, el("thead", null, el("tr", null, ...head.map((h) => el("th", { text: h })))));
      const body = el("tbody");
      for (const c of ans.claims || []) {
        const route = c.route || {};
        const att = c.attribution || {};
        const gold = c.gold ? (c.gold.verdict || "") + (c.gold.gold_source ? " · " + c.gold.gold_source : "") : "";
        body.append(el(
          "tr",
          { "data-claim": c.index },
          el("td", { text: c.index }),
          el("td", { text: c.text || "" }),
          el("td", null, chip(c.verdict || "?", c.verdict), c.reasons && c.reasons.length ? el("div", { class: "desc", text: c.reasons.join(", ") }) : null),
          el("td", { text: c.source || "—" }),
          el("td", { text: (c.tool || "") + (c.family ? " / " + c.family : "") }),
          el("td", { text: num(route.score, 3) + " (" + num(route.margin, 3) + ")" }),
          el("td", { text: num(c.p_support, 3) }),
          el("td", { text: (att.family || att.tool || att.text || "—") + (att.compatible === false ? " ✗" : att.compatible === true ? " ✓" : "") }),
          el("td", { text: list(c.missing_values) }),
          el("td", { text: gold })
        ));
      }
      table.append(body);
      parts.push(el("div", { class: "tablewrap" }, table));
      if (ans.repair && ans.repair.attempted) {
        parts.push(kv([["repair", (ans.repair.method || "") + (ans.repair.passed ? " (passed)" : " (still blocked)")], ["repaired text", ans.repair.final_text]]));
      }
    }
    return section("Attribution", ...parts);
  }

  function answerSection(c, rec) {
    const ans = rec.answer;
    const cit = rec.citation || {};
    const trace = c.trace;
    const pairs = [["question", rec.question || rec.request || ""]];
    if (ans) {
      pairs.push(["gold answer", ans.gold]);
      pairs.push(["gold titles", list(cit.gold)]);
      pairs.push(["answer", ans.prediction]);
      pairs.push(["correct", (ans.correct ? "yes" : "no") + " · EM " + num(ans.em, 2) + " · F1 " + num(ans.f1, 2)]);
      pairs.push(["cited", list(cit.cited_ids) + (cit.cited && cit.cited.length ? " (" + cit.cited.join("; ") + ")" : "")]);
      if (cit.invalid_citations && cit.invalid_citations.length) pairs.push(["invalid citations", list(cit.invalid_citations)]);
      if (cit.exact) pairs.push(["citation P/R/F τ=1.0", num(cit.exact.p, 2) + " / " + num(cit.exact.r, 2) + " / " + num(cit.exact.f, 2)]);
      if (cit.semantic) pairs.push(["citation P/R/F τ=0.34", num(cit.semantic.p, 2) + " / " + num(cit.semantic.r, 2) + " / " + num(cit.semantic.f, 2)]);
    }
    const out = [kv(pairs)];
    if (trace && typeof trace.raw_output === "string") {
      out.push(el("h4", { text: "raw output" }), el("pre", { class: "raw" }, trace.raw_output));
      if (trace.repairs && trace.repairs.length) out.push(kv([["parser repairs", list(trace.repairs)]]));
    } else if (ans) {
      out.push(el("p", { class: "note", text: trace ? "raw output not recorded" : "raw output not recorded (the test did not pass trace= to provenai_record)" }));
    }
    return section("Question and answer", ...out);
  }

  function openCase(id) {
    const c = CASES[id];
    if (!c) return;
    const rec = c.record;
    const body = $("drill-body");
    body.replaceChildren();
    body.append(el("h2", null, el("code", { text: c.case_id })));
    const prod = c.produced_by || {};
    body.append(kv([
      ["test", c.test], ["fixture set", c.fixture_set], ["kind", c.kind],
      ["correct?", c.status], ["produced by", prod.worker ? prod.worker + (prod.device ? " on " + prod.device : "") : ""],
      ["seconds", typeof c.seconds === "number" ? c.seconds.toFixed(2) : ""],
      ["from cache", c.trace ? (c.trace.cached ? "yes" : "no") : ""],
    ]));
    if (rec.missing) {
      body.append(el("p", { class: "bad", text: "no record: " + rec.missing }));
    } else {
      for (const part of [
        answerSection(c, rec), resourcesSection(c, rec), retrievalSection(rec),
        exposureSection(rec), quotationSection(rec), derivationSection(rec), attributionSection(rec),
      ]) if (part) body.append(part);
      if (c.costs) body.append(section("Ablation cost", kv(Object.entries(c.costs).map(([k, v]) => [k, v]))));
      if (rec.sanitized && rec.sanitized.length) body.append(section("Sanitized", el("ul", null, ...rec.sanitized.map((s) => el("li", { text: s })))));
    }
    body.append(el("details", null, el("summary", { text: "record (JSON)" }), el("pre", null, JSON.stringify(rec, null, 2))));
    for (const tr of tbody.querySelectorAll("tr.open")) tr.classList.remove("open");
    const tr = rows.get(id);
    if (tr && tr.isConnected) tr.classList.add("open");
    $("drill").hidden = false;
    $("drill").scrollTop = 0;
    if (location.hash !== "#case-" + id) history.replaceState(null, "", "#case-" + id);
  }

  function closeCase() {
    $("drill").hidden = true;
    for (const tr of tbody.querySelectorAll("tr.open")) tr.classList.remove("open");
    history.replaceState(null, "", location.pathname + location.search);
  }

  // -- start --------------------------------------------------------------------------
  $("more").addEventListener("click", () => { limit += PAGE; refresh(); });
  fillSelect("f-test", DATA.facets.tests);
  fillSelect("f-set", DATA.facets.fixture_sets);
  fillSelect("f-status", DATA.facets.statuses);
  fillSelect("f-tag", DATA.facets.tags, (t) => LABELS[t] || t);
  const refilter = () => { limit = PAGE; refresh(); };
  for (const id of ["f-test", "f-set", "f-status", "f-tag", "f-gap"]) $(id).addEventListener("change", refilter);
  $("f-search").addEventListener("input", refreshSoon);
  for (const th of document.querySelectorAll("#case-table th[data-sort]")) {
    th.addEventListener("click", () => {
      const key = th.getAttribute("data-sort");
      sortDir = key === sortKey ? -sortDir : 1;
      sortKey = key;
      for (const other of document.querySelectorAll("#case-table th[data-sort]")) other.removeAttribute("aria-sort");
      th.setAttribute("aria-sort", sortDir > 0 ? "ascending" : "descending");
      ordered = null;
      refresh();
    });
  }
  $("drill-close").addEventListener("click", closeCase);
  document.addEventListener("keydown", (e) => { if (e.key === "Escape") closeCase(); });
  refresh();
  const m = /^#case-(\d+)$/.exec(location.hash);
  if (m) openCase(Number(m[1]));
  document.body.setAttribute("data-ready-ms", String(Math.round(performance.now())));
  document.body.setAttribute("data-ready", "true");
})();
