// Our list+watch loop (src/kube KubeClient on its own HTTP/1.1 sockets, driven by src/runtime's Watcher) against
// @kubernetes/client-node 2.0.1's ListWatch (its informer, on its Watch): CPU per 1,000 objects listed
// and per 1,000 watch events on a real apiserver, then behaviour under injected faults on a fake one.
//
// Usage: deno run --allow-all bench/watch_compare.ts [--objects N] [--reps R] [--skip-cpu] [--skip-faults]
//        [--out bench/last_watch_compare.json]
//
// Each client runs in its own process (so /proc CPU and RSS are its own), both at once on the same
// events. The fake apiserver is a raw HTTP/1.1 server on loopback, so it can break streams at will.

import { parseArgs } from "node:util";
import { dirname, resolve } from "node:path";
import { KubeClient, loadContexts } from "../src/kube/mod.ts";
import type { ClusterAccess } from "../src/kube/mod.ts";
import { Store, Watcher } from "../src/runtime/mod.ts";
import { Logger } from "../src/util/mod.ts";
import { requireClusters } from "../tests/support/local_clusters.ts";
import { BenchCluster } from "./_cluster.ts";
import { cpuMs, memoryMb } from "./_proc.ts";
import { round, summarize } from "./_stats.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const GROUP = "demo.operator", VERSION = "v1", PLURAL = "uuid";
const pathOf = (ns: string) => `/apis/${GROUP}/${VERSION}/namespaces/${ns}/${PLURAL}`;

type ClientKind = "ours" | "client-node";
const KINDS: ClientKind[] = ["ours", "client-node"];

