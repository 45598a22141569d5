// Unit tests for the /healthz prober that runs on its own thread.
import assert from "node:assert/strict";
import { HealthProbe } from "./health_probe.ts";

Deno.test("HealthProbe counts probes, keeps a non-200 answer and one slower than its timeout, and measures the outage they and a slow answer make in a row", async () => {
  let calls = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async () => {
    calls++;
    if (calls === 2) return new Response("no", { status: 503 });
    if (calls === 3) await new Promise((r) => setTimeout(r, 1_200));
    if (calls === 4) await new Promise((r) => setTimeout(r, 400));
    return new Response("ok");
  });
  // Margins of hundreds of ms around the thresholds: an ordinary answer on a loaded machine stays far below slowMs.
  const probe = HealthProbe.start(server.addr.port, { everyMs: 10, timeoutMs: 600, slowMs: 300 });
  while (probe.probes < 6) await new Promise((r) => setTimeout(r, 20));
  await probe.stop();
  await server.shutdown();
  assert.ok(probe.probes >= 5);
  assert.equal(probe.failures[0].error, "answered 503");
  assert.match(probe.failures[1].error, /timed out|aborted|timeout/i);
  assert.ok(probe.failures[1].tookMs >= 590, `${probe.failures[1].tookMs}`);
  assert.equal(probe.failures.length, 2);
  // Two failures and a slow answer in a row: from the 503's start past the timeout to the end of the slow answer.
  assert.ok(probe.longestOutageMs >= probe.failures[1].at + probe.failures[1].tookMs - probe.failures[0].at + 300);
  assert.ok(probe.longestOutageMs < 6_000, `${probe.longestOutageMs}`);
  assert.ok(
    probe.unresponsiveMs >= 600 + 300 && probe.unresponsiveMs <= probe.longestOutageMs,
    `${probe.unresponsiveMs}`,
  );
});
