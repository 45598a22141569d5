// One kubeconfig user's credentials as a ClusterAccess: tokens, token files, client certificates and CAs applied as
// client-node does, exec plugins through client-node (loaded lazily), a hung plugin killed. (The loaders refuse
// auth-provider: client-node runs gcp/azure cmd-path with execSync, which no time limit can stop.)

import type { Cluster as KnCluster, KubeConfig, User as KnUser } from "@kubernetes/client-node";
/** client-node's kubeconfig entry types, for kubeconfig.ts (one static import of the package, beside its dynamic one). */
export type { KnCluster, KnUser };
import type { RequestOptions } from "node:https";
import { basename } from "node:path";
import { base64, pem } from "./_fields.ts";
import { record } from "../../util/mod.ts";
import { fsReason, TokenFile } from "./_token_file.ts";
import type { ClusterAccess, ClusterAuth } from "./cluster_access.ts";
import { AuthError } from "../errors.ts";

/** How long an exec credential plugin may run before it is killed (client-node sets no limit). */
export const EXEC_PLUGIN_TIMEOUT_MS = 10_000;

/**
 * Decoded `certificate-authority-data`, shared by every context that names the same bytes: namespaced tenants of one
 * API server share its CA, and 1,000 of them held 1,000 copies of the same 2.4 KB PEM. Only CAs, which are public;
 * client keys and certificates stay with their own context. Bounded, since strangers' Secrets choose these bytes and
 * an entry outlives its cluster: at most MAX_SHARED_CAS entries (the oldest dropped first), each of at most
 * MAX_SHARED_CA_CHARS base64 characters (a CA bundle is 1-10 KB; a larger one is decoded for its context alone), so
 * under 2 MiB in all.
 */
const SHARED_CAS = new Map<string, string>();
const MAX_SHARED_CAS = 64;
const MAX_SHARED_CA_CHARS = 16 * 1024;

export interface AccessInit {
  name: string;
  server: string;
  source: string;
  namespace?: string;
  namespaceScope?: string;
  proxyUrl?: string;
  tlsServerName?: string;
  cluster: KnCluster;
  user: KnUser;
  tokenFile?: string;
  execTimeoutMs?: number;
  /** When set, exec plugins get exactly this environment instead of the hub's (untrusted kubeconfigs). */
  execEnv?: Record<string, string>;
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
export class KubeconfigAccess implements ClusterAccess {
  readonly name: string;
  readonly server: string;
  readonly source: string;
  readonly namespace?: string;
  readonly namespaceScope?: string;
  readonly proxyUrl?: string;
  readonly tlsServerName?: string;
  readonly #init: AccessInit;
  readonly #tokenFile: TokenFile | undefined;
  /** Inline base64 data (CA, client certificate and key) already decoded. */
  #decoded: Map<string, string> | undefined;
  /** Only for exec plugins and auth providers; made on first use and after `invalidate()`. */
  #kc: Promise<KubeConfig> | undefined;
  #pending: Promise<ClusterAuth> | undefined;
  #plugins: Set<ReturnType<ExecFnHolder["execFn"]>> | undefined;

  constructor(init: AccessInit) {
    this.name = init.name;
    this.server = init.server;
    this.source = init.source;
    this.namespace = init.namespace;
    this.namespaceScope = init.namespaceScope;
    this.proxyUrl = init.proxyUrl;
    this.tlsServerName = init.tlsServerName;
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
      const execEnv = this.#init.execEnv;
      holder.execFn = (...args: unknown[]) => {
        // client-node hands the plugin the hub's whole process.env plus exec.env; an untrusted one gets only its own.
        if (execEnv) args[2] = { ...(record(args[2]) ?? {}), env: { ...execEnv } };
        const child = spawn(...args);
        const plugins = this.#plugins ??= new Set();
        plugins.add(child);
        child.once("close", () => plugins.delete(child));
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
    // The limit is for the plugin alone: loading client-node first (seconds on a loaded machine) is not counted.
    const kc = await (this.#kc ??= this.#makeKubeConfig());
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ExecTimeout()), limitMs);
    });
    try {
      const run = kc.applyToHTTPSOptions(opts);
      run.catch(() => {}); // after a timeout, the killed run still rejects: nobody waits for it any more
      await Promise.race([run, timeout]);
    } catch (err) {
      if (err instanceof ExecTimeout) {
        for (const child of this.#plugins ?? []) child.kill("SIGKILL");
        this.#plugins?.clear();
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
    const ca = this.#fileOrData(cluster.caFile, cluster.caData, true);
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
  #fileOrData(file: string | undefined, data: string | undefined, shared = false): string | undefined {
    if (file) {
      try {
        return Deno.readTextFileSync(file);
      } catch (err) {
        throw new AuthError(this.name, `context "${this.name}": cannot read ${file}: ${fsReason(err)}`);
      }
    }
    if (!data) return undefined;
    const shareable = shared && data.length <= MAX_SHARED_CA_CHARS;
    const decoded = shareable ? SHARED_CAS : (this.#decoded ??= new Map());
    let text = decoded.get(data);
    if (text === undefined) {
      const bin = atob(data.replace(/\s+/g, ""));
      const bytes = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
      text = new TextDecoder().decode(bytes);
      if (shareable && decoded.size >= MAX_SHARED_CAS) decoded.delete(decoded.keys().next().value!);
      decoded.set(data, text);
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
