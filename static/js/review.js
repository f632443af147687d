// Review queue: "select all" per group.
document.addEventListener("change", function (event) {
  var group = event.target.dataset && event.target.dataset.selectAll;
  if (!group) { return; }
  document.querySelectorAll('input[data-group="' + group + '"]').forEach(function (box) { box.checked = event.target.checked; });
});
