// A kubeconfig context's opt-in to namespaced access: the `operator-hub` extension with `scope: namespace`.

import { str } from "./_fields.ts";
import { record } from "../../util/mod.ts";
import { ConfigError } from "../errors.ts";

/** The name of the context extension the hub reads (kubectl keeps unknown extensions as they are). */
export const CONTEXT_EXTENSION = "operator-hub";

/**
 * The namespace a context confines the hub to, or undefined for cluster-wide access.
 *
 * ```yaml
 * contexts:
 *   - name: tenant-a
 *     context:
 *       cluster: prod
 *       user: tenant-a
 *       namespace: tenant-a
 *       extensions:
 *         - name: operator-hub
 *           extension: { scope: namespace }
 * ```
 *
 * Why an extension and not the `namespace` alone: most kubeconfigs set `namespace` as kubectl's default for people,
 * and a hub that silently narrowed to it would stop serving every other namespace of a cluster it used to serve
 * whole. The extension is per context, travels with the kubeconfig wherever it is registered from (a folder, a
 * Secret, `cluster:add`), and needs no hub flag.
 *
 * Assumptions: `ctx` is the context's `context` mapping. Throws ConfigError (naming `where`) for a scope other than
 * `namespace` or `cluster`, or `scope: namespace` without a `namespace`.
 */
export function contextNamespaceScope(where: string, ctx: Record<string, unknown>): string | undefined {
  const list = ctx.extensions;
  if (list === undefined || list === null) return undefined;
  if (!Array.isArray(list)) throw new ConfigError(`${where}: "extensions" must be a list`);
  const entry = list.map(record).find((e) => e?.name === CONTEXT_EXTENSION);
  if (!entry) return undefined;
  const ext = record(entry.extension);
  const scope = ext ? ext.scope : undefined;
  if (scope === undefined || scope === "cluster") return undefined;
  if (scope !== "namespace") {
    throw new ConfigError(
      `${where}: extension "${CONTEXT_EXTENSION}" has scope ${
        JSON.stringify(scope)
      }; expected "namespace" (watch only the context's namespace) or "cluster"`,
    );
  }
  const namespace = str(ctx.namespace);
  if (!namespace) {
    throw new ConfigError(
      `${where}: extension "${CONTEXT_EXTENSION}" asks for scope "namespace" but the context sets no namespace; ` +
        `add "namespace: NAME" to the context`,
    );
  }
  return namespace;
}
