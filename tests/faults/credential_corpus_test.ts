// The corpus of bad credentials (issue 27): 1,000 generated kubeconfigs, mutations of valid ones, fed through both
// cluster providers while the hub serves prod, staging and dev; each is judged on its own.
//
// Replay: the seed is printed at the start and in every failure; `CORPUS_SEED=N deno test -A --no-check=remote
// tests/faults/credential_corpus_test.ts` generates the same 1,000 kubeconfigs again.
//
// Guarantees: the test owns what it touches: one namespace (in prod, staging and dev) that is also the hub's only
// --namespace and its --cluster-secrets namespace, a temporary cluster folder, and a listener on 127.0.0.1 standing
// in for the attacker.

import assert from "node:assert/strict";
import { type ClusterApi, localApi, type UuidObserver, waitAllAssigned } from "../../dev/support/cluster_api.ts";
import { layoutCorpus } from "../support/corpus_layout.ts";
import { judge, type Verdict } from "../support/corpus_verdicts.ts";
import { FAULTS_DIR, randomToken, tempDir } from "../../dev/support/fault_cluster.ts";
import { Cleanup, finishHub, localNamespace, recordFigure, secondsSince, startHub } from "../support/fault_harness.ts";
import { HealthProbe } from "../support/health_probe.ts";
import {
  corpusSeed,
  type CorpusWorld,
  describeCase,
  generateCorpus,
  type Target,
} from "../support/kubeconfig_mutations.ts";
import { localEndpoint, requireClusters } from "../support/mod.ts";
import { RecordingListener } from "../support/recording_listener.ts";

const TARGETS: readonly Target[] = ["prod", "staging", "dev"];
/** How many kubeconfigs the corpus holds (the issue asks for at least 1,000). */
const CORPUS_SIZE = 1_000;
/** Hang guard for the corpus to settle: it settles in ~30 s on a loaded 2-core machine; 180 s is far beyond that. */
const SETTLE_GUARD_MS = 150_000;
/** Outcomes unchanged this long, none pending, end the wait even when some are wrong. */
const STABLE_MS = 20_000;
/**
 * Liveness while the corpus arrives: a probe not answered within 5 s fails (the shipped livenessProbe's timeoutSeconds),
 * and failed or slow (over 1 s) probes in a row may not span more than this: the kubelet restarts the pod after three
 * failed probes 10 s apart (periodSeconds 10, failureThreshold 3). The burst of 1,000 kubeconfigs arriving at once
 * stalls the hub for up to ~9 s on a loaded 2-core machine (figure healthz_longest_outage_ms).
 */
const MAX_OUTAGE_MS = 30_000;
/**
 * Once the corpus has settled, the hub is probed for this long and every answer must be a 200 within 1 s: what it
 * keeps doing with 1,000 kubeconfigs it has already judged (re-reading files, retrying failing clusters) must not
 * freeze it.
 */
const QUIET_MS = 15_000;
/** Secrets created at once. */
const SECRET_CONCURRENCY = 16;
/** Every cluster on one /status page: the corpus registers about 1,000 names, /status lists 500 by default. */
const STATUS_ALL = "/status?limit=5000";

async function createAll(api: ClusterApi, manifests: Record<string, unknown>[], namespace: string): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < manifests.length) {
      const m = manifests[next++];
      await api.request("POST", `/api/v1/namespaces/${namespace}/secrets`, m);
    }
  };
  await Promise.all(Array.from({ length: SECRET_CONCURRENCY }, worker));
}

async function createUuids(apis: Record<Target, ClusterApi>, ns: string, prefix: string, counts: number[]) {
  await Promise.all(TARGETS.map(async (t, i) => {
    for (let n = 0; n < counts[i]; n++) await apis[t].createUuid(ns, `${prefix}-${n}`);
  }));
}

