// Sorting by a column heading, and the choice of context; no network, no libraries.
(function () {
  function value(cell, numeric) {
    if (!cell) return numeric ? -Infinity : "";
    if (numeric) {
      var v = cell.getAttribute("data-value");
      return v === null || v === "" ? -Infinity : parseFloat(v);
    }
    return cell.textContent;
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    table.querySelectorAll("thead th").forEach(function (th, index) {
      th.addEventListener("click", function () {
        var numeric = th.getAttribute("data-sort") === "num";
        var down = th.getAttribute("data-dir") !== "down";
        table.querySelectorAll("thead th").forEach(function (o) { o.removeAttribute("data-dir"); });
        th.setAttribute("data-dir", down ? "down" : "up");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = value(a.cells[index], numeric), y = value(b.cells[index], numeric);
          var c = numeric ? (x < y ? -1 : x > y ? 1 : 0) : String(x).localeCompare(String(y));
          return down ? -c : c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  // The filter box: the top functions' rows whose name holds the text typed.
  var filter = document.getElementById("filter");
  if (filter) {
    filter.addEventListener("input", function () {
      var text = filter.value.toLowerCase();
      document.querySelectorAll(".top-table tbody tr").forEach(function (row) {
        var name = (row.getAttribute("data-name") || "").toLowerCase();
        row.hidden = text !== "" && name.indexOf(text) < 0;
      });
    });
  }
  var select = document.getElementById("context-select");
  if (select) {
    select.addEventListener("change", function () {
      document.querySelectorAll(".top-table").forEach(function (div) {
        div.hidden = div.id !== select.value;
      });
    });
  }
})();
