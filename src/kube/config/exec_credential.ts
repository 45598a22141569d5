// A cluster reached through an exec credential plugin the hub runs itself (client.authentication.k8s.io v1/v1beta1):
// KUBERNETES_EXEC_INFO with the cluster's info, an exact environment, a time limit, and a refresh before expiry.

import { basename } from "node:path";
import { type Clock, concatBytes, record, SystemClock } from "../../util/mod.ts";
import type { ClusterAccess, ClusterAuth } from "./cluster_access.ts";
import { EXEC_PLUGIN_TIMEOUT_MS } from "./_kubeconfig_access.ts";
import { AuthError } from "../errors.ts";

/** The ExecCredential API versions a plugin may speak. */
export const EXEC_CREDENTIAL_VERSIONS: readonly string[] = [
  "client.authentication.k8s.io/v1",
  "client.authentication.k8s.io/v1beta1",
];

/** Plugin output beyond this is refused (an ExecCredential is a few kilobytes). */
const MAX_OUTPUT_BYTES = 1 << 20;

/** One plugin run, fully decided by the caller. */
export interface ExecPluginSpec {
  /** An absolute path (the caller resolves names against its PATH). */
  command: string;
  args: readonly string[];
  /** The plugin's whole environment (nothing of the hub's is added), KUBERNETES_EXEC_INFO aside. */
  env: Readonly<Record<string, string>>;
  /** `client.authentication.k8s.io/v1` or `/v1beta1`; the plugin must answer in it. */
  apiVersion: string;
  /**
   * `spec.cluster` of KUBERNETES_EXEC_INFO (provideClusterInfo): server, certificate-authority-data, config…
   * Unset: the plugin gets `spec.interactive` only.
   */
  cluster?: Record<string, unknown>;
}

export interface ExecCredentialAccessInit {
  name: string;
  server: string;
  source: string;
  /** The server's CA, PEM; unset: the system roots. */
  caPem?: string;
  insecureSkipTlsVerify?: boolean;
  proxyUrl?: string;
  /** The name the server's certificate is checked against instead of the URL's host. */
  tlsServerName?: string;
  plugin: ExecPluginSpec;
  /** A plugin still running after this long is killed and reported. Default EXEC_PLUGIN_TIMEOUT_MS (10 s). */
  timeoutMs?: number;
  clock?: Clock;
}

/**
 * When a credential that expires at `expiresAt` (obtained at `obtainedAt`, ms) should be replaced: a fifth of its
 * lifetime before expiry, at least 2 s before (the clients' 1 s credential cache plus a request's latency) but never
 * earlier than half-way, and at most 5 minutes before. Pure.
 */
export function refreshAt(obtainedAt: number, expiresAt: number): number {
  const lifetime = Math.max(0, expiresAt - obtainedAt);
  const margin = Math.min(lifetime / 2, Math.max(lifetime / 5, 2_000), 300_000);
  return expiresAt - margin;
}

interface Cached {
  auth: ClusterAuth;
  /** undefined: no expirationTimestamp, kept until `invalidate()` (a 401). */
  refreshAt?: number;
}

/**
 * A ClusterAccess whose credentials come from an exec plugin run by the hub (not client-node, which neither passes
 * KUBERNETES_EXEC_INFO nor refreshes before expiry).
 *
 * Guarantees:
 * - the plugin runs with exactly `plugin.env` (plus KUBERNETES_EXEC_INFO), stdin closed, at most one run at a time
 *   (concurrent `auth()` calls share it), and is killed with SIGKILL after `timeoutMs`;
 * - a credential with `expirationTimestamp` is replaced once `refreshAt()` of it has passed, before it expires, so a
 *   request never carries an expired token; one without it is kept until `invalidate()` (the client saw a 401);
 * - failures are AuthErrors naming the plugin by its file name and what went wrong, never its output (it may hold
 *   credentials) nor its arguments.
 */
export class ExecCredentialAccess implements ClusterAccess {
  readonly name: string;
  readonly server: string;
  readonly source: string;
  readonly proxyUrl?: string;
  readonly tlsServerName?: string;
  readonly #init: ExecCredentialAccessInit;
  readonly #clock: Clock;
  #cached: Cached | undefined;
  #pending: Promise<ClusterAuth> | undefined;
  /** Plugin runs so far (for tests and logs). */
  runs = 0;

  constructor(init: ExecCredentialAccessInit) {
    this.name = init.name;
    this.server = init.server;
    this.source = init.source;
    this.proxyUrl = init.proxyUrl;
    this.tlsServerName = init.tlsServerName;
    this.#init = init;
    this.#clock = init.clock ?? new SystemClock();
  }

