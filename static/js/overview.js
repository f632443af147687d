// Overview: the activation histogram with the cold threshold.
function sup(n) {
  var digits = "⁰¹²³⁴⁵⁶⁷⁸⁹";
  return (n < 0 ? "⁻" : "") + String(Math.abs(n)).split("").map(function (c) { return digits[+c]; }).join("");
}
document.addEventListener("DOMContentLoaded", function () {
  window.dashboardChart("activation-histogram", function (el, d) {
    // Bars on a log axis are drawn as slivers, so the axis is log10(A) with powers of ten as tick labels.
    var logs = d.centers.map(Math.log10);
    var lo = Math.round(Math.log10(d.edges[0])), hi = Math.round(Math.log10(d.edges[d.edges.length - 1]));
    var ticks = [], labels = [];
    for (var e = lo; e <= hi; e++) { ticks.push(e); labels.push(e === 0 ? "1" : e === 1 ? "10" : "10" + sup(e)); }
    var t = Math.log10(d.threshold);
    Plotly.newPlot(el, [{
      type: "bar", x: logs, y: d.counts, marker: { color: logs.map(function (x) { return x < t ? "#8c959f" : "#0969da"; }) },
      text: d.centers.map(function (c) { return c.toPrecision(2); }),
      hovertemplate: "activation ≈ %{text}<br>%{y} memories<extra></extra>", textposition: "none",
    }], window.dashboardLayout({
      xaxis: { title: { text: "activation A(t) now (log scale, unitless)" }, tickvals: ticks, ticktext: labels },
      yaxis: { title: { text: "memories" }, rangemode: "tozero" },
      shapes: [{ type: "line", x0: t, x1: t, yref: "paper", y0: 0, y1: 1, line: { dash: "dash", color: "#cf222e" } }],
      annotations: [{ x: t, y: 1, yref: "paper", text: "cold threshold", showarrow: false,
                      xanchor: "left", font: { color: "#cf222e" } }],
      bargap: 0.1,
    }), { responsive: true, displaylogo: false });
  });
});
