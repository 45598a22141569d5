// One kubeconfig entry, a cluster or a user, checked and turned into the access it describes; refused with a
// ConfigError that names the entry, its context and its file.

import { dirname, isAbsolute, join, resolve } from "node:path";
import { record, redact } from "../../util/mod.ts";
import type { KnCluster, KnUser } from "./_kubeconfig_access.ts";
import { dataField, fileField, isHttpUrl, str, withoutUserInfo } from "./_fields.ts";
import { authProviderError } from "./credential_policy.ts";
import { ConfigError } from "../errors.ts";

/** A named entry of a kubeconfig's clusters, users or contexts list, and the file it came from. */
export interface Entry {
  name: string;
  value: Record<string, unknown>;
  file: string;
}

/** The cluster entry of `context`: its server, CA, proxy and server name, checked. */
export function toCluster(context: string, entry: Entry): KnCluster {
  const where = `cluster "${entry.name}" (context "${context}", ${entry.file})`;
  const c = record(entry.value.cluster);
  if (!c) throw new ConfigError(`${where} has no "cluster" section`);
  const server = str(c.server);
  if (!server) throw new ConfigError(`${where} has no server URL`);
  if (!isHttpUrl(server)) {
    throw new ConfigError(`${where} has an invalid server URL "${redact(server)}"; expected https://host:port`);
  }
  const proxyUrl = str(c["proxy-url"]);
  if (proxyUrl && !/^(https?|socks5h?):\/\//.test(proxyUrl)) {
    throw new ConfigError(`${where} has an invalid proxy-url; expected http://, https:// or socks5://`);
  }
  const tlsServerName = str(c["tls-server-name"]);
  if (tlsServerName !== undefined && !SERVER_NAME.test(tlsServerName)) {
    throw new ConfigError(`${where} has an invalid tls-server-name; expected a DNS name such as kubernetes.default`);
  }
  if (tlsServerName && proxyUrl) {
    // Deno's fetch, which carries proxied requests, takes no server name: refused rather than checked against the host.
    throw new ConfigError(
      `${where} sets both tls-server-name and proxy-url, which the hub cannot honour together (requests through a ` +
        `proxy check the URL's host); remove one`,
    );
  }
  const caFile = fileField(where, entry.file, c, "certificate-authority");
  const caData = dataField(where, c, "certificate-authority-data");
  const insecure = c["insecure-skip-tls-verify"] === true;
  if (insecure && proxyUrl) {
    // The insecure transport is node:https, which does not go through a proxy: refused rather than sent around it.
    throw new ConfigError(
      `${where} sets both insecure-skip-tls-verify and proxy-url, which the hub cannot honour together (its ` +
        `unverified transport does not go through a proxy); remove one`,
    );
  }
  return {
    name: entry.name,
    // User info in the URL is never a credential the hub sends; dropped here, it reaches no log, error or /status.
    server: withoutUserInfo(server).replace(/\/+$/, ""),
    caFile,
    caData,
    // client-node refuses plain http unless this is set; TLS settings do not matter for http.
    skipTLSVerify: insecure || server.startsWith("http:"),
    proxyUrl,
    // Only where it means something: plain http has no certificate, and insecure-skip-tls-verify checks none.
    tlsServerName: insecure || server.startsWith("http:") ? undefined : tlsServerName,
  };
}

/** A DNS name (or an IP address) a certificate can be checked against: what `tls-server-name` may hold. */
const SERVER_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$|^[0-9a-fA-F:.]+$/;

/**
 * The user entry of `context` (none: an anonymous user named `userName`). With `minimalEnv` (an untrusted source) an
 * exec plugin runs with the hub's own PATH and HOME, and a bare command name is resolved on that PATH here.
 */
export function toUser(
  context: string,
  userName: string | undefined,
  entry: Entry | undefined,
  minimalEnv?: () => Record<string, string | undefined>,
): { user: KnUser; tokenFile?: string; execEnv?: Record<string, string> } {
  if (!entry) return { user: { name: userName ?? "" } };
  const where = `user "${entry.name}" (context "${context}", ${entry.file})`;
  const u = record(entry.value.user) ?? {};
  // Refused in trusted files too: client-node runs gcp/azure cmd-path with execSync, freezing the whole hub.
  if (u["auth-provider"] !== undefined && u["auth-provider"] !== null) {
    throw new ConfigError(authProviderError(where, u["auth-provider"]));
  }
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
  let execEnv: Record<string, string> | undefined;
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
    if (minimalEnv) {
      // Untrusted: the hub's own PATH and HOME win over the plugin's env entries, and a bare allowed name is
      // resolved on the hub's PATH here, so the kubeconfig cannot choose which program that name runs.
      const minimal = minimalEnv();
      execEnv = {};
      for (const e of env) execEnv[e.name] = e.value;
      for (const [k, v] of Object.entries(minimal)) if (v !== undefined) execEnv[k] = v;
      if (!command.includes("/")) command = onPath(where, command, minimal.PATH);
    }
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
      username: str(u.username),
      password: str(u.password),
      impersonateUser: str(u.as),
    },
    tokenFile,
    execEnv,
  };
}

/** The absolute path of the executable `command` on `path` (the hub's PATH), or ConfigError naming the command. */
function onPath(where: string, command: string, path: string | undefined): string {
  for (const dir of (path ?? "").split(":")) {
    if (!isAbsolute(dir)) continue;
    const candidate = join(dir, command);
    try {
      const info = Deno.statSync(candidate);
      if (info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0) return candidate;
    } catch { /* not there, or not readable: the next folder */ }
  }
  throw new ConfigError(`${where}: exec plugin ${JSON.stringify(command)} is not an executable on the hub's PATH`);
}
