// Unit tests of the registry's decisions: collisions, credential swaps, re-engages, selection and the parallel bound.

import assert from "node:assert/strict";
import type { ClusterAccess, ClusterAuth } from "../../kube/mod.ts";
import * as prometheus from "../../util/prometheus.ts";
import { Logger, VirtualClock } from "../../util/mod.ts";
import type { ClusterRegistration, RegistrationProblem } from "../hub.ts";
import type { ClusterOffer } from "./cluster_offer.ts";
import { ClusterRegistry, type EngageTarget } from "./registry.ts";

class RecordingTarget implements EngageTarget {
  readonly calls: string[] = [];
  readonly engaged = new Map<string, ClusterAccess>();
  readonly held = new Map<string, RegistrationProblem>();
  gate: Promise<void> | undefined;
  running = 0;
  maxRunning = 0;

  async engage(name: string, access: ClusterAccess, r: ClusterRegistration): Promise<void> {
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    await this.gate;
    this.running--;
    this.calls.push(`engage ${name} ${r.provider}`);
    this.engaged.set(name, access);
    this.held.delete(name);
  }

  disengage(name: string): Promise<void> {
    this.calls.push(`disengage ${name}`);
    this.engaged.delete(name);
    return Promise.resolve();
  }

  hold(name: string, problem: RegistrationProblem | undefined): void {
    this.calls.push(`hold ${name} ${problem ? "set" : "clear"}`);
    if (problem) this.held.set(name, problem);
    else this.held.delete(name);
  }
}

function access(name: string, token: string, server = "https://127.0.0.1:1"): ClusterAccess {
  const auth: ClusterAuth = { headers: { Authorization: `Bearer ${token}` }, insecureSkipTlsVerify: false };
  return { name, server, source: "test", auth: () => Promise.resolve(auth) };
}

function offer(name: string, token = "t1", endpoint = "e1"): ClusterOffer {
  return { name, access: access(name, token), endpointDigest: endpoint, credentialsDigest: token };
}

const logger = new Logger({ level: "error", format: "json" });

Deno.test("ClusterRegistry serves a name offered once, and disengages it when its source withdraws it", async () => {
  const target = new RecordingTarget();
  const r = new ClusterRegistry({ selection: "all", logger });
  r.connect(target);
  r.offer("folder", "/c/a.yaml", [offer("a")]);
  await r.idle();
  assert.deepEqual(target.calls, ["engage a folder"]);
  r.withdraw("folder", "/c/a.yaml");
  await r.idle();
  assert.deepEqual(target.calls, ["engage a folder", "disengage a"]);
  assert.deepEqual(r.registered(), []);
});

Deno.test("ClusterRegistry keeps serving the first source of a name a later Secret also offers, and serves the later one once the first goes", async () => {
  const target = new RecordingTarget();
  const clock = new VirtualClock();
  const r = new ClusterRegistry({ selection: "all", logger, clock });
  r.connect(target);
  r.attach("secret", () => ({ state: "watching", synced: true, watches: ["hub"], lastError: null }));
  r.offer("folder", "/c/a.yaml", [offer("prod")]);
  await r.idle();
  r.offer("secret", "hub/prod", [offer("prod", "t9", "e9")]);
  await r.idle();
  assert.deepEqual(target.calls, ["engage prod folder"], "the later Secret neither disengages nor replaces it");
  assert.deepEqual(await target.engaged.get("prod")!.auth().then((a) => a.headers.Authorization), "Bearer t1");
  assert.match(
    r.providerHealth().secret.errors[0]?.error ?? "no error shown",
    /name collision: cluster "prod" is already registered by folder \/c\/a\.yaml; secret hub\/prod is ignored/,
  );
  // Engaged less than the re-engage interval ago: the folder's cluster goes at once, the Secret's waits its turn.
  r.withdraw("folder", "/c/a.yaml");
  await r.idle();
  assert.deepEqual(target.calls, ["engage prod folder", "disengage prod"]);
  assert.deepEqual(r.registered(), []);
  await clock.advance(3000);
  await r.idle();
  assert.deepEqual(target.held.has("prod"), false);
  assert.deepEqual(r.registered().map((c) => [c.name, c.provider, c.source]), [["prod", "secret", "hub/prod"]]);
  assert.deepEqual(await target.engaged.get("prod")!.auth().then((a) => a.headers.Authorization), "Bearer t9");
});

