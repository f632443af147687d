// The memories list: the "select every row of this page" box of the bulk form (the type-ahead scope field
// is common.js's). Delegated, so it keeps working after htmx swaps the table.
(function () {
  "use strict";
  document.addEventListener("change", function (event) {
    var box = event.target;
    if (!box.matches || !box.matches("input[data-select-page]")) { return; }
    box.form.querySelectorAll("input[name=ids]").forEach(function (row) { row.checked = box.checked; });
  });
})();
