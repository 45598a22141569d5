// A test ServiceAccount with the RBAC objects it was given: bound tokens from the TokenRequest API, and cleanup of the
// cluster-scoped objects (the hub identities and the metrics readers of tests/production/ are both this).
// deno-lint-ignore-file no-explicit-any -- RBAC manifests are plain objects the caller builds.

import { kubectl, kubectlOk } from "../../dev/support/kubectl.ts";

/** What a ServiceAccount is created with, besides itself. */
export interface ServiceAccountGrants {
  /** RBAC objects applied with it (ClusterRoles, bindings, Roles), in order. */
  rbac?: any[];
  /** `kind/name` of the cluster-scoped ones among them, deleted by `cleanup` (namespaced ones go with the namespace). */
  clusterScoped?: string[];
  /** How long a token from `token()` lives when the caller names no duration; default 30m. */
  tokenDuration?: string;
}

/**
 * A ServiceAccount `name` in `namespace` of `context`, applied (created or updated) together with its RBAC objects.
 *
 * Guarantees: `cleanup` deletes every cluster-scoped object it was given and never throws (a test's `finally` runs it).
 */
export class TestServiceAccount {
  readonly context: string;
  readonly namespace: string;
  readonly name: string;
  readonly #clusterScoped: string[];
  readonly #tokenDuration: string;

  private constructor(context: string, namespace: string, name: string, grants: ServiceAccountGrants) {
    this.context = context;
    this.namespace = namespace;
    this.name = name;
    this.#clusterScoped = [...grants.clusterScoped ?? []];
    this.#tokenDuration = grants.tokenDuration ?? "30m";
  }

  /** Applies the ServiceAccount and `grants.rbac` in one `kubectl apply`. */
  static async create(
    context: string,
    namespace: string,
    name: string,
    grants: ServiceAccountGrants = {},
  ): Promise<TestServiceAccount> {
    const items = [{ apiVersion: "v1", kind: "ServiceAccount", metadata: { name, namespace } }, ...grants.rbac ?? []];
    await kubectlOk(context, ["apply", "-f", "-"], {
      stdin: JSON.stringify({ apiVersion: "v1", kind: "List", items }),
    });
    return new TestServiceAccount(context, namespace, name, grants);
  }

  /** A bound token from the TokenRequest API (`kubectl create token`). */
  async token(duration = this.#tokenDuration): Promise<string> {
    const args = ["create", "token", this.name, "-n", this.namespace, `--duration=${duration}`];
    return (await kubectlOk(this.context, args)).trim();
  }

  /** Deletes and recreates the ServiceAccount: every token minted before is rejected from now on. */
  async recreate(): Promise<void> {
    await kubectlOk(this.context, ["delete", "serviceaccount", this.name, "-n", this.namespace, "--wait=true"]);
    await kubectlOk(this.context, ["create", "serviceaccount", this.name, "-n", this.namespace]);
  }

  /** Removes the cluster-scoped objects; namespaced ones go with the test namespace. Failures are ignored. */
  async cleanup(): Promise<void> {
    for (const obj of this.#clusterScoped) {
      await kubectl(this.context, ["delete", obj, "--ignore-not-found"]).catch(() => {});
    }
  }
}