Deno.test("ClusterRegistry swaps a credentials-only change into the served access without re-engaging", async () => {
  const target = new RecordingTarget();
  const r = new ClusterRegistry({ selection: "all", logger });
  r.connect(target);
  r.offer("secret", "hub/a", [offer("a", "old")]);
  await r.idle();
  const served = target.engaged.get("a")!;
  r.offer("secret", "hub/a", [offer("a", "new")]);
  await r.idle();
  assert.deepEqual(target.calls, ["engage a secret"]);
  assert.deepEqual((await served.auth()).headers.Authorization, "Bearer new");
  assert.deepEqual(r.registered()[0].credentialSwaps, 1);
});

Deno.test("ClusterRegistry re-engages a cluster whose server or CA changed", async () => {
  const target = new RecordingTarget();
  const clock = new VirtualClock();
  const r = new ClusterRegistry({ selection: "all", logger, clock });
  r.connect(target);
  r.offer("folder", "/c/a.yaml", [offer("a", "t", "server-1")]);
  await r.idle();
  await clock.advance(3000);
  r.offer("folder", "/c/a.yaml", [offer("a", "t", "server-2")]);
  await r.idle();
  assert.deepEqual(target.calls, ["engage a folder", "engage a folder"]);
});

Deno.test("ClusterRegistry re-engages a source that changes faster than the interval at most once per interval, with its latest version, in one log line per burst", async () => {
  const target = new RecordingTarget();
  const clock = new VirtualClock();
  const lines: string[] = [];
  const r = new ClusterRegistry({
    selection: "all",
    clock,
    logger: new Logger({ level: "info", format: "json", write: (l) => lines.push(l) }),
  });
  r.connect(target);
  const at = (i: number): ClusterOffer => ({
    name: "a",
    access: access("a", "t", `https://127.0.0.1:${10_000 + i}`),
    endpointDigest: `server-${i}`,
    credentialsDigest: "t",
  });
  // 100 rewrites a second for 10 s, each with another server.
  for (let i = 0; i < 1000; i++) {
    r.offer("secret", "hub/a", [at(i)]);
    await r.idle();
    await clock.advance(10);
  }
  await clock.advance(3000);
  await r.idle();
  const engages = target.calls.filter((c) => c === "engage a secret").length;
  assert.ok(engages >= 2 && engages <= 5, `at most one engage per 3 s over 13 s, got ${engages}`);
  assert.deepEqual(r.registered().length, 1);
  // The latest version serves: the served access is the last one offered.
  assert.equal(target.engaged.get("a")!.server, at(999).access!.server);
  const registryLines = lines.filter((l) => /"msg":"cluster (re-)?registered/.test(l));
  assert.equal(registryLines.length, engages, "one line per engage, whatever the number of changes it stands for");
  assert.match(registryLines.at(-1)!, /"changesCoalesced":\d+/);
  // Nothing left waiting once it is quiet.
  await clock.advance(10_000);
  assert.equal(clock.pending, 0);
});

Deno.test("ClusterRegistry shows a broken offer as an error on its name instead of serving it", async () => {
  const target = new RecordingTarget();
  const r = new ClusterRegistry({ selection: "all", logger });
  r.connect(target);
  r.offer("secret", "hub/bad", [{ name: "bad", error: "no data key", endpointDigest: "", credentialsDigest: "" }]);
  await r.idle();
  assert.deepEqual(target.engaged.size, 0);
  assert.deepEqual(target.held.get("bad"), { provider: "secret", error: "no data key" });
});

Deno.test("ClusterRegistry with an explicit selection ignores other names and shows a selected name nobody registered yet", async () => {
  const target = new RecordingTarget();
  const r = new ClusterRegistry({ selection: ["a", "later"], howToRegister: "add a Secret", logger });
  r.offer("folder", "/c/x.yaml", [offer("a"), offer("other")]);
  const before = r.check();
  assert.deepEqual(before.serving.map((a) => a.name), ["a"]);
  assert.deepEqual(before.problems.map((p) => [p.name, p.registered]), [["later", false]]);
  r.connect(target);
  await r.idle();
  assert.deepEqual([...target.engaged.keys()], ["a"]);
  assert.match(
    target.held.get("later")!.error,
    /selected by --clusters but no provider registers it yet; add a Secret/,
  );
  r.offer("secret", "hub/later", [offer("later")]);
  await r.idle();
  assert.deepEqual([...target.engaged.keys()].sort(), ["a", "later"]);
  assert.deepEqual(target.held.size, 0);
});

Deno.test("ClusterRegistry engages in parallel, never more than its concurrency at once", async () => {
  const target = new RecordingTarget();
  let open!: () => void;
  target.gate = new Promise((r) => (open = r));
  const r = new ClusterRegistry({ selection: "all", concurrency: 3, logger });
  r.connect(target);
  r.offer("folder", "/c/many.yaml", Array.from({ length: 10 }, (_, i) => offer(`c${i}`)));
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.deepEqual(target.running, 3);
  open();
  await r.idle();
  assert.deepEqual(target.maxRunning, 3);
  assert.deepEqual(target.engaged.size, 10);
});

Deno.test("ClusterRegistry stops syncing once stopped", async () => {
  const target = new RecordingTarget();
  const r = new ClusterRegistry({ selection: "all", logger });
  r.connect(target);
  const stop = new AbortController();
  const done = r.start(stop.signal);
  stop.abort();
  await done;
  r.offer("folder", "/c/a.yaml", [offer("a")]);
  await r.idle();
  assert.ok(target.calls.length === 0, target.calls.join(", "));
});

Deno.test("ClusterRegistry's provider health names each unusable source, broken offer and collision, and counts the clusters served", async () => {
  const target = new RecordingTarget();
  let shown: (() => Record<string, unknown>) | undefined;
  const r = new ClusterRegistry({ selection: "all", logger });
  r.connect(Object.assign(target, { showProviders: (read: () => Record<string, unknown>) => shown = read }));
  r.attach("folder", () => ({ state: "watching", synced: true, watches: ["/c"], lastError: null }));
  r.attach(
    "secret",
    () => ({ state: "forbidden", synced: false, watches: ["hub:ns"], lastError: "secrets is forbidden" }),
  );
  r.offer("folder", "/c/a.yaml", [offer("a"), offer("dup")]);
  r.offer("secret", "ns/dup", [offer("dup", "t2", "e2")]);
  r.offer("secret", "ns/bad", [{ name: "bad", error: "no data key", endpointDigest: "", credentialsDigest: "" }]);
  r.unusable("folder", "/c/broken.yaml", "invalid kubeconfig /c/broken.yaml: not valid YAML (line 1)");
  await r.idle();
  const health = r.providerHealth();
  assert.deepEqual(shown?.(), health, "connect() hands the target the same view");
  assert.equal(health.folder.clusters, 2, "the folder registered dup first and keeps serving it");
  assert.deepEqual(health.folder.errors.map((e) => [e.source, e.cluster]), [
    ["/c/broken.yaml", undefined],
  ]);
  assert.deepEqual(health.secret.errors.map((e) => [e.source, e.cluster, e.error.slice(0, 14)]), [
    ["ns/bad", "bad", "no data key"],
    ["ns/dup", "dup", "name collision"],
  ]);
  assert.equal(health.secret.state, "forbidden");
  assert.equal(health.secret.synced, false);
  assert.equal(health.secret.lastError, "secrets is forbidden");
  r.unusable("folder", "/c/broken.yaml", undefined);
  r.withdraw("secret", "ns/dup");
  await r.idle();
  assert.deepEqual(r.providerHealth().folder.errors, []);
  assert.deepEqual(r.providerHealth().secret.errors.map((e) => e.source), ["ns/bad"]);
  assert.equal(r.providerHealth().folder.clusters, 2);
});

Deno.test("ClusterRegistry keeps serving a command-line name a Secret or dropped file also offers, shows the collision in provider health and hub_cluster_name_collisions", async () => {
  const target = new RecordingTarget();
  const r = new ClusterRegistry({ selection: "all", logger });
  r.connect(target);
  r.attach("folder", () => ({ state: "watching", synced: true, watches: ["/c"], lastError: null }));
  r.attach("secret", () => ({ state: "watching", synced: true, watches: ["hub:ns"], lastError: null }));
  const prom = new prometheus.MetricRegistry();
  r.registerMetrics(prom);
  r.offer("folder", "/c/local.yaml", [offer("prod")], true);
  await r.idle();
  const real = target.engaged.get("prod");
  // Neither order nor an invalid kubeconfig in the Secret changes anything for the command-line cluster.
  r.offer("secret", "ns/prod", [offer("prod", "stolen", "attacker")]);
  r.offer("secret", "ns/in-cluster", [{
    name: "in-cluster",
    error: "no data key",
    endpointDigest: "",
    credentialsDigest: "",
  }]);
  r.offer("folder", "/c/dropped.yaml", [offer("prod", "t9", "e9")]);
  await r.idle();
  assert.equal(target.engaged.get("prod"), real, "the command-line cluster is never re-engaged");
  assert.deepEqual(target.calls, ["engage prod folder"]);
  assert.deepEqual(target.held.size, 0);
  const health = r.providerHealth();
  assert.deepEqual(health.secret.errors.map((e) => [e.source, e.cluster]), [["ns/in-cluster", "in-cluster"], [
    "ns/prod",
    "prod",
  ]]);
  assert.match(
    health.secret.errors[1].error,
    /cluster name "prod" is reserved: the command line defines it \(folder \/c\/local.yaml\); secret ns\/prod may not take it/,
  );
  assert.match(health.secret.errors[0].error, /"in-cluster" names the hub's own pod cluster/);
  assert.deepEqual(health.folder.errors.map((e) => [e.source, e.cluster]), [["/c/dropped.yaml", "prod"]]);
  const text = await prom.metrics();
  assert.match(text, /^hub_cluster_name_collisions\{reason="reserved"\} 2$/m);
  assert.match(text, /^hub_cluster_name_collisions\{reason="duplicate"\} 0$/m);
  r.withdraw("secret", "ns/prod");
  r.withdraw("secret", "ns/in-cluster");
  r.withdraw("folder", "/c/dropped.yaml");
  await r.idle();
  assert.match(await prom.metrics(), /^hub_cluster_name_collisions\{reason="reserved"\} 0$/m);
  assert.deepEqual(target.calls, ["engage prod folder"]);
});

Deno.test("ClusterRegistry serves the first of two untrusted sources offering one name and counts the other as a duplicate", async () => {
  const target = new RecordingTarget();
  const r = new ClusterRegistry({ selection: "all", logger });
  r.connect(target);
  const prom = new prometheus.MetricRegistry();
  r.registerMetrics(prom);
  r.offer("secret", "ns/x", [offer("x")]);
  r.offer("folder", "/c/x.yaml", [offer("x", "t2", "e2")]);
  await r.idle();
  assert.deepEqual(target.calls, ["engage x secret"]);
  assert.equal(target.held.has("x"), false);
  assert.match(await prom.metrics(), /^hub_cluster_name_collisions\{reason="duplicate"\} 1$/m);
});

Deno.test("ClusterRegistry counts 1,000 broken Secrets in a fixed set of series and logs them in a few summarised lines", async () => {
  const target = new RecordingTarget();
  const clock = new VirtualClock();
  const lines: Record<string, unknown>[] = [];
  const r = new ClusterRegistry({
    selection: "all",
    clock,
    logger: new Logger({ level: "info", format: "json", write: (l) => lines.push(JSON.parse(l)) }),
  });
  const prom = new prometheus.MetricRegistry();
  r.registerMetrics(prom);
  r.connect(target);
  for (let i = 0; i < 1000; i++) {
    r.offer("secret", `hub/bad-${i}`, [{
      name: `bad-${i}`,
      error: "no context",
      endpointDigest: "",
      credentialsDigest: "",
    }]);
  }
  await r.idle();
  const text = await prom.metrics();
  assert.match(text, /^hub_cluster_offers_refused\{provider="secret",reason="invalid"\} 1000$/m);
  const refused = text.split("\n").filter((l) => l.startsWith("hub_cluster_offers_refused{"));
  assert.equal(refused.length, 20, "5 providers × 4 reasons, whatever the number of names");
  assert.ok(!text.includes("bad-1"), "no series names a refused cluster");
  // Each message: 5 lines in full, then one summary with the count once the window ends.
  await clock.advance(10_000);
  const notUsable = lines.filter((l) => l.msg === "cluster not usable");
  const notServed = lines.filter((l) => l.msg === "cluster not served");
  assert.equal(notUsable.length, 6);
  assert.equal(notServed.length, 6);
  assert.equal(notUsable[5].suppressed, 995);
  assert.equal((notUsable[5].names as string[]).length, 5);
  assert.equal(target.held.size, 1000, "every name is still held with its error on its /status entry");
});
