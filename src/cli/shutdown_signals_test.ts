// Tests of ShutdownSignals with a real SIGTERM sent to this process (the listener keeps it from ending the process).

import assert from "node:assert/strict";
import { Logger } from "../util/mod.ts";
import { ShutdownSignals } from "./shutdown_signals.ts";

function recordingLogger(lines: string[]): Logger {
  return new Logger({ level: "info", format: "json", write: (line: string) => lines.push(line) });
}

Deno.test("ShutdownSignals aborts its signal on SIGTERM and logs the signal once", async () => {
  const lines: string[] = [];
  using shutdown = new ShutdownSignals(recordingLogger(lines));
  assert.equal(shutdown.signal.aborted, false);
  // A signal listener does not keep the event loop alive: the timer does, and bounds the wait.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const aborted = new Promise<boolean>((resolve) => {
    shutdown.signal.addEventListener("abort", () => resolve(true));
    timer = setTimeout(() => resolve(false), 5_000);
  });
  Deno.kill(Deno.pid, "SIGTERM");
  assert.equal(await aborted, true, "SIGTERM aborted the signal");
  clearTimeout(timer);
  Deno.kill(Deno.pid, "SIGTERM");
  await new Promise((resolve) => setTimeout(resolve, 50));
  const logged = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === "shutting down");
  assert.equal(logged.length, 1, lines.join("\n"));
  assert.equal(logged[0].signal, "SIGTERM");
});

Deno.test("ShutdownSignals aborts on disposal, without a log line", () => {
  const lines: string[] = [];
  const shutdown = new ShutdownSignals(recordingLogger(lines));
  shutdown[Symbol.dispose]();
  assert.equal(shutdown.signal.aborted, true);
  assert.deepEqual(lines, []);
});
