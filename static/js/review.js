// Review queue: keyboard use (j/k, c, e, r, x, ?; n, o, d on a dispute), decisions in place (fetch, then on
// to the next item; the decided card collapses to its result), similar memories loaded lazily per item,
// and "select all" for the bulk form. Disputes and proposals are one walk: the same keys move from card to
// card. Every control is a real form: without this file they post and the page comes back with a message.
(function () {
  "use strict";
  var CARDS = ".review-item, .dispute-item";
  var lists = Array.prototype.filter.call(
    [document.getElementById("dispute-list"), document.getElementById("review-list")], Boolean);
  var help = document.getElementById("review-help");
  var items = Array.prototype.slice.call(document.querySelectorAll(CARDS));
  var current = -1;

  function card(el) { return el && el.closest ? el.closest(CARDS) : null; }
  function isDispute(item) { return item && item.classList.contains("dispute-item"); }

  function open(item) { return item && !item.classList.contains("decided"); }

  function select(index, focus) {
    if (!items.length) { return; }
    index = Math.max(0, Math.min(items.length - 1, index));
    if (current >= 0 && items[current]) { items[current].classList.remove("current"); }
    current = index;
    var item = items[current];
    item.classList.add("current");
    if (focus !== false) { item.focus({ preventScroll: true }); item.scrollIntoView({ block: "nearest" }); }
    loadSimilar(item);
  }

  function move(step) {
    // Decided items stay in the list (so the reviewer sees what was done) but j/k skip them.
    var i = current;
    do { i += step; } while (i >= 0 && i < items.length && !open(items[i]));
    if (i >= 0 && i < items.length) { select(i); }
  }

  function currentItem() { return current >= 0 ? items[current] : null; }

  // --- Similar memories -------------------------------------------------------------------------------
  function loadSimilar(item) {
    var box = item && item.querySelector(".similar");
    if (!box || box.dataset.loaded) { return; }
    box.dataset.loaded = "1";
    var body = box.querySelector(".similar-body");
    body.textContent = "Loading…";
    fetch(box.dataset.similarUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.json().then(function (b) { return { ok: r.ok, body: b }; }); })
      .then(function (res) {
        if (!res.ok) { body.textContent = res.body.message || "Similar memories could not be loaded."; return; }
        renderSimilar(item, box, body, res.body);
      })
      .catch(function () { body.textContent = "Similar memories could not be loaded."; delete box.dataset.loaded; });
  }

  function renderSimilar(item, box, body, data) {
    if (!data.similar.length) { body.textContent = "None: nothing in force reads like this."; return; }
    var ul = document.createElement("ul");
    data.similar.forEach(function (s) {
      var li = document.createElement("li");
      li.className = "similar-hit";
      li.dataset.memory = s.memory_id;
      var a = document.createElement("a");
      a.href = s.url;
      a.textContent = s.key ? s.key + " r" + s.revision : "#" + s.memory_id;
      li.appendChild(a);
      li.appendChild(document.createTextNode(" " + s.text + " "));
      var meta = document.createElement("span");
      meta.className = "muted";
      meta.textContent = "(" + s.status + ", score " + s.score.toFixed(3) + ")";
      li.appendChild(meta);
      if (s.same_key) {
        var note = document.createElement("span");
        note.className = "badge";
        note.textContent = "same key: confirming supersedes this";
        li.appendChild(document.createTextNode(" "));
        li.appendChild(note);
      } else if (s.key && !data.key && s.kind === data.kind) {
        // The shortcut, for an unkeyed proposal of the same kind as a keyed fact in force: take its key,
        // so confirming the edit supersedes it.
        var btn = document.createElement("button");
        btn.type = "button";
        btn.className = "supersedes-shortcut";
        btn.textContent = "This supersedes " + s.key;
        btn.addEventListener("click", function () { openEdit(item, { key: s.key, kind: s.kind }); });
        li.appendChild(document.createTextNode(" "));
        li.appendChild(btn);
      }
      ul.appendChild(li);
    });
    body.replaceWith(ul);
    tame(item);  // the links and buttons just added are reached by shortcut, not Tab (one Tab stop per item)
  }

  // --- Decisions ---------------------------------------------------------------------------------------
  function openEdit(item, preset) {
    var details = item.querySelector(".decide-edit");
    if (!details) { return; }
    details.open = true;
    if (preset) {
      if (preset.key) { details.querySelector("[name=key]").value = preset.key; }
      if (preset.kind) { details.querySelector("[name=kind]").value = preset.kind; }
      details.querySelector("[name=reason]").value = details.querySelector("[name=reason]").value || "supersedes " + preset.key;
    }
    details.querySelector("textarea").focus();
  }

  function openReject(item) {
    var details = item.querySelector(".decide-reject");
    if (!details) { return; }
    details.open = true;
    details.querySelector("[name=reason]").focus();
  }

  // A dispute: n or o says which one holds (the reason is asked, Enter posts it); d dismisses it.
  function openHolds(item, side) {
    var form = item.querySelector(".dispute-confirm");
    if (!form) { tell(item, item.dataset.holdsRefused); return; }
    form.closest("details").open = true;
    form.querySelector("input[data-side=" + side + "]").checked = true;
    form.querySelector("[name=reason]").focus();
  }

  function dismiss(item) {
    var form = item.querySelector(".dispute-dismiss");
    if (form) { form.requestSubmit(); } else { tell(item, item.dataset.dismissRefused); }
  }

  function tell(item, text) {
    var outcome = item.querySelector(".outcome");
    if (outcome && text) { outcome.textContent = text; }
  }

  function submitDecision(form) {
    var item = card(form);
    var outcome = item.querySelector(".outcome");
    var buttons = form.querySelectorAll("button");
    buttons.forEach(function (b) { b.disabled = true; });
    outcome.textContent = "Saving…";
    fetch(form.action, {
      method: "POST", body: new FormData(form), credentials: "same-origin",
      headers: { Accept: "application/json", "X-CSRFToken": form.querySelector("[name=csrfmiddlewaretoken]").value },
    })
      .then(function (r) { return r.json().then(function (b) { return { ok: r.ok, body: b }; }); })
      .then(function (res) {
        buttons.forEach(function (b) { b.disabled = false; });
        if (!res.ok) {
          outcome.textContent = res.body.message || "That did not work; nothing was changed.";
          outcome.classList.add("error");
          return;
        }
        outcome.classList.remove("error");
        if (isDispute(item)) { showDisputeResult(item, outcome, res.body); } else { showResult(item, outcome, res.body); }
        item.dataset.outcome = res.body.status || res.body.state;
        item.classList.add("decided");
        item.querySelectorAll("details").forEach(function (d) { d.open = false; });
        // Collapsed to its result: the decision's controls go (an undo stays), the CSS folds the rest.
        item.querySelectorAll(".decide form:not(.undo-reject), .decide > details, input[name=memory]").forEach(function (el) {
          if (el.tagName === "INPUT") { el.checked = false; el.disabled = true; } else { el.hidden = true; }
        });
        var i = items.indexOf(item);
        current = i;
        move(1);
        if (items[current] === item) { item.focus(); }
      })
      .catch(function () {
        buttons.forEach(function (b) { b.disabled = false; });
        outcome.textContent = "The server could not be reached; nothing was changed.";
      });
  }

  // What the item shows after a decision: its new state, its text (an edit's new text), the memory it
  // became (a link), a reject's reason; and the queue's count in the heading.
  function showResult(item, outcome, body) {
    outcome.textContent = "";
    outcome.classList.add("done");
    var state = document.createElement("span");
    state.className = "badge state-" + (body.decision === "reject" ? "rejected" : body.status);
    state.textContent = body.decision === "reject" ? "rejected" : body.status;
    outcome.appendChild(state);
    outcome.appendChild(document.createTextNode(" " + body.message + " "));
    if (body.result_id !== body.memory_id || body.decision !== "reject") {
      var link = document.createElement("a");
      link.href = body.result_url;
      link.className = "result-link";
      link.textContent = "Open " + body.result_label;
      outcome.appendChild(link);
    }
    if (body.decision === "reject" && body.reason) {
      var why = document.createElement("span");
      why.className = "reject-reason";
      why.textContent = " Reason: " + body.reason;
      outcome.appendChild(why);
    }
    var previous = item.querySelector(".undo-reject");
    if (previous) { previous.remove(); }
    lastUndo = null;
    if (body.decision === "reject" && body.result_id === body.memory_id) {
      lastUndo = undoForm(item, body);
      outcome.after(lastUndo);  // beside the result, so a failed undo keeps its button
    }
    var quote = item.querySelector(".proposed-text");
    if (quote && body.text && body.decision === "edit") { quote.textContent = body.text; quote.classList.add("edited"); }
    showCounts(body);
    tame(item);
  }

  // A dispute's result: which one holds (a link to it) and why, or that both stand.
  function showDisputeResult(item, outcome, body) {
    outcome.textContent = "";
    outcome.classList.add("done");
    var state = document.createElement("span");
    state.className = "badge state-" + body.state;
    state.textContent = body.holds ? "the " + body.holds_side + " holds" : "both stand";
    outcome.appendChild(state);
    outcome.appendChild(document.createTextNode(" " + body.message + " "));
    if (body.result_url) {
      var link = document.createElement("a");
      link.href = body.result_url;
      link.className = "result-link";
      link.textContent = "Open #" + body.holds;
      outcome.appendChild(link);
    }
    if (body.reason) {
      var why = document.createElement("span");
      why.className = "decision-reason";
      why.textContent = " Reason: " + body.reason;
      outcome.appendChild(why);
    }
    showCounts(body);
    tame(item);
  }

  // The queue's heading (what awaits you, in words), the disputes' count and the menu's badge.
  function showCounts(body) {
    var heading = document.getElementById("queue-count");
    if (heading && body.heading) { heading.textContent = body.heading; }
    var disputes = document.getElementById("disputes-count");
    if (disputes && typeof body.disputes_waiting === "number") { disputes.textContent = "(" + body.disputes_waiting + ")"; }
    var badge = document.getElementById("nav-awaiting");
    if (badge && typeof body.badge === "number") {
      if (body.badge > 0) { badge.querySelector("[data-n]").textContent = body.badge; } else { badge.remove(); }
    }
  }

  // Undo a reject: the service writes a new proposal derived from the rejected one (a status never goes
  // back), so the item then links to that proposal. Reached with u, or a click; not a Tab stop of its own.
  var lastUndo = null;  // the undo of the reject just made: u reaches it from the next item too
  function undoForm(item, body) {
    var decided = item.querySelector(".decide-reject form");
    var form = document.createElement("form");
    form.method = "post";
    form.action = decided.action;
    form.className = "undo-reject";
    [["csrfmiddlewaretoken", decided.querySelector("[name=csrfmiddlewaretoken]").value],
     ["decision", "repropose"], ["back", decided.querySelector("[name=back]").value],
     ["reason", "Undo of the rejection just made" + (body.reason ? " (" + body.reason + ")" : "")]]
      .forEach(function (pair) {
        var input = document.createElement("input");
        input.type = "hidden"; input.name = pair[0]; input.value = pair[1];
        form.appendChild(input);
      });
    var button = document.createElement("button");
    button.type = "submit";
    button.textContent = "Undo (propose again)";
    form.appendChild(button);
    return form;
  }

  // One Tab stop per item: the item itself; its controls are reached with the shortcuts (e, r, c, x, u) and
  // become Tab stops only while their form is open. Without this file every control is a Tab stop.
  function tame(item) {
    item.tabIndex = 0;
    item.querySelectorAll("a, button, input, select, textarea, summary").forEach(function (el) {
      var inOpenForm = el.closest("details[open]") && el.tagName !== "SUMMARY";
      el.tabIndex = inOpenForm ? 0 : -1;
    });
  }
  items.forEach(tame);

  lists.forEach(function (list) {
    list.addEventListener("toggle", function (event) {
      var item = card(event.target);
      if (item) { tame(item); }
    }, true);
    list.addEventListener("submit", function (event) {
      var form = event.target;
      if (!form.closest(".decide") || !window.fetch) { return; }
      event.preventDefault();
      submitDecision(form);
    });
    list.addEventListener("focusin", function (event) {
      var item = card(event.target);
      var i = items.indexOf(item);
      if (i >= 0 && i !== current) { select(i, false); }
    });
    list.addEventListener("click", function (event) {
      var link = event.target.closest("[data-load-similar]");
      if (link) { event.preventDefault(); loadSimilar(card(link)); }
    });
    list.addEventListener("keydown", function (event) {
      // Ctrl/Cmd+Enter saves the edit from the text area.
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && event.target.tagName === "TEXTAREA") {
        event.preventDefault();
        event.target.form.requestSubmit();
      }
    });
  });
  // The items in view load their similar memories; the rest wait until they scroll in or are chosen.
  if ("IntersectionObserver" in window) {
    var seen = new IntersectionObserver(function (entries) {
      entries.forEach(function (e) { if (e.isIntersecting) { loadSimilar(e.target); seen.unobserve(e.target); } });
    });
    items.forEach(function (item) { if (item.querySelector(".similar")) { seen.observe(item); } });
  }

  function typing(target) {
    return target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName);
  }

  function toggleHelp() {
    if (!help) { return; }
    if (help.open) { help.close(); } else { help.showModal(); }
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    if (event.key === "Escape") {
      var item = currentItem();
      if (item && item.contains(event.target) && event.target !== item) {
        item.querySelectorAll("details").forEach(function (d) { d.open = false; });
        item.focus();
        event.preventDefault();
      }
      return;
    }
    if (typing(event.target) || (help && help.open)) { return; }
    var item = currentItem();
    switch (event.key) {
      case "j":
        if (current >= 0) { move(1); } else if (items.findIndex(open) >= 0) { select(items.findIndex(open)); }
        break;
      case "k": move(-1); break;
      case "?": toggleHelp(); break;
      case "c":
        if (open(item) && item.querySelector(".decide-confirm")) { item.querySelector(".decide-confirm").requestSubmit(); }
        break;
      case "e": if (open(item)) { openEdit(item); } break;
      case "u":
        var undo = (item && item.querySelector(".undo-reject")) || lastUndo;
        if (undo && undo.isConnected) { undo.requestSubmit(); }
        break;
      case "r": if (open(item)) { openReject(item); } break;
      case "n": if (open(item) && isDispute(item)) { openHolds(item, "newer"); } break;
      case "o": if (open(item) && isDispute(item)) { openHolds(item, "older"); } break;
      case "d": if (open(item) && isDispute(item)) { dismiss(item); } break;
      case "x":
        var box = item && item.querySelector("input[name=memory]");
        if (box && !box.disabled) { box.checked = !box.checked; box.dispatchEvent(new Event("change", { bubbles: true })); }
        break;
      default: return;
    }
    event.preventDefault();
  });

  document.querySelectorAll("[data-help-open]").forEach(function (b) { b.addEventListener("click", toggleHelp); });

  // --- Bulk --------------------------------------------------------------------------------------------
  var counter = document.querySelector("[data-selected-count]");
  document.addEventListener("change", function (event) {
    var el = event.target;
    if (el.dataset && "selectAll" in el.dataset) {
      document.querySelectorAll('input[name="memory"][form="review-form"]:not(:disabled)').forEach(function (box) {
        box.checked = el.checked;
      });
    }
    if (counter && (el.name === "memory" || "selectAll" in (el.dataset || {}))) {
      var n = document.querySelectorAll('input[name="memory"][form="review-form"]:checked').length;
      counter.textContent = n ? "(" + n + " selected)" : "";
      // The bar follows the reader down the page only while something is selected.
      counter.closest("form").classList.toggle("in-use", n > 0);
    }
  });
})();
