// The status page: one self-contained HTML file (inline CSS, JS and SVG, no external asset) that renders /status.

/**
 * The page holds no data: its script fetches /status as JSON (same URL, `Accept: application/json`) every few
 * seconds and redraws the table. /status lists one page of clusters (`?limit=`, `?cluster=` in the page's own URL are
 * passed on): the header says how many of how many it shows, with the counts by state of all, and "next page" /
 * "first page" walk the pages with the document's `continue` token. On the protected port it sends
 * `Authorization: Bearer` with a token the user pasted, kept in sessionStorage (gone when the tab closes); on 401 or
 * 403 it asks for one. Served as is, so it can also be the body of the 401/403 answer to a browser.
 *
 * Guarantees: every value from the clusters is put in the DOM as text (textContent, SVG attributes from numbers),
 * never parsed as HTML, so an error text or a cluster name can hold anything. The Content-Security-Policy sent with
 * it (STATUS_PAGE_HEADERS) allows no source but the page itself and the same-origin fetch.
 */
export const STATUS_PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>operator-hub status</title>
<style>
  :root { --ok: #1a7f37; --warn: #9a6700; --bad: #cf222e; --muted: #57606a; --line: #d0d7de; --bg: #f6f8fa; }
  * { box-sizing: border-box; }
  body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; color: #1f2328; }
  header { display: flex; flex-wrap: wrap; gap: 12px 24px; align-items: baseline; padding: 14px 20px;
           border-bottom: 1px solid var(--line); background: var(--bg); }
  h1 { font-size: 18px; margin: 0; }
  .summary span { margin-right: 16px; }
  .muted { color: var(--muted); }
  main { padding: 12px 20px; overflow-x: auto; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
  th { font-weight: 600; background: var(--bg); white-space: nowrap; }
  td.num { text-align: right; font-variant-numeric: tabular-nums; }
  .state { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600;
           color: #fff; background: var(--muted); white-space: nowrap; }
  .state.good { background: var(--ok); } .state.progress { background: #0969da; } .state.bad { background: var(--bad); }
  .status-ok { color: var(--ok); } .status-degraded { color: var(--warn); } .status-failing { color: var(--bad); }
  .error { color: var(--bad); font-family: ui-monospace, monospace; font-size: 12px; max-width: 42em;
           white-space: pre-wrap; word-break: break-word; }
  .perm { font-family: ui-monospace, monospace; font-size: 12px; color: var(--warn); }
  .op-detail { font-size: 11px; color: var(--muted); }
  svg.spark { vertical-align: middle; }
  svg.spark polyline { fill: none; stroke: #0969da; stroke-width: 1.5; }
  svg.spark .base { stroke: var(--line); stroke-width: 1; }
  svg.spark .window { fill: #f6f8fa; }
  .rate { font-size: 11px; color: var(--muted); margin-left: 6px; font-variant-numeric: tabular-nums; }
  #auth { margin: 16px 20px; padding: 14px; border: 1px solid var(--line); border-radius: 6px; background: var(--bg);
          max-width: 46em; }
  #auth input { width: 100%; font: inherit; padding: 6px; margin: 8px 0; }
  #auth code { background: #eaeef2; padding: 1px 4px; border-radius: 4px; }
  #problem { color: var(--bad); padding: 0 20px; }
  #pager { padding: 8px 20px 0; color: var(--muted); }
  #pager button { font: inherit; margin-left: 8px; }
  [hidden] { display: none !important; }
</style>
</head>
<body>
<header>
  <h1>operator-hub</h1>
  <div class="summary" id="summary"><span class="muted">loading…</span></div>
  <div class="muted" id="updated"></div>
</header>
<form id="auth" hidden>
  <strong id="auth-title">A token is needed</strong>
  <div class="muted">This port checks every request with a TokenReview and a SubjectAccessReview (<code>get</code> on
    <code>/status</code>, e.g. the <code>metrics-reader</code> ClusterRole). Paste a bearer token, e.g. from
    <code>kubectl create token NAME</code>. It is kept in this tab's sessionStorage only.</div>
  <input id="token" type="password" autocomplete="off" placeholder="bearer token">
  <button type="submit">Use token</button> <button type="button" id="forget">Forget token</button>
</form>
<p id="problem" hidden></p>
<nav id="pager" hidden><span id="range"></span><button type="button" id="first">first page</button><button
  type="button" id="next">next page</button></nav>
<main>
  <table id="clusters" hidden>
    <thead><tr id="head"></tr></thead>
    <tbody id="rows"></tbody>
  </table>
</main>
<script>
"use strict";
(function () {
  var REFRESH_MS = 5000;
  var TOKEN_KEY = "operator-hub-token";
  var GOOD = { watching: 1 };
  var PROGRESS = { registering: 1, connecting: 1, syncing: 1 };
  var timer = null;
  var lastOk = 0;
  // The page's own ?limit= and ?cluster= are passed on; cursor is the continue token of the page shown.
  var own = new URLSearchParams(location.search);
  var cursor = "";
  var nextCursor = "";

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function query() {
    var q = new URLSearchParams();
    if (own.get("limit")) q.set("limit", own.get("limit"));
    own.getAll("cluster").forEach(function (c) { q.append("cluster", c); });
    if (cursor) q.set("continue", cursor);
    var text = q.toString();
    return text ? "?" + text : "";
  }
  function plural(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }
  function token() { try { return sessionStorage.getItem(TOKEN_KEY) || ""; } catch (e) { return ""; } }
  function stateBadge(state) {
    var s = String(state == null ? "unknown" : state);
    var cls = GOOD[s] ? "good" : PROGRESS[s] ? "progress" : "bad";
    var b = el("span", { "class": "state " + cls, "data-state": s }, s);
    return b;
  }
  function age(seconds) {
    if (seconds === null || seconds === undefined) return "never";
    var s = Number(seconds);
    if (s < 90) return Math.round(s) + " s";
    if (s < 5400) return Math.round(s / 60) + " min";
    return Math.round(s / 3600) + " h";
  }
  function sparkline(rates, stepSeconds) {
    var W = 120, H = 24, NS = "http://www.w3.org/2000/svg";
    var svg = document.createElementNS(NS, "svg");
    svg.setAttribute("class", "spark");
    svg.setAttribute("width", String(W));
    svg.setAttribute("height", String(H));
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    svg.setAttribute("data-points", String(rates.length));
    var title = document.createElementNS(NS, "title");
    title.textContent = "reconciles per second, last " + Math.round(rates.length * stepSeconds / 60) + " min";
    svg.appendChild(title);
    var bg = document.createElementNS(NS, "rect");
    bg.setAttribute("class", "window");
    bg.setAttribute("width", String(W)); bg.setAttribute("height", String(H));
    svg.appendChild(bg);
    var base = document.createElementNS(NS, "line");
    base.setAttribute("class", "base");
    base.setAttribute("x1", "0"); base.setAttribute("x2", String(W));
    base.setAttribute("y1", String(H - 1)); base.setAttribute("y2", String(H - 1));
    svg.appendChild(base);
    var max = 0;
    for (var i = 0; i < rates.length; i++) max = Math.max(max, Number(rates[i]) || 0);
    var slots = Math.max(2, Math.round(600 / stepSeconds));
    var pts = [];
    for (var j = 0; j < rates.length; j++) {
      var x = W - (rates.length - 1 - j) * (W / (slots - 1));
      var y = max > 0 ? (H - 2) - ((Number(rates[j]) || 0) / max) * (H - 4) : H - 2;
      pts.push(x.toFixed(1) + "," + y.toFixed(1));
    }
    var line = document.createElementNS(NS, "polyline");
    line.setAttribute("points", pts.join(" "));
    svg.appendChild(line);
    return svg;
  }
  function showAuth(status) {
    document.getElementById("auth").hidden = false;
    document.getElementById("auth-title").textContent = status === 403
      ? "This token may not read /status (403): paste another"
      : token() ? "This token was not accepted (401): paste another" : "A token is needed (401)";
    document.getElementById("clusters").hidden = true;
    document.getElementById("summary").textContent = "";
  }
  function render(doc) {
    document.getElementById("auth").hidden = true;
    document.getElementById("problem").hidden = true;
    var clusters = doc.clusters || {};
    var names = Object.keys(clusters).sort();
    var history = (doc.reconcileHistory && doc.reconcileHistory.clusters) || {};
    var step = (doc.reconcileHistory && doc.reconcileHistory.stepSeconds) || 5;
    var operators = [], seen = {};
    var hasOwner = false, hasProvider = false;
    names.forEach(function (n) {
      var c = clusters[n] || {};
      if (c.owner !== undefined) hasOwner = true;
      if (c.provider !== undefined) hasProvider = true;
      Object.keys(c.operators || {}).sort().forEach(function (op) {
        if (!seen[op]) { seen[op] = 1; operators.push(op); }
      });
    });

    var summary = document.getElementById("summary");
    summary.textContent = "";
    var st = el("span", { "class": "status-" + doc.status, id: "hub-status" }, String(doc.status));
    summary.appendChild(st);
    summary.appendChild(el("span", null, doc.ready ? "ready" : "not ready: " + (doc.notReady || []).join(", ")));
    var sum = doc.summary || null;
    var total = sum ? sum.clusters : names.length;
    var shown = names.length === total ? plural(total, "cluster") : names.length + " of " + plural(total, "cluster");
    summary.appendChild(el("span", { id: "cluster-count" }, shown));
    if (sum && sum.states && total > names.length) {
      var counts = Object.keys(sum.states).sort().map(function (k) { return sum.states[k] + " " + k; });
      summary.appendChild(el("span", { id: "state-counts", "class": "muted" }, counts.join(", ")));
    }
    nextCursor = doc["continue"] || "";
    var pager = document.getElementById("pager");
    pager.hidden = !nextCursor && !cursor;
    document.getElementById("range").textContent = total > names.length
      ? "showing " + names.length + " of " + total + " clusters, by name" + (names.length ? " (" + names[0] + " … " + names[names.length - 1] + ")" : "")
      : "";
    document.getElementById("next").hidden = !nextCursor;
    document.getElementById("first").hidden = !cursor;
    if (doc.controller) {
      summary.appendChild(el("span", null, "queued " + doc.controller.queued + ", in flight " + doc.controller.inFlight));
    }
    if (doc.leaderElection) {
      summary.appendChild(el("span", null, doc.leaderElection.leader ? "leader" : "standby"));
    }

    var cols = [["cluster", "Cluster"], ["state", "State"]];
    if (hasOwner) cols.push(["owner", "Owner"]);
    if (hasProvider) cols.push(["provider", "Provider"]);
    cols.push(["objects", "Objects"], ["queue", "Queue"], ["lastEvent", "Last event"], ["connects", "Connects"]);
    operators.forEach(function (op) { cols.push(["op:" + op, op]); });
    cols.push(["rate", "Reconciles/s, 10 min"], ["lastError", "Last error"]);
    var head = document.getElementById("head");
    head.textContent = "";
    cols.forEach(function (c) { head.appendChild(el("th", { "data-col": c[0] }, c[1])); });

    var rows = document.getElementById("rows");
    rows.textContent = "";
    names.forEach(function (n) {
      var c = clusters[n] || {};
      var tr = el("tr", { "data-cluster": n });
      cols.forEach(function (col) {
        var key = col[0];
        var td = el("td", { "data-col": key });
        if (key === "cluster") td.textContent = n;
        else if (key === "state") td.appendChild(stateBadge(c.state));
        else if (key === "owner") td.textContent = c.owner == null ? "–" : String(c.owner);
        else if (key === "provider") td.textContent = c.provider == null ? "–" : String(c.provider);
        else if (key === "objects" || key === "queue") { td.className = "num"; td.textContent = String(c[key] == null ? "–" : c[key]); }
        else if (key === "lastEvent") { td.className = "num"; td.textContent = age(c.lastEventAgeSeconds); }
        else if (key === "connects") { td.className = "num"; td.textContent = String(c.connectAttempts == null ? "–" : c.connectAttempts); }
        else if (key.indexOf("op:") === 0) {
          var o = (c.operators || {})[key.slice(3)];
          if (!o) td.textContent = "–";
          else {
            td.appendChild(stateBadge(o.state));
            td.appendChild(el("div", { "class": "op-detail" }, (o.objects == null ? "–" : o.objects) + " objects, queue " + (o.queue == null ? "–" : o.queue)));
            if (o.lastError) td.setAttribute("title", String(o.lastError));
          }
        } else if (key === "rate") {
          var rates = history[n] || [];
          td.appendChild(sparkline(rates, step));
          td.appendChild(el("span", { "class": "rate" }, rates.length ? Number(rates[rates.length - 1]).toFixed(1) + "/s" : "–"));
        } else if (key === "lastError") {
          if (c.lastError) td.appendChild(el("div", { "class": "error" }, c.lastError));
          var perms = c.missingPermissions || [];
          if (perms.length) td.appendChild(el("div", { "class": "perm" }, "missing: " + perms.join(", ")));
        }
        tr.appendChild(td);
      });
      rows.appendChild(tr);
    });
    document.getElementById("clusters").hidden = false;
  }
  function problem(text) {
    var p = document.getElementById("problem");
    p.textContent = text;
    p.hidden = false;
  }
  function refresh() {
    clearTimeout(timer);
    var headers = { accept: "application/json" };
    var t = token();
    if (t) headers.authorization = "Bearer " + t;
    fetch(location.pathname + query(), { headers: headers, cache: "no-store", credentials: "same-origin" }).then(function (res) {
      if (res.status === 401 || res.status === 403) { showAuth(res.status); return null; }
      if (!res.ok) throw new Error("/status answered " + res.status);
      return res.json();
    }).then(function (doc) {
      if (doc) { render(doc); lastOk = Date.now(); }
    }).catch(function (err) {
      problem("cannot refresh: " + (err && err.message ? err.message : err));
    }).then(function () {
      document.getElementById("updated").textContent = lastOk ? "updated " + new Date(lastOk).toLocaleTimeString() : "";
      timer = setTimeout(refresh, REFRESH_MS);
    });
  }
  document.getElementById("auth").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var v = document.getElementById("token").value.trim();
    try { if (v) sessionStorage.setItem(TOKEN_KEY, v); } catch (e) { /* storage refused: keep asking */ }
    document.getElementById("token").value = "";
    refresh();
  });
  document.getElementById("next").addEventListener("click", function () {
    if (nextCursor) { cursor = nextCursor; refresh(); }
  });
  document.getElementById("first").addEventListener("click", function () {
    cursor = "";
    refresh();
  });
  document.getElementById("forget").addEventListener("click", function () {
    try { sessionStorage.removeItem(TOKEN_KEY); } catch (e) { /* nothing stored */ }
    refresh();
  });
  refresh();
})();
</script>
</body>
</html>
`;

/** Headers of the page: no caching, no framing, and a CSP that allows nothing but the page and same-origin fetch. */
export const STATUS_PAGE_HEADERS: Record<string, string> = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "content-security-policy":
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};
