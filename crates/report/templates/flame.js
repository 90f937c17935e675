// The flame graph's zoom and search: each frame (g.f) carries where it starts and how wide it
// is as shares of the whole (data-x, data-w) and its depth (data-d); its title's first line is
// its full name, as is data-name; data-label is the name drawn (shortened). Nothing is fetched.
(function () {
  "use strict";
  var svg = document.documentElement;
  var inner = +svg.getAttribute("data-inner"), pad = +svg.getAttribute("data-pad");
  var charWidth = +svg.getAttribute("data-font") * +svg.getAttribute("data-char");
  var frames, details, unzoom, matched, searchButton, zoomed = null, query = null;
  function nameOf(g) { return g.querySelector("title").textContent.split("\n")[0]; }
  function place(g, x, w) {
    var rect = g.querySelector("rect"), text = g.querySelector("text");
    rect.setAttribute("x", (pad + x * inner).toFixed(2));
    rect.setAttribute("width", Math.max(0, w * inner).toFixed(2));
    text.setAttribute("x", (pad + x * inner + 3).toFixed(2));
    var chars = Math.floor(w * inner / charWidth), name = g.getAttribute("data-label") || nameOf(g);
    text.textContent = chars < 3 ? "" : name.length <= chars ? name : name.slice(0, chars - 2) + "..";
  }
  function zoom(g) {
    var zx = +g.getAttribute("data-x"), zw = +g.getAttribute("data-w"), zd = +g.getAttribute("data-d");
    var eps = 1e-9;
    zoomed = zd > 0 ? g : null;
    unzoom.classList.toggle("hidden", zoomed === null);
    frames.forEach(function (f) {
      var x = +f.getAttribute("data-x"), w = +f.getAttribute("data-w"), d = +f.getAttribute("data-d");
      if (zw <= 0) { return; }
      if (d >= zd && x >= zx - eps && x + w <= zx + zw + eps) {
        f.classList.remove("hidden"); f.style.opacity = ""; place(f, (x - zx) / zw, w / zw);
      } else if (d < zd && x <= zx + eps && x + w >= zx + zw - eps) {
        f.classList.remove("hidden"); f.style.opacity = "0.5"; place(f, 0, 1);
      } else {
        f.classList.add("hidden");
      }
    });
  }
  function search(term) {
    var re = null;
    if (term) { try { re = new RegExp(term); } catch (e) { re = null; } }
    query = re ? term : null;
    var spans = [];
    frames.forEach(function (f) {
      var rect = f.querySelector("rect");
      if (!rect.hasAttribute("data-fill")) { rect.setAttribute("data-fill", rect.getAttribute("fill")); }
      var hit = re !== null && +f.getAttribute("data-d") > 0 && re.test(nameOf(f));
      rect.setAttribute("fill", hit ? "rgb(230,0,230)" : rect.getAttribute("data-fill"));
      if (hit) { spans.push([+f.getAttribute("data-x"), +f.getAttribute("data-w")]); }
    });
    // The share matched: the union of the matched frames (a match inside a match counts once).
    spans.sort(function (a, b) { return a[0] - b[0]; });
    var sum = 0, end = -1;
    spans.forEach(function (s) {
      var from = Math.max(s[0], end), to = s[0] + s[1];
      if (to > from) { sum += to - from; }
      end = Math.max(end, to);
    });
    matched.textContent = re ? "Matched: " + (100 * sum).toFixed(2) + "%" : "";
    searchButton.textContent = re ? "Reset Search" : "Search";
  }
  window.addEventListener("load", function () {
    frames = Array.prototype.slice.call(document.querySelectorAll("g.f"));
    details = document.getElementById("details");
    unzoom = document.getElementById("unzoom");
    matched = document.getElementById("matched");
    searchButton = document.getElementById("search");
    frames.forEach(function (f) {
      f.addEventListener("click", function () { zoom(f); });
      f.addEventListener("mouseover", function () {
        details.textContent = f.querySelector("title").textContent.replace(/\n/g, "; ");
      });
      f.addEventListener("mouseout", function () { details.textContent = " "; });
    });
    unzoom.addEventListener("click", function () { if (frames.length) { zoom(frames[0]); } });
    searchButton.addEventListener("click", function () {
      if (query !== null) { search(null); return; }
      search(window.prompt("Search for (a regular expression)", ""));
    });
    window.addEventListener("keydown", function (e) {
      if ((e.ctrlKey || e.metaKey) && e.key === "f") {
        e.preventDefault();
        search(window.prompt("Search for (a regular expression)", query || ""));
      } else if (e.key === "Escape") {
        if (frames.length) { zoom(frames[0]); }
      }
    });
  });
})();
