// gpubook's own script. Pages work without it; it only enhances them.
// htmx configuration lives here (not inline) because the CSP forbids inline script.
document.addEventListener("DOMContentLoaded", function () {
  if (window.htmx) {
    htmx.config.includeIndicatorStyles = false; // no inline <style>: CSP
    htmx.config.allowEval = false;
  }
});

// Offer the browser's time zone to a user who has none set: the form is
// rendered hidden with an empty zone; it shows only when the browser's
// zone differs from the one the pages use now.
document.addEventListener("DOMContentLoaded", function () {
  var form = document.querySelector("[data-zone-offer]");
  if (!form || !window.Intl) return;
  var zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (!zone || zone === form.dataset.current) return;
  form.querySelector('input[name="time_zone"]').value = zone;
  form.querySelector("[data-zone-name]").textContent = zone;
  form.hidden = false;
});
