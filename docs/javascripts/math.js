// Renders the formulas of a page with the KaTeX shipped in javascripts/katex/ (no network).
//
// pymdownx.arithmatex (generic mode) writes inline math as <span class="arithmatex">\(...\)</span>
// and display math as <div class="arithmatex">\[...\]</div>. Each such element is rendered in
// place. A formula KaTeX cannot parse is left as it was and reported on the console as an error,
// which the browser test of the site (tests/test_site_browser.py) turns into a failure.
// material's instant loading swaps page bodies without reloading: document$ emits on every page.
(function () {
  "use strict";

  function render(root) {
    root.querySelectorAll(".arithmatex").forEach(function (element) {
      if (element.dataset.rendered === "true") {
        return;
      }
      const source = element.textContent.trim();
      const display = source.startsWith("\\[");
      const tex = source.replace(/^\\[([]/, "").replace(/\\[)\]]$/, "");
      try {
        katex.render(tex, element, { displayMode: display, throwOnError: true });
        element.dataset.rendered = "true";
      } catch (error) {
        element.textContent = source; // KaTeX may have emptied it: show the TeX as it was
        console.error("KaTeX could not render " + JSON.stringify(source) + ": " + error.message);
      }
    });
  }

  if (typeof document$ !== "undefined") {
    document$.subscribe(function () {
      render(document.body);
    });
  } else {
    document.addEventListener("DOMContentLoaded", function () {
      render(document.body);
    });
  }
})();
