// What judging one hostile untrusted kubeconfig costs, in-process, without a cluster: the time until it is refused (or
// accepted), the longest the event loop was held meanwhile, the RSS it added, and (where a worker parses) what starting
// the worker added to RSS. Each case runs in a fresh process
// that is killed at --timeout-s. Runs on any tree that has src/kube/mod.ts's parseKubeconfigText: where the tree also
// has KubeconfigParser (the worker), the text is parsed through it, as the providers do.
//
// Usage: deno run -A bench/tools/hostile_kubeconfig_parse.ts [--shapes anchors,alias-bomb,contexts,keys]
//          [--sizes 131072,262144,1048000] [--contexts 5000] [--timeout-s 120] [--root DIR]
// --root runs the tree at DIR (e.g. `git archive HEAD | tar -x -C /tmp/old` for the code before a change).

import { parseArgs } from "node:util";
import { hostileKubeconfig, type HostileShape } from "../../dev/support/hostile_kubeconfig.ts";

interface Outcome {
  ms: number;
  maxLagMs: number;
  rssMb: number;
  /** What starting the worker (and parsing one small text in it) added to RSS, MB; NaN without a worker. */
  workerMb: number;
  /** The longest the event loop was held while the worker started, ms. */
  startLagMs: number;
  outcome: string;
}

/** The child: judges one text and prints an Outcome as JSON. */
async function child(root: string, shape: HostileShape, size: number): Promise<void> {
  const kube = await import(`${root}/src/kube/mod.ts`);
  const text = hostileKubeconfig(shape, { name: "hostile", server: "https://127.0.0.1:6443", token: "t0ken" }, size);
  const parser = kube.KubeconfigParser ? new kube.KubeconfigParser() : undefined;
  const stop = new AbortController();
  const parsing = parser?.start(stop.signal);
  // Warm the parser (worker start, module load) so the figure is the text's own cost; what that costs is its own figure.
  await new Promise((r) => setTimeout(r, 200));
  const rssCold = Deno.memoryUsage().rss;
  let startLagMs = 0;
  let startLast = performance.now();
  const startTicker = setInterval(() => {
    const now = performance.now();
    startLagMs = Math.max(startLagMs, now - startLast - 5);
    startLast = now;
  }, 5);
  if (parser) await parser.parse("/warm", "apiVersion: v1\nkind: Config\n");
  await new Promise((r) => setTimeout(r, 200));
  clearInterval(startTicker);
  const workerMb = parser ? (Deno.memoryUsage().rss - rssCold) / 1048576 : NaN;
  let maxLagMs = 0;
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    maxLagMs = Math.max(maxLagMs, now - last - 5);
    last = now;
  }, 5);
  await new Promise((r) => setTimeout(r, 20));
  const rss0 = Deno.memoryUsage().rss;
  const t0 = performance.now();
  let outcome: string;
  try {
    const doc = await kube.parseKubeconfigText(text, {
      source: "secret bench/hostile",
      untrusted: kube.STRICT_CREDENTIAL_POLICY,
      ...(parser ? { parser } : {}),
    });
    outcome = `accepted (${doc.contexts.length} contexts)`;
  } catch (err) {
    outcome = `refused: ${String((err as Error).message).slice(0, 160)}`;
  }
  const ms = performance.now() - t0;
  const rssMb = (Deno.memoryUsage().rss - rss0) / 1048576;
  await new Promise((r) => setTimeout(r, 20));
  clearInterval(ticker);
  stop.abort();
  await parsing;
  console.log(JSON.stringify({ ms, maxLagMs, rssMb, workerMb, startLagMs, outcome } satisfies Outcome));
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      shapes: { type: "string", default: "anchors,alias-bomb,contexts,keys" },
      sizes: { type: "string", default: "131072,262144,1048000" },
      contexts: { type: "string", default: "5000" },
      "timeout-s": { type: "string", default: "120" },
      root: { type: "string", default: new URL("../..", import.meta.url).pathname.replace(/\/$/, "") },
      child: { type: "string" },
    },
  });
  const root = values.root;
  if (values.child) {
    const [shape, size] = values.child.split(":");
    return child(root, shape as HostileShape, Number(size));
  }
  const timeoutMs = Number(values["timeout-s"]) * 1000;
  console.log(`tree: ${root}`);
  console.log(
    "| shape | size | judged in, ms | event loop held, ms | RSS added, MB | worker started: MB, loop held ms | outcome |\n" +
      "|---|---:|---:|---:|---:|---:|---|",
  );
  for (const shape of values.shapes.split(",") as HostileShape[]) {
    const sizes = shape === "contexts" ? values.contexts.split(",") : values.sizes.split(",");
    for (const size of sizes.map(Number)) {
      const cmd = new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          "--no-check",
          new URL(import.meta.url).pathname,
          `--root=${root}`,
          `--child=${shape}:${size}`,
        ],
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const timer = setTimeout(() => cmd.kill("SIGKILL"), timeoutMs);
      const out = await cmd.output();
      clearTimeout(timer);
      const label = shape === "contexts" ? `${size} contexts` : `${Math.round(size / 1024)} KiB`;
      if (!out.success) {
        const why = out.signal === "SIGKILL" ? `not judged within ${timeoutMs / 1000} s (killed)` : "child failed";
        console.log(`| ${shape} | ${label} | > ${timeoutMs} | > ${timeoutMs} | | | ${why} |`);
        if (out.signal !== "SIGKILL") console.error(new TextDecoder().decode(out.stderr));
        continue;
      }
      const o = JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!) as Outcome;
      console.log(
        `| ${shape} | ${label} | ${o.ms.toFixed(0)} | ${o.maxLagMs.toFixed(0)} | ${o.rssMb.toFixed(1)} | ` +
          `${Number.isNaN(o.workerMb ?? NaN) ? "-" : `${o.workerMb.toFixed(1)}, ${o.startLagMs.toFixed(0)}`} | ` +
          `${o.outcome} |`,
      );
    }
  }
}

await main();
