// Measures registered clusters on the local apiservers: registration → watching, removal, rotation, churn, black hole.
//
//   OPERATOR_HUB_PORT_OFFSET=… deno run -A bench/registered_clusters.ts [--phases register,rotate,churn,blackhole]
//     [--cycles 1000] [--rounds 2] [--idle-seconds 60] [--churn-via auto|folder|secret]
//     [--allocator image|glibc] [--heap-snapshots DIR] [--out FILE]
//
// The churn phase needs `--v8-flags=--expose-gc` (it compares memory after garbage collection). `--allocator image`
// (the default) runs with the image's malloc: the bench re-runs itself with the Dockerfile's LD_PRELOAD library (this
// machine's copy of the same pinned Debian package) and the image's MALLOC_CONF; `glibc` runs without. The JSON's
// `allocator` says which malloc the process had and whether it was exactly the image's.
//
// The hub runs in this process (the same wiring as src/main.ts: loadRegisteredClusters, Hub, SecretProvider), so its
// timers, sockets and metric series can be counted exactly. Needs `deno task clusters:up` (prod, staging, dev).

// Timers are counted from the first line on: every setTimeout/setInterval the hub's code makes goes through these.
const liveTimers = new Set<unknown>();
{
  const st = globalThis.setTimeout, ct = globalThis.clearTimeout, si = globalThis.setInterval;
  const ci = globalThis.clearInterval;
  // deno-lint-ignore no-explicit-any
  const g = globalThis as any;
  g.setTimeout = (fn: (...a: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    const id = st(
      (...a: unknown[]) => {
        liveTimers.delete(id);
        fn(...a);
      },
      ms,
      ...args,
    );
    liveTimers.add(id);
    return id;
  };
  g.clearTimeout = (id?: number) => {
    if (id !== undefined) liveTimers.delete(id);
    ct(id);
  };
  g.setInterval = (fn: (...a: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    const id = si(fn, ms, ...args);
    liveTimers.add(id);
    return id;
  };
  g.clearInterval = (id?: number) => {
    if (id !== undefined) liveTimers.delete(id);
    ci(id);
  };
}

import { parseArgs } from "node:util";
import v8 from "node:v8";
import { mallocProbe, useAllocator } from "./_allocator.ts";
import { stringify as toYaml } from "yaml";
import { Hub } from "../src/hub/mod.ts";
import { loadRegisteredClusters, SecretProvider } from "../src/hub/providers/mod.ts";
import { uuidOperator } from "../src/operators/uuid/mod.ts";
import { addCluster } from "../src/registration/cluster_registration.ts";
import { KubeClient, loadContexts } from "../src/kube/mod.ts";
import { Logger } from "../src/util/mod.ts";
import { FaultProxy, kubectl, kubectlOk, localEndpoint, requireClusters, tempDir } from "../tests/support/mod.ts";
import { KUBECONFIG_PATH } from "../tests/kube/clusters.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    phases: { type: "string", default: "register,rotate,churn,blackhole" },
    cycles: { type: "string", default: "1000" },
    "idle-seconds": { type: "string", default: "60" },
    rounds: { type: "string", default: "2" },
    "churn-via": { type: "string", default: "auto" },
    "heap-snapshots": { type: "string" },
    allocator: { type: "string", default: "image" },
    out: { type: "string" },
  },
});
const phases = new Set(values.phases!.split(","));
const say = (line: string) => console.log(line);
// Before anything else: with `image`, this may re-run the command with the image's malloc preloaded and exit.
const allocator = await useAllocator(values.allocator!);
const results: Record<string, unknown> = { allocator };
say(`allocator: ${JSON.stringify(allocator)}`);

