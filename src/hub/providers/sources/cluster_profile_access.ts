// KEP-5339 for the hub: the operator's --clusterprofile-provider-file, and one ClusterProfile's access provider turned
// into a ClusterAccess (server and CA from the untrusted profile, the exec plugin from the trusted file).

import { dirname, isAbsolute, join, resolve } from "node:path";
import {
  type CredentialPolicy,
  EXEC_CREDENTIAL_VERSIONS,
  ExecCredentialAccess,
  type ExecPluginSpec,
  untrustedContextProblems,
} from "../../../kube/mod.ts";
import { type Clock, oneLine, record, redact } from "../../../util/mod.ts";

/** The ClusterProfile API's group/version and the condition that says a cluster may be used. */
export const CLUSTER_PROFILE_API = "multicluster.x-k8s.io/v1alpha1";
export const CONTROL_PLANE_HEALTHY = "ControlPlaneHealthy";

/** KEP-5339's reserved extension names (sigs.k8s.io/cluster-inventory-api pkg/access/config.go). */
export const EXEC_EXTENSION = "client.authentication.k8s.io/exec";
export const ADDITIONAL_ARGS_EXTENSION = "clusterprofiles.multicluster.x-k8s.io/exec/additional-args";
export const ADDITIONAL_ENVS_EXTENSION = "clusterprofiles.multicluster.x-k8s.io/exec/additional-envs";

/** One provider of the file: an access provider name and the exec plugin that serves it. */
export interface ProfileProvider {
  name: string;
  /** Absolute path of the plugin. */
  command: string;
  args: string[];
  env: { name: string; value: string }[];
  apiVersion: string;
  provideClusterInfo: boolean;
  /** What a profile's additional-args extension does: `Ignore` (default) or `Append`. */
  argsPolicy: "Ignore" | "Append";
  /** What a profile's additional-envs extension does: `Ignore` (default), `AppendIfNotExists` or `Replace`. */
  envPolicy: "Ignore" | "AppendIfNotExists" | "Replace";
}

/** The parsed --clusterprofile-provider-file. */
export interface ProviderFile {
  path: string;
  providers: ProfileProvider[];
}

/** The provider file cannot be used (exit 2 at start-up). */
export class ProviderFileError extends Error {
  override name = "ProviderFileError";
}

/**
 * Parses KEP-5339's provider file (`{"providers": [{"name", "execConfig": {apiVersion, command, args, env,
 * provideClusterInfo}, "profileSourcedCLIArgsPolicy", "profileSourcedEnvVarsPolicy"}]}`, JSON as the reference reads
 * it). A command with a "/" resolves against the file's folder, a bare name against `path` (the hub's PATH).
 *
 * Guarantees: throws ProviderFileError with one line naming the file, the provider and the field; never reads the
 * plugin, only checks that it is an executable file.
 */
