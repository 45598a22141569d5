// What an untrusted kubeconfig (a labelled Secret, a file dropped into --cluster-dir) may hold: inline credentials
// only, https only, exec plugins only from --exec-plugin-allowlist. Pure: looks at parsed YAML, reads nothing.

import { basename } from "node:path";
import { record, redact } from "../../util/mod.ts";

/**
 * The rules an untrusted kubeconfig is held to (`--exec-plugin-allowlist`, `--allow-http-servers`).
 *
 * @example
 * ```ts
 * import { type CredentialPolicy, parseKubeconfigText } from "../../../kube.ts";
 *
 * declare const text: string; // a kubeconfig from a labelled Secret
 * // `--exec-plugin-allowlist aws`: an untrusted kubeconfig may run `aws eks get-token`, and nothing else.
 * const policy: CredentialPolicy = { execAllowlist: ["aws"], allowHttpServers: false };
 * const { contexts } = await parseKubeconfigText(text, { source: "secret hub/eks", untrusted: policy });
 * ```
 */
export interface CredentialPolicy {
  /** exec plugin commands that may run, each an exact command name (`aws`) or an absolute path. Default none. */
  execAllowlist: readonly string[];
  /** Whether a `http://` server is accepted (its token would cross the network in the clear). Default false. */
  allowHttpServers: boolean;
}

/**
 * No exec plugin, https only: the default for everything a provider reads.
 *
 * @example
 * ```ts
 * import { parseKubeconfigText, STRICT_CREDENTIAL_POLICY } from "../../../kube.ts";
 *
 * declare const text: string; // a kubeconfig from a labelled Secret
 * const { contexts } = await parseKubeconfigText(text, {
 *   source: "secret hub/tenant-a",
 *   untrusted: STRICT_CREDENTIAL_POLICY,
 * });
 * for (const c of contexts) console.log(c.name, c.error ?? "usable"); // a context naming a file or a plugin is refused
 * ```
 */
export const STRICT_CREDENTIAL_POLICY: CredentialPolicy = Object.freeze({
  execAllowlist: Object.freeze([]) as readonly string[],
  allowHttpServers: false,
});

/** One refused field of one context. */
export interface CredentialProblem {
  /** The context whose cluster or user section holds the field. */
  context: string;
  /** The refused field, as the kubeconfig spells it (`tokenFile`, `exec`, `server`…). */
  field: string;
  /** One line: what is refused, why, and what to use instead. Never a credential. */
  error: string;
}

/** A context's own sections, as the loader resolves them (first definition of each name). */
export interface ContextSections {
  /** The `context` mapping (cluster, user, namespace, extensions). */
  context?: Record<string, unknown>;
  /** The `cluster` mapping of the cluster the context names. */
  cluster?: Record<string, unknown>;
  /** The `user` mapping of the user the context names. */
  user?: Record<string, unknown>;
}

/** Path fields kubectl knows; any other key ending in `-file`/`File` is refused too. */
const PATH_FIELDS = new Set(["certificate-authority", "client-certificate", "client-key", "tokenFile", "token-file"]);

/**
 * The one line that refuses `auth-provider`, for trusted and untrusted kubeconfigs alike.
 *
 * client-go removed the gcp and azure providers in 1.26, and client-node runs their `cmd-path` with execSync (it
 * freezes the whole hub, beyond any time limit); its `exec`/`tokenFile` variants bypass every check on `exec` and
 * `tokenFile`. Exec credential plugins do what auth-provider did.
 */
export function authProviderError(where: string, provider: unknown): string {
  const name = typeof provider === "object" && provider !== null ? (provider as Record<string, unknown>).name : "";
  const shown = typeof name === "string" && name !== "" ? ` "${name.slice(0, 40)}"` : "";
  return `${where} uses auth-provider${shown}, which the hub does not support: client-go removed auth-providers ` +
    `(gcp, azure) in 1.26; use an exec credential plugin instead (gke-gcloud-auth-plugin, kubelogin)`;
}

/**
 * Every field of one context that an untrusted kubeconfig may not use.
 *
 * Accepted: server (https, or http with `allowHttpServers`), certificate-authority-data, insecure-skip-tls-verify,
 * tls-server-name, proxy-url, client-certificate-data, client-key-data, token, username/password, `as`, namespace,
 * extensions, and `exec` whose command is on the allowlist. Refused: every path (`certificate-authority`,
 * `client-certificate`, `client-key`, `tokenFile`, `token-file`, any `*-file`), `auth-provider`, any other `exec`.
 *
 * Guarantees: pure and total: any shape of input gives an answer, never a throw; messages name the field and the
 * context, never a value that may be a credential (an exec command is shown, a token or path is not).
 * Assumptions: the caller resolves the sections as the loader will use them (first definition of each name).
 */
