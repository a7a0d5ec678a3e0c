// Click-and-drag booking on the calendar grid. Without this script every
// free cell of the day view is a plain "book" link; with it, dragging across
// the columns of one GPU, or of several GPUs of one node, opens the booking
// form with those GPUs and that range. The server sends each column's start
// (Unix seconds) in data-slots, so no calendar arithmetic happens here, and
// a DST day is just a day with more or fewer columns.
//
// A drag never crosses a taken cell: along the row it started on it stops
// at the first booking (or the past); a GPU added by dragging down whose
// range is taken turns the selection red, and releasing it books nothing.
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
    var msg = document.querySelector("[data-testid=cal-msg]");
    var drag = null;
    var suppressClick = false;
    // Others' blocks carry their full text in a title; the overview leaves
    // out their tabindex to stay small, so that keyboards reach them here.
    grid.querySelectorAll(".gr > b:not([tabindex])").forEach(function (b) { b.tabIndex = 0; });

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

    // taken marks the columns of a row that bookings, the past or an
    // out-of-service run cover (from their grid-line classes).
    function taken(row) {
      if (row._taken) return row._taken;
      var t = new Array(cols).fill(false);
      row.querySelectorAll(":scope > b, :scope > a:not(.f):not(.t), :scope > .p, :scope > .x").forEach(function (el) {
        var c = /(?:^| )c(\d+)(?: |$)/.exec(el.className), e = /(?:^| )e(\d+)(?: |$)/.exec(el.className);
        if (!c || !e) return;
        for (var i = +c[1] - 2; i < +e[1] - 2 && i < cols; i++) t[i] = true;
      });
      row._taken = t;
      return t;
    }

    // clamp stops the drag along its first row at the nearest taken cell.
    function clamp(row, c0, c1) {
      var t = taken(row), step = c1 >= c0 ? 1 : -1, c = c0;
      while (c !== c1 && !t[c + step]) c += step;
      return c;
    }

    function clearBoxes() {
      grid.querySelectorAll(".sel-box").forEach(function (b) { b.remove(); });
    }

    // selection returns the chosen rows (in service, one node), the columns,
    // and whether any chosen row is taken somewhere in that range.
    function selection() {
      var i0 = Math.min(drag.i0, drag.i1), i1 = Math.max(drag.i0, drag.i1);
      var rows = drag.rows.slice(i0, i1 + 1).filter(function (r) { return !r.classList.contains("r-out"); });
      var a = Math.min(drag.c0, drag.c1), b = Math.max(drag.c0, drag.c1), bad = rows.length === 0;
      rows.forEach(function (r) {
        var t = taken(r);
        for (var i = a; i <= b; i++) if (t[i]) bad = true;
      });
      return { rows: rows, a: a, b: b, bad: bad };
    }

    function paint() {
      clearBoxes();
      var s = selection();
      s.rows.forEach(function (r) {
        var box = document.createElement("div");
        box.className = "sel-box c" + (s.a + 2) + " e" + (s.b + 3) + (s.bad ? " bad" : "");
        box.setAttribute("data-testid", "sel-box");
        r.appendChild(box);
      });
      if (msg) msg.hidden = !s.bad;
    }

    function iso(sec) { return new Date(sec * 1000).toISOString().replace(/:\d\d\.\d\d\dZ$/, "Z"); }

    grid.addEventListener("mousedown", function (ev) {
      var row = ev.target.closest && ev.target.closest(".gr");
      if (!row || ev.button !== 0 || row.classList.contains("r-out") || ev.target.closest(".gl")) return;
      var c = colAt(row, ev.clientX);
      if (taken(row)[c]) return; // a booking's own link or title
      ev.preventDefault();
      var node = row.getAttribute("data-node");
      var rows = Array.prototype.slice.call(grid.querySelectorAll('.gr[data-node="' + node + '"]'));
      var i = rows.indexOf(row);
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
      var first = drag.rows[drag.i0];
      drag.c1 = clamp(first, drag.c0, colAt(first, ev.clientX));
      paint();
    });

    document.addEventListener("mouseup", function () {
      if (!drag) return;
      var s = selection();
      drag = null;
      if (s.bad) { clearBoxes(); return; } // the message stays until the next drag
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
