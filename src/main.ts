// Entry point: the only place that reads flags, the environment and signals; builds and runs the Hub.

import { FlagError, helpText, parseFlags } from "./flags.ts";
import { Hub, serveHealth } from "./hub/mod.ts";
import { ConfigError, loadContexts } from "./kube/mod.ts";
import { uuidOperator } from "./operators/uuid/mod.ts";
import { errorText, Logger } from "./util/mod.ts";

export const VERSION = "0.1.0";

/** Runs the hub; resolves with the process exit code. */
export async function main(argv: string[]): Promise<number> {
  let flags;
  try {
    flags = parseFlags(argv);
  } catch (err) {
    if (err instanceof FlagError) return usageError(err.message);
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
  const logger = new Logger({ level: flags.logLevel, format: flags.logFormat });

  let selected;
  try {
    const catalog = await loadContexts({
      files: flags.kubeconfigs,
      env: (k) => Deno.env.get(k),
      cwd: Deno.cwd(),
    });
    selected = catalog.select(flags.clusters, {
      inCluster: { root: flags.serviceAccountRoot, env: (k) => Deno.env.get(k) },
    });
  } catch (err) {
    if (err instanceof ConfigError) return usageError(err.message);
    throw err;
  }

  const hub = new Hub({
    operator: uuidOperator(),
    namespaces: flags.namespaces,
    limits: flags.limits,
    eventLevel: flags.eventLevel,
    logger,
  });
  for (const access of selected) await hub.engage(access.name, access);

  const stop = new AbortController();
  const onSignal = (sig: string) => () => {
    if (stop.signal.aborted) return;
    logger.info("shutting down", { signal: sig });
    stop.abort();
  };
  const sigterm = onSignal("SIGTERM");
  const sigint = onSignal("SIGINT");
  Deno.addSignalListener("SIGTERM", sigterm);
  Deno.addSignalListener("SIGINT", sigint);

  let server: Promise<void> = Promise.resolve();
  if (flags.liveness) {
    const { hostname, port } = flags.liveness;
    try {
      server = serveHealth(hub, {
        hostname,
        port,
        logger,
        onListen: (addr) => logger.info("health endpoint listening", { url: `http://${addr.hostname}:${addr.port}` }),
      }, stop.signal);
    } catch (err) {
      return usageError(`invalid --liveness: cannot listen on ${hostname}:${port}: ${errorText(err)}`);
    }
  }

  logger.info("operator-hub starting", { version: VERSION, clusters: selected.map((a) => a.name) });
  await Promise.all([hub.start(stop.signal), server]);
  Deno.removeSignalListener("SIGTERM", sigterm);
  Deno.removeSignalListener("SIGINT", sigint);
  logger.info("operator-hub stopped");
  return 0;
}

function usageError(message: string): number {
  console.error(`operator-hub: error: ${message}`);
  return 2;
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
