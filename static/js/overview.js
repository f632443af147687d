// Overview: the activation histogram over the range the memories occupy, with the cold threshold.
function shortValue(v) {
  if (v >= 1e-3) { return String(Number(v.toPrecision(2))); }
  return v.toExponential(1).replace("e-", "×10⁻").replace(/⁻(\d+)/, function (_, d) {
    return "⁻" + d.split("").map(function (c) { return "⁰¹²³⁴⁵⁶⁷⁸⁹"[+c]; }).join("");
  });
}
document.addEventListener("DOMContentLoaded", function () {
  window.dashboardChart("activation-histogram", function (el, d) {
    // Bars on a log axis are drawn as slivers, so the axis is log10(A); tick labels are the activations
    // at about six of the bin edges (the server chose the bins from the data's own range).
    var logs = d.centers.map(Math.log10), edges = d.edges.map(Math.log10);
    var step = Math.max(1, Math.round((edges.length - 1) / 6)), ticks = [], labels = [];
    for (var i = 0; i < edges.length; i += step) { ticks.push(edges[i]); labels.push(shortValue(d.edges[i])); }
    var t = Math.log10(d.threshold), cold = window.themeColor("--muted"), hot = window.themeColor("--accent");
    var bad = window.themeColor("--bad");
    Plotly.newPlot(el, [{
      type: "bar", x: logs, y: d.counts, width: (edges[1] - edges[0]) * 0.92,
      marker: { color: logs.map(function (x) { return x < t ? cold : hot; }) },
      text: d.labels, textposition: "none",
      hovertemplate: "activation %{text}<br>%{y} memories<extra></extra>",
    }], window.dashboardLayout({
      xaxis: { title: { text: "activation A(t) now (log scale, unitless)" }, tickvals: ticks, ticktext: labels,
               range: [edges[0], edges[edges.length - 1]] },
      yaxis: { title: { text: "memories" }, rangemode: "tozero" },
      shapes: [{ type: "line", x0: t, x1: t, yref: "paper", y0: 0, y1: 1, line: { dash: "dash", color: bad } }],
      annotations: [{ x: t, y: 1, yref: "paper", text: "cold threshold " + shortValue(d.threshold), showarrow: false,
                      xanchor: "left", font: { color: bad } }],
      bargap: 0.1,
    }), { responsive: true, displaylogo: false });
    el.dataset.bins = d.counts.length;
  });
});
