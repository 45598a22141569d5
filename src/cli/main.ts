// Entry point: the only place that reads flags, the environment and signals; builds and runs the Hub.
// Beside it: flags/ (the flag table that parsing and --help read), startup/ (the steps below: clusters, the Hub, its
// providers and servers) and commands/ (the other subcommands: cleanup, init, crd, cluster:add/remove).

// First import: npm packages evaluated after it see only the environment variables --allow-env grants.
import "./_npm_env.ts";
import { FlagError } from "./flags/flag_values.ts";
import { helpText } from "./flags/help_text.ts";
import type { HubFlags } from "./flags/hub_flags.ts";
import { parseFlags } from "./flags/parse_flags.ts";
import { type ClusterSelection, selectClusters } from "./startup/cluster_selection.ts";
import { loadFeature } from "./feature_import.ts";
import { assembleHub, connectRegistry, homeProviders, shardCoordinator } from "./startup/hub_assembly.ts";
import { startServers } from "./startup/servers.ts";
import { ShutdownSignals } from "./shutdown_signals.ts";
import { printUsageError, UsageError } from "./usage_error.ts";
import type { Hub } from "../hub/mod.ts";
import { loadOperatorFiles, type Operator, OperatorFileError } from "../sdk/mod.ts";
import { Logger } from "../util/mod.ts";

export { homeCluster } from "./startup/cluster_selection.ts";

/**
 * The hub's version, as `--version` prints it.
 *
 * @example
 * ```ts
 * import { VERSION } from "../../cli.ts";
 *
 * console.log(`built with operator-hub ${VERSION}`); // built with operator-hub 0.1.0
 * ```
 */
export const VERSION = "0.1.0";

/**
 * What an embedder adds to the command line's hub.
 *
 * @example
 * ```ts
 * import { main, type MainOptions, type Operator } from "../../cli.ts";
 *
 * declare const website: Operator;
 * declare const greeting: Operator;
 * const options: MainOptions = { operators: [website, greeting] };
 * if (import.meta.main) Deno.exit(await main(Deno.args, options));
 * ```
 */
export interface MainOptions {
  /** Operators hosted beside the built-in ones `--operators` selects (as `examples/run_greeting.ts` passes them). */
  operators?: readonly Operator[];
}

/**
 * Runs the hub with the built-in operators `--operators` selects plus `options.operators` (a user's own,
 * as `examples/run_greeting.ts` passes them); resolves with the process exit code.
 *
 * Guarantees: 0 after `--help`, `--version`, or a run stopped by SIGTERM or SIGINT; 2, with one line on stderr,
 * for anything the user must fix (a flag, a kubeconfig, an operator file, a permission, a port), and that before
 * any cluster is engaged; anything else is thrown.
 *
 * @example The command line with your own operator compiled in
 * ```ts
 * import { main } from "../../cli.ts";
 * import { greetingOperator } from "../../examples/greeting_operator.ts";
 *
 * // deno run -A my_hub.ts --kubeconfig clusters/local.yaml --clusters all --operators none
 * if (import.meta.main) Deno.exit(await main(Deno.args, { operators: [greetingOperator] }));
 * ```
 */
export async function main(argv: string[], options: MainOptions = {}): Promise<number> {
  if (argv[0] === "cleanup") {
    const { cleanupMain } = await loadFeature("cleanup", () => import("./commands/cleanup.ts"));
    return await cleanupMain(argv.slice(1));
  }
  if (argv[0] === "init") {
    const { initMain } = await loadFeature("init", () => import("./commands/init.ts"));
    return await initMain(argv.slice(1));
  }
  if (argv[0] === "crd") {
    const { crdMain } = await loadFeature("crd", () => import("./commands/crd.ts"));
    return await crdMain(argv.slice(1));
  }
  try {
    const flags = parseCommandLine(argv);
    if (typeof flags === "number") return flags;
    const logger = new Logger({ level: flags.logLevel, format: flags.logFormat });
    const extra = { embedded: options.operators ?? [], files: await loadFileOperators(flags) };
    const clusters = await selectClusters(flags, logger);
    const { hub, hosted } = await assembleHub(flags, clusters, extra, logger);
    const providers = await homeProviders(flags, clusters, hub, logger);
    using shutdown = new ShutdownSignals(logger);
    const servers = await startServers(flags, hub, { home: clusters.home, hosted, logger, signal: shutdown.signal });
    logStarting(flags, clusters, hub, logger);
    const shards = await shardCoordinator(flags, clusters.home, hub, logger);
    // Only now: a bad --liveness above exits before anything is engaged.
    await connectRegistry(flags, clusters, { hub, shards, admission: servers.admission, extra }, logger);
    await Promise.all([
      hub.start(shutdown.signal),
      shards?.start(shutdown.signal),
      servers.done,
      clusters.registered.registry.start(shutdown.signal),
      clusters.registered.folder.start(shutdown.signal),
      ...providers.map((p) => p.start(shutdown.signal)),
    ]);
    logger.info("operator-hub stopped");
    return 0;
  } catch (err) {
    if (err instanceof UsageError) return printUsageError(err.message);
    throw err;
  }
}

/** The flags, or the exit code when there is nothing to run: 0 after `--help` or `--version` printed on stdout. */
function parseCommandLine(argv: string[]): HubFlags | number {
  let flags: HubFlags;
  try {
    flags = parseFlags(argv);
  } catch (err) {
    if (err instanceof FlagError) throw new UsageError(err.message, { cause: err });
    throw err;
  }
  if (flags.help) {
    console.log(helpText());
    return 0;
  }
  if (flags.version) {
    console.log(`operator-hub ${VERSION}`);
    return 0;
  }
  return flags;
}

/** The operators the files on the command line export; a file that fails to load or exports none is a UsageError. */
async function loadFileOperators(flags: HubFlags): Promise<Operator[]> {
  try {
    return await loadOperatorFiles(flags.files, Deno.cwd());
  } catch (err) {
    if (err instanceof OperatorFileError) throw new UsageError(err.message, { cause: err });
    throw err;
  }
}

/** The one start line: version, clusters, operators, home cluster, providers and the Lease when electing. */
function logStarting(flags: HubFlags, clusters: ClusterSelection, hub: Hub, logger: Logger): void {
  const { leaderElection } = clusters;
  logger.info("operator-hub starting", {
    version: VERSION,
    clusters: clusters.selected.map((a) => a.name),
    operators: hub.operators(),
    homeCluster: clusters.home?.name,
    clusterDir: clusters.registered.clusterDir,
    clusterSecrets: flags.clusterSecrets,
    clusterApi: flags.clusterProviders.clusterApi,
    ...(leaderElection
      ? {
        leaderElection: `${leaderElection.cluster}:${leaderElection.namespace}/${leaderElection.name}`,
        identity: leaderElection.identity,
      }
      : {}),
  });
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
