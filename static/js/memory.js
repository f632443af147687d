// A memory's page: its activation curve with reinforcements and changes of state.
document.addEventListener("DOMContentLoaded", function () {
  window.dashboardChart("activation-curve", function (el, d) {
    var traces = [
      { type: "scatter", mode: "lines", name: "activation", x: d.x, y: d.y, line: { color: "#0969da" },
        hovertemplate: "%{x}<br>A = %{y:.3g}<extra></extra>" },
      { type: "scatter", mode: "markers", name: "reinforcement", x: d.reinforcements.map(function (r) { return r.at; }),
        y: d.reinforcements.map(function (r) { return r.y; }), marker: { size: 8, color: "#1a7f37" },
        text: d.reinforcements.map(function (r) { return "weight " + r.weight; }),
        hovertemplate: "%{x}<br>reinforced, %{text}<extra></extra>" },
    ];
    var shapes = [{ type: "line", xref: "paper", x0: 0, x1: 1, y0: d.threshold, y1: d.threshold,
                    line: { dash: "dash", color: "#cf222e" } }];
    var annotations = d.changes.map(function (c) {
      return { x: c.at, y: 1, yref: "paper", text: "→ " + c.to, showarrow: false, textangle: -90, yanchor: "top",
               font: { size: 11, color: "#57606a" } };
    });
    d.changes.forEach(function (c) {
      shapes.push({ type: "line", x0: c.at, x1: c.at, yref: "paper", y0: 0, y1: 1, line: { color: "#8c959f", width: 1 } });
    });
    Plotly.newPlot(el, traces, window.dashboardLayout({
      xaxis: { title: { text: "time (your time zone)" }, type: "date" },
      yaxis: { title: { text: "activation A(t) (log scale)" }, type: "log", dtick: 1 },
      shapes: shapes, annotations: annotations, legend: { orientation: "h", y: 1.1, x: 0 }, margin: { l: 60, r: 20, t: 30, b: 50 },
    }), { responsive: true, displaylogo: false });
  });
});
