// Where Mirrors may write: the namespaces `--mirror-namespaces` allows, never the cluster's own system namespaces.

/** Namespaces of the cluster itself: a Mirror never writes there unless one is listed explicitly. */
export const SYSTEM_NAMESPACES: readonly string[] = ["kube-system", "kube-public", "kube-node-lease"];

/** Which target namespaces a Mirror may write copies into, and whether a missing one may be created. */
export interface NamespacePolicy {
  /** The allowed namespaces; undefined when unrestricted (every namespace but SYSTEM_NAMESPACES). */
  readonly allowed: readonly string[] | undefined;
  /** True only when unrestricted: with an allow-list, a missing namespace is an error, never a create. */
  readonly createsNamespaces: boolean;
  /** Why copies may not go into `namespace` (one line naming it and what is allowed), or undefined when they may. */
  refusal(namespace: string): string | undefined;
}

/**
 * The policy for `allowed` (`--mirror-namespaces`; undefined or empty when the flag is not given).
 *
 * Guarantees: a system namespace is refused unless `allowed` names it; with `allowed`, every other namespace
 * not in it is refused and no namespace is ever created.
 */
export function namespacePolicy(allowed?: readonly string[]): NamespacePolicy {
  const list = allowed?.length ? [...new Set(allowed)] : undefined;
  return {
    allowed: list,
    createsNamespaces: !list,
    refusal(namespace) {
      if (list) {
        if (list.includes(namespace)) return undefined;
        return `target namespace ${JSON.stringify(namespace)} is not allowed: --mirror-namespaces allows ${
          list.join(", ")
        }`;
      }
      if (!SYSTEM_NAMESPACES.includes(namespace)) return undefined;
      return `target namespace ${JSON.stringify(namespace)} is a system namespace: Mirrors never write into ${
        SYSTEM_NAMESPACES.join(", ")
      } unless --mirror-namespaces lists it`;
    },
  };
}
