// The hub's Deno permissions: the exact variables it reads, fail-fast checks, and the process.env npm packages see.
//
// The compiled binary runs with `--allow-env` limited to HUB_ENV (see deno.json's `compile` task). Some npm
// dependencies probe optional tuning variables at import time (undici's UNDICI_*, ws's WS_NO_BUFFER_UTIL, yaml's
// LOG_TOKENS) and `debug` (pulled in by client-node's socks-proxy-agent) even enumerates the whole environment,
// which Deno refuses without an unrestricted `--allow-env`. installNpmEnvView() gives those packages a view of
// process.env in which every variable the process may not read is simply unset, as it would be in a bare pod.

/** Every environment variable the hub itself reads. Mirrored by `--allow-env=` in deno.json's compile task. */
export const HUB_ENV = ["KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "KUBECONFIG", "HOME"] as const;

/** A Deno permission the hub needs was not granted. main.ts prints the message and exits with code 2. */
export class PermissionError extends Error {
  override name = "PermissionError";
}

/** True when `desc` is granted without prompting. */
export function granted(desc: Deno.PermissionDescriptor): boolean {
  return Deno.permissions.querySync(desc).state === "granted";
}

/**
 * Reads one variable. Unset is `undefined`; not granted is a PermissionError naming the flag,
 * never a silent `undefined` (a missing permission must not look like "not running in a pod").
 */
export function readEnv(name: string): string | undefined {
  if (!granted({ name: "env", variable: name })) {
    throw new PermissionError(
      `cannot read environment variable ${name}: Deno was started without --allow-env=${name}`,
    );
  }
  return Deno.env.get(name);
}

/**
 * Throws PermissionError unless the process may open connections to every target.
 * `host` is `hostname:port` (as in `new URL(server).host` with an explicit port).
 */
export function requireNet(targets: { what: string; host: string }[]): void {
  const missing = targets.filter((t) => !granted({ name: "net", host: t.host }));
  if (missing.length > 0) {
    throw new PermissionError(
      `no network permission for ${missing.map((t) => `${t.what} (${t.host})`).join(", ")}: ` +
        `Deno was started without --allow-net for ${missing.length === 1 ? "it" : "them"}`,
    );
  }
}

/** `hostname:port` of a URL, with the scheme's default port made explicit (the form Deno's net permission checks). */
export function netHost(url: string): string {
  const u = new URL(url);
  const port = u.port || (u.protocol === "https:" ? "443" : u.protocol === "http:" ? "80" : "");
  return port ? `${u.hostname}:${port}` : u.hostname;
}

/** The machine's hostname (the pod name in Kubernetes), or a PermissionError naming `--allow-sys=hostname`. */
export function hostname(purpose: string): string {
  if (!granted({ name: "sys", kind: "hostname" })) {
    throw new PermissionError(`cannot read the hostname for ${purpose}: Deno was started without --allow-sys=hostname`);
  }
  return Deno.hostname();
}

/** How the npm view reads the real environment; injectable for tests. */
export interface EnvBackend {
  /** Whether `name` may be read. */
  mayRead(name: string): boolean;
  get(name: string): string | undefined;
  /** Names that may exist, for enumeration (Object.keys(process.env)). */
  known: readonly string[];
}

/**
 * A process.env-shaped object: readable variables come from `backend`, every other one reads as unset.
 * Writes and deletes (the `debug` package saves its namespaces this way) stay inside the view.
 *
 * Guarantees: never throws NotCapable; `Object.keys` lists only readable variables that are set plus
 * what was written through the view.
 */
export function restrictedEnv(backend: EnvBackend): Record<string, string> {
  const written = new Map<string, string | undefined>();
  const read = (name: string): string | undefined => {
    if (written.has(name)) return written.get(name);
    return backend.mayRead(name) ? backend.get(name) : undefined;
  };
  const keys = (): string[] => {
    const out = new Set<string>();
    for (const name of backend.known) if (read(name) !== undefined) out.add(name);
    for (const [name, v] of written) if (v !== undefined) out.add(name);
    return [...out];
  };
  return new Proxy(Object.create(null) as Record<string, string>, {
    get: (_, p) => typeof p === "string" ? read(p) : undefined,
    has: (_, p) => typeof p === "string" && read(p) !== undefined,
    set: (_, p, v) => {
      if (typeof p === "string") written.set(p, String(v));
      return true;
    },
    deleteProperty: (_, p) => {
      if (typeof p === "string") written.set(p, undefined);
      return true;
    },
    defineProperty: (_, p, d) => {
      if (typeof p === "string") written.set(p, String(d.value));
      return true;
    },
    ownKeys: () => keys(),
    getOwnPropertyDescriptor: (_, p) => {
      if (typeof p !== "string") return undefined;
      const value = read(p);
      return value === undefined ? undefined : { value, writable: true, enumerable: true, configurable: true };
    },
  });
}

/**
 * Replaces `process.env` with {@link restrictedEnv} when `--allow-env` is not unrestricted; does
 * nothing otherwise (local runs keep the full environment, which exec credential plugins inherit).
 * main.ts calls it (through `_npm_env.ts`) before any npm package is evaluated.
 */
export function installNpmEnvView(processObject: { env: unknown }): boolean {
  if (granted({ name: "env" })) return false;
  const view = restrictedEnv({
    mayRead: (name) => granted({ name: "env", variable: name }),
    get: (name) => Deno.env.get(name),
    known: HUB_ENV,
  });
  Object.defineProperty(processObject, "env", { value: view, writable: true, configurable: true, enumerable: true });
  return true;
}
