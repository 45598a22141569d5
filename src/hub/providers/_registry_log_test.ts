// Unit tests of the registry's per-name lines on virtual time: each message rate-limited on its own.
import assert from "node:assert/strict";
import { Logger, VirtualClock } from "../../util/mod.ts";
import { RegistryLog } from "./_registry_log.ts";

Deno.test("RegistryLog writes each message's first 5 lines per 10 s in full and the rest as one summary, each message on its own", async () => {
  const clock = new VirtualClock();
  const lines: Record<string, unknown>[] = [];
  const log = new RegistryLog(
    new Logger({ level: "info", format: "json", write: (l) => lines.push(JSON.parse(l)) }),
    clock,
  );
  for (let i = 0; i < 100; i++) log.note("registered", `c${i}`, { cluster: `c${i}`, provider: "secret" });
  log.note("notUsable", "bad", { cluster: "bad", error: "no context" });
  assert.deepEqual(lines.map((l) => l.msg), [
    ...Array(5).fill("cluster registered"),
    "cluster not usable",
  ]);
  assert.equal(lines[5].level, "warn");
  await clock.advance(10_000);
  assert.equal(lines.length, 7);
  assert.equal(lines[6].msg, "cluster registered");
  assert.equal(lines[6].suppressed, 95);
});

Deno.test("RegistryLog.flush() writes what is pending at once", () => {
  const clock = new VirtualClock();
  const lines: string[] = [];
  const log = new RegistryLog(new Logger({ level: "info", format: "json", write: (l) => lines.push(l) }), clock);
  for (let i = 0; i < 6; i++) log.note("unregistered", `c${i}`, { cluster: `c${i}` });
  assert.equal(lines.length, 5);
  log.flush();
  assert.equal(lines.length, 6);
  assert.equal(clock.pending, 0);
});
