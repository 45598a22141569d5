// The Mirror operator's rights in a registered cluster, granted only when asked (cluster:add --mirror-namespaces):
// deploy/mirror/namespace/'s Role and RoleBinding, one pair per listed namespace, never a ClusterRole.
//
// Guarantees: nothing is written for an empty list; a listed namespace that does not exist is refused before anything
// is applied (the hub never creates namespaces, so a Role there would grant nothing it may use); `--purge` finds the
// pairs by the managed-by label in every namespace.
// Assumptions: deploy/mirror/namespace/role.yaml holds exactly a Role and a RoleBinding without a namespace.

import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import type { KubeClient } from "../kube/mod.ts";
import {
  deleteIgnoringMissing,
  getOrUndefined,
  listOrEmpty,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  type Obj,
  PATHS,
  RegistrationError,
} from "./_objects.ts";

/** The file with the per-namespace Role and RoleBinding, relative to the repository root. */
export const MIRROR_ROLE_FILE = "deploy/mirror/namespace/role.yaml";

/** The Role and RoleBinding of {@linkcode MIRROR_ROLE_FILE}, once per namespace, namespace set. */
export async function mirrorRoleDocuments(root: string, namespaces: readonly string[]): Promise<Obj[]> {
  if (namespaces.length === 0) return [];
  const text = await Deno.readTextFile(join(root, MIRROR_ROLE_FILE));
  const templates = parseAllDocuments(text).map((d) => d.toJSON() as Obj | null).filter((d): d is Obj => !!d?.kind);
  const kinds = templates.map((d) => d.kind).sort().join(",");
  if (kinds !== "Role,RoleBinding") {
    throw new RegistrationError(`${MIRROR_ROLE_FILE} must hold one Role and one RoleBinding, found: ${kinds}`);
  }
  return namespaces.flatMap((ns) =>
    templates.map((t) => {
      const doc = structuredClone(t);
      doc.metadata.namespace = ns;
      return doc;
    })
  );
}

/** Refuses, naming them, the listed namespaces that do not exist in the cluster. */
export async function requireNamespaces(client: KubeClient, namespaces: readonly string[], cluster: string) {
  const missing: string[] = [];
  for (const ns of namespaces) if (!(await getOrUndefined(client, PATHS.Namespace(ns)))) missing.push(ns);
  if (missing.length > 0) {
    throw new RegistrationError(
      `cannot grant the Mirror operator access in cluster "${cluster}": namespace(s) ${missing.join(", ")} ` +
        `do not exist there (--mirror-namespaces names existing namespaces; the hub does not create them)`,
    );
  }
}

/** Deletes every Role and RoleBinding cluster:add made, in any namespace; prints one line each. */
export async function purgeMirrorRoles(
  client: KubeClient,
  o: { dryRun?: boolean; cluster: string; print(line: string): void },
): Promise<void> {
  const selector = `${MANAGED_BY_LABEL}=${MANAGED_BY}`;
  for (
    const [kind, list] of [
      ["RoleBinding", "/apis/rbac.authorization.k8s.io/v1/rolebindings"],
      ["Role", "/apis/rbac.authorization.k8s.io/v1/roles"],
    ] as const
  ) {
    for (const item of await listOrEmpty(client, list, selector)) {
      const { name, namespace } = item.metadata;
      if (!o.dryRun) await deleteIgnoringMissing(client, PATHS[kind](name, namespace));
      o.print(`${o.dryRun ? "would delete" : "deleted"} ${kind} ${namespace}/${name} in "${o.cluster}"`);
    }
  }
}
