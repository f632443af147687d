// Graph: server-laid-out relation graph; nodes coloured by status, symbol by kind; click opens the memory.
document.addEventListener("DOMContentLoaded", function () {
  var EDGE = { supersedes: "#8c959f", contradicts: "#cf222e", supports: "#1a7f37", derived_from: "#8250df" };
  var SYMBOL = { working: "circle", episodic: "circle-open", semantic: "square", preference: "diamond",
                 convention: "star", method: "triangle-up", stage_fact: "hexagon", external: "cross" };
  window.dashboardChart("graph-chart", function (el, d) {
    var summary = document.getElementById("graph-summary");
    if (!d.nodes.length) { document.getElementById("graph-empty").hidden = false; el.hidden = true; return; }
    summary.textContent = d.nodes.length + " memories, " + d.edge_count + " relations" +
      (d.truncated ? " (the most recent ones; narrow the scope to see all)" : "") + ".";
    var traces = Object.keys(d.edges).map(function (kind) {
      return { type: "scattergl", mode: "lines", name: kind.replace("_", " "), x: d.edges[kind].x, y: d.edges[kind].y,
               line: { color: EDGE[kind] || "#999", width: 1 }, hoverinfo: "skip" };
    });
    var byStatus = {};
    d.nodes.forEach(function (n) { (byStatus[n.status] = byStatus[n.status] || []).push(n); });
    // SVG with labels while the graph is small enough to read them; WebGL without labels beyond that.
    var small = d.nodes.length <= 150, kind = d.nodes.length <= 1500 ? "scatter" : "scattergl";
    traces.forEach(function (tr) { tr.type = kind; });
    Object.keys(byStatus).forEach(function (status) {
      var ns = byStatus[status];
      traces.push({ type: kind, mode: small ? "markers+text" : "markers", name: status, textposition: "top center",
        textfont: { size: 11, color: "#57606a" }, hoverinfo: "text",
        x: ns.map(function (n) { return n.x; }), y: ns.map(function (n) { return n.y; }),
        marker: { size: small ? 14 : 9, color: window.STATUS_COLORS[status] || "#444", symbol: ns.map(function (n) { return SYMBOL[n.kind] || "circle"; }),
                  line: { width: 1, color: "#fff" } },
        customdata: ns.map(function (n) { return n.url; }),
        text: ns.map(function (n) { return window.plain(n.label); }),
        hovertext: ns.map(function (n) { return "<b>" + window.plain(n.label) + "</b> (" + n.kind + ", " + n.status + ")<br>" + window.plain(n.scope) + "<br>" + window.plain(n.text); }),
        hovertemplate: "%{hovertext}<extra></extra>" });
    });
    Plotly.newPlot(el, traces, window.dashboardLayout({
      height: 620, dragmode: "pan", showlegend: true, legend: { orientation: "h" },
      xaxis: { visible: false }, yaxis: { visible: false, scaleanchor: "x" },
    }), { responsive: true, displaylogo: false, scrollZoom: true });
    el.on("plotly_click", function (ev) { var p = ev.points[0]; if (p && p.customdata) { window.location = p.customdata; } });
    // The same memories as a list of links, so the graph can be used from the keyboard.
    var list = document.getElementById("graph-list");
    d.nodes.slice(0, 500).forEach(function (n) {
      var li = document.createElement("li"); var a = document.createElement("a");
      a.href = n.url; a.textContent = n.label + " (" + n.status + ")"; a.dataset.memory = n.id;
      li.appendChild(a); list.appendChild(li);
    });
  });
});