/** One line a child prints: a phase mark or an observation. */
interface Report {
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

interface ChildArgs {
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

async function runChild(a: ChildArgs): Promise<void> {
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
function spawnChild(
  args: ChildArgs,
): { reports: Report[]; done: Promise<void>; waitFor(kind: string, ms: number): Promise<Report> } {
  const argv = [
    "run",
    "--allow-all",
    new URL(import.meta.url).pathname,
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

// ------------------------------------------------------------------------------------------------
// Part 1: CPU on a real apiserver

interface CpuResult {
  listCpuMsPer1000: number;
  watchCpuMsPer1000: number;
  rssMb: number;
}

async function cpuCompare(n: number, reps: number): Promise<Record<ClientKind, CpuResult[]>> {
  requireClusters();
  const c = new BenchCluster("prod");
  const ns = `bench-wc-${crypto.getRandomValues(new Uint32Array(1))[0].toString(16)}`;
  const results: Record<ClientKind, CpuResult[]> = { ours: [], "client-node": [] };
  await c.createNamespace(ns);
  try {
    const names = Array.from({ length: n }, (_, i) => `w-${String(i).padStart(5, "0")}`);
    await c.createMany(ns, names, 32);
    for (let r = 0; r < reps; r++) {
      const children = KINDS.map((kind) =>
        spawnChild({ kind, context: "prod", ns, expect: n, idleTimeoutMs: 90_000, windowMs: 600_000 })
      );
      const listed = await Promise.all(children.map((ch) => ch.waitFor("listed", 60_000)));
      await new Promise((res) => setTimeout(res, 1000));
      // n MODIFIED events: one status write per object.
      let next = 0;
      await Promise.all(Array.from({ length: 32 }, async () => {
        while (next < names.length) {
          const name = names[next++];
          await c.request(
            "PATCH",
            `${pathOf(ns)}/${name}/status`,
            { status: { uuid: crypto.randomUUID(), state: "Ok", message: `rep ${r}` } },
            "application/merge-patch+json",
          );
        }
      }));
      const watched = await Promise.all(children.map((ch) => ch.waitFor("watched", 120_000)));
      const started = children.map((ch) => ch.reports.find((x) => x.kind === "start")!);
      KINDS.forEach((kind, i) => {
        const res: CpuResult = {
          listCpuMsPer1000: (listed[i].cpuMs! - started[i].cpuMs!) / n * 1000,
          watchCpuMsPer1000: (watched[i].cpuMs! - listed[i].cpuMs!) / n * 1000,
          rssMb: watched[i].rssMb!,
        };
        results[kind].push(res);
        console.error(
          `[watch_compare] rep ${r + 1} ${kind}: list ${round(res.listCpuMsPer1000, 1)} ms CPU per 1,000 objects, ` +
            `watch ${round(res.watchCpuMsPer1000, 1)} ms CPU per 1,000 events, RSS ${round(res.rssMb, 0)} MB`,
        );
      });
      for (const ch of children) await ch.done.catch(() => {});
    }
  } finally {
    await c.cleanupNamespace(ns).catch(() => {});
    c.close();
  }
  return results;
}

// ------------------------------------------------------------------------------------------------
// Part 2: faults on a fake apiserver

type Scenario = "clean-close" | "reset" | "error-410" | "http-410" | "silent" | "list-500" | "watch-500";

const SCENARIOS: { id: Scenario; what: string; windowMs: number }[] = [
  { id: "clean-close", what: "the server ends the watch cleanly (its timeout)", windowMs: 8_000 },
  { id: "reset", what: "the connection breaks mid-stream (no final chunk)", windowMs: 45_000 },
  { id: "error-410", what: "an ERROR event with code 410, then the server closes", windowMs: 8_000 },
  { id: "http-410", what: "the watch request answers HTTP 410 Gone", windowMs: 8_000 },
  { id: "silent", what: "the stream goes silent but stays open (half-open)", windowMs: 45_000 },
  { id: "list-500", what: "the first list answers HTTP 500", windowMs: 8_000 },
  { id: "watch-500", what: "the first watch answers HTTP 500", windowMs: 8_000 },
];

/** A tiny HTTP/1.1 apiserver for one namespace of Uuids, scripted per scenario. */
class FakeApiserver {
  readonly listener: Deno.Listener;
  lists = 0;
  watches = 0;
  readonly #scenario: Scenario;
  readonly #ns: string;
  readonly #conns = new Set<Deno.Conn>();
  #rv = 100;

  constructor(scenario: Scenario, ns: string) {
    this.#scenario = scenario;
    this.#ns = ns;
    this.listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    this.#accept();
  }

  get url(): string {
    return `http://127.0.0.1:${(this.listener.addr as Deno.NetAddr).port}`;
  }

  async #accept(): Promise<void> {
    try {
      for await (const conn of this.listener) {
        this.#conns.add(conn);
        this.#serve(conn).catch(() => {}).finally(() => this.#conns.delete(conn));
      }
    } catch { /* closed */ }
  }

  #obj(name: string, status?: Record<string, unknown>) {
    return {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: "Uuid",
      metadata: { name, namespace: this.#ns, uid: `uid-${name}`, resourceVersion: String(++this.#rv), generation: 1 },
      spec: {},
      ...(status ? { status } : {}),
    };
  }

  async #serve(conn: Deno.Conn): Promise<void> {
    const enc = new TextEncoder();
    const dec = new TextDecoder();
    let buf = "";
    const chunk = new Uint8Array(16384);
    for (;;) {
      let end = buf.indexOf("\r\n\r\n");
      while (end < 0) {
        const n = await conn.read(chunk);
        if (n === null) return;
        buf += dec.decode(chunk.subarray(0, n));
        end = buf.indexOf("\r\n\r\n");
      }
      const head = buf.slice(0, end);
      buf = buf.slice(end + 4);
      const target = head.split("\r\n")[0].split(" ")[1] ?? "/";
      const url = new URL(target, "http://x");
      const write = (s: string) => conn.write(enc.encode(s));
      const json = async (status: number, body: unknown) => {
        const text = JSON.stringify(body);
        await write(
          `HTTP/1.1 ${status} ${
            status === 200 ? "OK" : status === 410 ? "Gone" : "Internal Server Error"
          }\r\nContent-Type: application/json\r\nContent-Length: ${enc.encode(text).length}\r\n\r\n${text}`,
        );
      };
      if (url.searchParams.get("watch") !== "true" && url.searchParams.get("watch") !== "1") {
        this.lists++;
        if (this.#scenario === "list-500" && this.lists === 1) {
          await json(500, { kind: "Status", apiVersion: "v1", status: "Failure", code: 500, message: "etcd is down" });
          continue;
        }
        // After a relist, o-2 is gone (deleted while the client was not watching) and the canary exists.
        const relist = this.lists > 1 && (this.#scenario === "error-410" || this.#scenario === "http-410");
        const items = relist ? [this.#obj("o-1"), this.#obj("o-3"), this.#obj("canary")] : [
          this.#obj("o-1"),
          this.#obj("o-2"),
          this.#obj("o-3"),
        ];
        await json(200, {
          apiVersion: `${GROUP}/${VERSION}`,
          kind: "UuidList",
          metadata: { resourceVersion: String(this.#rv) },
          items,
        });
        continue;
      }
      this.watches++;
      const first = this.watches === 1;
      if (first && this.#scenario === "http-410") {
        await json(410, {
          kind: "Status",
          apiVersion: "v1",
          status: "Failure",
          code: 410,
          reason: "Expired",
          message: "too old resource version",
        });
        continue;
      }
      if (first && this.#scenario === "watch-500") {
        await json(500, { kind: "Status", apiVersion: "v1", status: "Failure", code: 500, message: "internal error" });
        continue;
      }
      await write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
      const event = async (e: unknown) => {
        const line = JSON.stringify(e) + "\n";
        await write(`${enc.encode(line).length.toString(16)}\r\n${line}\r\n`);
      };
      if (!first || this.#scenario === "list-500") {
        // The watch after the fault delivers the canary: seeing it means the client recovered.
        if (!(this.#scenario === "error-410" || this.#scenario === "http-410")) {
          await event({ type: "ADDED", object: this.#obj("canary") });
        }
        await new Promise(() => {}); // stay open until the test ends
      }
      await event({ type: "MODIFIED", object: this.#obj("o-1", { state: "Ok" }) });
      await new Promise((r) => setTimeout(r, 300));
      switch (this.#scenario) {
        case "clean-close":
          await write("0\r\n\r\n");
          continue;
        case "reset":
          conn.close();
          return;
        case "error-410":
          await event({
            type: "ERROR",
            object: {
              kind: "Status",
              apiVersion: "v1",
              status: "Failure",
              code: 410,
              reason: "Expired",
              message: "too old resource version",
            },
          });
          await write("0\r\n\r\n");
          continue;
        case "silent":
          await new Promise(() => {});
          break;
        default:
          await new Promise(() => {});
      }
    }
  }

  close(): void {
    try {
      this.listener.close();
    } catch { /* already */ }
    for (const c of this.#conns) {
      try {
        c.close();
      } catch { /* already */ }
    }
  }
}

interface FaultOutcome {
  scenario: Scenario;
  client: ClientKind;
  recovered: boolean;
  recoveredAfterMs: number | null;
  lists: number;
  watches: number;
  sawDeleteOfO2: boolean;
  errorsReported: string[];
  notes: string;
}

async function faultCompare(idleTimeoutMs: number): Promise<FaultOutcome[]> {
  const jobs = SCENARIOS.flatMap((s) =>
    KINDS.map(async (kind): Promise<FaultOutcome> => {
      const ns = "fake";
      const server = new FakeApiserver(s.id, ns);
      const child = spawnChild({ kind, server: server.url, ns, expect: 0, idleTimeoutMs, windowMs: s.windowMs });
      await child.done;
      server.close();
      const start = child.reports.find((r) => r.kind === "listed")?.t ?? 0;
      const canary = child.reports.find((r) => r.kind === "add" && r.name === "canary");
      const errors = child.reports.filter((r) => r.kind === "error" || r.kind === "log").map((r) => r.detail ?? "");
      const neverListed = !child.reports.some((r) => r.kind === "listed");
      const recovered = !!canary;
      let notes = "";
      if (kind === "client-node") {
        const errs = child.reports.filter((r) => r.kind === "error").length;
        if (!recovered && errs > 0) {
          notes = "informer stopped after its error callback; the application must restart it";
        } else if (!recovered && neverListed) notes = "start() never resolved";
        else if (!recovered) notes = "no recovery within the window";
      } else if (!recovered) notes = "no recovery within the window";
      return {
        scenario: s.id,
        client: kind,
        recovered,
        recoveredAfterMs: canary ? canary.t - start : null,
        lists: server.lists,
        watches: server.watches,
        sawDeleteOfO2: child.reports.some((r) => r.kind === "delete" && r.name === "o-2"),
        errorsReported: [...new Set(errors)].slice(0, 4),
        notes,
      };
    })
  );
  return await Promise.all(jobs);
}

// ------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: Deno.args,
    strict: true,
    options: {
      child: { type: "string" },
      server: { type: "string" },
      context: { type: "string" },
      ns: { type: "string" },
      expect: { type: "string" },
      "idle-timeout-ms": { type: "string" },
      "window-ms": { type: "string" },
      objects: { type: "string" },
      reps: { type: "string" },
      "skip-cpu": { type: "boolean" },
      "skip-faults": { type: "boolean" },
      out: { type: "string" },
    },
  });
  if (values.child) {
    await runChild({
      kind: values.child as ClientKind,
      server: values.server,
      context: values.context,
      ns: values.ns!,
      expect: Number(values.expect ?? 0),
      idleTimeoutMs: Number(values["idle-timeout-ms"] ?? 90_000),
      windowMs: Number(values["window-ms"] ?? 10_000),
    });
    return;
  }
  const n = Number(values.objects ?? 3000);
  const reps = Number(values.reps ?? 3);
  const out: Record<string, unknown> = { started_at: new Date().toISOString(), objects: n, reps };
  const lines: string[] = [];
  if (!values["skip-cpu"]) {
    const res = await cpuCompare(n, reps);
    const s = (k: ClientKind, f: (r: CpuResult) => number) => summarize(res[k].map(f));
    const rows = [
      ["list: CPU ms per 1,000 objects", (r: CpuResult) => r.listCpuMsPer1000],
      ["watch: CPU ms per 1,000 events", (r: CpuResult) => r.watchCpuMsPer1000],
      ["RSS after the run, MB", (r: CpuResult) => r.rssMb],
    ] as const;
    lines.push(
      `CPU on the real apiserver (prod), ${n} objects, ${reps} repetitions, medians (min–max):`,
      "",
      "| figure | ours (KubeClient + Watcher) | client-node 2.0.1 ListWatch | client-node / ours |",
      "|---|---:|---:|---:|",
    );
    for (const [label, f] of rows) {
      const a = s("ours", f), b = s("client-node", f);
      lines.push(
        `| ${label} | ${round(a.median, 1)} (${round(a.min, 1)}–${round(a.max, 1)}) | ${round(b.median, 1)} (${
          round(b.min, 1)
        }–${round(b.max, 1)}) | ${round(b.median / a.median, 2)}× |`,
      );
    }
    out.cpu = res;
  }
  if (!values["skip-faults"]) {
    const idle = 15_000;
    const outcomes = await faultCompare(idle);
    lines.push(
      "",
      `Faults on a fake apiserver (ours with --watch-idle-timeout ${idle / 1000} s; the hub's default is 90 s):`,
      "",
      "| fault | client | recovered | after | lists | watches | saw the delete after relist | notes |",
      "|---|---|---|---:|---:|---:|---|---|",
    );
    for (const s of SCENARIOS) {
      for (const o of outcomes.filter((o) => o.scenario === s.id)) {
        lines.push(
          `| ${s.what} | ${o.client} | ${o.recovered ? "yes" : "**no**"} | ${
            o.recoveredAfterMs === null ? "" : `${(o.recoveredAfterMs / 1000).toFixed(1)} s`
          } | ${o.lists} | ${o.watches} | ${
            s.id.includes("410") ? (o.sawDeleteOfO2 ? "yes" : "**no**") : ""
          } | ${o.notes} |`,
        );
      }
    }
    out.faults = outcomes;
  }
  const text = lines.join("\n");
  console.log(text);
  const file = resolve(values.out ?? `${ROOT}bench/last_watch_compare.json`);
  await Deno.mkdir(dirname(file), { recursive: true });
  await Deno.writeTextFile(file, JSON.stringify({ ...out, table: text }, null, 2) + "\n");
  console.log(`\nwrote ${file}`);
}

if (import.meta.main) await main();
