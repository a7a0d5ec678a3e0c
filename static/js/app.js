// gpubook's own script. Pages work without it; it only enhances them.
// htmx configuration lives here (not inline) because the CSP forbids inline script.
document.addEventListener("DOMContentLoaded", function () {
  if (window.htmx) {
    htmx.config.includeIndicatorStyles = false; // no inline <style>: CSP
    htmx.config.allowEval = false;
  }
});
