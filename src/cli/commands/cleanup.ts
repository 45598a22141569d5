// `operator-hub cleanup`: removes the hub's finalizers from every object of every selected cluster (an uninstall).

import { type ClusterAccess, ConfigError, KubeClient } from "../../kube/mod.ts";
import { removeConfigurations } from "../../hub/admission/mod.ts";
import { DNS_LABEL, FlagError } from "../flags/flag_values.ts";
import { parseFlags } from "../flags/parse_flags.ts";
import { cleanupLine, type CleanupResult, cleanupTargets, removeFinalizers } from "../../hub/mod.ts";
import {
  type ClusterRegistry,
  type EngageTarget,
  loadRegisteredClusters,
  SecretProvider,
} from "../../hub/providers/mod.ts";
import { BUILT_IN_OPERATORS } from "../../operators/mod.ts";
import { readEnv } from "../permissions.ts";
import { commandLineSources } from "../startup/cluster_selection.ts";
import { FINALIZER, loadOperatorFiles, type Operator, OperatorFileError } from "../../sdk/mod.ts";
import { errorText, Logger } from "../../util/mod.ts";

const HELP = `Removes the hub's finalizers from every object of every selected cluster, so that nothing hangs on a
hub that is gone (run it after stopping the hub, before uninstalling it; the Helm chart's pre-delete hook does).

Usage: operator-hub cleanup --clusters a,b|all [--kubeconfig FILE] [--cluster-dir DIR]
                            [--cluster-secrets NAMESPACE] [--namespace NS] [--webhook-name NAME] [FILE.ts...]

The cluster flags are the hub's (see operator-hub --help). The finalizers removed are every built-in operator's
(operator-hub.dev/handlers, operator-hub.dev/mirror-copies) and those the operator files given declare; other
finalizers are never touched. It also deletes the admission webhook configurations the hub installed (those labelled
operator-hub.dev/webhook-hub=NAME, --webhook-name, default "default"). Prints one line per cluster, e.g.
"prod: removed 3 finalizers from 3 objects", and "prod: removed 2 webhook configurations" when there were any.
Exit codes: 0 every cluster cleaned; 1 a cluster could not be (unreachable, forbidden, not registered); 2 usage.`;

/** How long the cluster sources (folder, Secrets) may take to be read, and one cluster's cleanup. */
const SOURCES_TIMEOUT_MS = 30_000;
const CLUSTER_TIMEOUT_MS = 120_000;

/** Runs `operator-hub cleanup ARGS`; resolves with the exit code. Output goes to `print` (default console.log). */
export async function cleanupMain(argv: string[], print: (line: string) => void = console.log): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    print(HELP);
    return 0;
  }
  // --webhook-name alone (no --webhook-bind-address): which hub's configurations to delete.
  let webhookName = "default";
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const m = argv[i].match(/^--webhook-name(?:=(.*))?$/);
    if (!m) rest.push(argv[i]);
    else webhookName = m[1] ?? argv[++i] ?? "";
  }
  if (!DNS_LABEL.test(webhookName)) return usage(`invalid --webhook-name "${webhookName}": a DNS label`);
  argv = rest;
  let flags;
  try {
    flags = parseFlags(argv);
  } catch (err) {
    if (err instanceof FlagError) return usage(err.message);
    throw err;
  }
  const logger = new Logger({ level: flags.logLevel === "info" ? "warn" : flags.logLevel, format: flags.logFormat });
  let operators: Operator[];
  try {
    // Every built-in operator's finalizers, whatever --operators says: an uninstall leaves none of them behind.
    const builtIn = Object.values(BUILT_IN_OPERATORS).map((make) => make({ homeCluster: "" }));
    operators = [...builtIn, ...await loadOperatorFiles(flags.files, Deno.cwd())];
  } catch (err) {
    if (err instanceof OperatorFileError) return usage(err.message);
    throw err;
  }
  const stop = new AbortController();
  let found: { served: Map<string, ClusterAccess>; held: Map<string, string> };
  try {
    const registered = await loadRegisteredClusters({ ...commandLineSources(flags), logger });
    const home = flags.clusterSecrets !== undefined
      ? registered.selected.find((a) => a.name === flags.homeCluster) ?? registered.selected[0]
      : undefined;
    if (flags.clusterSecrets !== undefined && !home) {
      throw new ConfigError("--cluster-secrets needs a home cluster: select one with --clusters or --home-cluster");
    }
    const secrets = home
      ? new SecretProvider({
        registry: registered.registry,
        home,
        namespace: flags.clusterSecrets!,
        policy: flags.credentialPolicy,
        env: readEnv,
        logger,
      })
      : undefined;
    const runs = [
      registered.registry.start(stop.signal),
      registered.folder.start(stop.signal),
      secrets?.start(stop.signal),
    ];
    try {
      found = await registeredClusters(registered.registry);
    } finally {
      stop.abort();
      await Promise.all(runs);
    }
  } catch (err) {
    if (err instanceof ConfigError) return usage(err.message);
    throw err;
  }
  const targets = cleanupTargets(operators, [FINALIZER]);
  const webhooks = new Map<string, number>();
  const results = await Promise.all([...found.served].map(async ([name, access]): Promise<CleanupResult> => {
    const client = new KubeClient(access, {
      userAgent: "operator-hub/cleanup",
      logger: logger.child({ cluster: name }),
    });
    try {
      const signal = AbortSignal.timeout(CLUSTER_TIMEOUT_MS);
      const result = await removeFinalizers(client, targets, { namespaces: flags.namespaces, signal });
      try {
        webhooks.set(name, await removeConfigurations(client, webhookName, signal));
      } catch (err) {
        return { ...result, error: result.error ?? `webhook configurations: ${errorText(err)}` };
      }
      return result;
    } catch (err) {
      return { cluster: name, objects: 0, finalizers: 0, error: errorText(err) };
    } finally {
      client.close();
    }
  }));
  for (const r of results.sort((a, b) => a.cluster.localeCompare(b.cluster))) {
    print(cleanupLine(r));
    const n = webhooks.get(r.cluster) ?? 0;
    if (n) print(`${r.cluster}: removed ${n} webhook configuration${n === 1 ? "" : "s"}`);
  }
  for (const [name, problem] of [...found.held].sort()) print(`${name}: not cleaned: ${problem}`);
  return results.every((r) => !r.error) && found.held.size === 0 ? 0 : 1;
}

/**
 * What the registry serves once every provider read its sources: the clusters to clean, and the selected names it
 * holds (not usable), with why.
 */
async function registeredClusters(
  registry: ClusterRegistry,
): Promise<{ served: Map<string, ClusterAccess>; held: Map<string, string> }> {
  const served = new Map<string, ClusterAccess>();
  const held = new Map<string, string>();
  let providers: () => Record<string, { synced?: boolean }> = () => ({});
  const target: EngageTarget = {
    engage: (name, access) => {
      served.set(name, access);
      held.delete(name);
      return Promise.resolve();
    },
    disengage: (name) => {
      served.delete(name);
      return Promise.resolve();
    },
    hold: (name, problem) => {
      if (problem) held.set(name, problem.error);
      else held.delete(name);
    },
    showProviders: (read) => providers = read,
  };
  registry.connect(target);
  const deadline = Date.now() + SOURCES_TIMEOUT_MS;
  while (!Object.values(providers()).every((p) => p.synced !== false) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
  }
  await registry.idle();
  return { served, held };
}

function usage(message: string): number {
  console.error(`operator-hub cleanup: ${message}`);
  return 2;
}
