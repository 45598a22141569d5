// Kubeconfig contexts and in-cluster service accounts, turned into per-cluster access with client-node's auth.

import type { Cluster as KnCluster, KubeConfig, User as KnUser } from "@kubernetes/client-node";
import type { RequestOptions } from "node:https";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import { fsReason, TokenFile } from "./_token_file.ts";
import { AuthError, ConfigError } from "./errors.ts";

/** TLS material and headers to send on every request to one cluster. PEM strings throughout. */
export interface ClusterAuth {
  /** Per-request headers, typically `Authorization`, maybe `Impersonate-User`. */
  headers: Record<string, string>;
  /** Certificate authorities to trust for the server, in addition to none: when absent, the system roots. */
  caCerts?: string[];
  /** Client certificate chain (mutual TLS). */
  cert?: string;
  /** Client private key (mutual TLS). */
  key?: string;
  /** `insecure-skip-tls-verify`: do not verify the server's certificate. */
  insecureSkipTlsVerify: boolean;
}

/**
 * How to reach and authenticate to one cluster.
 *
 * Guarantees: `auth()` asks client-node afresh on every call (concurrent calls share one run),
 * so a rotated token file or an expired exec credential is picked up without a restart;
 * client-node itself re-runs an exec plugin only once its `expirationTimestamp` has passed.
 * Errors from `auth()` are {@link AuthError}s that never contain credentials or plugin output.
 */
export interface ClusterAccess {
  /** Context name, or `in-cluster`. */
  readonly name: string;
  /** API server base URL without a trailing slash, e.g. `https://10.0.0.1:6443`. */
  readonly server: string;
  /** Where the context came from: the kubeconfig file, or the service-account directory. */
  readonly source: string;
  /** The context's default namespace (the pod's namespace for in-cluster), if any. */
  readonly namespace?: string;
  /** The cluster's `proxy-url`, if any. */
  readonly proxyUrl?: string;
  auth(): Promise<ClusterAuth>;
  /** Drops cached credentials (exec tokens, token file contents); clients call it after a 401. */
  invalidate?(): void;
}

/** Environment lookups, as a plain object or a function; injected so tests and main.ts control it. */
export type EnvSource = Record<string, string | undefined> | ((key: string) => string | undefined);

/** Where the pod's service account lives, and the environment to read the service address from. */
export interface InClusterOptions {
  /** Default `/var/run/secrets/kubernetes.io/serviceaccount`. */
  root?: string;
  env?: EnvSource;
}

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
}

/** How long an exec credential plugin may run before it is killed (client-node sets no limit). */
export const EXEC_PLUGIN_TIMEOUT_MS = 10_000;

/** The contexts known from every loaded kubeconfig, with first-file-wins precedence. */
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

/** The keyword for every context in `--clusters`. */
export const ALL_CONTEXTS = "all";
/** The keyword for the pod's own cluster in `--clusters`. */
export const IN_CLUSTER = "in-cluster";
/** Where Kubernetes mounts a pod's service-account token, CA and namespace. */
export const SERVICE_ACCOUNT_ROOT = "/var/run/secrets/kubernetes.io/serviceaccount";

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
    const doc = await readKubeconfig(path, options.readTextFile);
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
  });
}

/**
 * The pod's own cluster, from its service-account files and `KUBERNETES_SERVICE_HOST`/`_PORT`.
 *
 * Guarantees: the token file is re-read as soon as kubelet rotates it (see TokenFile), not on
 * client-node's fixed 60 s period. Throws ConfigError when the environment or files say the
 * process is not running in a pod.
 */
export function inClusterAccess(options: InClusterOptions = {}): ClusterAccess {
  const root = options.root ?? SERVICE_ACCOUNT_ROOT;
  const env = envGetter(options.env);
  const host = env("KUBERNETES_SERVICE_HOST");
  const port = env("KUBERNETES_SERVICE_PORT");
  if (!host || !port) {
    throw new ConfigError(
      `cannot use "${IN_CLUSTER}": KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set, so the hub is not running in a pod`,
    );
  }
  const tokenPath = join(root, "token");
  const caPath = join(root, "ca.crt");
  for (const p of [tokenPath, caPath]) {
    const problem = unreadable(p);
    if (problem) {
      throw new ConfigError(
        `cannot use "${IN_CLUSTER}": ${p}: ${problem}; the hub is not running in a pod with a service account token mounted`,
      );
    }
  }
  let namespace: string | undefined;
  try {
    namespace = Deno.readTextFileSync(join(root, "namespace")).trim() || undefined;
  } catch {
    namespace = undefined;
  }
  const bracketed = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  const server = `https://${bracketed}:${port}`;
  return new KubeconfigAccess({
    name: IN_CLUSTER,
    server,
    source: root,
    namespace,
    cluster: { name: IN_CLUSTER, server, caFile: caPath, skipTLSVerify: false },
    user: { name: IN_CLUSTER },
    tokenFile: tokenPath,
  });
}

