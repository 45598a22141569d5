// --help's sections and the did-you-mean drawn from it (that it documents exactly the parser's flags: flags_test.ts).

import assert from "node:assert/strict";
import { didYouMean, helpText } from "./flags_help.ts";

Deno.test("helpText() has each flag group's section, in order, and the exit codes last", () => {
  const help = helpText();
  const sections = [
    "Clusters:",
    "Leader election (",
    "Sharding (",
    "Health:",
    "Protected metrics and status (",
    "Logs and events:",
    "Limits (all optional):",
    "Exit codes:",
  ].map((s) => help.indexOf(`\n${s}`));
  assert.ok(sections.every((i) => i > 0), `every section present: ${sections}`);
  assert.deepEqual([...sections].sort((a, b) => a - b), sections, "in order");
});

Deno.test("didYouMean() names the documented flag closest to a misspelling, and nothing for one far from all", () => {
  assert.equal(didYouMean("--cluster"), "--clusters");
  assert.equal(didYouMean("--livenes=x"), "--liveness");
  assert.equal(didYouMean("--kubeconfg"), "--kubeconfig");
  assert.equal(didYouMean("--standalon"), "--standalone");
  assert.equal(didYouMean("--event-levle"), "--event-level");
  assert.equal(didYouMean("--zzzzzzzzzz"), undefined);
});
