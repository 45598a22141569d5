// Unit tests of the /proc readings' pure parts: a stat line's CPU and name, and the CPU per thread name.
import assert from "node:assert/strict";
import { cpuMsByThread, cpuPctByThread, statCpu } from "./proc.ts";

Deno.test("statCpu reads utime + stime (fields 14 and 15) and the name, even one holding spaces and parentheses", () => {
  const line = "4242 (V8 (Default) Worke) S 1 4242 4242 0 -1 4194624 100 0 0 0 250 37 0 0 20 0 9 0 5000 1000 200";
  assert.deepEqual(statCpu(line), { name: "V8 (Default) Worke", ms: 2870 });
});

Deno.test("cpuPctByThread gives each thread name's share of one core over the window, leaving idle threads out", () => {
  const before = new Map([["deno", 1000], ["V8 DefaultWorke", 200], ["tokio-runtime-w", 10]]);
  const after = new Map([["deno", 1150], ["V8 DefaultWorke", 230], ["tokio-runtime-w", 10], ["new", 6]]);
  assert.deepEqual(cpuPctByThread(before, after, 60_000), { deno: 0.25, "V8 DefaultWorke": 0.05, new: 0.01 });
});

Deno.test("cpuMsByThread reads this process's threads, its main thread among them, and is empty for a process that is gone", () => {
  const mine = cpuMsByThread(Deno.pid);
  assert.ok(mine.size >= 1, "at least the main thread");
  const main = Deno.readTextFileSync(`/proc/${Deno.pid}/stat`);
  assert.ok(mine.has(statCpu(main).name), `the main thread's name ${statCpu(main).name} among ${[...mine.keys()]}`);
  assert.equal(cpuMsByThread(2 ** 22 + 1).size, 0);
});