export function parseProviderFile(text: string, file: string, searchPath = ""): ProviderFile {
  const where = `--clusterprofile-provider-file ${file}`;
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new ProviderFileError(`${where} is not valid JSON: ${oneLine((err as Error).message)}`);
  }
  const list = record(doc)?.providers;
  if (!Array.isArray(list) || list.length === 0) {
    throw new ProviderFileError(`${where} lists no providers: it needs {"providers": [{"name", "execConfig"}]}`);
  }
  const providers: ProfileProvider[] = [];
  for (const [i, raw] of list.entries()) {
    const p = record(raw);
    const name = typeof p?.name === "string" ? p.name : "";
    const at = `${where}: providers[${i}]${name ? ` ("${name}")` : ""}`;
    if (!p || name === "") throw new ProviderFileError(`${at} has no name`);
    if (providers.some((q) => q.name === name)) throw new ProviderFileError(`${at}: the name is listed twice`);
    const exec = record(p.execConfig);
    if (!exec) throw new ProviderFileError(`${at} has no execConfig`);
    const apiVersion = exec.apiVersion;
    if (typeof apiVersion !== "string" || !EXEC_CREDENTIAL_VERSIONS.includes(apiVersion)) {
      throw new ProviderFileError(
        `${at}: execConfig.apiVersion ${JSON.stringify(apiVersion ?? null)} is not one of ${
          EXEC_CREDENTIAL_VERSIONS.join(", ")
        }`,
      );
    }
    if (typeof exec.command !== "string" || exec.command === "") {
      throw new ProviderFileError(`${at}: execConfig.command is missing`);
    }
    const args = exec.args ?? [];
    if (!Array.isArray(args) || !args.every((a) => typeof a === "string")) {
      throw new ProviderFileError(`${at}: execConfig.args must be a list of strings`);
    }
    const env = exec.env ?? [];
    if (
      !Array.isArray(env) ||
      !env.every((e) => typeof record(e)?.name === "string" && typeof record(e)?.value === "string")
    ) {
      throw new ProviderFileError(`${at}: execConfig.env must be a list of {name, value} strings`);
    }
    const argsPolicy = p.profileSourcedCLIArgsPolicy ?? "Ignore";
    if (argsPolicy !== "" && argsPolicy !== "Ignore" && argsPolicy !== "Append") {
      throw new ProviderFileError(`${at}: profileSourcedCLIArgsPolicy must be Ignore or Append`);
    }
    const envPolicy = p.profileSourcedEnvVarsPolicy ?? "Ignore";
    if (envPolicy !== "" && envPolicy !== "Ignore" && envPolicy !== "AppendIfNotExists" && envPolicy !== "Replace") {
      throw new ProviderFileError(`${at}: profileSourcedEnvVarsPolicy must be Ignore, AppendIfNotExists or Replace`);
    }
    providers.push({
      name,
      command: resolveCommand(exec.command, file, searchPath, at),
      args: args as string[],
      env: (env as { name: string; value: string }[]).map((e) => ({ name: e.name, value: e.value })),
      apiVersion,
      provideClusterInfo: exec.provideClusterInfo === true,
      argsPolicy: argsPolicy === "Append" ? "Append" : "Ignore",
      envPolicy: envPolicy === "" ? "Ignore" : envPolicy as ProfileProvider["envPolicy"],
    });
  }
  return { path: file, providers };
}

function resolveCommand(command: string, file: string, searchPath: string, at: string): string {
  const candidates = command.includes("/")
    ? [isAbsolute(command) ? command : resolve(dirname(resolve(file)), command)]
    : searchPath.split(":").filter((d) => d !== "").map((d) => join(d, command));
  for (const c of candidates) {
    try {
      const info = Deno.statSync(c);
      if (info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0) return c;
    } catch { /* next */ }
  }
  throw new ProviderFileError(
    `${at}: execConfig.command ${JSON.stringify(command)} is not an executable file${
      command.includes("/") ? "" : " on the hub's PATH"
    }`,
  );
}

/** The part of a ClusterProfile the provider keeps (its store's projection). */
export interface ProfileView {
  namespace: string;
  name: string;
  /** `status.accessProviders` then the deprecated `status.credentialProviders`, as the reference merges them. */
  accessProviders: { name: string; cluster: Record<string, unknown> }[];
  /** The ControlPlaneHealthy condition, if the profile has one. */
  condition?: ProfileCondition;
}

/** A condition as /status shows it. */
export interface ProfileCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

/** What one profile offers: a ClusterAccess, or why not; with digests that tell an endpoint change from the rest. */
export interface ProfileAccess {
  access?: ExecCredentialAccess;
  error?: string;
  endpointDigest: string;
  credentialsDigest: string;
}

export interface ProfileAccessOptions {
  file: ProviderFile;
  /** `--allow-http-servers`; the exec allowlist plays no part (the file chooses the plugin). */
  policy: CredentialPolicy;
  /** The hub's PATH and HOME: the only variables of its own a plugin gets (the file's execConfig.env may override). */
  baseEnv: Record<string, string>;
  execTimeoutMs?: number;
  clock?: Clock;
}

