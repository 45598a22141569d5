// What one open TLS connection to an API server costs a Deno process in resident memory: the price of each reconcile
// the hub runs at once (HTTP/1.1 carries one request per connection, so `--concurrency` bounds the connections) and of
// each watch. Opens N connections to the local prod apiserver, each after one answered request (so the TLS session and
// its buffers are in use, as the hub's are), and reports the RSS they added; in a fresh process per count and
// repetition. Median of the repetitions.
//
// Usage: deno run -A bench/tools/connection_rss.ts [--counts 16,48,96] [--reps 3]
// Assumptions: the local clusters are up (`deno task clusters:up`).

import { parseArgs } from "node:util";
import { apiserverCa, apiserverUrl, requireClusters } from "../../dev/support/local_clusters.ts";
import { round, summarize } from "../lib/stats.ts";

/** The child: opens `n` TLS connections to `url`, one request answered on each, and prints the RSS they added (MB). */
async function child(url: string, ca: string, n: number): Promise<void> {
  const { hostname, port } = new URL(url);
  const request = new TextEncoder().encode(`GET /version HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`);
  const buf = new Uint8Array(64 * 1024);
  const conns: Deno.TlsConn[] = [];
  const open = async () => {
    const c = await Deno.connectTls({ hostname, port: Number(port), caCerts: [ca] });
    await c.write(request);
    if ((await c.read(buf)) === null) throw new Error(`${url} closed the connection before answering GET /version`);
    conns.push(c);
  };
  const settle = () => new Promise((r) => setTimeout(r, 300));
  await open(); // the first connection also loads the TLS machinery: not counted
  await settle();
  const before = Deno.memoryUsage().rss;
  for (let i = 0; i < n; i++) await open();
  await settle();
  console.log(JSON.stringify({ mb: (Deno.memoryUsage().rss - before) / 1048576 }));
  for (const c of conns) c.close();
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      counts: { type: "string", default: "16,48,96" },
      reps: { type: "string", default: "3" },
      child: { type: "string" },
    },
  });
  if (values.child) return child(apiserverUrl("prod"), apiserverCa("prod"), Number(values.child));
  requireClusters();
  const counts = values.counts.split(",").map(Number);
  const reps = Number(values.reps);
  if (counts.some((n) => !(n > 0)) || !(reps > 0)) throw new Error("--counts takes positive numbers, --reps one");
  console.log("| connections | RSS added, MB (median, min–max) | KB per connection |\n|---:|---:|---:|");
  for (const n of counts) {
    const mbs: number[] = [];
    for (let r = 0; r < reps; r++) {
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "--allow-all", new URL(import.meta.url).pathname, `--child=${n}`],
        stderr: "inherit",
      }).output();
      if (!out.success) throw new Error(`the child with ${n} connections failed`);
      mbs.push(JSON.parse(new TextDecoder().decode(out.stdout)).mb);
    }
    const s = summarize(mbs);
    console.log(
      `| ${n} | ${round(s.median, 1)} (${round(s.min, 1)}–${round(s.max, 1)}) | ${round(s.median * 1024 / n, 0)} |`,
    );
  }
}

await main();
