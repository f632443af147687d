// Timeline: decay curves of the chosen memories, reinforcements as points, state changes as markers. Lines
// differ by colour, dash pattern and marker symbol, and each is named at its right end, so no line depends
// on colour alone; the table under the chart holds the same numbers.
document.addEventListener("DOMContentLoaded", function () {
  var DASHES = ["solid", "dash", "dot", "dashdot", "longdash", "longdashdot"];
  var SYMBOLS = ["circle", "square", "diamond", "triangle-up", "x", "star", "hexagon", "triangle-down"];
  window.dashboardChart("timeline-chart", function (el, d) {
    if (!d.series.length) { document.getElementById("timeline-empty").hidden = false; el.hidden = true; return; }
    var traces = [], labels = [];
    d.series.forEach(function (s, i) {
      s.label = window.plain(s.label); s.text = window.plain(s.text);
      var color = "hsl(" + Math.round((i * 137.5) % 360) + ", 65%, " + (window.matchMedia("(prefers-color-scheme: dark)").matches ? "68%" : "33%") + ")";
      var dash = DASHES[i % DASHES.length], symbol = SYMBOLS[i % SYMBOLS.length];
      traces.push({ type: "scatter", mode: "lines+markers", name: s.label, x: s.x, y: s.y, legendgroup: "m" + s.id,
        line: { color: color, width: 1.8, dash: dash }, marker: { symbol: symbol, size: 7, color: color, maxdisplayed: 8 },
        customdata: s.x.map(function () { return s.url; }), text: s.x.map(function () { return s.text; }),
        meta: { memory: s.id, dash: dash, symbol: symbol },
        hovertemplate: "<b>" + s.label + "</b><br>%{text}<br>%{x}<br>A = %{y:.3g}<extra></extra>" });
      if (s.x.length) {
        labels.push({ x: s.x[s.x.length - 1], y: Math.log10(Math.max(s.y[s.y.length - 1], 1e-12)), text: s.label,
                      xanchor: "left", showarrow: false, font: { color: color, size: 11 }, xshift: 4 });
      }
      if (s.reinforcements.length) {
        traces.push({ type: "scatter", mode: "markers", showlegend: false, legendgroup: "m" + s.id,
          x: s.reinforcements.map(function (r) { return r.at; }), y: s.reinforcements.map(function (r) { return r.y; }),
          marker: { color: color, size: 7, symbol: symbol }, customdata: s.reinforcements.map(function () { return s.url; }),
          hovertemplate: "<b>" + s.label + "</b><br>reinforced %{x}<extra></extra>" });
      }
      if (s.changes.length) {
        traces.push({ type: "scatter", mode: "markers", showlegend: false, legendgroup: "m" + s.id,
          x: s.changes.map(function (c) { return c.at; }),
          y: s.changes.map(function (c) { var j = s.x.findIndex(function (t) { return t >= c.at; }); return j < 0 ? s.y[s.y.length - 1] : s.y[j]; }),
          marker: { symbol: "diamond", size: 11, color: window.themeColor("--card"), line: { color: color, width: 2 } },
          text: s.changes.map(function (c) { return c.to; }), customdata: s.changes.map(function () { return s.url; }),
          hovertemplate: "<b>" + s.label + "</b><br>became %{text}<br>%{x}<extra></extra>" });
      }
    });
    // Names at the lines' ends are spread apart so they do not print over each other: a minimum gap of
    // about one text line, in log10 units of the plotted range.
    var ys = [];
    d.series.forEach(function (s) { s.y.forEach(function (v) { if (v > 0) { ys.push(Math.log10(v)); } }); });
    ys.push(Math.log10(d.threshold));
    var gap = (Math.max.apply(null, ys) - Math.min.apply(null, ys) + 0.5) * 15 / 420;
    labels.sort(function (a, b) { return a.y - b.y; });
    for (var k = 1; k < labels.length; k++) { labels[k].y = Math.max(labels[k].y, labels[k - 1].y + gap); }
    var bad = window.themeColor("--bad");
    var narrow = window.narrowChart();
    if (narrow) { labels = []; }  // no room for names at the lines' ends: the legend under the plot names them
    labels.push({ xref: "paper", x: 0, y: Math.log10(d.threshold), text: "cold threshold", showarrow: false, yanchor: "bottom", xanchor: "left", font: { color: bad } });
    Plotly.newPlot(el, traces, window.dashboardLayout({
      // The legend (colour, dash and marker of each line) goes under the plot; the right margin is for
      // the names at the lines' ends.
      height: 560, margin: { l: narrow ? 44 : 60, r: narrow ? 10 : 170, t: 10, b: 60 },
      xaxis: { title: { text: "time (your time zone)" }, type: "date", range: [d.since, d.until] },
      yaxis: { title: { text: "activation A(t) (log scale, unitless)" }, type: "log", dtick: 1 },
      shapes: [{ type: "line", xref: "paper", x0: 0, x1: 1, y0: d.threshold, y1: d.threshold, line: { dash: "dash", color: bad } }],
      annotations: labels, showlegend: true, legend: { font: { size: 11 }, orientation: "h", y: -0.18, yanchor: "top" },
    }), window.chartConfig());
    el.on("plotly_click", function (ev) { var p = ev.points[0]; if (p && p.customdata) { window.location = p.customdata; } });
  });
});