/** Variables that choose what program, library or configuration runs: a profile may never set them (the file may). */
const LOADER_ENV = /^(PATH|HOME|LD_.*|DYLD_.*)$/;

/**
 * One profile's access: the first provider of the file (in file order, as the reference does) that the profile lists
 * gives the plugin; the profile's entry gives server, CA, proxy and extensions, held to the untrusted rules.
 *
 * Guarantees: pure apart from the digests; a profile that lists no provider of the file, or whose cluster section
 * breaks the rules (http without --allow-http-servers, a CA or other file path), gets one-line
 * `error` naming the profile and the field, never a value that may be a credential. A profile may add arguments and
 * environment only as the provider's policies allow, and never PATH, HOME, LD_* or DYLD_*.
 */
export async function profileAccess(p: ProfileView, o: ProfileAccessOptions): Promise<ProfileAccess> {
  const id = `${p.namespace}/${p.name}`;
  const where = `ClusterProfile ${id}`;
  const fail = (error: string): ProfileAccess => ({ error: oneLine(error), endpointDigest: "", credentialsDigest: "" });
  const listed = new Map(p.accessProviders.map((a) => [a.name, a]));
  const provider = o.file.providers.find((f) => listed.has(f.name));
  if (!provider) {
    const names = p.accessProviders.map((a) => JSON.stringify(a.name.slice(0, 63))).join(", ") || "none";
    return fail(
      `${where} names access provider(s) ${names}, none of which --clusterprofile-provider-file ${o.file.path} ` +
        `lists (${o.file.providers.map((f) => f.name).join(", ")}); the hub runs only the plugins that file names`,
    );
  }
  const cluster = listed.get(provider.name)!.cluster;
  const problems = untrustedContextProblems(provider.name, { cluster }, o.policy, where)
    .map((x) => x.error.replace(/untrusted kubeconfigs \(labelled Secrets, --cluster-dir files\)/, "profiles"));
  const server = typeof cluster.server === "string" ? cluster.server.trim() : "";
  if (!/^https?:\/\/[^/]/i.test(server)) {
    problems.push(
      `${where}: access provider "${provider.name}" has no https server URL (got ${redact(server) || "none"})`,
    );
  }
  const tlsServerName = typeof cluster["tls-server-name"] === "string" && cluster["tls-server-name"]
    ? cluster["tls-server-name"]
    : undefined;
  if (tlsServerName && cluster["proxy-url"]) {
    problems.push(
      `${where}: access provider "${provider.name}" sets both tls-server-name and proxy-url, which the hub cannot ` +
        `honour together; remove one`,
    );
  }
  let caPem: string | undefined;
  const caData = cluster["certificate-authority-data"];
  if (caData !== undefined && caData !== null && caData !== "") {
    caPem = typeof caData === "string" ? decodePem(caData) : undefined;
    if (!caPem) problems.push(`${where}: certificate-authority-data is not base64 of PEM`);
  }
  const extensions = new Map<string, unknown>();
  for (const e of Array.isArray(cluster.extensions) ? cluster.extensions : []) {
    const r = record(e);
    if (typeof r?.name === "string") extensions.set(r.name, r.extension);
  }
  const args = [...provider.args];
  const moreArgs = extensions.get(ADDITIONAL_ARGS_EXTENSION);
  if (moreArgs !== undefined && provider.argsPolicy === "Append") {
    if (!Array.isArray(moreArgs) || !moreArgs.every((a) => typeof a === "string")) {
      problems.push(`${where}: extension ${ADDITIONAL_ARGS_EXTENSION} must be a list of strings`);
    } else args.push(...moreArgs);
  }
  const env = new Map(provider.env.map((e) => [e.name, e.value]));
  const moreEnv = record(extensions.get(ADDITIONAL_ENVS_EXTENSION));
  if (extensions.has(ADDITIONAL_ENVS_EXTENSION) && provider.envPolicy !== "Ignore") {
    if (!moreEnv || !Object.values(moreEnv).every((v) => typeof v === "string")) {
      problems.push(`${where}: extension ${ADDITIONAL_ENVS_EXTENSION} must map names to strings`);
    } else {
      for (const [k, v] of Object.entries(moreEnv)) {
        if (LOADER_ENV.test(k)) {
          problems.push(
            `${where}: extension ${ADDITIONAL_ENVS_EXTENSION} sets ${JSON.stringify(k)}, which a profile may not set`,
          );
        } else if (provider.envPolicy === "Replace" || !env.has(k)) env.set(k, v as string);
      }
    }
  }
  if (problems.length > 0) return fail(problems.join("; "));
  const execConfig = extensions.get(EXEC_EXTENSION);
  const proxyUrl = typeof cluster["proxy-url"] === "string" && cluster["proxy-url"] ? cluster["proxy-url"] : undefined;
  const insecure = cluster["insecure-skip-tls-verify"] === true;
  const plugin: ExecPluginSpec = {
    command: provider.command,
    args,
    env: { ...o.baseEnv, ...Object.fromEntries(env) },
    apiVersion: provider.apiVersion,
    cluster: provider.provideClusterInfo
      ? {
        server,
        ...(typeof caData === "string" && caData ? { "certificate-authority-data": caData } : {}),
        ...(insecure ? { "insecure-skip-tls-verify": true } : {}),
        ...(proxyUrl ? { "proxy-url": proxyUrl } : {}),
        ...(tlsServerName ? { "tls-server-name": tlsServerName } : {}),
        ...(execConfig !== undefined ? { config: execConfig } : {}),
      }
      : undefined,
  };
  const access = new ExecCredentialAccess({
    name: id,
    server: server.replace(/\/+$/, ""),
    source: `clusterprofile ${id}`,
    caPem,
    insecureSkipTlsVerify: insecure,
    proxyUrl,
    tlsServerName,
    plugin,
    timeoutMs: o.execTimeoutMs,
    clock: o.clock,
  });
  return {
    access,
    endpointDigest: await digest([server, caData ?? null, insecure, proxyUrl ?? null, tlsServerName ?? null]),
    credentialsDigest: await digest([provider.name, plugin.command, plugin.args, plugin.env, plugin.cluster ?? null]),
  };
}

