// What bench/tools/idle_watches.ts and cluster_watches_rss.ts measure alike: this process's RSS before and after it
// opened N idle watches, 16 at a time.

import { memoryMb } from "./proc.ts";

/** This process's resident set, MiB. */
const rssMib = () => memoryMb(Deno.pid).rss;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Opens watch 0, waits 2 s and reads RSS (`before`), opens watches 1..n-1 with 16 at a time (`openSeconds`), waits
 * `settleMs`, then reads RSS five times 200 ms apart and keeps the median (`after`).
 */
export async function openAndMeasure(
  open: (i: number) => Promise<void>,
  n: number,
  settleMs: number,
): Promise<{ before: number; after: number; openSeconds: number }> {
  await open(0);
  await sleep(2000);
  const before = rssMib();
  const t0 = performance.now();
  let next = 1;
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (next < n) await open(next++);
  }));
  const openSeconds = (performance.now() - t0) / 1000;
  await sleep(settleMs);
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) {
    samples.push(rssMib());
    await sleep(200);
  }
  return { before, after: samples.sort((a, b) => a - b)[2], openSeconds };
}
