// Graph: server-laid-out relation graph. Edges are directed (arrowheads) and parallel ones come as separate
// curves from the server; each relation kind has a colour and a dash pattern, and can be hidden; nodes are
// coloured by status, shaped by kind; a search box rings the matching memories; click opens a memory.
document.addEventListener("DOMContentLoaded", function () {
  var DASH = { supersedes: "solid", contradicts: "dash", supports: "dot", derived_from: "dashdot" };
  var SYMBOL = { working: "circle", episodic: "circle-open", semantic: "square", preference: "diamond",
                 convention: "star", method: "triangle-up", stage_fact: "hexagon", external: "cross" };
  window.dashboardChart("graph-chart", function (el, d) {
    var summary = document.getElementById("graph-summary");
    if (!d.nodes.length) { document.getElementById("graph-empty").hidden = false; el.hidden = true; return; }
    var counts = Object.keys(d.edges).map(function (k) { return d.edges[k].count + " " + k.replace("_", " "); });
    summary.textContent = d.nodes.length + " memories, " + d.edge_count + " relations (" + counts.join(", ") + ")" +
      (d.truncated ? "; the most recent ones only: narrow the scope to see all" : "") + ".";
    // Labels while the graph is small enough to read them. Always SVG ("scatter"): the page loads plotly's
    // basic bundle, which has no WebGL traces; the graph data stops at 2,000 edges, a size SVG draws.
    var small = d.nodes.length <= 150, type = "scatter";
    var traces = [];
    Object.keys(d.edges).forEach(function (kind) {
      var e = d.edges[kind], name = kind.replace("_", " ");
      traces.push({ type: type, mode: "lines", name: name, legendgroup: kind, x: e.x, y: e.y, meta: { edges: kind },
                    line: { color: window.relationColor(kind), width: 1.4, dash: DASH[kind] || "solid" }, hoverinfo: "skip" });
      traces.push({ type: "scatter", mode: "markers", name: name, legendgroup: kind, showlegend: false, meta: { arrows: kind },
                    x: e.arrows.x, y: e.arrows.y, hoverinfo: "skip",
                    marker: { symbol: "triangle-up", size: small ? 9 : 6, angle: e.arrows.angle, color: window.relationColor(kind) } });
    });
    var byStatus = {};
    d.nodes.forEach(function (n) { (byStatus[n.status] = byStatus[n.status] || []).push(n); });
    Object.keys(byStatus).forEach(function (status) {
      var ns = byStatus[status];
      traces.push({ type: type, mode: small ? "markers+text" : "markers", name: status, textposition: "top center",
        textfont: { size: 11, color: window.themeColor("--muted") }, hoverinfo: "text",
        x: ns.map(function (n) { return n.x; }), y: ns.map(function (n) { return n.y; }),
        marker: { size: small ? 14 : 9, color: window.STATUS_COLORS[status] || "#444", symbol: ns.map(function (n) { return SYMBOL[n.kind] || "circle"; }),
                  line: { width: ns.map(function (n) { return n.id === d.centre ? 3 : 1; }), color: window.themeColor("--card") } },
        customdata: ns.map(function (n) { return n.url; }),
        text: ns.map(function (n) { return window.plain(n.label); }),
        hovertext: ns.map(function (n) { return "<b>" + window.plain(n.label) + "</b> (" + n.kind + ", " + n.status + ")<br>" + window.plain(n.scope) + "<br>" + window.plain(n.text); }),
        hovertemplate: "%{hovertext}<extra></extra>" });
    });
    var found = traces.length;  // the search rings go in this trace
    traces.push({ type: "scatter", mode: "markers", name: "found", showlegend: false, x: [], y: [], hoverinfo: "skip",
                  marker: { symbol: "circle-open", size: 28, color: window.themeColor("--accent"), line: { width: 3 } } });
    Plotly.newPlot(el, traces, window.dashboardLayout({
      height: 620, dragmode: "pan", showlegend: true, legend: { orientation: "h" },
      xaxis: { visible: false }, yaxis: { visible: false, scaleanchor: "x" },
    }), window.chartConfig({ scrollZoom: true }));
    el.dataset.edges = d.edge_count;
    el.on("plotly_click", function (ev) { var p = ev.points[0]; if (p && p.customdata) { window.location = p.customdata; } });

    // Kind check boxes hide and show a kind's lines and arrows at once (the form reloads without script).
    document.querySelectorAll("#graph-filters input[name=kind]").forEach(function (box) {
      box.addEventListener("change", function () {
        var idx = [];
        el.data.forEach(function (tr, i) { if (tr.legendgroup === box.value) { idx.push(i); } });
        if (idx.length) { Plotly.restyle(el, { visible: box.checked ? true : "legendonly" }, idx); }
      });
    });

    // Search: ring the memories whose label, id or text holds the words, and say how many.
    var search = document.getElementById("graph-search");
    search.form.addEventListener("submit", function (ev) { if (document.activeElement === search) { ev.preventDefault(); } });
    search.addEventListener("input", function () {
      var q = search.value.trim().toLowerCase().replace(/^#/, "");
      var hits = q ? d.nodes.filter(function (n) {
        return String(n.id) === q || n.label.toLowerCase().indexOf(q) >= 0 || n.text.toLowerCase().indexOf(q) >= 0;
      }) : [];
      Plotly.restyle(el, { x: [hits.map(function (n) { return n.x; })], y: [hits.map(function (n) { return n.y; })] }, [found]);
      el.dataset.found = hits.length;
      summary.textContent = q ? (hits.length ? hits.length + (hits.length === 1 ? " memory matches “" : " memories match “") + search.value.trim() + "”" +
        (hits.length <= 5 ? ": " + hits.map(function (n) { return n.label; }).join(", ") : "") + "." : "No memory matches.") : "";
    });

    // The same memories as a list of links, so the graph can be used from the keyboard.
    var list = document.getElementById("graph-list");
    d.nodes.slice(0, 500).forEach(function (n) {
      var li = document.createElement("li"); var a = document.createElement("a");
      a.href = n.url; a.textContent = n.label + " (" + n.status + ")"; a.dataset.memory = n.id;
      li.appendChild(a); list.appendChild(li);
    });
  });
});
