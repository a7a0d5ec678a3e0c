// gpubook's own script. Pages work without it; it only enhances them.
// htmx configuration lives here (not inline) because the CSP forbids inline script.
document.addEventListener("DOMContentLoaded", function () {
  if (window.htmx) {
    htmx.config.includeIndicatorStyles = false; // no inline <style>: CSP
    htmx.config.allowEval = false;
  }
});

// The browser's time zone, sent on every request in a cookie (the sign-in
// page's included) so that the pages of a user who never chose a zone are
// in it from the first one. Only IANA names' characters are sent.
var browserZone = (function () {
  if (!window.Intl) return "";
  var zone = Intl.DateTimeFormat().resolvedOptions().timeZone || "";
  if (!/^[A-Za-z0-9\/_+-]{1,64}$/.test(zone)) return "";
  document.cookie = "gpubook_tz=" + zone + "; path=/; max-age=31536000; SameSite=Lax" +
    (location.protocol === "https:" ? "; Secure" : "");
  return zone;
})();

// sameZone tells whether two zones read the same over the next two years
// ("UTC" and "Etc/UTC" do), by their UTC offsets on every day.
function sameZone(a, b) {
  if (a === b) return true;
  try {
    var fa = new Intl.DateTimeFormat("en-US", { timeZone: a, timeZoneName: "longOffset" });
    var fb = new Intl.DateTimeFormat("en-US", { timeZone: b, timeZoneName: "longOffset" });
    for (var d = 0, t = Date.now(); d < 730; d++, t += 86400000) {
      if (fa.format(t) !== fb.format(t)) return false;
    }
    return true;
  } catch (e) {
    return false;
  }
}

// A user who never chose a zone: a page rendered before the server saw the
// browser's zone (the cookie was missing or old) is loaded once more, in
// it. Where cookies do not reach the server the form below offers the
// zone with one click, unless it reads as the pages' zone already.
document.addEventListener("DOMContentLoaded", function () {
  var form = document.querySelector("[data-zone-offer]");
  var zone = browserZone;
  if (!form || !zone || zone === form.dataset.seen) return;
  var key = "gpubook_tz_reloaded";
  try {
    if (navigator.cookieEnabled && sessionStorage.getItem(key) !== zone) {
      sessionStorage.setItem(key, zone);
      location.replace(location.href);
      return;
    }
  } catch (e) {
    // no session storage: offer instead
  }
  if (sameZone(zone, form.dataset.current)) return;
  form.querySelector('input[name="time_zone"]').value = zone;
  form.querySelector("[data-zone-name]").textContent = zone;
  form.hidden = false;
});