/** Projects a raw ClusterProfile to what the provider needs. */
export function profileView(raw: Record<string, unknown>): ProfileView {
  const meta = record(raw.metadata) ?? {};
  const status = record(raw.status) ?? {};
  const providers = new Map<string, Record<string, unknown>>();
  for (const list of [status.credentialProviders, status.accessProviders]) {
    for (const e of Array.isArray(list) ? list : []) {
      const r = record(e);
      if (typeof r?.name === "string") providers.set(r.name, record(r.cluster) ?? {});
    }
  }
  const conditions = Array.isArray(status.conditions) ? status.conditions.map(record) : [];
  const c = conditions.find((x) => x?.type === CONTROL_PLANE_HEALTHY);
  return {
    namespace: String(meta.namespace ?? ""),
    name: String(meta.name ?? ""),
    accessProviders: [...providers].map(([name, cluster]) => ({ name, cluster })),
    condition: c
      ? {
        type: CONTROL_PLANE_HEALTHY,
        status: String(c.status ?? "Unknown"),
        ...(typeof c.reason === "string" && c.reason ? { reason: oneLine(c.reason.slice(0, 128)) } : {}),
        ...(typeof c.message === "string" && c.message ? { message: oneLine(c.message.slice(0, 256)) } : {}),
      }
      : undefined,
  };
}

function decodePem(b64: string): string | undefined {
  try {
    const bin = atob(b64.replace(/\s+/g, ""));
    const bytes = Uint8Array.from(bin, (ch) => ch.charCodeAt(0));
    const text = new TextDecoder().decode(bytes);
    return text.includes("-----BEGIN ") ? text : undefined;
  } catch {
    return undefined;
  }
}

async function digest(value: unknown): Promise<string> {
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(JSON.stringify(value))));
  return Array.from(hash.subarray(0, 12), (b) => b.toString(16).padStart(2, "0")).join("");
}
