// Tests of ShutdownSignals. The SIGTERM goes to a child process that holds one, never to the test process itself
// (a listener there would outlive the test and change how the test runner's process answers signals).

import assert from "node:assert/strict";
import { Logger } from "../util/mod.ts";
import { ShutdownSignals } from "./shutdown_signals.ts";

const CHILD = `
import { Logger } from ${JSON.stringify(new URL("../util/mod.ts", import.meta.url).href)};
import { ShutdownSignals } from ${JSON.stringify(new URL("./shutdown_signals.ts", import.meta.url).href)};
const shutdown = new ShutdownSignals(new Logger({ level: "info", format: "json", write: (l) => console.log(l) }));
const keepAlive = setInterval(() => {}, 1_000);
shutdown.signal.addEventListener("abort", () => console.log("aborted"));
// The child ends only once both SIGTERMs were handled: a process that ended after the first could be killed by the
// second while it exits (143), which says nothing about ShutdownSignals.
let seen = 0;
Deno.addSignalListener("SIGTERM", () => {
  if (++seen === 2) clearInterval(keepAlive);
});
console.log("listening");
`;

Deno.test("ShutdownSignals aborts its signal on SIGTERM and logs the signal once; a second SIGTERM does nothing", async () => {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", "--ext=ts", CHILD],
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(30_000),
  }).spawn();
  const lines: string[] = [];
  let buffered = "";
  const decoder = new TextDecoder();
  for await (const chunk of child.stdout) {
    buffered += decoder.decode(chunk, { stream: true });
    const parts = buffered.split("\n");
    buffered = parts.pop()!;
    for (const line of parts) {
      lines.push(line);
      // The second SIGTERM once the first was handled (sent at once, the kernel may merge the two into one).
      if (line === "listening" || line === "aborted") child.kill("SIGTERM");
    }
  }
  const status = await child.status;
  const stderr = new TextDecoder().decode(await new Response(child.stderr).arrayBuffer());
  assert.equal(status.code, 0, `a handled SIGTERM lets the process end by itself: ${stderr}`);
  const logged = lines.filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
  assert.deepEqual(logged.map((l) => [l.msg, l.signal]), [["shutting down", "SIGTERM"]], lines.join("\n"));
  assert.ok(lines.includes("aborted"), lines.join("\n"));
});

Deno.test("ShutdownSignals aborts on disposal, without a log line", () => {
  const lines: string[] = [];
  const shutdown = new ShutdownSignals(new Logger({ level: "info", format: "json", write: (l) => lines.push(l) }));
  shutdown[Symbol.dispose]();
  assert.equal(shutdown.signal.aborted, true);
  assert.deepEqual(lines, []);
});
