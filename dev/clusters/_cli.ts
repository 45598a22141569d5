// The command line of dev/clusters/clusters.ts: up [--names a,b] | down | status, its output and exit codes.

import { ProcessError } from "./_process.ts";
import { ClusterSetupError } from "./_cluster_setup_error.ts";
import { clustersUp } from "./_up.ts";
import { clustersDown } from "./_down.ts";
import { clustersStatus } from "./_status.ts";

const USAGE = `usage: deno run --allow-all dev/clusters/clusters.ts <command>

commands:
  up [--names prod,staging,dev]   start (or reuse) etcd, and per name a kube-apiserver and a
                                  kube-controller-manager; install crds/, write clusters/local.yaml
  down                            stop every process and remove the state
  status                          show liveness and readiness; exit code 1 unless everything is ready`;

function parseNames(args: string[]): string[] | undefined {
  let names: string[] | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    let value: string | undefined;
    if (arg === "--names") value = args[++i];
    else if (arg.startsWith("--names=")) value = arg.slice("--names=".length);
    else throw new ClusterSetupError(`unknown argument "${arg}" for up: the only flag is --names a,b,c`);
    if (value === undefined) throw new ClusterSetupError("--names needs a value, e.g. --names prod,staging");
    names = value.split(",").map((n) => n.trim()).filter((n) => n.length > 0);
  }
  return names;
}

async function command(args: string[]): Promise<number> {
  const [command, ...rest] = args;
  switch (command) {
    case "up": {
      await clustersUp({ names: parseNames(rest) });
      return 0;
    }
    case "down": {
      await clustersDown();
      return 0;
    }
    case "status": {
      const status = await clustersStatus();
      if (!status.etcd) {
        console.log("local clusters are not running (no state in .cache/clusters)");
        return 1;
      }
      const e = status.etcd;
      console.log(`etcd       pid ${e.pid ?? "-"}  ${e.alive ? (e.healthy ? "healthy" : "UNHEALTHY") : "DEAD"}`);
      for (const c of status.clusters) {
        const health = c.alive ? (c.ready ? "ready" : "NOT READY") : "DEAD";
        const m = c.controllerManager;
        const managerHealth = m ? (m.alive ? (m.healthy ? "healthy" : "UNHEALTHY") : "DEAD") : "MISSING";
        console.log(
          `${c.name.padEnd(10)} pid ${c.pid ?? "-"}  ${c.url}  ${health}; ` +
            `controller manager pid ${m?.pid ?? "-"}  ${managerHealth}`,
        );
      }
      return e.healthy && status.clusters.every((c) => c.ready && c.controllerManager?.healthy) ? 0 : 1;
    }
    case "--help":
    case "-h":
    case "help":
      console.log(USAGE);
      return 0;
    default:
      console.error(`unknown command ${JSON.stringify(command ?? "")}: expected up, down or status\n\n${USAGE}`);
      return 2;
  }
}

/**
 * Runs the command in `args` and returns the exit code: 0 done, 1 not ready or a setup failure (printed as one line
 * and its cause), 2 a bad command, 3 any other error.
 */
export async function clustersCli(args: string[]): Promise<number> {
  try {
    return await command(args);
  } catch (error) {
    const e = error instanceof Error ? error : new Error(String(error));
    console.error(`${e.name}: ${e.message}`);
    if (e.cause instanceof Error) console.error(`  caused by ${e.cause.name}: ${e.cause.message}`);
    return error instanceof ClusterSetupError || error instanceof ProcessError ? 1 : 3;
  }
}
