// `up`: starts or reuses etcd and every cluster's apiserver and controller manager, installs crds/, writes the kubeconfig.

import { ensureBinaries, KUBE_VERSION, REPO_ROOT } from "../build/build.ts";
import { ensureClientPki } from "./_controller_manager.ts";
import { ClusterSetupError } from "./_cluster_setup_error.ts";
import { ensureApiserver, newApiserverRecord } from "./_apiserver.ts";
import { ensureControllerManager } from "./_ensure_controller_manager.ts";
import { ensureEtcd, newEtcdRecord } from "./_etcd.ts";
import { ensureServiceAccountKey } from "./_service_account_key.ts";
import { kubeconfigYaml } from "./_kubeconfig.ts";
import { applyCrds, crdFiles } from "./_crds.ts";
import { removeOrphans } from "./_down.ts";
import {
  CLIENT_PKI,
  DEFAULT_CLUSTER_NAMES,
  KUBECONFIG_PATH,
  NAME_PATTERN,
  NAMESPACE_DELETION_HEALTHY_MS,
  STAGING_KUBECONFIG,
  STATE_DIR,
} from "./_layout.ts";
import {
  clusterRecord,
  controllerManagerRecord,
  readStateSync,
  withLock,
  writeFileAtomic,
  writeState,
} from "./_state.ts";

/** Options shared by the long-running operations. */
export interface LogOptions {
  /** Receives progress lines (no credentials); defaults to console.log. */
  log?: (line: string) => void;
}

/** What `up` did. */
export interface UpReport {
  names: string[];
  kubeconfig: string;
  buildCached: boolean;
  buildSeconds: number;
  /** Seconds from the end of the build until every cluster was ready with its CRDs Established. */
  readySeconds: number;
  etcd: "reused" | "started" | "restarted";
  started: string[];
  restarted: string[];
  reused: string[];
  /** What happened to each cluster's controller manager. */
  controllerManagers: { started: string[]; restarted: string[]; reused: string[] };
  /** Per cluster, seconds from deleting the readiness probe's namespace until it was gone. */
  namespaceDeletionSeconds: Record<string, number>;
}

/** Options of {@linkcode clustersUp}. */
export interface UpOptions extends LogOptions {
  /** Clusters to ensure (default prod, staging, dev). Clusters already in the state are kept running too. */
  names?: string[];
}

