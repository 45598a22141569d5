// Kubeconfig files (clusters/*.yaml, $KUBECONFIG, ~/.kube/config, --kubeconfig) read into a catalog of contexts, and
// `--clusters` resolved against it.

import { join, resolve } from "node:path";
import { parseKubeconfigYaml } from "./kubeconfig_yaml.ts";
import { envGetter, type EnvSource, str } from "./_fields.ts";
import { record } from "../../util/mod.ts";
import { contextNamespaceScope } from "./_context_scope.ts";
import { KubeconfigAccess } from "./_kubeconfig_access.ts";
import { type Entry, toCluster, toUser } from "./_kubeconfig_entry.ts";
import { fsReason } from "./_token_file.ts";
import type { ClusterAccess } from "./cluster_access.ts";
import { ConfigError } from "../errors.ts";
import { IN_CLUSTER, inClusterAccess, type InClusterOptions } from "./in_cluster.ts";

export type { EnvSource } from "./_fields.ts";

/**
 * Which kubeconfig files to read, and where to look for the default ones.
 *
 * @example
 * ```ts
 * import { loadContexts, type LoadContextsOptions } from "../../../kube.ts";
 *
 * // What kubectl reads ($KUBECONFIG, else ~/.kube/config), after the clusters/*.yaml under /srv/hub.
 * const options: LoadContextsOptions = { env: Deno.env.toObject(), cwd: "/srv/hub", execTimeoutMs: 5_000 };
 * const catalog = await loadContexts(options);
 * console.log(catalog.files());
 * ```
 */
export interface LoadContextsOptions {
  /** Explicit kubeconfig files (`--kubeconfig`). Each must exist and parse. When non-empty, nothing else is read. */
  files?: string[];
  /** Used for `$KUBECONFIG`, `$HOME` and, for `in-cluster`, the service host and port. Default: empty. */
  env?: EnvSource;
  /** Directory holding `clusters/*.yaml`. Default `Deno.cwd()`. */
  cwd?: string;
  /** Home directory for `~/.kube/config`. Default `$HOME` from `env`. */
  home?: string;
  /** An exec credential plugin still running after this long is killed and reported. Default 10 s. */
  execTimeoutMs?: number;
  /** Reads a kubeconfig file's text. Default `Deno.readTextFile`; kubeconfig_text.ts passes text held in memory. */
  readTextFile?: (path: string) => Promise<string>;
  /** Documents already parsed, by path, used as they are (kubeconfig_text.ts parses its text only once). */
  documents?: ReadonlyMap<string, unknown>;
  /**
   * Run exec plugins with only `PATH` and `HOME` from `env` plus their own `exec.env` entries, not the hub's whole
   * environment (untrusted kubeconfigs). Default false: kubectl passes its whole environment, and so does the hub for
   * the user's own kubeconfig files.
   */
  minimalExecEnv?: boolean;
}

/**
 * The contexts known from every loaded kubeconfig, with first-file-wins precedence.
 *
 * @example
 * ```ts
 * import { type ContextCatalog, loadContexts } from "../../../kube.ts";
 *
 * function describe(catalog: ContextCatalog): string {
 *   return `${catalog.names().length} contexts from ${catalog.files().join(", ")}`;
 * }
 * console.log(describe(await loadContexts({ env: Deno.env.toObject() })));
 * ```
 */
export interface ContextCatalog {
  /** Every context name, sorted. */
  names(): string[];
  /** The kubeconfig files that were loaded, in precedence order. */
  files(): string[];
  /**
   * Resolves `--clusters` values to validated accesses, in the order given, without duplicates.
   * `all` means every context; `in-cluster` the pod's own service account.
   * Throws ConfigError for an unknown name (listing the known ones), an empty selection, or a
   * selected context that is broken (missing cluster or user, unreadable file, bad server URL).
   */
  select(requested: string[], opts?: { inCluster?: InClusterOptions }): ClusterAccess[];
}

/**
 * The keyword for every context in `--clusters`.
 *
 * @example
 * ```ts
 * import { ALL_CONTEXTS, loadContexts } from "../../../kube.ts";
 *
 * const catalog = await loadContexts({ files: ["clusters/local.yaml"] });
 * const every = catalog.select([ALL_CONTEXTS]); // `--clusters all`
 * console.log(every.map((a) => a.name)); // e.g. ["dev", "prod", "staging"]
 * ```
 */
export const ALL_CONTEXTS = "all";

