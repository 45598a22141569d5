// Unit tests of the status page's promises that hold without a browser: self-contained, text-only DOM writes, a CSP
// that allows only the page and same-origin fetch. tests/production/status_page_test.ts renders it in Chromium.
import assert from "node:assert/strict";
import { STATUS_PAGE_HEADERS, STATUS_PAGE_HTML } from "./status_page.ts";

const SCRIPT = /<script>([\s\S]*)<\/script>/.exec(STATUS_PAGE_HTML)?.[1] ?? "";

Deno.test("The status page loads no external asset: no src or href to another URL, no linked script or stylesheet", () => {
  assert.doesNotMatch(STATUS_PAGE_HTML, /<script[^>]*\ssrc=/i);
  assert.doesNotMatch(STATUS_PAGE_HTML, /<link\b/i);
  assert.doesNotMatch(STATUS_PAGE_HTML, /\b(src|href)\s*=\s*["']?(https?:)?\/\//i);
  assert.doesNotMatch(STATUS_PAGE_HTML, /@import|url\(\s*["']?https?:/i);
  // The only absolute URL is the SVG namespace, which is an identifier, not a fetch.
  const urls = STATUS_PAGE_HTML.match(/https?:\/\/[^\s"'<)]+/g) ?? [];
  assert.deepEqual([...new Set(urls)], ["http://www.w3.org/2000/svg"]);
});

Deno.test("The status page's script puts values in the DOM as text only, never parsed as HTML", () => {
  assert.ok(SCRIPT.length > 1000, "the inline script was found");
  for (const sink of ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"]) {
    assert.ok(!SCRIPT.includes(sink), `the script uses ${sink}`);
  }
  assert.match(SCRIPT, /textContent/);
});

Deno.test("The status page's script is valid JavaScript and fetches /status from its own path with the pasted token", () => {
  new Function(SCRIPT); // a syntax error throws here, without running the script
  assert.match(SCRIPT, /fetch\(location\.pathname \+ query\(\),/);
  assert.match(SCRIPT, /q\.set\("continue", cursor\)/, "pages with the document's continue token");
  assert.match(SCRIPT, /headers\.authorization = "Bearer " \+ t/);
  assert.match(SCRIPT, /sessionStorage/);
  assert.doesNotMatch(SCRIPT, /localStorage/, "the token must not outlive the tab");
});

Deno.test("The status page's headers forbid caching, framing, sniffing and any source but itself and same-origin fetch", () => {
  const csp = Object.fromEntries(
    STATUS_PAGE_HEADERS["content-security-policy"].split(";").map((d) => d.trim().split(/\s+/)).map(([k, ...v]) => [
      k,
      v.join(" "),
    ]),
  );
  assert.equal(csp["default-src"], "'none'");
  assert.equal(csp["connect-src"], "'self'");
  assert.equal(csp["frame-ancestors"], "'none'");
  assert.equal(csp["form-action"], "'none'");
  assert.equal(csp["base-uri"], "'none'");
  for (const directive of Object.values(csp)) assert.doesNotMatch(directive, /https?:|\*/);
  assert.equal(STATUS_PAGE_HEADERS["cache-control"], "no-store");
  assert.equal(STATUS_PAGE_HEADERS["x-content-type-options"], "nosniff");
  assert.equal(STATUS_PAGE_HEADERS["referrer-policy"], "no-referrer");
  assert.match(STATUS_PAGE_HEADERS["content-type"], /^text\/html; charset=utf-8$/);
});
