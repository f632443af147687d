// Evaluation: overall score per strategy and score per category (grouped bars), for the replay suite
// (share of tasks passed) and for an uploaded conversation file (recall@5 per search path).
document.addEventListener("DOMContentLoaded", function () {
  ["evaluation-chart", "retrieval-chart"].forEach(function (id) { window.dashboardChart(id, function (el, d) {
    var narrow = window.narrowChart();  // the legend goes under the plot on a phone, not over it
    var names = d.rows.map(function (r) { return r.name; });
    var traces = [{ type: "bar", name: "overall", x: names, y: d.rows.map(function (r) { return r.overall; }) }];
    d.categories.forEach(function (c, i) {
      traces.push({ type: "bar", name: c, x: names, y: d.rows.map(function (r) { return r.categories[i]; }) });
    });
    Plotly.newPlot(el, traces, window.dashboardLayout({
      barmode: "group", xaxis: { title: { text: "strategy (ablation)" } },
      yaxis: { title: { text: d.kind === "retrieval" ? "recall@5 (0–1)" : "score (0–1)" }, range: [0, 1] }, legend: narrow ? { orientation: "h", x: 0, y: -0.3, yanchor: "top" } : { orientation: "v", x: 1.01, y: 1 },
      margin: { l: 60, r: 10, t: 10, b: narrow ? 60 : 50 }, height: narrow ? 420 : 320,
    }), window.chartConfig());
  }); });
});