/**
 * Reads kubeconfig files into a catalog of contexts.
 *
 * With `files`, exactly those files are read and each must exist and be valid YAML. Otherwise
 * every `clusters/*.yaml` under `cwd` (sorted), then each existing `$KUBECONFIG` entry
 * (colon-separated; missing ones are ignored like kubectl does), or `~/.kube/config` when
 * `$KUBECONFIG` is unset and the file exists. A name defined twice keeps its first definition.
 *
 * Assumptions: contexts are validated only when selected, so a broken context the user did not
 * ask for never stops startup; an unreadable or invalid file does, because kubectl fails too.
 *
 * @example
 * ```ts
 * import { loadContexts } from "../../../kube.ts";
 *
 * const catalog = await loadContexts({ files: ["clusters/local.yaml"] });
 * console.log(catalog.names()); // e.g. ["dev", "prod", "staging"]
 * const [prod, staging] = catalog.select(["prod", "staging"]);
 * console.log(prod.server, staging.server);
 * ```
 */
export async function loadContexts(options: LoadContextsOptions = {}): Promise<ContextCatalog> {
  const env = envGetter(options.env);
  const cwd = options.cwd ?? Deno.cwd();
  const explicit = (options.files ?? []).filter((f) => f !== "");
  const searched: string[] = [];
  const paths: string[] = [];
  if (explicit.length > 0) {
    for (const f of explicit) paths.push(resolve(cwd, f));
  } else {
    const dir = join(cwd, "clusters");
    searched.push(join(dir, "*.yaml"));
    paths.push(...await yamlFilesIn(dir));
    const kubeconfigVar = env("KUBECONFIG");
    if (kubeconfigVar) {
      searched.push("$KUBECONFIG");
      for (const f of kubeconfigVar.split(":").filter((p) => p !== "")) {
        const p = resolve(cwd, f);
        if (await exists(p)) paths.push(p);
      }
    } else {
      const home = options.home ?? env("HOME");
      if (home) {
        const p = join(home, ".kube", "config");
        searched.push(p);
        if (await exists(p)) paths.push(p);
      }
    }
  }

  const contexts = new Map<string, Entry>();
  const clusters = new Map<string, Entry>();
  const users = new Map<string, Entry>();
  const loaded: string[] = [];
  for (const path of [...new Set(paths)]) {
    const doc = options.documents?.has(path)
      ? checkKubeconfig(path, options.documents.get(path))
      : await readKubeconfig(path, options.readTextFile);
    loaded.push(path);
    addEntries(contexts, doc.contexts, path);
    addEntries(clusters, doc.clusters, path);
    addEntries(users, doc.users, path);
  }
  return new Catalog({
    contexts,
    clusters,
    users,
    files: loaded,
    searched,
    env: options.env,
    execTimeoutMs: options.execTimeoutMs,
    minimalExecEnv: options.minimalExecEnv,
  });
}

// ---------------------------------------------------------------------------------------------

interface KubeconfigDoc {
  contexts: unknown;
  clusters: unknown;
  users: unknown;
}

class Catalog implements ContextCatalog {
  readonly #contexts: Map<string, Entry>;
  readonly #clusters: Map<string, Entry>;
  readonly #users: Map<string, Entry>;
  readonly #files: string[];
  readonly #searched: string[];
  readonly #env: EnvSource | undefined;
  readonly #execTimeoutMs: number | undefined;
  readonly #minimalExecEnv: boolean;

  constructor(init: {
    contexts: Map<string, Entry>;
    clusters: Map<string, Entry>;
    users: Map<string, Entry>;
    files: string[];
    searched: string[];
    env: EnvSource | undefined;
    execTimeoutMs?: number;
    minimalExecEnv?: boolean;
  }) {
    this.#contexts = init.contexts;
    this.#clusters = init.clusters;
    this.#users = init.users;
    this.#files = init.files;
    this.#searched = init.searched;
    this.#env = init.env;
    this.#execTimeoutMs = init.execTimeoutMs;
    this.#minimalExecEnv = init.minimalExecEnv === true;
  }

