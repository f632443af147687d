// Shared by every page: the user's time zone for server-rendered times, the scope picker, chart loading.
(function () {
  "use strict";
  var zone = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  var current = (document.cookie.match(/(?:^|; )tz=([^;]*)/) || [])[1];
  if (decodeURIComponent(current || "") !== zone) {
    document.cookie = "tz=" + encodeURIComponent(zone) + "; path=/; max-age=31536000; SameSite=Lax";
    // Times on this first page were rendered in UTC: reload once so they are in the user's zone.
    // (Only pages that show times, and only once, so a browser refusing cookies never loops.)
    if (!current && document.querySelector("time") && !sessionStorage.getItem("tzReloaded")) {
      sessionStorage.setItem("tzReloaded", "1");
      window.location.reload();
    }
  }
  // The header's menu button (narrow screens): the pages, scope picker, theme and sign-out fold into it.
  var top = document.getElementById("top");
  var toggle = top && top.querySelector(".menu-toggle");
  if (toggle) {
    toggle.hidden = false;
    top.classList.add("js-menu");
    toggle.addEventListener("click", function () {
      var open = top.classList.toggle("open");
      toggle.setAttribute("aria-expanded", open ? "true" : "false");
    });
  }
  // A table wider than its box scrolls inside it (narrow screens): make it a Tab stop, so the keyboard
  // can scroll it too.
  function scrollableTables() {
    document.querySelectorAll("main table, main .table-scroll").forEach(function (t) {
      if (t.scrollWidth > t.clientWidth + 1) {
        if (!t.hasAttribute("tabindex")) { t.tabIndex = 0; t.dataset.scrollStop = "1"; }
      } else if (t.dataset.scrollStop) { t.removeAttribute("tabindex"); delete t.dataset.scrollStop; }
    });
  }
  scrollableTables();
  window.addEventListener("resize", scrollableTables);
  window.addEventListener("load", scrollableTables);  // once fonts and images have their size
  document.addEventListener("htmx:afterSwap", scrollableTables);
  document.addEventListener("change", function (event) {
    var el = event.target;
    if (el.matches && el.matches("select[data-autosubmit], input[data-autosubmit]")) { el.form.submit(); }
  });
  // Type-ahead scope fields (input[data-scope-picker]): ask /scopes.json for the governed paths matching
  // what was typed and offer them in the field's datalist, instead of a select listing every path.
  var pending = null;
  document.addEventListener("input", function (event) {
    var input = event.target;
    if (!input.matches || !input.matches("input[data-scope-picker]")) { return; }
    var list = document.getElementById(input.getAttribute("list"));
    clearTimeout(pending);
    pending = setTimeout(function () {
      var url = input.dataset.scopePicker + "?q=" + encodeURIComponent(input.value);
      fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (r) { return r.ok ? r.json() : { scopes: [] }; })
        .then(function (body) {
          list.replaceChildren.apply(list, body.scopes.map(function (path) {
            var option = document.createElement("option");
            option.value = path;
            return option;
          }));
        })
        .catch(function () { /* a typed path still works */ });
    }, 150);
  });
  document.addEventListener("focusin", function (event) {
    var input = event.target;
    if (input.matches && input.matches("input[data-scope-picker]") && !input.dataset.offered) {
      input.dataset.offered = "1";  // offer the first paths before anything is typed
      input.dispatchEvent(new Event("input", { bubbles: true }));
    }
  });
})();

// Fetch a chart's JSON (the element's data-src) and draw it; a failed fetch says so in the chart box.
// A chart whose data is already on the page (data-inline names a json_script element) draws from it.
window.dashboardChart = function (id, draw) {
  var el = document.getElementById(id);
  if (!el) { return; }
  if (el.dataset.inline) {
    draw(el, JSON.parse(document.getElementById(el.dataset.inline).textContent));
    el.dataset.ready = "1";
    return;
  }
  fetch(el.dataset.src, { credentials: "same-origin", headers: { Accept: "application/json" } })
    .then(function (r) { return r.json().then(function (body) { return { ok: r.ok, body: body }; }); })
    .then(function (res) {
      if (!res.ok) { el.textContent = res.body.message || "The chart could not be loaded."; return; }
      draw(el, res.body);
      el.dataset.ready = "1";
    })
    .catch(function () { el.textContent = "The chart could not be loaded."; });
};

// Colours come from the stylesheet's variables (static/css/dashboard.css), so charts follow the light or
// dark theme the system asks for; when the system switches, every drawn chart is re-coloured.
window.themeColor = function (name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || "#888";
};
window.relationColor = function (kind) { return window.themeColor("--rel-" + kind.replace("_", "-")); };
function themeLayout() {
  var fg = window.themeColor("--fg");
  return {
    font: { family: "system-ui, sans-serif", size: 12, color: fg }, paper_bgcolor: "rgba(0,0,0,0)",
    plot_bgcolor: window.themeColor("--card"), hoverlabel: { bgcolor: window.themeColor("--card"), font: { color: fg } },
    legend: { font: { color: fg } },
  };
}
function axisTheme(axis) {
  var grid = window.themeColor("--grid"), muted = window.themeColor("--muted");
  return Object.assign({ gridcolor: grid, zerolinecolor: grid, linecolor: grid, tickfont: { color: muted } }, axis || {});
}
window.dashboardLayout = function (extra) {
  var base = Object.assign({ margin: { l: 60, r: 20, t: 10, b: 50 }, height: 320, hovermode: "closest" }, themeLayout());
  var layout = Object.assign(base, extra || {});
  layout.legend = Object.assign({}, themeLayout().legend, (extra || {}).legend || {});
  layout.xaxis = axisTheme(layout.xaxis); layout.yaxis = axisTheme(layout.yaxis);
  return layout;
};
if (window.matchMedia) {
  window.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", function () {
    document.querySelectorAll(".js-plotly-plot").forEach(function (el) {
      var update = themeLayout();
      ["xaxis", "yaxis"].forEach(function (a) {
        var t = axisTheme();
        Object.keys(t).forEach(function (k) { update[a + "." + k] = t[k]; });
      });
      Plotly.relayout(el, update);
    });
  });
}
// Plotly reads a subset of HTML in labels and hover text; memory texts and keys come from agents, so
// they reach a chart only without markup characters.
window.plain = function (value) { return String(value == null ? "" : value).replace(/[<>&"]/g, ""); };
window.STATUS_COLORS = {
  active: "#1a7f37", candidate: "#9a6700", proposed: "#0969da", superseded: "#8c959f",
  retired: "#6e7781", forgotten: "#cf222e", rejected: "#a40e26",
};
// Below 600 px a chart gives its width to the plot: no toolbar (modebar), and the callers drop the names
// at the lines' ends and put legends under the plot.
window.narrowChart = function () { return window.matchMedia("(max-width: 599px)").matches; };
window.chartConfig = function (extra) {
  return Object.assign({ responsive: true, displaylogo: false, displayModeBar: window.narrowChart() ? false : "hover" }, extra || {});
};