  auth(): Promise<ClusterAuth> {
    const c = this.#cached;
    if (c && (c.refreshAt === undefined || this.#clock.now() < c.refreshAt)) return Promise.resolve(c.auth);
    this.#pending ??= this.#run().finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  invalidate(): void {
    this.#cached = undefined;
  }

  async #run(): Promise<ClusterAuth> {
    const { plugin } = this.#init;
    const what = `cluster "${this.name}": exec credential plugin "${basename(plugin.command)}"`;
    const info = {
      kind: "ExecCredential",
      apiVersion: plugin.apiVersion,
      spec: { interactive: false, ...(plugin.cluster ? { cluster: plugin.cluster } : {}) },
    };
    const limitMs = this.#init.timeoutMs ?? EXEC_PLUGIN_TIMEOUT_MS;
    const startedAt = this.#clock.now();
    this.runs++;
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command(plugin.command, {
        args: [...plugin.args],
        env: { ...plugin.env, KUBERNETES_EXEC_INFO: JSON.stringify(info) },
        clearEnv: true,
        stdin: "null",
        stdout: "piped",
        stderr: "null",
      }).spawn();
    } catch (err) {
      let why = "could not be started";
      if (err instanceof Deno.errors.NotFound) why = "was not found";
      else if (err instanceof Deno.errors.PermissionDenied) why = "is not executable";
      else if (err instanceof Deno.errors.NotCapable) why = "could not run: Deno needs --allow-run for it";
      throw new AuthError(this.name, `${what} ${why}`, { cause: err });
    }
    const kill = () => {
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
    };
    // The time limit races the whole run: a plugin's own child holding stdout open does not hold the hub.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), limitMs);
    });
    const run = Promise.all([readCapped(child.stdout, MAX_OUTPUT_BYTES, kill), child.status]);
    let result: [Uint8Array, Deno.CommandStatus] | "timeout";
    try {
      result = await Promise.race([run, timeout]);
    } finally {
      clearTimeout(timer);
    }
    if (result === "timeout") {
      kill();
      run.catch(() => {});
      child.stdout.cancel().catch(() => {});
      throw new AuthError(this.name, `${what} did not finish within ${limitMs / 1000} s; it was stopped`);
    }
    const [out, status] = result;
    if (out.length > MAX_OUTPUT_BYTES) {
      throw new AuthError(this.name, `${what} printed more than ${MAX_OUTPUT_BYTES} bytes; it was stopped`);
    }
    if (!status.success) {
      throw new AuthError(
        this.name,
        `${what} exited with code ${status.code} (its output is not shown because it may hold credentials)`,
      );
    }
    const cred = parseExecCredential(new TextDecoder().decode(out), plugin.apiVersion);
    if (typeof cred === "string") throw new AuthError(this.name, `${what} ${cred}`);
    const auth: ClusterAuth = {
      headers: cred.token ? { Authorization: `Bearer ${cred.token}` } : {},
      caCerts: this.#init.caPem ? [this.#init.caPem] : undefined,
      cert: cred.cert,
      key: cred.key,
      insecureSkipTlsVerify: this.#init.insecureSkipTlsVerify === true && this.server.startsWith("https:"),
    };
    this.#cached = { auth, refreshAt: cred.expiresAt === undefined ? undefined : refreshAt(startedAt, cred.expiresAt) };
    return auth;
  }
}

/** What a plugin's ExecCredential gives. */
export interface ExecCredentialStatus {
  token?: string;
  cert?: string;
  key?: string;
  /** ms since the epoch. */
  expiresAt?: number;
}

/**
 * Reads a plugin's stdout as an ExecCredential of `apiVersion`; answers the status, or what is wrong with it (one
 * phrase, never the content). Pure.
 */
export function parseExecCredential(text: string, apiVersion: string): ExecCredentialStatus | string {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return "printed something that is not ExecCredential JSON";
  }
  const d = record(doc);
  if (!d || d.kind !== "ExecCredential") return "printed JSON that is not an ExecCredential";
  if (d.apiVersion !== apiVersion) {
    return `answered apiVersion ${JSON.stringify(String(d.apiVersion).slice(0, 60))}, not ${apiVersion}`;
  }
  const s = record(d.status);
  if (!s) return "printed an ExecCredential without a status";
  const token = typeof s.token === "string" && s.token !== "" ? s.token : undefined;
  const cert = typeof s.clientCertificateData === "string" && s.clientCertificateData ? s.clientCertificateData : "";
  const key = typeof s.clientKeyData === "string" && s.clientKeyData ? s.clientKeyData : "";
  if (!token && !(cert && key)) {
    return "printed an ExecCredential with neither a token nor a client certificate and key";
  }
  if (!!cert !== !!key) return "printed a client certificate without its key (or a key without its certificate)";
  let expiresAt: number | undefined;
  if (s.expirationTimestamp !== undefined && s.expirationTimestamp !== null && s.expirationTimestamp !== "") {
    expiresAt = typeof s.expirationTimestamp === "string" ? Date.parse(s.expirationTimestamp) : NaN;
    if (!Number.isFinite(expiresAt)) return "printed an expirationTimestamp that is not an RFC 3339 time";
  }
  return { token, cert: cert || undefined, key: key || undefined, expiresAt };
}

/** Reads all of `stream`, stopping (and calling `tooMuch`) once more than `max` bytes arrived. */
async function readCapped(stream: ReadableStream<Uint8Array>, max: number, tooMuch: () => void): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += chunk.length;
    if (size > max) {
      tooMuch();
      return new Uint8Array(size); // leaving the loop cancels the stream
    }
    chunks.push(chunk);
  }
  return concatBytes(chunks);
}