  names(): string[] {
    return [...this.#contexts.keys()].sort();
  }

  files(): string[] {
    return [...this.#files];
  }

  select(requested: string[], opts: { inCluster?: InClusterOptions } = {}): ClusterAccess[] {
    const wanted = requested.flatMap((r) => r.split(",")).map((r) => r.trim()).filter((r) => r !== "");
    if (wanted.length === 0) {
      throw new ConfigError(`no clusters selected in --clusters; ${this.#choices()}`);
    }
    const names: string[] = [];
    for (const w of wanted) {
      if (w === ALL_CONTEXTS) {
        if (this.#contexts.size === 0) {
          throw new ConfigError(`--clusters ${ALL_CONTEXTS} matched no context; ${this.#choices()}`);
        }
        names.push(...this.names());
      } else if (w === IN_CLUSTER || this.#contexts.has(w)) {
        names.push(w);
      } else {
        throw new ConfigError(`unknown context "${w}" in --clusters; ${this.#choices()}`);
      }
    }
    return [...new Set(names)].map((n) =>
      n === IN_CLUSTER
        ? inClusterAccess({ root: opts.inCluster?.root, env: opts.inCluster?.env ?? this.#env })
        : this.#access(n)
    );
  }

  #choices(): string {
    const names = this.names();
    if (names.length === 0) {
      const where = this.#files.length > 0 ? this.#files.join(", ") : this.#searched.join(", ") || "nowhere";
      return `no kubeconfig contexts were found (looked in ${where}); pass --kubeconfig FILE or use "${IN_CLUSTER}"`;
    }
    return `known contexts: ${names.join(", ")} (or "${ALL_CONTEXTS}", "${IN_CLUSTER}")`;
  }

  /** Validates one context and builds its access. */
  #access(name: string): ClusterAccess {
    const ctxEntry = this.#contexts.get(name)!;
    const where = `context "${name}" in ${ctxEntry.file}`;
    const ctx = record(ctxEntry.value.context);
    if (!ctx) throw new ConfigError(`${where} has no "context" section`);
    const clusterName = str(ctx.cluster);
    if (!clusterName) throw new ConfigError(`${where} names no cluster`);
    const clusterEntry = this.#clusters.get(clusterName);
    if (!clusterEntry) {
      throw new ConfigError(
        `${where} refers to cluster "${clusterName}", which no kubeconfig defines; known clusters: ${
          [...this.#clusters.keys()].sort().join(", ") || "none"
        }`,
      );
    }
    const userName = str(ctx.user);
    const userEntry = userName === undefined ? undefined : this.#users.get(userName);
    if (userName !== undefined && !userEntry) {
      throw new ConfigError(
        `${where} refers to user "${userName}", which no kubeconfig defines; known users: ${
          [...this.#users.keys()].sort().join(", ") || "none"
        }`,
      );
    }
    const cluster = toCluster(name, clusterEntry);
    const env = envGetter(this.#env);
    // Read only when the user runs a plugin; a variable the process may not read (the compiled binary's narrow
    // --allow-env) is left out of the plugin's environment rather than failing every context.
    const minimal = this.#minimalExecEnv
      ? () => ({ PATH: envOrUndefined(env, "PATH"), HOME: envOrUndefined(env, "HOME") })
      : undefined;
    const { user, tokenFile, execEnv } = toUser(name, userName, userEntry, minimal);
    if (cluster.tlsServerName && (user.certData || user.certFile)) {
      // Deno.connectTls, which presents a client certificate, takes no server name to check instead of the host.
      throw new ConfigError(
        `${where} sets tls-server-name on a cluster whose user has a client certificate, which the hub cannot ` +
          `honour together; use a token, or remove tls-server-name`,
      );
    }
    return new KubeconfigAccess({
      name,
      server: cluster.server,
      source: ctxEntry.file,
      namespace: str(ctx.namespace),
      namespaceScope: contextNamespaceScope(where, ctx),
      proxyUrl: cluster.proxyUrl,
      tlsServerName: cluster.tlsServerName,
      cluster,
      user,
      tokenFile,
      execTimeoutMs: this.#execTimeoutMs,
      execEnv,
    });
  }
}

/** `get(key)`, or undefined when reading it is not permitted. */
function envOrUndefined(get: (key: string) => string | undefined, key: string): string | undefined {
  try {
    return get(key);
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------

async function readKubeconfig(
  path: string,
  read: (path: string) => Promise<string> = Deno.readTextFile,
): Promise<KubeconfigDoc> {
  let text: string;
  try {
    text = await read(path);
  } catch (err) {
    throw new ConfigError(`cannot read kubeconfig ${path}: ${fsReason(err)}`);
  }
  return checkKubeconfig(path, parseKubeconfigYaml(path, text));
}

function checkKubeconfig(path: string, doc: unknown): KubeconfigDoc {
  if (doc === null || doc === undefined) return { contexts: [], clusters: [], users: [] };
  const r = record(doc);
  if (!r) throw new ConfigError(`invalid kubeconfig ${path}: expected a mapping with clusters, users and contexts`);
  for (const key of ["contexts", "clusters", "users"] as const) {
    if (r[key] !== undefined && r[key] !== null && !Array.isArray(r[key])) {
      throw new ConfigError(`invalid kubeconfig ${path}: "${key}" must be a list`);
    }
  }
  return { contexts: r.contexts ?? [], clusters: r.clusters ?? [], users: r.users ?? [] };
}

function addEntries(into: Map<string, Entry>, list: unknown, file: string): void {
  if (!Array.isArray(list)) return;
  for (const item of list) {
    const r = record(item);
    const name = r && str(r.name);
    if (!r || name === undefined || into.has(name)) continue; // first definition wins, like kubectl
    into.set(name, { name, value: r, file });
  }
}

async function yamlFilesIn(dir: string): Promise<string[]> {
  const out: string[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      if ((e.isFile || e.isSymlink) && e.name.endsWith(".yaml")) out.push(join(dir, e.name));
    }
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return [];
    throw new ConfigError(`cannot list ${dir}: ${fsReason(err)}`);
  }
  return out.sort();
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}