/** Starts (or reuses) etcd and every cluster, installs crds/, writes clusters/local.yaml. */
export async function clustersUp(options: UpOptions = {}): Promise<UpReport> {
  const log = options.log ?? ((line: string) => console.log(line));
  const requested = options.names ?? [...DEFAULT_CLUSTER_NAMES];
  if (requested.length === 0) throw new ClusterSetupError("no cluster names given: pass e.g. --names prod,staging");
  for (const name of requested) {
    if (!NAME_PATTERN.test(name)) {
      throw new ClusterSetupError(
        `invalid cluster name "${name}": use 1-32 lowercase letters, digits and '-', starting with a letter`,
      );
    }
  }
  return await withLock(async () => {
    const bins = await ensureBinaries();
    log(
      bins.cached
        ? `kube binaries ${KUBE_VERSION}: cached`
        : `kube binaries ${KUBE_VERSION}: built in ${bins.buildSeconds.toFixed(1)}s`,
    );
    const started = performance.now();
    await Deno.mkdir(STATE_DIR, { recursive: true, mode: 0o700 });
    let state = readStateSync();
    const fresh = state === null;
    if (state === null) {
      await removeOrphans(log);
      const etcd = newEtcdRecord();
      await Deno.remove(etcd.dataDir, { recursive: true }).catch(() => {});
      state = { version: 1, kubeVersion: KUBE_VERSION, etcd, clusters: [], controllerManagers: [] };
    }
    const phases: string[] = [];
    let phaseStart = performance.now();
    const phase = (label: string) => {
      const now = performance.now();
      phases.push(`${label} ${((now - phaseStart) / 1000).toFixed(1)}s`);
      phaseStart = now;
    };
    const etcdOutcome = await ensureEtcd(state, fresh);
    phase("etcd");
    log(`etcd ${etcdOutcome} on ${state.etcd.clientUrl} (data ${state.etcd.dataDir})`);
    await ensureServiceAccountKey();
    await ensureClientPki(CLIENT_PKI);

    const isNew = new Set<string>();
    for (const name of requested) {
      if (!state.clusters.some((c) => c.name === name)) {
        state.clusters.push(newApiserverRecord(state, name));
        isNew.add(name);
      }
    }
    const order = [...requested, ...state.clusters.map((c) => c.name).filter((n) => !requested.includes(n))];
    const records = order.map((name) => clusterRecord(state, name));
    await writeState(state);

    const outcomes = await Promise.all(records.map((r) => ensureApiserver(state, r, isNew.has(r.name))));
    await writeState(state);
    phase("apiservers");

    await writeFileAtomic(STAGING_KUBECONFIG, await kubeconfigYaml(records, order[0]));
    const files = await crdFiles();
    // The CRDs and the controller managers do not depend on each other: both run at once.
    const [managers] = await Promise.all([
      Promise.all(records.map((r) => ensureControllerManager(state, r))),
      Promise.all(records.map((r) => applyCrds(STAGING_KUBECONFIG, r.name, files))),
    ]);
    await writeState(state);
    await Deno.mkdir(`${REPO_ROOT}/clusters`, { recursive: true });
    await writeFileAtomic(KUBECONFIG_PATH, await kubeconfigYaml(records, order[0]));
    phase("CRDs and controller managers");
    const readySeconds = (performance.now() - started) / 1000;

    const report: UpReport = {
      names: order,
      kubeconfig: KUBECONFIG_PATH,
      buildCached: bins.cached,
      buildSeconds: bins.buildSeconds,
      readySeconds,
      etcd: etcdOutcome,
      started: [],
      restarted: [],
      reused: [],
      controllerManagers: { started: [], restarted: [], reused: [] },
      namespaceDeletionSeconds: {},
    };
    const slow: string[] = [];
    records.forEach((r, i) => {
      const manager = controllerManagerRecord(state, r.name);
      // A (re)started one first syncs its caches; the 10 s health limit is for one already running.
      const { outcome, namespaceDeletionSeconds } = managers[i];
      if (outcome === "reused" && namespaceDeletionSeconds * 1000 > NAMESPACE_DELETION_HEALTHY_MS) slow.push(r.name);
      report[outcomes[i]].push(r.name);
      report.controllerManagers[managers[i].outcome].push(r.name);
      report.namespaceDeletionSeconds[r.name] = managers[i].namespaceDeletionSeconds;
      log(`${r.name.padEnd(10)} ${r.url}  ${outcomes[i].padEnd(9)} pid ${r.pid}  log ${r.logFile}`);
      log(
        `${"".padEnd(10)} controller manager :${manager.port}  ${managers[i].outcome.padEnd(9)} pid ${manager.pid}  ` +
          `namespace deleted in ${managers[i].namespaceDeletionSeconds.toFixed(1)}s  log ${manager.logFile}`,
      );
    });
    log(`${files.length} CRD file(s) from crds/ applied and Established in every cluster`);
    if (slow.length > 0) {
      log(
        `warning: the controller managers of ${slow.join(", ")} took more than ` +
          `${NAMESPACE_DELETION_HEALTHY_MS / 1000}s to delete a namespace (a loaded machine?); see their logs above`,
      );
    }
    log(
      `${records.length} cluster(s) ready in ${readySeconds.toFixed(1)}s after the build (${phases.join(", ")}) ` +
        `(build ${bins.cached ? "cached" : `took ${bins.buildSeconds.toFixed(1)}s`}); ` +
        `kubeconfig clusters/local.yaml, contexts ${order.join(", ")}`,
    );
    return report;
  });
}