export function untrustedContextProblems(
  context: string,
  sections: ContextSections,
  policy: CredentialPolicy,
  source = "an untrusted kubeconfig",
): CredentialProblem[] {
  const problems: CredentialProblem[] = [];
  const where = `context "${context}" in ${source}`;
  const refuse = (field: string, error: string) => problems.push({ context, field, error: `${where}: ${error}` });
  const onlyInline = "untrusted kubeconfigs (labelled Secrets, --cluster-dir files) carry credentials inline only";
  const c = sections.cluster ?? {};
  const u = sections.user ?? {};
  for (
    const [section, map, inline] of [
      ["cluster", c, "certificate-authority-data"],
      ["user", u, "token, client-certificate-data and client-key-data"],
    ] as const
  ) {
    for (const key of Object.keys(map)) {
      if (!isPathField(key) || isUnset(map[key])) continue;
      refuse(key, `${section} field ${key} names a file on the hub's own disk; ${onlyInline} (use ${inline})`);
    }
  }
  const server = c.server;
  if (typeof server === "string" && /^http:\/\//i.test(server.trim()) && !policy.allowHttpServers) {
    refuse(
      "server",
      `server ${redact(server.trim())} is plain http, so its credentials would cross the network unencrypted; ` +
        `use https (or start the hub with --allow-http-servers)`,
    );
  }
  if (!isUnset(u["auth-provider"])) refuse("auth-provider", authProviderError("its user", u["auth-provider"]));
  if (!isUnset(u.exec)) {
    const exec = u.exec;
    const command = typeof exec === "object" && exec !== null && !Array.isArray(exec)
      ? (exec as Record<string, unknown>).command
      : undefined;
    if (typeof command !== "string" || command === "") {
      refuse("exec", "its exec section names no command");
    } else if (!policy.execAllowlist.includes(command)) {
      const allowed = policy.execAllowlist.length ? policy.execAllowlist.join(", ") : "empty";
      refuse(
        "exec",
        `exec credential plugin "${shortCommand(command)}" is not on --exec-plugin-allowlist (${allowed}); ` +
          `the hub runs no program an untrusted kubeconfig names unless that flag allows it`,
      );
    } else {
      const env = (exec as Record<string, unknown>).env;
      for (const e of Array.isArray(env) ? env : []) {
        const name = typeof e === "object" && e !== null ? String((e as Record<string, unknown>).name) : "";
        if (LOADER_ENV.test(name)) {
          refuse(
            "exec",
            `exec.env sets ${JSON.stringify(name)}, which would choose what program or library an allowed plugin ` +
              `loads; an untrusted kubeconfig may not set PATH, LD_* or DYLD_*`,
          );
        }
      }
    }
  }
  return problems;
}

/** Variables that choose which program or library runs: an untrusted exec.env may not set them. */
const LOADER_ENV = /^(PATH|LD_.*|DYLD_.*)$/;

/**
 * Every refused field of every context of a parsed kubeconfig document, in document order.
 *
 * Guarantees: pure and total (anything that is not a kubeconfig mapping gives no problems: the loader words that
 * error); each context is judged on the cluster and user sections the loader would use (first definition wins).
 */
export function checkUntrustedKubeconfig(
  doc: unknown,
  policy: CredentialPolicy,
  source?: string,
): CredentialProblem[] {
  const d = record(doc);
  if (!d) return [];
  const first = (list: unknown, name: unknown) =>
    Array.isArray(list) ? list.map(record).find((e) => e !== undefined && e.name === name) : undefined;
  const out: CredentialProblem[] = [];
  const seen = new Set<string>();
  for (const entry of Array.isArray(d.contexts) ? d.contexts.map(record) : []) {
    const name = entry?.name;
    if (typeof name !== "string" || name === "" || seen.has(name)) continue;
    seen.add(name);
    const ctx = record(entry?.context) ?? {};
    out.push(...untrustedContextProblems(
      name,
      {
        context: ctx,
        cluster: record(first(d.clusters, ctx.cluster)?.cluster),
        user: record(first(d.users, ctx.user)?.user),
      },
      policy,
      source,
    ));
  }
  return out;
}

/**
 * Checks `--exec-plugin-allowlist` entries: exact command names (no `/`) or absolute paths. Returns the first bad
 * entry's problem, or undefined.
 */
export function execAllowlistProblem(entries: readonly string[]): string | undefined {
  const bad = entries.find((e) => e.includes("/") && !e.startsWith("/"));
  return bad === undefined
    ? undefined
    : `"${bad}" is a relative path; give a command name (aws) or an absolute path (/usr/local/bin/aws)`;
}

function isPathField(key: string): boolean {
  return PATH_FIELDS.has(key) || /(-file|File)$/.test(key);
}

function isUnset(v: unknown): boolean {
  return v === undefined || v === null || v === "";
}

/** A command for messages: its name, at most 80 characters. */
function shortCommand(command: string): string {
  const name = command.includes("/") ? basename(command) : command;
  return name.length > 80 ? `${name.slice(0, 77)}...` : name;
}
