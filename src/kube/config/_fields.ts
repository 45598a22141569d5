// Small readers shared by the kubeconfig and in-cluster loaders: typed fields of parsed YAML, files that must be
// readable, environment lookups. Private to src/kube.

import { dirname, isAbsolute, resolve } from "node:path";
import { fsReason } from "./_token_file.ts";
import { ConfigError } from "../errors.ts";

/**
 * Environment lookups, as a plain object or a function; injected so tests and main.ts control it.
 *
 * @example
 * ```ts
 * import { type EnvSource, loadContexts } from "../../../kube.ts";
 *
 * const fixed: EnvSource = { HOME: "/home/ops", KUBECONFIG: "/etc/kube/prod.yaml" };
 * const live: EnvSource = (key) => Deno.env.get(key);
 * const catalog = await loadContexts({ env: Deno.args.includes("--fixed") ? fixed : live });
 * console.log(catalog.files());
 * ```
 */
export type EnvSource = Record<string, string | undefined> | ((key: string) => string | undefined);

/** Why `path` cannot be read, or undefined when it can. Never reads content into messages. */
export function unreadable(path: string): string | undefined {
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

export function fileField(where: string, file: string, r: Record<string, unknown>, key: string): string | undefined {
  const v = str(r[key]);
  if (!v) return undefined;
  const path = isAbsolute(v) ? v : resolve(dirname(file), v);
  const problem = unreadable(path);
  if (problem) throw new ConfigError(`${where}: cannot read ${key} file ${path}: ${problem}`);
  return path;
}

export function dataField(where: string, r: Record<string, unknown>, key: string): string | undefined {
  const raw = r[key];
  if (raw !== undefined && raw !== null && typeof raw !== "string") {
    // kubectl refuses it too (the field is bytes); ignoring it would serve an insecure cluster with a broken CA field.
    throw new ConfigError(
      `${where}: ${key} must be a base64 string, not ${Array.isArray(raw) ? "a list" : typeof raw}`,
    );
  }
  const v = str(raw);
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

export function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return (u.protocol === "https:" || u.protocol === "http:") && u.hostname !== "";
  } catch {
    return false;
  }
}

/**
 * The URL without its user info (`https://user:pass@host` → `https://host`): what the hub connects to and shows.
 * Kubeconfig credentials live in the user section; the transports never sent URL user info. For messages about a URL
 * that may not parse, use util's `redact()`.
 */
export function withoutUserInfo(url: string): string {
  try {
    const u = new URL(url);
    if (u.username === "" && u.password === "") return url;
    u.username = "";
    u.password = "";
    return u.href.replace(/\/$/, url.endsWith("/") ? "/" : "");
  } catch {
    return url;
  }
}

export function envGetter(env: EnvSource | undefined): (key: string) => string | undefined {
  if (!env) return () => undefined;
  if (typeof env === "function") return env;
  return (k) => env[k];
}

export function str(v: unknown): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

export function pem(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === "string") return v;
  if (v instanceof Uint8Array) return new TextDecoder().decode(v);
  if (Array.isArray(v)) return v.map(pem).filter((s) => s !== undefined).join("\n");
  return undefined;
}

export function base64(s: string): string {
  let bin = "";
  for (const b of new TextEncoder().encode(s)) bin += String.fromCharCode(b);
  return btoa(bin);
}