Deno.test("1,000 generated bad kubeconfigs, fed through labelled Secrets and the cluster folder, are each refused with one clear line or served correctly; the hub stays healthy, never contacts the attacker's address or runs a plugin off the allowlist, leaks none of their credentials, and prod, staging and dev lose no UUID", async () => {
  requireClusters();
  const seed = corpusSeed();
  console.log(`credential corpus: CORPUS_SEED=${seed}`);
  await using cleanup = new Cleanup();
  const ns = (await localNamespace(cleanup, "corpus", [...TARGETS])).name;
  const dir = cleanup.add(await tempDir("corpus"), (d) => d.remove());
  const clusterDir = `${dir.path}/clusters`;
  await Deno.mkdir(`${clusterDir}`);
  await Deno.mkdir(`${dir.path}/bin`);
  await Deno.mkdir(`${dir.path}/evil`);
  const marker = `corpus-marker-${randomToken()}`;
  const trace = `${dir.path}/forbidden-plugins-ran.log`;
  const credential = `printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",` +
    `"status":{"token":"%s"}}\\n' "$1"\n`;
  const forbidden = `#!/bin/sh\necho "$0" >> ${trace}\n${credential}`;
  const world: CorpusWorld = {
    endpoints: { prod: localEndpoint("prod"), staging: localEndpoint("staging"), dev: localEndpoint("dev") },
    attacker: { http: "", https: "" },
    markerFile: await dir.write("marker.token", `${marker}\n`),
    allowedPlugin: await dir.write("bin/corpus-plugin", `#!/bin/sh\n${credential}`, 0o700),
    allowedName: "corpus-plugin",
    evilPathDir: `${dir.path}/evil`,
    forbiddenPlugin: await dir.write("clusters/forbidden-plugin.sh", forbidden, 0o700),
    namespace: ns,
    reserved: ["in-cluster", ...TARGETS],
  };
  await dir.write("evil/corpus-plugin", forbidden, 0o700);
  const attacker = cleanup.add(RecordingListener.start(), (l) => l.close());
  world.attacker = { http: attacker.url("http"), https: attacker.url("https") };
  const started = performance.now();
  const corpus = generateCorpus(world, { seed, count: CORPUS_SIZE });
  const layout = layoutCorpus(corpus.cases, { clusterDir, namespace: ns });
  console.log(
    `credential corpus: generated in ${
      secondsSince(started)
    } s: ${layout.files.length} files, ${layout.secrets.length} Secrets`,
  );

  const apis = Object.fromEntries(TARGETS.map((t) => [t, cleanup.add(localApi(t), (a) => a.close())])) as Record<
    Target,
    ClusterApi
  >;
  const observers = Object.fromEntries(
    TARGETS.map((t) => [t, cleanup.add(apis[t].observe(ns), (o) => o.stop())]),
  ) as Record<Target, UuidObserver>;
  await createUuids(apis, ns, "before", [3, 4, 5]);
  const hub = startHub(["all"], {
    namespaces: [ns],
    args: [
      ...["--cluster-dir", clusterDir, "--cluster-secrets", ns, "--home-cluster", "prod", "--operators", "uuid"],
      ...["--exec-plugin-allowlist", `${world.allowedPlugin},${world.allowedName}`],
    ],
    env: { PATH: `${dir.path}/bin:${Deno.env.get("PATH")}` },
  });
  cleanup.add(hub, (h) => h.kill());
  await hub.waitReady(60_000);
  const health = HealthProbe.start(hub.port);
  cleanup.add(health, (h) => h.stop());

  const before = (await hub.get(STATUS_ALL)).body;
  const registeredAt = Object.fromEntries(TARGETS.map((t) => [t, before.clusters[t]?.registeredAt]));
  const fed = performance.now();
  await Promise.all([
    ...layout.files.map((f) =>
      Deno.writeFile(`${f.path}.partial`, f.bytes).then(() => Deno.rename(`${f.path}.partial`, f.path))
    ),
    createAll(apis.prod, layout.secrets, ns),
    createUuids(apis, ns, "during", [2, 2, 2]),
  ]);
  const uuids: Record<Target, number> = { prod: 5, staging: 6, dev: 7 };
  const baseline = { uuids, registeredAt };
  console.log(`credential corpus: fed in ${secondsSince(fed)} s`);

  // Settle: until every case has an outcome its expectation allows; or, when some never will, until the outcomes have
  // not changed for STABLE_MS with none pending; or the hang guard.
  let verdicts: Verdict[] = [];
  let last = "";
  let stableSince = performance.now();
  const deadline = performance.now() + SETTLE_GUARD_MS;
  while (true) {
    const status = (await hub.get(STATUS_ALL)).body;
    verdicts = corpus.cases.map((c) => judge(c, layout.sources.get(c.id)!, status, baseline));
    const now = JSON.stringify(verdicts.map((v) => [v.observed, v.problem]));
    if (now !== last) [last, stableSince] = [now, performance.now()];
    const settled = verdicts.every((v) => v.problem === undefined) ||
      (performance.now() - stableSince > STABLE_MS && verdicts.every((v) => v.observed !== "pending"));
    if (settled || performance.now() > deadline || hub.exited) break;
    await new Promise((r) => setTimeout(r, 2_000));
  }
  const settleSeconds = secondsSince(fed);
  await Promise.all(TARGETS.map((t) => waitAllAssigned(apis[t], ns, uuids[t], 60_000)));
  await health.stop();
  const quiet = HealthProbe.start(hub.port);
  cleanup.add(quiet, (h) => h.stop());
  await new Promise((r) => setTimeout(r, QUIET_MS));
  await quiet.stop();
  const tally: Record<string, number> = {};
  for (const v of verdicts) tally[v.observed] = (tally[v.observed] ?? 0) + 1;
  const bad = verdicts.flatMap((v, i) =>
    v.problem === undefined ? [] : [`${describeCase(corpus.cases[i])}: ${v.observed}: ${v.problem}`]
  );
  await recordFigure({
    test: "credential_corpus",
    seed,
    cases: corpus.cases.length,
    ...tally,
    mishandled: bad.length,
    settle_s: settleSeconds,
    healthz_probes: health.probes,
    healthz_slowest_ms: health.slowestMs,
    healthz_longest_outage_ms: health.longestOutageMs,
    healthz_unresponsive_ms: health.unresponsiveMs,
    healthz_settled_slowest_ms: quiet.slowestMs,
  });
  const replay = `replay with CORPUS_SEED=${seed}`;
  const exited = hub.exited;
  // finishHub also fails on any credential of the corpus (or the marker) in the hub's log, /status or /metrics.
  const leaks = await finishHub(hub, "credential-corpus", [marker, ...corpus.cases.flatMap((c) => c.secrets)]).then(
    () => [],
    (err) => [String(err?.message ?? err).split("\n")[0]],
  );
  const ran = await Deno.readTextFile(trace).catch(() => "");
  const failures = [
    ...leaks,
    ...(exited === undefined ? [] : [`the hub exited with ${exited.code} during the corpus`]),
    ...([...health.failures, ...quiet.failures].some((f) => !f.error.includes("timeout"))
      ? [`/healthz answered other than 200: ${JSON.stringify([...health.failures, ...quiet.failures].slice(0, 5))}`]
      : []),
    ...(health.longestOutageMs > MAX_OUTAGE_MS
      ? [
        `/healthz was slow or unanswered for ${health.longestOutageMs} ms in a row while the corpus arrived ` +
        `(limit ${MAX_OUTAGE_MS}); failures: ${JSON.stringify(health.failures)}`,
      ]
      : []),
    ...(quiet.probes < 5 ? [`only ${quiet.probes} /healthz probes after the corpus settled`] : []),
    ...(quiet.longestOutageMs > 0
      ? [
        `/healthz was slow or unanswered for ${quiet.unresponsiveMs} ms of ${QUIET_MS} ms after the corpus settled ` +
        `(slowest ${quiet.slowestMs} ms; ${quiet.failures.length} of ${quiet.probes} probes failed)`,
      ]
      : []),
    ...(attacker.received(marker) ? ["the marker token reached the attacker's listener"] : []),
    ...(attacker.connections.length > 0 ? [`the hub connected to the attacker: ${attacker.describe()}`] : []),
    ...(ran === ""
      ? []
      : [`plugins off the allowlist ran ${ran.trim().split("\n").length} times: ${ran.split("\n")[0]}`]),
    ...(bad.length === 0
      ? []
      : [`${bad.length} of ${corpus.cases.length} kubeconfigs mishandled:`, ...bad.slice(0, 30)]),
  ];
  await Deno.writeTextFile(
    `${FAULTS_DIR}/credential-corpus-${seed}.txt`,
    [...failures, ...bad.slice(30)].join("\n") + "\n",
  );
  assert.deepEqual(
    failures,
    [],
    `${replay}; outcomes ${JSON.stringify(tally)}; all: .cache/faults/credential-corpus-${seed}.txt`,
  );
  for (const t of TARGETS) observers[t].assertStable(await apis[t].uuidsOf(ns).then((m) => m.keys()), `${t}/${ns}`);
});