/**
 * A cheap digest of the TLS material in `auth`, so a client rebuilds its HTTP client only when
 * certificates change. Not reversible to the key; equal inputs give equal digests.
 */
export function tlsFingerprint(auth: ClusterAuth): string {
  const parts = [auth.insecureSkipTlsVerify ? "1" : "0", ...(auth.caCerts ?? []), "\0", auth.cert ?? "", "\0"];
  parts.push(auth.key ?? "");
  return fnv64(parts.join("\u0001"));
}

// ---------------------------------------------------------------------------------------------

interface Entry {
  name: string;
  value: Record<string, unknown>;
  file: string;
}

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

  constructor(init: {
    contexts: Map<string, Entry>;
    clusters: Map<string, Entry>;
    users: Map<string, Entry>;
    files: string[];
    searched: string[];
    env: EnvSource | undefined;
    execTimeoutMs?: number;
  }) {
    this.#contexts = init.contexts;
    this.#clusters = init.clusters;
    this.#users = init.users;
    this.#files = init.files;
    this.#searched = init.searched;
    this.#env = init.env;
    this.#execTimeoutMs = init.execTimeoutMs;
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
    const { user, tokenFile } = toUser(name, userName, userEntry);
    return new KubeconfigAccess({
      name,
      server: cluster.server,
      source: ctxEntry.file,
      namespace: str(ctx.namespace),
      proxyUrl: cluster.proxyUrl,
      cluster,
      user,
      tokenFile,
      execTimeoutMs: this.#execTimeoutMs,
    });
  }
}

function toCluster(context: string, entry: Entry): KnCluster {
  const where = `cluster "${entry.name}" (context "${context}", ${entry.file})`;
  const c = record(entry.value.cluster);
  if (!c) throw new ConfigError(`${where} has no "cluster" section`);
  const server = str(c.server);
  if (!server) throw new ConfigError(`${where} has no server URL`);
  if (!isHttpUrl(server)) {
    throw new ConfigError(`${where} has an invalid server URL "${safeUrl(server)}"; expected https://host:port`);
  }
  const tlsServerName = str(c["tls-server-name"]);
  if (tlsServerName) {
    throw new ConfigError(`${where} sets tls-server-name, which Deno's HTTP client cannot honour; remove it`);
  }
  const proxyUrl = str(c["proxy-url"]);
  if (proxyUrl && !/^(https?|socks5h?):\/\//.test(proxyUrl)) {
    throw new ConfigError(`${where} has an invalid proxy-url; expected http://, https:// or socks5://`);
  }
  const caFile = fileField(where, entry.file, c, "certificate-authority");
  const caData = dataField(where, c, "certificate-authority-data");
  const insecure = c["insecure-skip-tls-verify"] === true;
  return {
    name: entry.name,
    server: server.replace(/\/+$/, ""),
    caFile,
    caData,
    // client-node refuses plain http unless this is set; TLS settings do not matter for http.
    skipTLSVerify: insecure || server.startsWith("http:"),
    proxyUrl,
  };
}