requireClusters();
await using dir = await tempDir("bench-registered");
const clusterDir = `${dir.path}/clusters`;
await Deno.mkdir(clusterDir);
const ns = `bench-registered-${crypto.randomUUID().slice(0, 8)}`;
await kubectlOk("prod", ["create", "namespace", ns]);
const prod = localEndpoint("prod");
const hubConfig = await dir.write("hub.yaml", kubeconfig("prod", "prod", prod.token));
const logger = new Logger({ level: "error", format: "json" });
const registered = await loadRegisteredClusters({
  clusters: ["all"],
  kubeconfigs: [hubConfig],
  clusterDir,
  clusterSecrets: ns,
  env: (k) => Deno.env.get(k),
  cwd: Deno.cwd(),
  logger,
});
const hub = new Hub({ operators: [uuidOperator()], logger });
registered.registry.registerMetrics(hub.metrics.registry);
registered.registry.connect(hub);
const secrets = new SecretProvider({
  registry: registered.registry,
  home: registered.selected[0],
  namespace: ns,
  logger,
});
const stop = new AbortController();
const running = Promise.all([
  hub.start(stop.signal),
  registered.registry.start(stop.signal),
  registered.folder.start(stop.signal),
  secrets.start(stop.signal),
]);
await until(() => hub.health().clusters.prod?.state === "watching", "prod watching");

function kubeconfig(context: string, name: string, token: string, server?: string): string {
  const c = localEndpoint(context);
  return toYaml({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name, cluster: { server: server ?? c.server, "certificate-authority-data": btoa(c.caPem) } }],
    users: [{ name, user: { token } }],
    contexts: [{ name, context: { cluster: name, user: name } }],
    "current-context": name,
  });
}

