// Entry point of `deno task cluster:add` and `deno task cluster:remove`: reads flags and kubeconfigs, then registers.

import "../_npm_env.ts";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { type ClusterAccess, ConfigError, loadContexts } from "../../kube/mod.ts";
import { readEnv } from "../permissions.ts";
import {
  addCluster,
  RegistrationError,
  type RegistrationTarget,
  removeCluster,
} from "../../registration/cluster_registration.ts";
import { errorText } from "../../util/mod.ts";

const ROOT = new URL("../../..", import.meta.url).pathname;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

const HELP = `Registers a cluster with the hub, or unregisters it.

Usage:
  deno task cluster:add --context NAME [--hub-context HUB] [--name CLUSTER] [--dry-run]
                        [--token-ttl DURATION | --non-expiring] [--mirror-namespaces NS,...]
  deno task cluster:remove --context NAME [--hub-context HUB] [--name CLUSTER] [--purge] [--dry-run]

  --context NAME          the cluster to register: a context of the kubeconfigs read (see --kubeconfig)
  --name CLUSTER          its name at the hub (default: the context's name)
  --hub-context HUB       write a kubeconfig Secret into this cluster (the hub's own; it must run with
                          --cluster-secrets NS). Without it, write clusters/CLUSTER.yaml (see --cluster-dir)
  --secret-namespace NS   the namespace the hub's --cluster-secrets watches (default operator-hub)
  --cluster-dir DIR       the hub's --cluster-dir, for the file registration (default ./clusters)
  --kubeconfig FILE       kubeconfig to read contexts from (repeatable); default: clusters/*.yaml plus
                          $KUBECONFIG or ~/.kube/config
  --token-ttl DURATION    lifetime of the TokenRequest token, e.g. 720h, 90d (default 8760h); re-run
                          cluster:add to rotate it (the old token is revoked once the new one is registered)
  --non-expiring          use a kubernetes.io/service-account-token Secret instead (needs the cluster's
                          kube-controller-manager to fill it)
  --mirror-namespaces NS  namespaces (comma-separated, existing) where the hub's Mirror operator may read and
                          write Secrets and ConfigMaps in this cluster: a Role in each. Default none: the hub
                          gets the Uuid operator's rights only, and no access to any Secret there
  --purge                 (remove) also delete, in the cluster, everything cluster:add created there
  --dry-run               print what would be created or deleted; change nothing

Exit codes: 0 done, 1 a step failed, 2 bad flags or kubeconfig.`;

/** Runs the CLI; resolves with the exit code. */
export async function clusterCli(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command !== "add" && command !== "remove") {
    return usage(`expected "add" or "remove" as the first argument, got "${command ?? ""}"`);
  }
  let values: Record<string, string | string[] | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: rest,
      strict: true,
      allowPositionals: false,
      options: {
        help: { type: "boolean", short: "h" },
        context: { type: "string" },
        name: { type: "string" },
        "hub-context": { type: "string" },
        "secret-namespace": { type: "string" },
        "cluster-dir": { type: "string" },
        kubeconfig: { type: "string", multiple: true },
        "token-ttl": { type: "string" },
        "non-expiring": { type: "boolean" },
        "mirror-namespaces": { type: "string" },
        purge: { type: "boolean" },
        "dry-run": { type: "boolean" },
      },
    }));
  } catch (err) {
    return usage(`${(err as Error).message.split("\n")[0]} (see --help)`);
  }
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const context = values.context as string | undefined;
  if (!context) return usage(`--context is required: the kubeconfig context of the cluster to ${command}`);
  const name = (values.name as string | undefined) ?? context;
  if (name.length > 63 || !DNS_LABEL.test(name)) {
    return usage(
      `invalid cluster name "${name}": it names a Secret and a file, so it must be a lowercase DNS label; pass --name`,
    );
  }
  const secretNamespace = (values["secret-namespace"] as string | undefined) ?? "operator-hub";
  if (!DNS_LABEL.test(secretNamespace)) return usage(`invalid --secret-namespace "${secretNamespace}"`);
  if (command === "add" && values["token-ttl"] !== undefined && values["non-expiring"]) {
    return usage("choose one of --token-ttl and --non-expiring");
  }
  if (command === "remove" && (values["token-ttl"] !== undefined || values["non-expiring"])) {
    return usage("--token-ttl and --non-expiring are for cluster:add");
  }
  if (command === "add" && values.purge) return usage("--purge is for cluster:remove");
  if (command === "remove" && values["mirror-namespaces"] !== undefined) {
    return usage("--mirror-namespaces is for cluster:add (cluster:remove --purge deletes the Roles it made)");
  }
  const mirrorNamespaces = ((values["mirror-namespaces"] as string | undefined) ?? "").split(",").map((n) => n.trim())
    .filter(Boolean);
  const badNamespace = mirrorNamespaces.find((n) => n.length > 63 || !DNS_LABEL.test(n));
  if (badNamespace !== undefined || (values["mirror-namespaces"] !== undefined && mirrorNamespaces.length === 0)) {
    return usage(
      `invalid --mirror-namespaces "${values["mirror-namespaces"]}": comma-separated namespace names (lowercase DNS ` +
        `labels), e.g. team-a,team-b`,
    );
  }
  let ttl: number | undefined;
  if (values["token-ttl"] !== undefined) {
    ttl = parseDuration(values["token-ttl"] as string);
    if (ttl === undefined || ttl < 600) {
      return usage(`invalid --token-ttl "${values["token-ttl"]}": a duration of at least 10m, e.g. 720h or 90d`);
    }
  }
  const hubContext = values["hub-context"] as string | undefined;
  let target: ClusterAccess;
  let hub: ClusterAccess | undefined;
  try {
    const catalog = await loadContexts({
      files: (values.kubeconfig as string[] | undefined) ?? [],
      env: readEnv,
      cwd: Deno.cwd(),
    });
    [target] = catalog.select([context]);
    if (hubContext !== undefined) [hub] = catalog.select([hubContext]);
  } catch (err) {
    if (err instanceof ConfigError) return usage(err.message);
    throw err;
  }
  const registration: RegistrationTarget = hub
    ? { kind: "secret", hub, namespace: secretNamespace }
    : { kind: "file", dir: resolve(Deno.cwd(), (values["cluster-dir"] as string | undefined) ?? "clusters") };
  const print = (line: string) => console.log(line);
  try {
    if (command === "add") {
      await addCluster({
        target,
        name,
        registration,
        tokenTtlSeconds: ttl,
        nonExpiring: values["non-expiring"] === true,
        mirrorNamespaces,
        dryRun: values["dry-run"] === true,
        root: ROOT,
        print,
      });
    } else {
      await removeCluster({
        name,
        registration,
        purge: values.purge ? target : undefined,
        dryRun: values["dry-run"] === true,
        print,
      });
    }
  } catch (err) {
    console.error(`cluster:${command}: error: ${errorText(err)}`);
    return err instanceof RegistrationError ? 2 : 1;
  }
  return 0;
}

/** `90s`, `10m`, `720h`, `90d` (or combinations like `1h30m`) in seconds; undefined when not a duration. */
export function parseDuration(raw: string): number | undefined {
  const unit: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };
  const parts = [...raw.matchAll(/(\d+)([smhd])/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join("") !== raw) return undefined;
  return parts.reduce((n, p) => n + Number(p[1]) * unit[p[2]], 0);
}

function usage(message: string): number {
  console.error(`cluster: error: ${message}`);
  return 2;
}

if (import.meta.main) {
  Deno.exit(await clusterCli(Deno.args));
}
