// A kubeconfig document held in memory (a file just read, a Secret's data): its contexts as ClusterAccess, with digests
// that tell a server change from a credentials-only change.

import { parseKubeconfigYaml } from "./kubeconfig_yaml.ts";
import type { UntrustedKubeconfigParser } from "./kubeconfig_parser.ts";
import { oneLine, record } from "../../util/mod.ts";
import { ConfigError } from "../errors.ts";
import type { ClusterAccess } from "./cluster_access.ts";
import { type CredentialPolicy, untrustedContextProblems } from "./credential_policy.ts";
import { type EnvSource, loadContexts } from "./kubeconfig.ts";

/**
 * One context of a kubeconfig document.
 *
 * @example
 * ```ts
 * import type { KubeconfigContext } from "../../../kube.ts";
 *
 * function describe(context: KubeconfigContext): string {
 *   return context.access ? `${context.name}: ${context.access.server}` : `${context.name}: ${context.error}`;
 * }
 * // A new server means a new client; new credentials alone are picked up by the running one.
 * function needsNewClient(before: KubeconfigContext, after: KubeconfigContext): boolean {
 *   return before.endpointDigest !== after.endpointDigest;
 * }
 * ```
 */
export interface KubeconfigContext {
  /** The context's name. */
  name: string;
  /** Set when the context is usable. */
  access?: ClusterAccess;
  /** Why the context is not usable (missing cluster or user, bad server URL, unreadable file…); no credentials. */
  error?: string;
  /**
   * Digest of what identifies the server: its cluster section (URL, CA, TLS settings, proxy), the namespace and the
   * context's extensions (the namespaced-access opt-in).
   */
  endpointDigest: string;
  /** Digest of the user section (token, client certificate, exec plugin…). Never the credentials themselves. */
  credentialsDigest: string;
}

/**
 * A parsed kubeconfig document.
 *
 * @example
 * ```ts
 * import { type KubeconfigText, parseKubeconfigText } from "../../../kube.ts";
 *
 * const path = "/etc/hub/extra.yaml";
 * const doc: KubeconfigText = await parseKubeconfigText(await Deno.readTextFile(path), { source: path });
 * const current = doc.contexts.find((c) => c.name === doc.currentContext);
 * console.log(current?.access?.server ?? "no usable current context");
 * ```
 */
export interface KubeconfigText {
  /** `current-context`, when set. */
  currentContext?: string;
  /** Every context, in document order. */
  contexts: KubeconfigContext[];
}

/**
 * Where a kubeconfig text came from and how far it is trusted.
 *
 * @example
 * ```ts
 * import { type KubeconfigTextOptions, parseKubeconfigText, STRICT_CREDENTIAL_POLICY } from "../../../kube.ts";
 *
 * declare const text: string; // a kubeconfig from a Secret's data, decoded
 * const options: KubeconfigTextOptions = {
 *   source: "secret hub/tenant-a",
 *   untrusted: STRICT_CREDENTIAL_POLICY,
 *   execTimeoutMs: 5_000,
 * };
 * const { contexts } = await parseKubeconfigText(text, options);
 * ```
 */
export interface KubeconfigTextOptions {
  /**
   * Where the text came from, for messages and `ClusterAccess.source`: an absolute file path (relative certificate
   * and token-file paths resolve against its folder) or a label such as `secret ns/name`.
   */
  source: string;
  /** For exec plugins' environment (only PATH and HOME of it when `untrusted`). */
  env?: EnvSource;
  /** How long an exec credential plugin may run, ms. */
  execTimeoutMs?: number;
  /**
   * Set when the text is untrusted (a labelled Secret, a file dropped into --cluster-dir): every context is held to
   * this policy before anything of it is used (no file is opened, no program run), a context that breaks it gets the
   * refusals as its `error`, and exec plugins that it allows run with a minimal environment. Unset: trusted, as
   * kubectl trusts its own kubeconfig.
   */
  untrusted?: CredentialPolicy;
  /**
   * Parses untrusted text (a KubeconfigParser: in a worker, off the event loop). Default: parsed here, under the
   * same linear-time rules. Trusted text is always parsed here.
   */
  parser?: UntrustedKubeconfigParser;
}

/**
 * Parses `text` as one kubeconfig, validating each context on its own.
 *
 * Guarantees: throws ConfigError only when the document itself is unusable (not YAML, not a mapping); a broken
 * context (or, with `untrusted`, one that breaks the policy) becomes that context's `error`, so one bad context never
 * hides the others. A context name defined twice in the document is an error for that name (kubectl would silently
 * keep the first). Messages never quote the text.
 *
 * @example
 * ```ts
 * import { KubeClient, parseKubeconfigText } from "../../../kube.ts";
 *
 * const path = Deno.realPathSync("clusters/local.yaml");
 * const { contexts } = await parseKubeconfigText(await Deno.readTextFile(path), { source: path });
 * for (const context of contexts) {
 *   if (!context.access) {
 *     console.warn(context.error);
 *     continue;
 *   }
 *   using client = new KubeClient(context.access);
 *   console.log(context.name, (await client.request<{ gitVersion: string }>("GET", "/version")).gitVersion);
 * }
 * ```
 */
