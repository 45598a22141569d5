// An InterceptProxy in front of one of the local clusters (dev/clusters/clusters.ts), presenting that apiserver's own
// serving certificate, so a kubeconfig with the cluster's CA trusts it.

import { STATE_DIR } from "../../dev/clusters/clusters.ts";
import { InterceptProxy } from "./intercept_proxy.ts";
import { adminToken, apiserverCa, apiserverUrl } from "../../dev/support/local_clusters.ts";

/** A proxy in front of local cluster `context`'s apiserver. Close it after use. */
export async function proxyInFrontOf(context: string): Promise<InterceptProxy> {
  const certDir = `${STATE_DIR}/${context}/certs`;
  return InterceptProxy.start({
    target: apiserverUrl(context),
    caPem: apiserverCa(context),
    certPem: await Deno.readTextFile(`${certDir}/apiserver.crt`),
    keyPem: await Deno.readTextFile(`${certDir}/apiserver.key`),
  });
}

/** A kubeconfig (YAML-compatible JSON) for context `name`: local cluster `context`'s admin, reached at `server`. */
export function adminKubeconfigVia(context: string, server: string, name = context): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name, cluster: { server, "certificate-authority-data": btoa(apiserverCa(context)) } }],
    users: [{ name, user: { token: adminToken(context) } }],
    contexts: [{ name, context: { cluster: name, user: name } }],
    "current-context": name,
  });
}
