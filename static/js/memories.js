// The memories list: the "select every row of this page" box of the bulk form (the type-ahead scope field
// is common.js's). Delegated, so it keeps working after htmx swaps the table.
(function () {
  "use strict";
  document.addEventListener("change", function (event) {
    var box = event.target;
    if (!box.matches || !box.matches("input[data-select-page]")) { return; }
    box.form.querySelectorAll("input[name=ids]").forEach(function (row) { row.checked = box.checked; });
  });
  // A filter the server refuses answers 400 with the reason in the table's place; htmx swaps only 2xx by
  // default, which would leave the previous rows standing under filters that no longer match them.
  document.addEventListener("htmx:beforeSwap", function (event) {
    var target = event.detail.target;
    if (event.detail.xhr.status === 400 && target && target.id === "memory-table") {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });
  // Once the filters read again, the marks a refused value left beside its field go (the field is outside
  // the part htmx swaps).
  document.addEventListener("htmx:afterSwap", function (event) {
    var target = event.detail.target;
    if (!target || target.id !== "memory-table" || target.querySelector("#filters-invalid")) { return; }
    var form = document.getElementById("memory-filters");
    if (!form) { return; }
    form.querySelectorAll(".field-error").forEach(function (note) { note.remove(); });
    form.querySelectorAll("[aria-invalid]").forEach(function (field) {
      field.removeAttribute("aria-invalid");
      field.removeAttribute("aria-describedby");
    });
    form.querySelectorAll(".has-error").forEach(function (box) { box.classList.remove("has-error"); });
  });
})();
