// Copy buttons (`data-copy="<field id>"`): the field's text goes to the clipboard and the status next to the
// button says "Copied". Where the Clipboard API is refused (an insecure origin, a denied permission), the
// field's text is selected so Ctrl+C / ⌘C copies it, and the status says so. A field marked
// `data-select-all` selects its whole text when focused or clicked.
(function () {
  "use strict";
  function say(button, words) {
    var status = document.getElementById(button.getAttribute("data-copy-status"));
    if (status) {
      status.textContent = "";
      window.setTimeout(function () { status.textContent = words; }, 30);  // announced again each time
    }
  }
  function selectAll(field) {
    field.focus();
    field.select();
    field.setSelectionRange(0, field.value.length);
  }
  function fallback(button, field) {
    selectAll(field);
    var copied = false;
    try { copied = document.execCommand("copy"); } catch (e) { copied = false; }
    say(button, copied ? "Copied" : "Selected: press Ctrl+C (⌘C) to copy");
  }
  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-copy]");
    if (!button) return;
    var field = document.getElementById(button.getAttribute("data-copy"));
    if (!field) return;
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(field.value).then(
        function () { say(button, "Copied"); },
        function () { fallback(button, field); }
      );
    } else {
      fallback(button, field);
    }
  });
  function onField(event) {
    if (event.target.matches && event.target.matches("[data-select-all]")) selectAll(event.target);
  }
  document.addEventListener("focusin", onField);
  document.addEventListener("click", onField);
})();