function toUser(
  context: string,
  userName: string | undefined,
  entry: Entry | undefined,
): { user: KnUser; tokenFile?: string } {
  if (!entry) return { user: { name: userName ?? "" } };
  const where = `user "${entry.name}" (context "${context}", ${entry.file})`;
  const u = record(entry.value.user) ?? {};
  const certFile = fileField(where, entry.file, u, "client-certificate");
  const certData = dataField(where, u, "client-certificate-data");
  const keyFile = fileField(where, entry.file, u, "client-key");
  const keyData = dataField(where, u, "client-key-data");
  if (!!(certFile || certData) !== !!(keyFile || keyData)) {
    throw new ConfigError(`${where} has a client certificate without a key or a key without a certificate`);
  }
  const token = str(u.token);
  // kubectl spells it tokenFile; client-node 2.0.1 only knows "token-file" and reads it once.
  const tokenFile = token ? undefined : fileField(where, entry.file, u, "tokenFile") ??
    fileField(where, entry.file, u, "token-file");
  let exec: Record<string, unknown> | undefined;
  const rawExec = record(u.exec);
  if (rawExec) {
    let command = str(rawExec.command);
    if (!command) throw new ConfigError(`${where} has an exec section without a command`);
    // kubectl resolves commands with a path separator relative to the kubeconfig's directory.
    if (command.includes("/") && !isAbsolute(command)) command = resolve(dirname(entry.file), command);
    const args = Array.isArray(rawExec.args) ? rawExec.args.map(String) : [];
    const env = Array.isArray(rawExec.env)
      ? rawExec.env.map(record).filter((e) => e !== undefined).map((e) => ({
        name: String(e.name),
        value: String(e.value ?? ""),
      }))
      : [];
    const apiVersion = str(rawExec.apiVersion) ?? "client.authentication.k8s.io/v1";
    env.push({
      name: "KUBERNETES_EXEC_INFO",
      value: JSON.stringify({ apiVersion, kind: "ExecCredential", spec: { interactive: false } }),
    });
    exec = { ...rawExec, command, args, env };
  }
  return {
    user: {
      name: entry.name,
      token,
      certFile,
      certData,
      keyFile,
      keyData,
      exec,
      authProvider: record(u["auth-provider"]),
      username: str(u.username),
      password: str(u.password),
      impersonateUser: str(u.as),
    },
    tokenFile,
  };
}

interface AccessInit {
  name: string;
  server: string;
  source: string;
  namespace?: string;
  proxyUrl?: string;
  cluster: KnCluster;
  user: KnUser;
  tokenFile?: string;
  execTimeoutMs?: number;
}

/** What client-node's exec authenticator looks like from outside: it spawns plugins through `execFn`. */
interface ExecFnHolder {
  execFn: (...args: unknown[]) => { kill(signal?: string): unknown; once(event: "close", fn: () => void): unknown };
}

/** Internal marker: an exec plugin ran past its time limit. */
class ExecTimeout extends Error {
  override name = "ExecTimeout";
}

/**
 * A ClusterAccess for one context. Tokens, token files, client certificates, basic auth and CAs are
 * applied here exactly as client-node's KubeConfig.applyToHTTPSOptions does; client-node itself is
 * imported (lazily) only for exec plugins and auth providers, because loading it costs about 80 MB
 * of RSS and 0.35 s of startup (its generated API models), which most hubs never need.
 */
class KubeconfigAccess implements ClusterAccess {
  readonly name: string;
  readonly server: string;
  readonly source: string;
  readonly namespace?: string;
  readonly proxyUrl?: string;
  readonly #init: AccessInit;
  readonly #tokenFile: TokenFile | undefined;
  /** Inline base64 data (CA, client certificate and key) already decoded. */
  readonly #decoded = new Map<string, string>();
  /** Only for exec plugins and auth providers; made on first use and after `invalidate()`. */
  #kc: Promise<KubeConfig> | undefined;
  #pending: Promise<ClusterAuth> | undefined;
  readonly #plugins = new Set<ReturnType<ExecFnHolder["execFn"]>>();

  constructor(init: AccessInit) {
    this.name = init.name;
    this.server = init.server;
    this.source = init.source;
    this.namespace = init.namespace;
    this.proxyUrl = init.proxyUrl;
    this.#init = init;
    this.#tokenFile = init.tokenFile ? new TokenFile(init.name, init.tokenFile) : undefined;
  }

  auth(): Promise<ClusterAuth> {
    this.#pending ??= this.#authOnce().finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  invalidate(): void {
    // A fresh KubeConfig has fresh authenticators, so the exec plugin runs again.
    this.#kc = undefined;
    this.#tokenFile?.invalidate();
  }

  async #makeKubeConfig(): Promise<KubeConfig> {
    const { KubeConfig } = await import("@kubernetes/client-node");
    const kc = new KubeConfig();
    const { cluster, user, name } = this.#init;
    kc.loadFromOptions({
      clusters: [cluster],
      users: [user],
      contexts: [{ name, cluster: cluster.name, user: user.name }],
      currentContext: name,
    });
    // client-node spawns exec plugins without a time limit; keep their handles so a hung one can be killed.
    const authenticators = (kc as unknown as { authenticators?: unknown[] }).authenticators ?? [];
    for (const a of authenticators) {
      const holder = a as Partial<ExecFnHolder>;
      if (typeof holder.execFn !== "function") continue;
      const spawn = holder.execFn.bind(a);
      holder.execFn = (...args: unknown[]) => {
        const child = spawn(...args);
        this.#plugins.add(child);
        child.once("close", () => this.#plugins.delete(child));
        return child;
      };
    }
    return kc;
  }

