// Unit tests of LogBurst on virtual time: full lines while a window has room, then one summary per window.
import assert from "node:assert/strict";
import { VirtualClock } from "./clock.ts";
import { LogBurst } from "./log_burst.ts";
import { Logger } from "./logger.ts";

function burst(full = 2) {
  const clock = new VirtualClock();
  const lines: Record<string, unknown>[] = [];
  const logger = new Logger({ level: "info", format: "json", write: (l) => lines.push(JSON.parse(l)) });
  const b = new LogBurst({
    logger,
    level: "warn",
    msg: "cluster not usable",
    clock,
    windowMs: 10_000,
    full,
    sample: 3,
  });
  return { clock, lines, b };
}

Deno.test("LogBurst writes the first lines of a window in full and the rest as one summary line when it ends", async () => {
  const { clock, lines, b } = burst();
  for (let i = 0; i < 10_000; i++) b.note(`c${i}`, { cluster: `c${i}`, provider: "secret" });
  assert.deepEqual(lines.map((l) => l.cluster), ["c0", "c1"], "two in full, nothing else yet");
  await clock.advance(10_000);
  assert.equal(lines.length, 3);
  const summary = lines[2];
  assert.equal(summary.msg, "cluster not usable");
  assert.equal(summary.level, "warn");
  assert.equal(summary.suppressed, 9_998);
  assert.deepEqual(summary.names, ["c2", "c3", "c4"]);
  assert.equal(summary.provider, "secret");
  assert.equal(summary.windowSeconds, 10);
  assert.equal(b.total, 10_000);
});

Deno.test("LogBurst starts a fresh window after a quiet one, and writes no summary when nothing was held back", async () => {
  const { clock, lines, b } = burst();
  b.note("a", { cluster: "a" });
  await clock.advance(10_000);
  assert.equal(lines.length, 1);
  b.note("b", { cluster: "b" });
  b.note("c", { cluster: "c" });
  b.note("d", { cluster: "d" });
  assert.deepEqual(lines.map((l) => l.cluster), ["a", "b", "c"]);
  await clock.advance(10_000);
  assert.deepEqual(lines.map((l) => l.cluster), ["a", "b", "c", "d"]);
  assert.equal(lines[3].suppressed, 1);
  assert.equal(clock.pending, 0, "no timer once the window ended");
});

Deno.test("LogBurst.flush() writes the pending summary at once and cancels its timer", () => {
  const { clock, lines, b } = burst(0);
  b.note("a");
  b.note("b");
  assert.equal(lines.length, 0);
  b.flush();
  assert.equal(lines.length, 1);
  assert.deepEqual(lines[0].names, ["a", "b"]);
  assert.equal(clock.pending, 0);
});
