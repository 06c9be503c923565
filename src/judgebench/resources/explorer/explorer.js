/* judgebench item explorer: renders the JSON payload of report.html page by page (no network, no
   library). State lives in the URL hash, e.g. report.html#explorer?flipped=1&judge=J&open=ITEM, so a
   view can be bookmarked, shared, or loaded by a headless browser. */
(function () {
  "use strict";
  var t0 = performance.now();
  var root = document.getElementById("jbx");
  var dataEl = document.getElementById("jbx-data");
  if (!root || !dataEl) { return; }
  var D = JSON.parse(dataEl.textContent);
  var S = D.s, C = D.conditions, R = D.rows, J = D.judgments, I = D.items;
  var nRows = R.item.length, nItems = I.id.length, PAGE = 100;
  var SOURCE = C.indexOf("en");

  function str(i) { return i < 0 ? null : S[i]; }
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) { for (var k in attrs) { if (attrs[k] !== null && attrs[k] !== undefined) { e.setAttribute(k, attrs[k]); } } }
    if (text !== undefined && text !== null) { e.textContent = text; }
    return e;
  }
  function bits(m) { var n = 0; while (m) { n += m & 1; m >>= 1; } return n; }

  // texts and audit flags per item
  var texts = new Array(nItems), audit = new Array(nItems), auditMask = new Int32Array(nItems);
  var k;
  for (k = 0; k < D.texts.item.length; k++) {
    var it = D.texts.item[k];
    (texts[it] = texts[it] || {})[S[D.texts.cond[k]]] = [D.texts.text[3 * k], D.texts.text[3 * k + 1], D.texts.text[3 * k + 2]];
  }
  for (k = 0; k < D.audit.item.length; k++) {
    var ai = D.audit.item[k], ac = C.indexOf(S[D.audit.cond[k]]);
    (audit[ai] = audit[ai] || []).push(S[D.audit.text[k]]);
    auditMask[ai] |= ac >= 0 ? (1 << ac) : 1 << 30;
  }
  var haystack = null; // lower-cased id + texts per item, built on the first search
  function hay(i) {
    if (!haystack) {
      haystack = new Array(nItems);
      for (var x = 0; x < nItems; x++) {
        var parts = [I.id[x]], tx = texts[x] || {};
        for (var c in tx) { for (var f = 0; f < 3; f++) { if (tx[c][f] >= 0) { parts.push(S[tx[c][f]]); } } }
        haystack[x] = parts.join("\n").toLowerCase();
      }
    }
    return haystack[i];
  }

  var state = { judge: "", subset: "", cond: "", flipped: false, incon: false, audit: false, wen: false,
                q: "", sort: "", desc: false, page: 0, open: -1 };
  var view = [];

  // ---- controls
  var controls = el("div", { "class": "jbx-controls" });
  function select(id, label, values) {
    var s = el("select", { id: id, "aria-label": label });
    s.appendChild(el("option", { value: "" }, "all " + label));
    values.forEach(function (v) { s.appendChild(el("option", { value: v }, v)); });
    controls.appendChild(s);
    return s;
  }
  function check(id, label) {
    var l = el("label", { "class": "jbx-check" }), c = el("input", { type: "checkbox", id: id });
    l.appendChild(c); l.appendChild(document.createTextNode(" " + label));
    controls.appendChild(l);
    return c;
  }
  var uJudge = select("jbx-judge", "judges", D.judges);
  var uSubset = select("jbx-subset", "subsets", D.subsets);
  var uCond = select("jbx-cond", "conditions", C);
  var uFlip = check("jbx-flipped", "flipped only");
  var uIncon = check("jbx-incon", "position-inconsistent only");
  var uAudit = check("jbx-audit", "audit-flagged only");
  var uWen = check("jbx-wen", "wrong in en only");
  var uQ = el("input", { type: "search", id: "jbx-q", placeholder: "search id or text", "aria-label": "search" });
  controls.appendChild(uQ);
  var status = el("div", { id: "jbx-status", "class": "jbx-status", role: "status" });
  var detail = el("div", { id: "jbx-detail", "class": "jbx-detail" });
  detail.hidden = true;
  var table = el("table", { id: "jbx-table", "class": "jbx-table" });
  var thead = el("thead"), tbody = el("tbody");
  var pager = el("div", { id: "jbx-pager", "class": "jbx-pager" });
  var COLS = [["item", "Item"], ["subset", "Subset"], ["label", "Gold"], ["judge", "Judge"]];
  C.forEach(function (c) { COLS.push(["c:" + c, c + " (orig · swap)"]); });
  COLS.push(["probe", "Tie-probe"], ["flips", "Flips"], ["incon", "Pos. incons."], ["audit", "Audit"]);
  var hr = el("tr");
  COLS.forEach(function (col) {
    var sortable = col[0].indexOf("c:") !== 0 && col[0] !== "probe";
    var th = el("th", sortable ? { "data-sort": col[0], "class": "jbx-sortable", title: "sort" } : null, col[1]);
    hr.appendChild(th);
  });
  thead.appendChild(hr);
  table.appendChild(thead); table.appendChild(tbody);
  root.textContent = "";
  // a large run: the page holds the rows that matter, and says how to get the others
  var leftOut = D.rows_left_out || 0, notice = null;
  if (leftOut > 0) {
    notice = el("p", { id: "jbx-left-out", "class": "jbx-status", "data-left-out": String(leftOut) },
      "This page holds " + nRows.toLocaleString("en") + " of the run's " + (D.rows_total || 0).toLocaleString("en") +
      " item × judge rows: the unstable, wrong-in-en-only and audit-flagged ones" +
      (D.rows_matter_left_out ? " (" + D.rows_matter_left_out.toLocaleString("en") + " of those left out too, past the page's limit)" : "") +
      ". Every number in the report is from all rows. Every row: judgebench report --explorer all; " +
      "the unstable ones as JSONL: judgebench report --export-unstable FILE.");
  }
  [notice, controls, status, detail, el("div", { "class": "jbx-scroll" }), pager].forEach(function (n) { if (n) { root.appendChild(n); } });
  root.children[3].appendChild(table);

  // ---- filtering and sorting
  function condBit() { var c = C.indexOf(state.cond); return c >= 0 ? 1 << c : 0; }
  function keep(r) {
    var it = R.item[r], bit = condBit();
    if (state.judge && D.judges[R.judge[r]] !== state.judge) { return false; }
    if (state.subset && D.subsets[I.subset[it]] !== state.subset) { return false; }
    if (state.flipped && !(bit ? R.flip[r] & bit : R.flip[r])) { return false; }
    if (state.incon && !(bit ? R.incon[r] & bit : R.incon[r])) { return false; }
    if (state.audit && !(bit ? auditMask[it] & bit : auditMask[it])) { return false; }
    if (state.wen && !R.wrong_en_only[r]) { return false; }
    if (state.q && hay(it).indexOf(state.q.toLowerCase()) < 0) { return false; }
    return true;
  }
  function sortKey(r) {
    var it = R.item[r];
    switch (state.sort) {
      case "item": return I.id[it];
      case "subset": return D.subsets[I.subset[it]];
      case "label": return I.label[it];
      case "judge": return D.judges[R.judge[r]];
      case "flips": return bits(R.flip[r]);
      case "incon": return bits(R.incon[r]);
      case "audit": return audit[it] ? audit[it].length : 0;
    }
    return r;
  }
  function refilter() {
    view = [];
    for (var r = 0; r < nRows; r++) { if (keep(r)) { view.push(r); } }
    if (state.sort) {
      var keys = {};
      view.forEach(function (r) { keys[r] = sortKey(r); });
      var sign = state.desc ? -1 : 1;
      view.sort(function (a, b) { return keys[a] < keys[b] ? -sign : keys[a] > keys[b] ? sign : a - b; });
    }
    var pages = Math.max(1, Math.ceil(view.length / PAGE));
    if (state.page >= pages) { state.page = pages - 1; }
  }

  // ---- rendering
  function verdictsOf(r) {
    var out = {}, probe = [];
    for (var x = R.start[r]; x < R.start[r + 1]; x++) {
      var v = str(J.verdict[x]);
      var shown = v === null ? (J.error[x] >= 0 ? "err" : "—") : v === "invalid" ? "inv" : v;
      if (J.kind[x] === 1) { probe.push(shown); continue; }
      var c = S[J.cond[x]];
      (out[c] = out[c] || {})[S[J.order[x]]] = { text: shown, v: v };
    }
    return { pair: out, probe: probe };
  }
  function renderRows() {
    tbody.textContent = "";
    var frag = document.createDocumentFragment();
    var from = state.page * PAGE, to = Math.min(view.length, from + PAGE);
    for (var p = from; p < to; p++) {
      var r = view[p], it = R.item[r], gold = I.label[it] ? String(I.label[it]) : null;
      var tr = el("tr", { "data-row": r, "data-item": I.id[it], "data-judge": D.judges[R.judge[r]], tabindex: "0" });
      if (r === state.open) { tr.className = "jbx-open"; }
      tr.appendChild(el("td", { "class": "jbx-id" }, I.id[it]));
      tr.appendChild(el("td", null, D.subsets[I.subset[it]]));
      tr.appendChild(el("td", null, gold || "—"));
      tr.appendChild(el("td", { "class": "jbx-judge" }, D.judges[R.judge[r]]));
      var vs = verdictsOf(r);
      C.forEach(function (c, ci) {
        var td = el("td", { "class": "jbx-v" }), cell = vs.pair[c] || {};
        ["orig", "swap"].forEach(function (o, oi) {
          var e = cell[o], span = el("span", null, e ? e.text : "·");
          if (e && gold && e.v && e.v !== "tie" && e.v !== "invalid") { span.className = e.v === gold ? "ok" : "bad"; }
          if (oi) { td.appendChild(document.createTextNode(" · ")); }
          td.appendChild(span);
        });
        var cls = ["jbx-v"];
        if (R.flip[r] & (1 << ci)) { cls.push("jbx-flip"); td.title = "verdict differs from en"; }
        if (R.incon[r] & (1 << ci)) { cls.push("jbx-incon"); td.title = (td.title ? td.title + "; " : "") + "orig and swap differ"; }
        td.className = cls.join(" ");
        tr.appendChild(td);
      });
      tr.appendChild(el("td", { "class": "jbx-v" }, vs.probe.join(" · ") || "—"));
      tr.appendChild(el("td", { "class": "r" }, String(bits(R.flip[r]))));
      tr.appendChild(el("td", { "class": "r" }, String(bits(R.incon[r]))));
      tr.appendChild(el("td", { "class": audit[it] ? "jbx-audit" : "", title: audit[it] ? audit[it].join("\n") : null },
                        audit[it] ? String(audit[it].length) : ""));
      frag.appendChild(tr);
    }
    tbody.appendChild(frag);
    var pages = Math.max(1, Math.ceil(view.length / PAGE));
    status.setAttribute("data-count", String(view.length));
    status.textContent = view.length.toLocaleString("en") + " of " + nRows.toLocaleString("en") +
      " rows (item × judge)" + (view.length ? ", showing " + (from + 1) + "–" + to : "");
    pager.textContent = "";
    var prev = el("button", { type: "button", id: "jbx-prev" }, "‹ previous");
    var next = el("button", { type: "button", id: "jbx-next" }, "next ›");
    prev.disabled = state.page === 0; next.disabled = state.page >= pages - 1;
    prev.onclick = function () { state.page--; update(false); };
    next.onclick = function () { state.page++; update(false); };
    pager.appendChild(prev);
    pager.appendChild(el("span", null, " page " + (state.page + 1) + " of " + pages + " "));
    pager.appendChild(next);
    Array.prototype.forEach.call(thead.querySelectorAll("th[data-sort]"), function (th) {
      th.classList.toggle("jbx-sorted", th.getAttribute("data-sort") === state.sort);
      th.setAttribute("aria-sort", th.getAttribute("data-sort") === state.sort ? (state.desc ? "descending" : "ascending") : "none");
    });
  }
  function textBlock(s) { return el("div", { "class": "jbx-text" }, s >= 0 ? S[s] : "(text not available)"); }
  function renderDetail() {
    var r = state.open;
    detail.textContent = "";
    if (r < 0) { detail.hidden = true; detail.removeAttribute("data-item"); return; }
    var it = R.item[r];
    detail.hidden = false;
    detail.setAttribute("data-item", I.id[it]);
    detail.setAttribute("data-judge", D.judges[R.judge[r]]);
    var close = el("button", { type: "button", "class": "jbx-close", id: "jbx-close" }, "close ×");
    close.onclick = function () { state.open = -1; update(false); };
    detail.appendChild(close);
    detail.appendChild(el("h3", null, I.id[it] + " · " + D.judges[R.judge[r]]));
    var facts = "subset " + D.subsets[I.subset[it]] + " · gold " + (I.label[it] || "—");
    var fl = [], ic = [];
    C.forEach(function (c, ci) { if (R.flip[r] & (1 << ci)) { fl.push(c); } if (R.incon[r] & (1 << ci)) { ic.push(c); } });
    if (fl.length) { facts += " · flipped in " + fl.join(", "); }
    if (ic.length) { facts += " · position-inconsistent in " + ic.join(", "); }
    detail.appendChild(el("p", { "class": "jbx-facts" }, facts));
    if (audit[it]) {
      var ul = el("ul", { "class": "jbx-flags" });
      audit[it].forEach(function (a) { ul.appendChild(el("li", null, "audit: " + a)); });
      detail.appendChild(ul);
    }
    var tx = texts[it] || {}, conds = C.filter(function (c) { return tx[c]; });
    if (conds.length) {
      var grid = el("div", { "class": "jbx-grid" });
      grid.style.gridTemplateColumns = "7em repeat(" + conds.length + ", minmax(0, 1fr))";
      grid.appendChild(el("div", { "class": "jbx-gh" }, ""));
      conds.forEach(function (c) { grid.appendChild(el("div", { "class": "jbx-gh" }, c)); });
      ["instruction", "output 1", "output 2"].forEach(function (name, f) {
        grid.appendChild(el("div", { "class": "jbx-gh" }, name));
        conds.forEach(function (c) { grid.appendChild(textBlock(tx[c][f])); });
      });
      detail.appendChild(grid);
    } else {
      detail.appendChild(el("p", { "class": "jbx-facts" }, "The items' texts were not available to this report."));
    }
    var jt = el("table", { "class": "jbx-judgments" }), h = el("tr");
    ["kind", "condition", "order", "verdict", "winner", "conf.", "raw answer", "parse error / call error"].forEach(function (c) { h.appendChild(el("th", null, c)); });
    jt.appendChild(h);
    for (var x = R.start[r]; x < R.start[r + 1]; x++) {
      var row = el("tr");
      row.appendChild(el("td", null, J.kind[x] ? "tie-probe" : "pair"));
      row.appendChild(el("td", null, S[J.cond[x]]));
      row.appendChild(el("td", null, S[J.order[x]]));
      row.appendChild(el("td", null, str(J.verdict[x]) || "—"));
      row.appendChild(el("td", null, str(J.winner[x]) || "—"));
      row.appendChild(el("td", null, J.confidence[x] === null ? "" : String(J.confidence[x])));
      row.appendChild(el("td", { "class": "jbx-raw" }, str(J.raw[x]) || ""));
      row.appendChild(el("td", { "class": "jbx-err" }, [str(J.parse_error[x]), str(J.error[x])].filter(Boolean).join(" · ")));
      jt.appendChild(row);
    }
    detail.appendChild(jt);
  }

  // ---- state <-> URL hash
  var FLAGS = [["flipped", uFlip], ["incon", uIncon], ["audit", uAudit], ["wen", uWen]];
  function toHash() {
    var p = [];
    ["judge", "subset", "cond", "q", "sort"].forEach(function (key) { if (state[key]) { p.push(key + "=" + encodeURIComponent(state[key])); } });
    FLAGS.forEach(function (f) { if (state[f[0]]) { p.push(f[0] + "=1"); } });
    if (state.desc) { p.push("desc=1"); }
    if (state.page) { p.push("page=" + (state.page + 1)); }
    if (state.open >= 0) { p.push("open=" + encodeURIComponent(I.id[R.item[state.open]]), "oj=" + encodeURIComponent(D.judges[R.judge[state.open]])); }
    return "#explorer" + (p.length ? "?" + p.join("&") : "");
  }
  function fromHash() {
    var h = location.hash;
    if (h.indexOf("#explorer?") !== 0) { return false; }
    var params = {};
    h.slice(10).split("&").forEach(function (kv) {
      var i = kv.indexOf("=");
      if (i > 0) { params[kv.slice(0, i)] = decodeURIComponent(kv.slice(i + 1).replace(/\+/g, " ")); }
    });
    ["judge", "subset", "cond", "q", "sort"].forEach(function (key) { state[key] = params[key] || ""; });
    // "filter=flipped" is accepted as a synonym of flipped=1
    FLAGS.forEach(function (f) { state[f[0]] = params[f[0]] === "1" || params.filter === f[0]; });
    state.desc = params.desc === "1";
    state.page = Math.max(0, (parseInt(params.page, 10) || 1) - 1);
    state.open = -1;
    if (params.open) {
      for (var r = 0; r < nRows; r++) {
        if (I.id[R.item[r]] === params.open && (!params.oj || D.judges[R.judge[r]] === params.oj)) { state.open = r; break; }
      }
    }
    return true;
  }
  function syncControls() {
    uJudge.value = state.judge; uSubset.value = state.subset; uCond.value = state.cond; uQ.value = state.q;
    FLAGS.forEach(function (f) { f[1].checked = state[f[0]]; });
  }
  var writing = false;
  function update(refresh) {
    if (refresh) { refilter(); }
    renderRows();
    renderDetail();
    var h = toHash();
    if (location.hash !== h && (location.hash.indexOf("#explorer") === 0 || h !== "#explorer")) {
      writing = true;
      history.replaceState(null, "", h);
      writing = false;
    }
  }
  function onControl() {
    state.judge = uJudge.value; state.subset = uSubset.value; state.cond = uCond.value; state.q = uQ.value.trim();
    FLAGS.forEach(function (f) { state[f[0]] = f[1].checked; });
    state.page = 0;
    update(true);
  }
  [uJudge, uSubset, uCond].concat(FLAGS.map(function (f) { return f[1]; })).forEach(function (u) { u.addEventListener("change", onControl); });
  var timer = null;
  uQ.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(onControl, 150); });
  thead.addEventListener("click", function (e) {
    var key = e.target.getAttribute && e.target.getAttribute("data-sort");
    if (!key) { return; }
    if (state.sort === key) { state.desc = !state.desc; } else { state.sort = key; state.desc = key === "flips" || key === "incon" || key === "audit"; }
    update(true);
  });
  function openRow(e) {
    var tr = e.target.closest && e.target.closest("tr[data-row]");
    if (!tr) { return; }
    var r = parseInt(tr.getAttribute("data-row"), 10);
    state.open = state.open === r ? -1 : r;
    update(false);
    if (state.open >= 0) { detail.scrollIntoView({ block: "nearest" }); }
  }
  tbody.addEventListener("click", openRow);
  tbody.addEventListener("keydown", function (e) { if (e.key === "Enter") { openRow(e); } });
  window.addEventListener("hashchange", function () {
    if (!writing && fromHash()) { syncControls(); update(true); }
  });

  var fromUrl = fromHash();
  syncControls();
  update(true);
  if (fromUrl) { root.scrollIntoView(); }
  root.setAttribute("data-ready", "1");
  root.setAttribute("data-render-ms", (performance.now() - t0).toFixed(1));
  root.setAttribute("data-open-ms", performance.now().toFixed(1)); // since navigation start
})();
