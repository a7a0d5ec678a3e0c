// Click-and-drag booking on the calendar grid. Without this script every
// free cell is a plain "book" link; with it, dragging across the columns of
// one GPU, or of several GPUs of one node, opens the booking form with those
// GPUs and that range. The server sends each column's start (Unix seconds)
// in data-slots, so no calendar arithmetic happens here, and a DST day is
// just a day with more or fewer columns.
(function () {
  "use strict";

  // A refused booking action (409 conflict, 422 bad value) answers with the
  // row and its message: let htmx swap it in instead of dropping it.
  if (window.htmx && htmx.config.responseHandling) {
    htmx.config.responseHandling.unshift({ code: "^(409|422)$", swap: true, error: false });
  }

  function init() {
    var grid = document.querySelector(".cal[data-slots]");
    if (!grid) return;
    var slots = grid.getAttribute("data-slots").split(",").map(Number);
    var cols = slots.length - 1;
    var drag = null;
    var suppressClick = false;

    function colAt(row, x) {
      var label = row.querySelector(".gl");
      var r = row.getBoundingClientRect();
      var left = r.left + label.getBoundingClientRect().width;
      var width = (r.right - left) / cols;
      return Math.max(0, Math.min(cols - 1, Math.floor((x - left) / width)));
    }

    function rowAt(x, y) {
      var el = document.elementFromPoint(x, y);
      return el && el.closest ? el.closest(".gr") : null;
    }

    function clearBoxes() {
      grid.querySelectorAll(".sel-box").forEach(function (b) { b.remove(); });
    }

    // selection returns the chosen rows (in service, one node) and columns.
    function selection() {
      var i0 = Math.min(drag.i0, drag.i1), i1 = Math.max(drag.i0, drag.i1);
      var rows = drag.rows.slice(i0, i1 + 1).filter(function (r) { return !r.classList.contains("r-out"); });
      return { rows: rows, a: Math.min(drag.c0, drag.c1), b: Math.max(drag.c0, drag.c1) };
    }

    function paint() {
      clearBoxes();
      var s = selection();
      s.rows.forEach(function (r) {
        var box = document.createElement("div");
        box.className = "sel-box c" + (s.a + 2) + " e" + (s.b + 3);
        box.setAttribute("data-testid", "sel-box");
        r.appendChild(box);
      });
    }

    function iso(sec) { return new Date(sec * 1000).toISOString().replace(/:\d\d\.\d\d\dZ$/, "Z"); }

    grid.addEventListener("mousedown", function (ev) {
      var cell = ev.target.closest && ev.target.closest("a.f");
      if (!cell || ev.button !== 0) return;
      ev.preventDefault();
      var row = cell.closest(".gr");
      var node = row.getAttribute("data-node");
      var rows = Array.prototype.slice.call(grid.querySelectorAll('.gr[data-node="' + node + '"]'));
      var i = rows.indexOf(row), c = colAt(row, ev.clientX);
      drag = { rows: rows, i0: i, i1: i, c0: c, c1: c };
      suppressClick = true;
      paint();
    });

    document.addEventListener("mousemove", function (ev) {
      if (!drag) return;
      var row = rowAt(ev.clientX, ev.clientY);
      if (row) {
        var i = drag.rows.indexOf(row);
        if (i >= 0) drag.i1 = i; // other nodes' rows are not part of one booking
      }
      drag.c1 = colAt(drag.rows[drag.i0], ev.clientX);
      paint();
    });

    document.addEventListener("mouseup", function () {
      if (!drag) return;
      var s = selection();
      drag = null;
      if (s.rows.length === 0) { clearBoxes(); return; }
      var q = s.rows.map(function (r) { return "gpu=" + r.getAttribute("data-gpu"); });
      q.push("start=" + iso(slots[s.a]), "end=" + iso(slots[s.b + 1]));
      window.location.assign("/bookings/new?" + q.join("&"));
    });

    grid.addEventListener("click", function (ev) {
      if (suppressClick && ev.target.closest && ev.target.closest("a.f")) ev.preventDefault();
      suppressClick = false;
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