/** Polls `check` every `everyMs` (the hub shares this thread: polling must stay cheap) until it holds. */
async function until(check: () => boolean, what: string, timeoutMs = 120_000, everyMs = 5): Promise<number> {
  const t0 = performance.now();
  while (!check()) {
    if (performance.now() - t0 > timeoutMs) throw new Error(`hang guard: ${what} not reached in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return (performance.now() - t0) / 1000;
}

const mib = (x: number) => Math.round(x / 1048576);

/** What malloc holds and keeps free, through FFI (the bench runs with -A); undefined without FFI. */
const malloc = mallocProbe(allocator);

/** CPU seconds this process (every thread: the hub, its HTTP and TLS, malloc) has used: utime + stime. */
const clockTicks = Number(
  new TextDecoder().decode((await new Deno.Command("getconf", { args: ["CLK_TCK"] }).output()).stdout),
);
function cpuSeconds(): number {
  const fields = Deno.readTextFileSync("/proc/self/stat").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) / clockTicks;
}

/** Resident MiB by kind of mapping (/proc/self/smaps): the brk heap, anonymous mappings, files. */
function mappedMiB(): Record<string, number> {
  const out: Record<string, number> = { brk: 0, anon: 0, file: 0 };
  let kind = "anon";
  for (const line of Deno.readTextFileSync("/proc/self/smaps").split("\n")) {
    const head = line.match(/^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/);
    if (head) kind = head[1] === "[heap]" ? "brk" : head[1].startsWith("/") ? "file" : "anon";
    else if (line.startsWith("Rss:")) out[kind] += Number(line.split(/\s+/)[1]) / 1024;
  }
  for (const k in out) out[k] = Math.round(out[k]);
  return out;
}

const state = (name: string) => hub.health().clusters[name]?.state;
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const r = (x: number) => Math.round(x * 1000) / 1000;
  return { median: r(s[Math.floor(s.length / 2)]), min: r(s[0]), max: r(s[s.length - 1]) };
};

/** TCP sockets this process holds to 127.0.0.1:`port` (its fds matched against /proc/net/tcp). */
function socketsTo(port: number): number {
  const inodes = new Set<string>();
  for (const e of Deno.readDirSync("/proc/self/fd")) {
    try {
      const m = Deno.readLinkSync(`/proc/self/fd/${e.name}`).match(/^socket:\[(\d+)\]$/);
      if (m) inodes.add(m[1]);
    } catch { /* closed meanwhile */ }
  }
  const hex = port.toString(16).toUpperCase().padStart(4, "0");
  let n = 0;
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of Deno.readTextFileSync(file).split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && f[2]?.endsWith(`:${hex}`) && inodes.has(f[9])) n++;
    }
  }
  return n;
}

async function series(): Promise<string[]> {
  return (await hub.metrics.registry.metrics()).split("\n").filter((l) => l !== "" && !l.startsWith("#"));
}

const adminCatalog = await loadContexts({ files: [KUBECONFIG_PATH] });
const admin = new KubeClient(adminCatalog.select(["prod"])[0], { userAgent: "bench" });
const fds = () => [...Deno.readDirSync("/proc/self/fd")].length;
const sockets = () =>
  [...Deno.readDirSync("/proc/self/fd")].filter((e) => {
    try {
      return Deno.readLinkSync(`/proc/self/fd/${e.name}`).startsWith("socket:");
    } catch {
      return false;
    }
  }).length;
const stagingPort = Number(new URL(localEndpoint("staging").server).port);
const staging = localEndpoint("staging");

async function writeAtomic(path: string, text: string): Promise<void> {
  const tmp = `${dir.path}/.staged-${crypto.randomUUID()}`;
  await Deno.writeTextFile(tmp, text, { mode: 0o600 });
  await Deno.rename(tmp, path);
}

function secretManifest(name: string, text: string): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace: ns, labels: { "sigs.k8s.io/multicluster-runtime-kubeconfig": "true" } },
    data: { kubeconfig: btoa(text) },
  });
}

try {
  if (phases.has("register")) {
    // Baseline: nothing registered but prod.
    const timersBefore = liveTimers.size;
    const seriesBefore = (await series()).length;
    for (const provider of ["folder", "secret"] as const) {
      const watching: number[] = [];
      const gone: number[] = [];
      const socketsLeft: number[] = [];
      const seriesLeft: number[] = [];
      const timersLeft: number[] = [];
      for (let i = 0; i < 10; i++) {
        const name = `reg-${provider}-${i}`;
        const text = kubeconfig("staging", name, staging.token);
        const t0 = performance.now();
        if (provider === "folder") await writeAtomic(`${clusterDir}/${name}.yaml`, text);
        else {await admin.request("POST", `/api/v1/namespaces/${ns}/secrets`, {
            body: JSON.parse(secretManifest(name, text)),
          });}
        await until(() => state(name) === "watching", `${name} watching`);
        watching.push((performance.now() - t0) / 1000);
        const during = socketsTo(stagingPort);
        if (during < 1) throw new Error(`expected the hub to hold a socket to staging while ${name} is watched`);
        const t1 = performance.now();
        if (provider === "folder") await Deno.remove(`${clusterDir}/${name}.yaml`);
        else await admin.request("DELETE", `/api/v1/namespaces/${ns}/secrets/${name}`);
        await until(() => state(name) === undefined, `${name} gone`);
        await registered.registry.idle(); // disengage settled: its watches, client and series are gone
        await until(() => socketsTo(stagingPort) === 0, `${name}'s sockets closed`, 120_000, 25); // fds close a moment later
        gone.push((performance.now() - t1) / 1000);
        await new Promise((r) => setTimeout(r, 1000));
        socketsLeft.push(socketsTo(stagingPort)); // still none a second later
        const left = (await series()).filter((l) => l.includes(`cluster="${name}"`));
        if (left.length) say(`series left for ${name}: ${left.join(" | ")}`);
        seriesLeft.push(left.length);
        timersLeft.push(liveTimers.size - timersBefore);
      }
      results[`registered_watching_s_${provider}`] = stats(watching);
      results[`unregistered_gone_s_${provider}`] = stats(gone);
      results[`unregistered_sockets_left_${provider}`] = Math.max(...socketsLeft);
      results[`unregistered_series_left_${provider}`] = Math.max(...seriesLeft);
      results[`unregistered_timers_left_${provider}`] = Math.max(...timersLeft);
      say(
        `${provider}: registration → watching ${JSON.stringify(stats(watching))} s; removal → gone ${
          JSON.stringify(stats(gone))
        } s; ` +
          `afterwards: sockets to staging ${Math.max(...socketsLeft)}, its series ${
            Math.max(...seriesLeft)
          }, timers vs baseline ${Math.max(...timersLeft)}`,
      );
    }
    results.series_delta_after_register_phase = (await series()).length - seriesBefore;
  }

  if (phases.has("rotate")) {
    // Folder: a token bound to an anchor Secret in staging; the file rewritten with a new one; the old one revoked.
    const sa = "bench-rotation";
    await kubectl("staging", ["create", "namespace", ns]);
    await kubectlOk("staging", ["create", "serviceaccount", sa, "-n", ns]);
    await kubectlOk("staging", [
      "create",
      "clusterrolebinding",
      `${ns}-rotation`,
      "--clusterrole=cluster-admin",
      `--serviceaccount=${ns}:${sa}`,
    ]);
    const boundToken = async (anchor: string) => {
      await kubectlOk("staging", ["create", "secret", "generic", anchor, "-n", ns]);
      return (await kubectlOk("staging", [
        "create",
        "token",
        sa,
        "-n",
        ns,
        "--bound-object-kind=Secret",
        `--bound-object-name=${anchor}`,
        "--duration=1h",
      ])).trim();
    };
    const errorsOf = (name: string) =>
      series().then((ls) =>
        ls.filter((l) =>
          l.startsWith("rest_client_requests_total") && l.includes(`cluster="${name}"`) && /code="(4|5|error)/.test(l)
        )
          .reduce((n, l) => n + Number(l.split(" ").pop()), 0)
      );
    const measure = async (name: string, rotate: (i: number) => Promise<void>) => {
      const b = hub.health().clusters[name];
      const errorsBefore = await errorsOf(name);
      const swapsBefore = registered.registry.registered().find((c) => c.name === name)!.credentialSwaps;
      for (let i = 1; i <= 3; i++) {
        await rotate(i);
        await until(
          () => registered.registry.registered().find((c) => c.name === name)!.credentialSwaps >= swapsBefore + i,
          "swap",
        );
        // A write after the revocation proves the new token is in use.
        await kubectlOk("staging", ["apply", "-f", "-"], {
          stdin: `apiVersion: demo.operator/v1\nkind: Uuid\nmetadata: {name: ${name}-${i}, namespace: ${ns}}\n`,
        });
        await until(() => {
          const o = hub.health().clusters[name];
          return o?.objects === i;
        }, "object seen");
        await until(() => hub.health().controller.queued === 0 && hub.health().controller.inFlight === 0, "reconciled");
      }
      const a = hub.health().clusters[name];
      return {
        rotations: 3,
        relists: a.relists - b.relists,
        watch_restarts: a.connectAttempts - b.connectAttempts,
        errors: (await errorsOf(name)) - errorsBefore + (a.lastError ? 1 : 0),
        re_registered: a.registeredAt !== b.registeredAt,
      };
    };
    const fname = "rot-folder";
    await writeAtomic(`${clusterDir}/${fname}.yaml`, kubeconfig("staging", fname, await boundToken(`${fname}-0`)));
    await until(() => state(fname) === "watching", "folder rotation cluster watching");
    results.rotation_folder = await measure(fname, async (i) => {
      await writeAtomic(`${clusterDir}/${fname}.yaml`, kubeconfig("staging", fname, await boundToken(`${fname}-${i}`)));
      await new Promise((r) => setTimeout(r, 3000)); // the hub's grace, as cluster:add gives it
      await kubectlOk("staging", ["delete", "secret", `${fname}-${i - 1}`, "-n", ns]); // revokes the old token
    });
    await kubectlOk("staging", ["delete", "uuid", "--all", "-n", ns]);
    say(`rotation through a file: ${JSON.stringify(results.rotation_folder)}`);
    await Deno.remove(`${clusterDir}/${fname}.yaml`);
    await until(() => state(fname) === undefined, "gone");

    // Secret: cluster:add itself (TokenRequest bound to an anchor; re-run = rotation; old anchor deleted = revoked).
    const sname = "rot-secret";
    const catalog = await loadContexts({ files: [KUBECONFIG_PATH] });
    const [target, home] = catalog.select(["staging", "prod"]);
    const add = () =>
      addCluster({
        target,
        name: sname,
        registration: { kind: "secret", hub: home, namespace: ns },
        tokenTtlSeconds: 3600,
        revokeAfterMs: 3000,
        root: new URL("..", import.meta.url).pathname,
        print: () => {},
      });
    await add();
    await until(() => state(sname) === "watching", "secret rotation cluster watching");
    results.rotation_secret = await measure(sname, () => add());
    say(
      `rotation through a Secret (cluster:add re-run, old token revoked): ${JSON.stringify(results.rotation_secret)}`,
    );
    await kubectlOk("staging", ["delete", "uuid", "--all", "-n", ns]);
    await kubectlOk("prod", ["delete", "secret", sname, "-n", ns]);
    await until(() => state(sname) === undefined, "gone");
    await kubectl("staging", ["delete", "clusterrolebinding", `${ns}-rotation`]);
  }

  if (phases.has("churn")) {
    const gc = (globalThis as { gc?: (options?: unknown) => void }).gc;
    if (!gc) {
      throw new Error("the churn phase compares memory after garbage collection: run with --v8-flags=--expose-gc");
    }
    const cycles = Number(values.cycles);
    const idleSeconds = Number(values["idle-seconds"]);
    const contexts = 20;
    const names = Array.from({ length: contexts }, (_, i) => `churn-${i}`);
    const texts = names.map((n, i) =>
      kubeconfig(i % 2 ? "dev" : "staging", n, localEndpoint(i % 2 ? "dev" : "staging").token)
    );
    // Files need inotify: when the machine's inotify instances are used up (fs.inotify.max_user_instances), the
    // folder provider falls back to re-reading every 10 s, far too slow for churn; labelled Secrets are used then.
    let via = values["churn-via"];
    if (via === "auto") {
      try {
        Deno.watchFs(clusterDir).close();
        via = "folder";
      } catch (err) {
        say(`churn through Secrets: the cluster folder cannot be watched here (${err})`);
        via = "secret";
      }
    }
    let cyclesDone = 0;
    const cycle = async (i: number) => {
      cyclesDone++;
      const path = `${clusterDir}/${names[i]}.yaml`;
      if (via === "folder") await writeAtomic(path, texts[i]);
      else {await admin.request("POST", `/api/v1/namespaces/${ns}/secrets`, {
          body: JSON.parse(secretManifest(names[i], texts[i])),
        });}
      await until(() => state(names[i]) === "watching", `${names[i]} watching`);
      if (via === "folder") await Deno.remove(path);
      else await admin.request("DELETE", `/api/v1/namespaces/${ns}/secrets/${names[i]}`);
      await until(() => state(names[i]) === undefined, `${names[i]} gone`);
    };
    for (let i = 0; i < contexts; i++) await cycle(i); // warm-up: every code path loaded once
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    /**
     * One memory sample. `regular` is an ordinary full GC (`gc()`); `full` is V8's last-resort GC, which also hands
     * V8's pooled pages and unused young-generation space back to the OS: what V8's memory reducer does by itself
     * once the process is idle (the `idle` row shows it happening without any forced GC).
     */
    const sample = async (collect: "none" | "regular" | "full") => {
      admin.resetConnections(); // the bench's own idle keep-alive sockets (Secret churn) are not the hub's
      if (collect === "regular") gc();
      if (collect === "full") gc({ type: "major", execution: "sync", flavor: "last-resort" });
      const m = Deno.memoryUsage();
      const space = (name: string) => mib(v8.getHeapSpaceStatistics().find((s) => s.space_name === name)!.space_size);
      const g = malloc?.info();
      return {
        rss: mib(m.rss),
        heap_used: Math.round(m.heapUsed / 104857.6) / 10,
        heap_total: mib(m.heapTotal),
        new_space: space("new_space"),
        old_space: space("old_space"),
        ...mappedMiB(),
        ...g,
        fds: fds(),
        sockets: sockets(),
        series: (await series()).length,
        timers: liveTimers.size,
      };
    };
    await sleep(3000);
    const before = await sample("full");
    if (values["heap-snapshots"]) v8.writeHeapSnapshot(`${values["heap-snapshots"]}/round-0.heapsnapshot`);
    const trace = Deno.env.get("BENCH_TRACE_MEMORY")
      ? setInterval(() => {
        const m = Deno.memoryUsage();
        say(
          `cycles ${cyclesDone}; memory: rss ${mib(m.rss)} heapTotal ${mib(m.heapTotal)} heapUsed ${
            mib(m.heapUsed)
          } external ${mib(m.external)} MiB`,
        );
      }, 10_000)
      : undefined;
    // Each round: the cycles, then an ordinary GC, then idle (V8's memory reducer shrinks the young generation and
    // frees its pooled pages on its own, nothing forced), then a full GC. A second round shows whether what stays is
    // a leak (it grows again) or a high-water mark (it is reused).
    const rounds = [];
    for (let r = 0; r < Number(values.rounds); r++) {
      const t0 = performance.now();
      const cpu0 = cpuSeconds();
      await Promise.all(names.map(async (_, i) => {
        for (let c = i; c < cycles; c += contexts) await cycle(i);
      }));
      const seconds = Math.round((performance.now() - t0) / 100) / 10;
      const cpu = Math.round((cpuSeconds() - cpu0) * 10) / 10;
      await sleep(3000);
      const afterGc = await sample("regular");
      const idleRss: number[] = [];
      for (let s = 0; s < idleSeconds; s += 5) {
        await sleep(5000);
        idleRss.push(mib(Deno.memoryUsage().rss));
      }
      const afterIdle = await sample("none");
      const afterFull = await sample("full");
      // After the sample (writing a snapshot costs native memory): diff them to see what a round left behind.
      if (values["heap-snapshots"]) v8.writeHeapSnapshot(`${values["heap-snapshots"]}/round-${r + 1}.heapsnapshot`);
      rounds.push({
        seconds,
        cpu_seconds: cpu,
        after_gc: afterGc,
        after_idle: afterIdle,
        after_full_gc: afterFull,
        idle_rss: idleRss,
      });
    }
    clearInterval(trace);
    // What malloc keeps free but resident: glibc's malloc_trim(0) or jemalloc's purge returns it.
    malloc?.release();
    const afterRelease = malloc ? await sample("none") : undefined;
    const last = rounds[rounds.length - 1];
    const pct = (a: number, b: number) => Math.round(((a - b) / b) * 1000) / 10;
    results.churn = {
      via,
      cycles_per_round: cycles,
      contexts,
      idle_seconds: idleSeconds,
      rss_pct_after_full_gc: rounds.map((x) => pct(x.after_full_gc.rss, before.rss)),
      rss_pct_after_idle: rounds.map((x) => pct(x.after_idle.rss, before.rss)),
      rss_pct_after_gc: rounds.map((x) => pct(x.after_gc.rss, before.rss)),
      ...(afterRelease ? { rss_pct_after_malloc_release: pct(afterRelease.rss, before.rss) } : {}),
      heap_used_pct: pct(last.after_full_gc.heap_used, before.heap_used),
      fds_pct: pct(last.after_full_gc.fds, before.fds),
      series_pct: pct(last.after_full_gc.series, before.series),
      // MiB unless named otherwise.
      before,
      rounds,
      ...(afterRelease ? { after_malloc_release: afterRelease } : {}),
    };
    say(`churn: ${JSON.stringify(results.churn)}`);
  }
  if (phases.has("blackhole")) {
    const proxy = FaultProxy.start({ targetPort: stagingPort, mode: "blackhole" });
    const runs: Record<string, number[]> = { without: [], with: [] };
    for (let r = 0; r < 6; r++) {
      const withHole = r % 2 === 1;
      const names = Array.from({ length: 5 }, (_, i) => `bh${r}-${i}`);
      const t0 = performance.now();
      await Promise.all([
        ...names.map((n) => writeAtomic(`${clusterDir}/${n}.yaml`, kubeconfig("staging", n, staging.token))),
        ...(withHole
          ? [
            writeAtomic(
              `${clusterDir}/hole${r}.yaml`,
              kubeconfig("staging", `hole${r}`, staging.token, `https://127.0.0.1:${proxy.port}`),
            ),
          ]
          : []),
      ]);
      await until(() => names.every((n) => state(n) === "watching"), "5 clusters watching");
      runs[withHole ? "with" : "without"].push((performance.now() - t0) / 1000);
      if (withHole && state(`hole${r}`) === "watching") throw new Error("the black-holed cluster cannot be watching");
      for (const n of [...names, ...(withHole ? [`hole${r}`] : [])]) await Deno.remove(`${clusterDir}/${n}.yaml`);
      await until(() => [...names, `hole${r}`].every((n) => state(n) === undefined), "removed");
    }
    await proxy.close();
    results.blackhole_5_watching_s = { without: stats(runs.without), with: stats(runs.with) };
    say(
      `5 clusters registered at once → all watching: without a black-holed 6th ${
        JSON.stringify(stats(runs.without))
      } s, with it ${JSON.stringify(stats(runs.with))} s`,
    );
  }
} finally {
  stop.abort();
  await running;
  admin.close();
  await kubectl("prod", ["delete", "namespace", ns, "--wait=false"]);
  await kubectl("staging", ["delete", "namespace", ns, "--wait=false"]);
}

console.log(JSON.stringify(results, null, 2));
if (values.out) await Deno.writeTextFile(values.out, JSON.stringify(results, null, 2) + "\n");
