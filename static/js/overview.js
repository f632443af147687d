// Overview: the activation histogram with the cold threshold.
document.addEventListener("DOMContentLoaded", function () {
  window.dashboardChart("activation-histogram", function (el, d) {
    Plotly.newPlot(el, [{
      type: "bar", x: d.centers, y: d.counts, marker: { color: "#0969da" },
      hovertemplate: "activation ≈ %{x:.3g}<br>%{y} memories<extra></extra>",
    }], window.dashboardLayout({
      xaxis: { type: "log", title: { text: "activation A(t) now (log scale, unitless)" } },
      yaxis: { title: { text: "memories" }, rangemode: "tozero" },
      shapes: [{ type: "line", x0: d.threshold, x1: d.threshold, yref: "paper", y0: 0, y1: 1,
                 line: { dash: "dash", color: "#cf222e" } }],
      annotations: [{ x: Math.log10(d.threshold), y: 1, yref: "paper", text: "cold threshold", showarrow: false,
                      xanchor: "left", font: { color: "#cf222e" } }],
      bargap: 0.05,
    }), { responsive: true, displaylogo: false });
  });
});
