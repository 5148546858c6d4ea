// a2a-recorder report: optional comforts. Opening an exchange works without this script
// (each row links to #x<number>, CSS :target shows it); here: highlight, keys, filter.
(function () {
  "use strict";
  var rows = Array.prototype.slice.call(document.querySelectorAll(".row"));
  var filter = document.getElementById("filter");
  var troubled = document.getElementById("troubled");
  var shown = document.getElementById("shown");
  var selected = null;

  function openNumber() {
    var match = /^#x(\d+)$/.exec(window.location.hash);
    return match ? match[1] : null;
  }

  function highlight() {
    if (selected) { selected.classList.remove("selected"); }
    var number = openNumber();
    selected = number ? document.getElementById("r" + number) : null;
    if (selected) {
      selected.classList.add("selected");
      reveal(selected);
    }
  }

  // Scroll the page up or down (never sideways) until the row is below the sticky head.
  function reveal(row) {
    var box = row.getBoundingClientRect();
    var head = document.querySelector(".sticky").getBoundingClientRect().bottom;
    if (box.top < head) { window.scrollBy(0, box.top - head); }
    else if (box.bottom > window.innerHeight) { window.scrollBy(0, box.bottom - window.innerHeight); }
  }

  function close() {
    var y = window.scrollY;
    window.location.hash = "";
    history.replaceState(null, "", window.location.pathname + window.location.search);
    window.scrollTo(0, y);
    highlight();
  }

  function step(by) {
    var visible = rows.filter(function (row) { return !row.hidden; });
    if (!visible.length) { return; }
    var at = visible.indexOf(selected);
    var next = at < 0 ? (by > 0 ? 0 : visible.length - 1) : at + by;
    if (next >= 0 && next < visible.length) {
      window.location.hash = "#x" + visible[next].dataset.exchange;
    }
  }

  function applyFilter() {
    var words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
    var count = 0;
    rows.forEach(function (row) {
      var text = row.dataset.search;
      var keep = words.every(function (word) { return text.indexOf(word) >= 0; }) &&
        (!troubled.checked || row.classList.contains("tone-error") ||
         row.classList.contains("tone-warn"));
      row.hidden = !keep;
      if (keep) { count += 1; }
    });
    shown.textContent = count === rows.length ? "" : count + " of " + rows.length + " shown";
  }

  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("a.close");
    if (link) { event.preventDefault(); close(); }
  });
  document.addEventListener("keydown", function (event) {
    if (event.target === filter || event.altKey || event.ctrlKey || event.metaKey) { return; }
    if (event.key === "Escape") { close(); }
    else if (event.key === "j" || event.key === "ArrowDown") { event.preventDefault(); step(1); }
    else if (event.key === "k" || event.key === "ArrowUp") { event.preventDefault(); step(-1); }
  });
  filter.addEventListener("input", applyFilter);
  troubled.addEventListener("change", applyFilter);
  window.addEventListener("hashchange", highlight);
  highlight();
}());
