// The local clusters a bench run uses: started if none run (never over another checkout's), foreign control planes noted.

import { ETCD_CLIENT_PORT, FIRST_APISERVER_PORT } from "../../dev/clusters/clusters.ts";
import { requireClusters } from "../../dev/support/local_clusters.ts";
import { ROOT } from "./config.ts";

/** Ensures the local clusters run (starting them if needed) and returns the first `n` names. */
export async function ensureClusters(n: number): Promise<string[]> {
  let names: string[];
  try {
    names = requireClusters().names;
  } catch (err) {
    // Never start clusters over somebody else's: another checkout's apiservers may hold the ports.
    const ports = [FIRST_APISERVER_PORT, FIRST_APISERVER_PORT + 1, FIRST_APISERVER_PORT + 2, ETCD_CLIENT_PORT];
    const busy = ports.filter((port) => portInUse(port));
    if (busy.length > 0) {
      throw new Error(
        `the local clusters of this checkout are not running, but ports ${busy.join(", ")} are in use ` +
          `(another checkout's clusters? set OPERATOR_HUB_PORT_OFFSET); not starting clusters over them`,
        { cause: err },
      );
    }
    console.error("bench: starting the local clusters (deno task clusters:up)...");
    const out = await new Deno.Command(Deno.execPath(), { args: ["task", "clusters:up"], cwd: ROOT }).output();
    if (out.code !== 0) throw new Error("deno task clusters:up failed");
    names = requireClusters().names;
  }
  const foreign = foreignControlPlanes();
  if (foreign.length > 0) {
    console.error(
      `bench: warning: other control planes run on this machine (${foreign.join(", ")}); CPU figures are noisier`,
    );
  }
  if (n > names.length) {
    throw new Error(`--clusters ${n}: only ${names.length} local clusters run (${names.join(", ")})`);
  }
  return names.slice(0, n);
}

/** Executables of kube-apiserver, kube-controller-manager or etcd processes that do not belong to this checkout. */
function foreignControlPlanes(): string[] {
  const found = new Set<string>();
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const exe = Deno.readLinkSync(`/proc/${e.name}/exe`);
      if (/\/(kube-apiserver|kube-controller-manager|etcd)( \(deleted\))?$/.test(exe) && !exe.startsWith(ROOT)) {
        found.add(exe);
      }
    } catch { /* gone, or not ours to read */ }
  }
  return [...found];
}

function portInUse(port: number): boolean {
  try {
    Deno.listen({ hostname: "127.0.0.1", port }).close();
    return false;
  } catch {
    return true;
  }
}
