// Unit tests of content negotiation for /status.
import assert from "node:assert/strict";
import { prefersHtml } from "./status_routes.ts";

Deno.test("prefersHtml() picks the page for browsers' navigations and JSON for curl, fetch and Prometheus", () => {
  const chrome = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8";
  assert.equal(prefersHtml(chrome), true);
  assert.equal(prefersHtml("text/html"), true);
  for (const other of [null, "", "*/*", "application/json", "application/json, text/html;q=0.5", "text/html;q=0"]) {
    assert.equal(prefersHtml(other), false, `Accept: ${other}`);
  }
});
