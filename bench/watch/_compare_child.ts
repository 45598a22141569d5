// One watch_compare child: a list+watch client (ours or client-node's) in its own process, reporting JSON lines;
// and how the parent spawns one (bench/watch/watch_compare.ts --child KIND ...) and reads its reports.

import { KubeClient, loadContexts } from "../../src/kube/mod.ts";
import type { ClusterAccess } from "../../src/kube/mod.ts";
import { Store, Watcher } from "../../src/runtime/mod.ts";
import { Logger } from "../../src/util/mod.ts";
import { cpuMs, memoryMb } from "../lib/proc.ts";

/** The repository root (with a trailing slash). */
export const ROOT = new URL("../..", import.meta.url).pathname;
/** The Uuid resource both clients watch. */
export const GROUP = "demo.operator", VERSION = "v1", PLURAL = "uuid";
/** The Uuid collection path of namespace `ns`. */
export const pathOf = (ns: string) => `/apis/${GROUP}/${VERSION}/namespaces/${ns}/${PLURAL}`;

/** Which client a child runs. */
export type ClientKind = "ours" | "client-node";
export const KINDS: ClientKind[] = ["ours", "client-node"];

/** One line a child prints: a phase mark or an observation. */
export interface Report {
  t: number;
  kind: string;
  name?: string;
  cpuMs?: number;
  rssMb?: number;
  detail?: string;
  count?: number;
}

function emit(r: Omit<Report, "t">, t0: number): void {
  console.log(JSON.stringify({ t: Math.round(performance.now() - t0), ...r }));
}

// ------------------------------------------------------------------------------------------------
// Children: one client each

/** What a child is told on its command line. */
export interface ChildArgs {
  kind: ClientKind;
  server?: string;
  context?: string;
  ns: string;
  expect: number;
  idleTimeoutMs: number;
  windowMs: number;
}

/** A ClusterAccess for the fake apiserver: plain HTTP, no credentials. */
function fakeAccess(server: string): ClusterAccess {
  return {
    name: "fake",
    server,
    source: "fake",
    auth: () => Promise.resolve({ headers: {}, insecureSkipTlsVerify: false }),
  };
}

