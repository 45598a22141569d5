// Measures registered clusters on the local apiservers: registration → watching, removal, rotation, churn, black hole.
//
//   OPERATOR_HUB_PORT_OFFSET=… deno run -A bench/registered/registered_clusters.ts [--phases register,rotate,churn,blackhole]
//     [--cycles 1000] [--rounds 2] [--idle-seconds 60] [--churn-via auto|folder|secret]
//     [--allocator image|glibc] [--heap-snapshots DIR] [--out FILE]
//
// The churn phase needs `--v8-flags=--expose-gc` (it compares memory after garbage collection). `--allocator image`
// (the default) runs with the image's malloc: the bench re-runs itself with the Dockerfile's LD_PRELOAD library (this
// machine's copy of the same pinned Debian package) and the image's MALLOC_CONF; `glibc` runs without. The JSON's
// `allocator` says which malloc the process had and whether it was exactly the image's.
//
// The hub runs in this process (the same wiring as src/cli/main.ts: loadRegisteredClusters, Hub, SecretProvider), so its
// timers, sockets and metric series can be counted exactly. Needs `deno task clusters:up` (prod, staging, dev).
//
// The phases are in bench/_registered_{register,rotate,churn,blackhole}.ts; what they share in
// bench/registered/_context.ts.

import { parseArgs } from "node:util";
import { mallocProbe, useAllocator } from "../lib/allocator.ts";
import { Hub } from "../../src/hub/mod.ts";
import { loadRegisteredClusters, SecretProvider } from "../../src/hub/providers/mod.ts";
import { uuidOperator } from "../../src/operators/uuid/mod.ts";
import { KubeClient, loadContexts } from "../../src/kube/mod.ts";
import { Logger } from "../../src/util/mod.ts";
import { kubectl, kubectlOk, localEndpoint, requireClusters, tempDir } from "../../dev/support/mod.ts";
import { KUBECONFIG_PATH } from "../../dev/clusters/clusters.ts";
import { countLiveTimers } from "../lib/live_timers.ts";
import { cpuSecondsReader } from "../lib/self_probe.ts";
import { kubeconfig, registeredContext, until } from "./_context.ts";
import { registerPhase } from "./_register.ts";
import { rotatePhase } from "./_rotate.ts";
import { churnPhase } from "./_churn.ts";
import { blackholePhase } from "./_blackhole.ts";

// Timers are counted from here on: every setTimeout/setInterval the hub's code makes goes through these.
const liveTimers = countLiveTimers();

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
  // The churn phase registers and unregisters the same 20 names back to back, to count what each engage leaves
  // behind: the hub's spacing of engages per name (3 s) would only slow it down.
  reengageIntervalMs: 0,
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

/** What malloc holds and keeps free, through FFI (the bench runs with -A); undefined without FFI. */
const malloc = mallocProbe(allocator);

/** CPU seconds this process (every thread: the hub, its HTTP and TLS, malloc) has used: utime + stime. */
const cpuSeconds = await cpuSecondsReader();

const adminCatalog = await loadContexts({ files: [KUBECONFIG_PATH] });
const admin = new KubeClient(adminCatalog.select(["prod"])[0], { userAgent: "bench" });
const stagingPort = Number(new URL(localEndpoint("staging").server).port);
const staging = localEndpoint("staging");
const ctx = registeredContext({
  results,
  say,
  ns,
  clusterDir,
  hub,
  registered,
  admin,
  liveTimers,
  staging,
  stagingPort,
}, dir.path);

try {
  if (phases.has("register")) await registerPhase(ctx);
  if (phases.has("rotate")) await rotatePhase(ctx);
  if (phases.has("churn")) {
    await churnPhase(ctx, {
      cycles: values.cycles!,
      idleSeconds: values["idle-seconds"]!,
      rounds: values.rounds!,
      churnVia: values["churn-via"]!,
      heapSnapshots: values["heap-snapshots"],
      malloc,
      cpuSeconds,
    });
  }
  if (phases.has("blackhole")) await blackholePhase(ctx);
} finally {
  stop.abort();
  await running;
  admin.close();
  await kubectl("prod", ["delete", "namespace", ns, "--wait=false"]);
  await kubectl("staging", ["delete", "namespace", ns, "--wait=false"]);
}

console.log(JSON.stringify(results, null, 2));
if (values.out) await Deno.writeTextFile(values.out, JSON.stringify(results, null, 2) + "\n");