  /** client-node's credential step, bounded for exec plugins: a hung plugin is killed and reported. */
  async #applyCredentials(opts: RequestOptions): Promise<void> {
    const { user } = this.#init;
    if (!user.exec && !user.authProvider) return this.#applyPlain(opts);
    const exec = record(user.exec);
    if (!exec) return await (this.#kc ??= this.#makeKubeConfig()).then((kc) => kc.applyToHTTPSOptions(opts));
    const limitMs = this.#init.execTimeoutMs ?? EXEC_PLUGIN_TIMEOUT_MS;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ExecTimeout()), limitMs);
    });
    try {
      const run = (this.#kc ??= this.#makeKubeConfig()).then((kc) => kc.applyToHTTPSOptions(opts));
      run.catch(() => {}); // after a timeout, the killed run still rejects: nobody waits for it any more
      await Promise.race([run, timeout]);
    } catch (err) {
      if (err instanceof ExecTimeout) {
        for (const child of this.#plugins) child.kill("SIGKILL");
        this.#plugins.clear();
        this.#kc = undefined; // its authenticator still waits on the killed run
        throw new AuthError(
          this.name,
          `context "${this.name}": exec credential plugin "${basename(String(exec.command))}" did not finish ` +
            `within ${limitMs / 1000} s; it was stopped and will be run again`,
        );
      }
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /** client-node's applyHTTPSOptions and applyAuthorizationHeader for users without exec or auth-provider. */
  #applyPlain(opts: RequestOptions): void {
    const { cluster, user } = this.#init;
    if (cluster.skipTLSVerify) opts.rejectUnauthorized = false;
    const ca = this.#fileOrData(cluster.caFile, cluster.caData);
    if (ca) opts.ca = ca;
    const cert = this.#fileOrData(user.certFile, user.certData);
    if (cert) opts.cert = cert;
    const key = this.#fileOrData(user.keyFile, user.keyData);
    if (key) opts.key = key;
    const headers: Record<string, string> = {};
    if (user.impersonateUser != null) headers["Impersonate-User"] = user.impersonateUser;
    if (user.token) headers.Authorization = `Bearer ${user.token}`;
    opts.headers = headers;
    if (user.username) opts.auth = `${user.username}:${user.password}`;
  }

  /**
   * client-node's bufferFromFileOrString, as PEM text: the file wins over inline base64 data. Files
   * are read on every call (certificates rotate); inline data is decoded once.
   */
  #fileOrData(file: string | undefined, data: string | undefined): string | undefined {
    if (file) {
      try {
        return Deno.readTextFileSync(file);
      } catch (err) {
        throw new AuthError(this.name, `context "${this.name}": cannot read ${file}: ${fsReason(err)}`);
      }
    }
    if (!data) return undefined;
    let text = this.#decoded.get(data);
    if (text === undefined) {
      const bin = atob(data.replace(/\s+/g, ""));
      const bytes = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
      text = new TextDecoder().decode(bytes);
      this.#decoded.set(data, text);
    }
    return text;
  }

  async #authOnce(): Promise<ClusterAuth> {
    const opts: RequestOptions = {};
    try {
      await this.#applyCredentials(opts);
    } catch (err) {
      if (err instanceof AuthError) throw err;
      throw this.#failure(err);
    }
    const headers: Record<string, string> = {};
    const raw = opts.headers;
    if (raw && !Array.isArray(raw)) {
      for (const [k, v] of Object.entries(raw)) {
        if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(", ") : String(v);
      }
    }
    if (typeof opts.auth === "string") {
      headers.Authorization = `Basic ${base64(opts.auth)}`;
    }
    if (this.#tokenFile && !headers.Authorization) {
      headers.Authorization = `Bearer ${await this.#tokenFile.read()}`;
    }
    const ca = pem(opts.ca);
    const cert = pem(opts.cert);
    const key = pem(opts.key);
    return {
      headers,
      caCerts: ca ? [ca] : undefined,
      cert,
      key,
      insecureSkipTlsVerify: opts.rejectUnauthorized === false && this.server.startsWith("https:"),
    };
  }

  /** Maps a client-node failure to an AuthError that names the file or plugin, not its output. */
  #failure(err: unknown): AuthError {
    const e = err as { code?: unknown; syscall?: unknown; path?: unknown; name?: unknown };
    const exec = record(this.#init.user.exec);
    if (typeof e?.syscall === "string" && e.syscall !== "" && !e.syscall.startsWith("spawn")) {
      return new AuthError(
        this.name,
        `context "${this.name}": cannot read ${String(e.path ?? "a file")}: ${fsReason(err)}`,
      );
    }
    if (exec) {
      const command = basename(String(exec.command));
      let why = "failed (its output is not shown because it may hold credentials)";
      if (e?.code === "ENOENT") why = "was not found";
      else if (e?.code === "EACCES") why = "is not executable";
      else if (err instanceof Deno.errors.NotCapable || e?.name === "NotCapable") {
        why = "could not run: Deno needs --allow-run (and --allow-env) for exec credential plugins";
      } else if (err instanceof SyntaxError) why = "printed something that is not ExecCredential JSON";
      else if (err instanceof TypeError) why = "printed an ExecCredential without a status";
      return new AuthError(this.name, `context "${this.name}": exec credential plugin "${command}" ${why}`);
    }
    const provider = record(this.#init.user.authProvider);
    const what = provider ? `auth-provider "${String(provider.name)}"` : "authentication";
    return new AuthError(this.name, `context "${this.name}": ${what} failed: ${e?.name ?? "error"}`);
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
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    // The parser's message quotes the offending line, which may hold a token: report its position only.
    const pos = (err as { linePos?: { line: number; col: number }[] }).linePos?.[0];
    const code = (err as { code?: unknown }).code;
    throw new ConfigError(
      `invalid kubeconfig ${path}: not valid YAML${pos ? ` (line ${pos.line}, column ${pos.col}` : " ("}${
        typeof code === "string" ? `${pos ? ", " : ""}${code})` : ")"
      }`,
    );
  }
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

/** Why `path` cannot be read, or undefined when it can. Never reads content into messages. */
function unreadable(path: string): string | undefined {
  try {
    const f = Deno.openSync(path, { read: true });
    try {
      if (f.statSync().isDirectory) return "is a directory";
    } finally {
      f.close();
    }
    return undefined;
  } catch (err) {
    return fsReason(err);
  }
}

function fileField(where: string, file: string, r: Record<string, unknown>, key: string): string | undefined {
  const v = str(r[key]);
  if (!v) return undefined;
  const path = isAbsolute(v) ? v : resolve(dirname(file), v);
  const problem = unreadable(path);
  if (problem) throw new ConfigError(`${where}: cannot read ${key} file ${path}: ${problem}`);
  return path;
}

function dataField(where: string, r: Record<string, unknown>, key: string): string | undefined {
  const v = str(r[key]);
  if (!v) return undefined;
  let text: string;
  try {
    text = atob(v.replace(/\s+/g, ""));
  } catch {
    throw new ConfigError(`${where}: ${key} is not valid base64`);
  }
  if (!text.includes("-----BEGIN ")) throw new ConfigError(`${where}: ${key} does not decode to PEM`);
  return v;
}

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return (u.protocol === "https:" || u.protocol === "http:") && u.hostname !== "";
  } catch {
    return false;
  }
}

/** A URL for messages, without any user:password part. */
function safeUrl(s: string): string {
  return s.replace(/\/\/[^/@]*@/, "//***@");
}

function envGetter(env: EnvSource | undefined): (key: string) => string | undefined {
  if (!env) return () => undefined;
  if (typeof env === "function") return env;
  return (k) => env[k];
}

function record(v: unknown): Record<string, unknown> | undefined {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? v as Record<string, unknown> : undefined;
}

function str(v: unknown): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

function pem(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === "string") return v;
  if (v instanceof Uint8Array) return new TextDecoder().decode(v);
  if (Array.isArray(v)) return v.map(pem).filter((s) => s !== undefined).join("\n");
  return undefined;
}

function base64(s: string): string {
  let bin = "";
  for (const b of new TextEncoder().encode(s)) bin += String.fromCharCode(b);
  return btoa(bin);
}

/** 64-bit FNV-1a as two 32-bit halves, hex. */
function fnv64(s: string): string {
  let h1 = 0x811c9dc5;
  let h2 = 0x050c5d1f;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193) >>> 0;
    h2 = Math.imul(h2 ^ c, 0x5bd1e995) >>> 0;
  }
  return h1.toString(16).padStart(8, "0") + h2.toString(16).padStart(8, "0");
}
