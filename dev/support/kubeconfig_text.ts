// Kubeconfig files for tests and the bench: contexts with their server, CA and user, as text.

/** How a kubeconfig user authenticates. */
export type KubeUser =
  | { token: string }
  | { tokenFile: string }
  | { exec: { command: string; args?: string[]; env?: { name: string; value: string }[] } }
  | { clientCertificate: string; clientKey: string };

/** One context of a generated kubeconfig. */
export interface KubeContext {
  name: string;
  server: string;
  /** PEM of the CA to trust, inlined as certificate-authority-data. */
  caPem?: string;
  /** Path of a CA file (certificate-authority), instead of caPem. */
  caFile?: string;
  user: KubeUser;
}

/** The kubeconfig text for `contexts` (YAML is a superset of JSON); `current` is its current-context, "" for none. */
export function kubeconfigText(contexts: KubeContext[], current = contexts[0]?.name ?? ""): string {
  const doc = {
    apiVersion: "v1",
    kind: "Config",
    clusters: contexts.map((c) => ({
      name: c.name,
      cluster: {
        server: c.server,
        ...(c.caPem ? { "certificate-authority-data": btoa(c.caPem) } : {}),
        ...(c.caFile ? { "certificate-authority": c.caFile } : {}),
      },
    })),
    users: contexts.map((c) => {
      const u = c.user;
      let user: Record<string, unknown>;
      if ("token" in u) user = { token: u.token };
      else if ("tokenFile" in u) user = { tokenFile: u.tokenFile };
      else if ("clientCertificate" in u) {
        user = { "client-certificate": u.clientCertificate, "client-key": u.clientKey };
      } else user = { exec: { apiVersion: "client.authentication.k8s.io/v1", interactiveMode: "Never", ...u.exec } };
      return { name: c.name, user };
    }),
    contexts: contexts.map((c) => ({ name: c.name, context: { cluster: c.name, user: c.name } })),
    "current-context": current,
    preferences: {},
  };
  return JSON.stringify(doc, null, 2) + "\n";
}