export async function parseKubeconfigText(text: string, options: KubeconfigTextOptions): Promise<KubeconfigText> {
  const label = options.source;
  const path = label.startsWith("/") ? label : `/${label}`;
  const relabel = (m: string) => label === path ? m : m.split(path).join(label);
  let catalog;
  let parsed: unknown;
  try {
    // Parsed once here (a kubeconfig of thousands of contexts takes seconds to parse), handed to the loader as is;
    // untrusted text is held to the untrusted rules (size, anchors, entries: kubeconfig_yaml.ts), by `parser` if given.
    parsed = !options.untrusted
      ? parseKubeconfigYaml(path, text)
      : options.parser
      ? await options.parser.parse(path, text)
      : parseKubeconfigYaml(path, text, { untrusted: true });
    const documents = new Map([[path, parsed]]);
    catalog = await loadContexts({
      files: [path],
      cwd: "/",
      env: options.env,
      execTimeoutMs: options.execTimeoutMs,
      minimalExecEnv: options.untrusted !== undefined,
      documents,
      readTextFile: (p) => p === path ? Promise.resolve(text) : Promise.reject(new Deno.errors.NotFound(p)),
    });
  } catch (err) {
    // The same message under the source's own label; not chained, or errorText would repeat it under the stand-in path.
    if (err instanceof ConfigError) throw new ConfigError(relabel(err.message));
    throw err;
  }
  const doc = record(parsed) ?? {};
  const named = (list: unknown, name: unknown) =>
    Array.isArray(list) ? list.map(record).find((e) => e !== undefined && e.name === name) : undefined;
  const rawContexts = Array.isArray(doc.contexts) ? doc.contexts.map(record) : [];
  const counts = new Map<string, number>();
  for (const c of rawContexts) if (typeof c?.name === "string") counts.set(c.name, (counts.get(c.name) ?? 0) + 1);
  const contexts: KubeconfigContext[] = [];
  for (const name of catalog.names()) {
    const ctx = record(named(doc.contexts, name)?.context) ?? {};
    const cluster = named(doc.clusters, ctx.cluster);
    const user = named(doc.users, ctx.user);
    const out: KubeconfigContext = {
      name,
      endpointDigest: await digest([ctx.cluster, ctx.namespace ?? null, cluster?.cluster ?? null, ...scopeOf(ctx)]),
      credentialsDigest: await digest([ctx.user ?? null, user?.user ?? null]),
    };
    const refused = options.untrusted
      ? untrustedContextProblems(
        name,
        {
          context: ctx,
          cluster: record(cluster?.cluster),
          user: record(user?.user),
        },
        options.untrusted,
        label,
      )
      : [];
    if ((counts.get(name) ?? 0) > 1) {
      out.error = oneLine(`context "${name}" is defined ${counts.get(name)} times in ${label}; rename all but one`);
    } else if (refused.length > 0) {
      out.error = oneLine(refused.map((p) => p.error).join("; "));
    } else {
      try {
        const [access] = catalog.select([name]);
        out.access = label === path ? access : relabelled(access, label);
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        out.error = oneLine(relabel(err.message));
      }
    }
    contexts.push(out);
  }
  const current = doc["current-context"];
  return { currentContext: typeof current === "string" && current !== "" ? current : undefined, contexts };
}

/** The context's extensions, when it has any (left out otherwise, so digests of plain contexts stay as they were). */
function scopeOf(ctx: Record<string, unknown>): unknown[] {
  return ctx.extensions === undefined ? [] : [ctx.extensions];
}

/** The same access, reporting `source` instead of the stand-in path. */
function relabelled(access: ClusterAccess, source: string): ClusterAccess {
  return {
    name: access.name,
    server: access.server,
    source,
    namespace: access.namespace,
    namespaceScope: access.namespaceScope,
    proxyUrl: access.proxyUrl,
    tlsServerName: access.tlsServerName,
    auth: () => access.auth(),
    invalidate: () => access.invalidate?.(),
  };
}

async function digest(value: unknown): Promise<string> {
  const bytes = new TextEncoder().encode(JSON.stringify(value));
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(hash.subarray(0, 12), (b) => b.toString(16).padStart(2, "0")).join("");
}