/** Runs one client as told, printing its reports on stdout, and exits the process when done. */
export async function runChild(a: ChildArgs): Promise<void> {
  const t0 = performance.now();
  const out = (r: Omit<Report, "t">) => emit(r, t0);
  let updates = 0;
  const mark = { listed: false, watched: false };
  const onUpdate = () => {
    updates++;
    if (a.expect > 0 && !mark.watched && updates >= a.expect) {
      mark.watched = true;
      out({ kind: "watched", count: updates, cpuMs: cpuMs(Deno.pid), rssMb: memoryMb(Deno.pid).rss });
      Deno.exit(0); // the CPU comparison is over for this client
    }
  };
  if (a.kind === "ours") {
    let access: ClusterAccess;
    if (a.server) access = fakeAccess(a.server);
    else {
      const catalog = await loadContexts({ files: [`${ROOT}clusters/local.yaml`], cwd: ROOT });
      [access] = catalog.select([a.context!]);
    }
    const client = new KubeClient(access, { userAgent: "watch-compare" });
    const store = new Store();
    const logger = new Logger({
      level: "info",
      write: (line) => {
        const j = JSON.parse(line);
        out({ kind: "log", detail: `${j.msg}${j.error ? `: ${j.error}` : ""}${j.phase ? ` (${j.phase})` : ""}` });
      },
    });
    const stop = new AbortController();
    const watcher = new Watcher({
      path: pathOf(a.ns),
      namespace: a.ns,
      client,
      store,
      logger,
      idleTimeoutMs: a.idleTimeoutMs,
      onChange: (keys) => {
        for (const key of keys) {
          const name = key.slice(key.indexOf("/") + 1);
          const present = store.get(key) !== undefined;
          if (!mark.listed) continue;
          if (!present) out({ kind: "delete", name });
          else if (name === "canary") out({ kind: "add", name });
          onUpdate();
        }
      },
    });
    out({ kind: "start", cpuMs: cpuMs(Deno.pid) });
    const running = watcher.start(stop.signal);
    while (!watcher.snapshot().synced) await new Promise((r) => setTimeout(r, 5));
    mark.listed = true;
    out({ kind: "listed", count: store.size, cpuMs: cpuMs(Deno.pid), rssMb: memoryMb(Deno.pid).rss });
    await new Promise((r) => setTimeout(r, a.windowMs));
    stop.abort();
    await running;
    client.close();
  } else {
    const { KubeConfig, Watch, ListWatch, CustomObjectsApi } = await import("@kubernetes/client-node");
    const kc = new KubeConfig();
    if (a.server) {
      kc.loadFromOptions({
        clusters: [{ name: "fake", server: a.server, skipTLSVerify: true }],
        users: [{ name: "nobody" }],
        contexts: [{ name: "fake", cluster: "fake", user: "nobody" }],
        currentContext: "fake",
      });
    } else {
      kc.loadFromFile(`${ROOT}clusters/local.yaml`);
      kc.setCurrentContext(a.context!);
    }
    const api = kc.makeApiClient(CustomObjectsApi);
    const listFn = () =>
      api.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: a.ns, plural: PLURAL });
    const lw = new ListWatch(pathOf(a.ns), new Watch(kc), listFn, false);
    lw.on("add", (o: { metadata?: { name?: string } }) => {
      if (!mark.listed) return;
      if (o.metadata?.name === "canary") out({ kind: "add", name: "canary" });
      onUpdate();
    });
    lw.on("update", () => mark.listed && onUpdate());
    lw.on("delete", (o: { metadata?: { name?: string } }) => {
      if (!mark.listed) return;
      out({ kind: "delete", name: o.metadata?.name });
      onUpdate();
    });
    lw.on(
      "error",
      (err: unknown) => out({ kind: "error", detail: String((err as Error)?.message ?? err).slice(0, 160) }),
    );
    lw.on("connect", () => out({ kind: "connect" }));
    out({ kind: "start", cpuMs: cpuMs(Deno.pid) });
    await lw.start();
    mark.listed = true;
    out({ kind: "listed", count: lw.list().length, cpuMs: cpuMs(Deno.pid), rssMb: memoryMb(Deno.pid).rss });
    await new Promise((r) => setTimeout(r, a.windowMs));
    await lw.stop();
  }
  out({ kind: "end", count: updates, cpuMs: cpuMs(Deno.pid) });
  Deno.exit(0);
}

/** Spawns this file as a child; returns its reports as they arrive and when it ends. */
export function spawnChild(
  args: ChildArgs,
): { reports: Report[]; done: Promise<void>; waitFor(kind: string, ms: number): Promise<Report> } {
  const argv = [
    "run",
    "--allow-all",
    new URL("./watch_compare.ts", import.meta.url).pathname,
    "--child",
    args.kind,
    "--ns",
    args.ns,
    "--expect",
    String(args.expect),
    "--idle-timeout-ms",
    String(args.idleTimeoutMs),
    "--window-ms",
    String(args.windowMs),
    ...(args.server ? ["--server", args.server] : ["--context", args.context!]),
  ];
  const child = new Deno.Command(Deno.execPath(), { args: argv, cwd: ROOT, stdout: "piped", stderr: "piped" }).spawn();
  const reports: Report[] = [];
  const waiters: { kind: string; resolve: (r: Report) => void }[] = [];
  const pump = async () => {
    let buf = "";
    for await (const text of child.stdout.pipeThrough(new TextDecoderStream())) {
      buf += text;
      const lines = buf.split("\n");
      buf = lines.pop()!;
      for (const line of lines) {
        if (!line.startsWith("{")) continue;
        const r = JSON.parse(line) as Report;
        reports.push(r);
        for (const w of waiters.filter((w) => w.kind === r.kind)) w.resolve(r);
      }
    }
  };
  const stderr = new Response(child.stderr).text();
  const done = Promise.all([pump(), child.status, stderr]).then(([, status, err]) => {
    if (!status.success) console.error(`child ${args.kind} exited with ${status.code}: ${err.slice(-500)}`);
  });
  return {
    reports,
    done,
    waitFor: (kind, ms) => {
      const found = reports.find((r) => r.kind === kind);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${args.kind}: no "${kind}" within ${ms} ms`)), ms);
        waiters.push({ kind, resolve: (r) => (clearTimeout(timer), resolve(r)) });
      });
    },
  };
}
