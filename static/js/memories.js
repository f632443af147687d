// The memories list: the type-ahead scope picker (asks /scopes.json for governed paths matching what was
// typed and fills the input's datalist) and the "select every row of this page" box of the bulk form.
(function () {
  "use strict";
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
        .catch(function () { /* the picker still accepts a typed path */ });
    }, 150);
  });
  document.addEventListener("change", function (event) {
    var box = event.target;
    if (!box.matches || !box.matches("input[data-select-page]")) { return; }
    box.form.querySelectorAll("input[name=ids]").forEach(function (row) { row.checked = box.checked; });
  });
})();
