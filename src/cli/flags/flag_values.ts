// The vocabulary of the flag table's checks: the error a bad flag raises, and the readers of seconds, choices, lists,
// Kubernetes names, addresses and sizes, each refusing a value with one line naming the flag and the value. Pure.

/** A bad flag: main.ts prints the message on one line and exits with code 2. */
export class FlagError extends Error {
  override name = "FlagError";
}

/** A lowercase RFC 1123 DNS subdomain (Lease names). */
export const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** A lowercase RFC 1123 DNS label (namespaces); at most 63 characters, checked beside it. */
export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Whether `name` is a namespace name: a DNS label of at most 63 characters. */
export function isNamespace(name: string): boolean {
  return name.length <= 63 && DNS_LABEL.test(name);
}

/** `raw` positive seconds, in whole milliseconds; throws FlagError naming `--flag` and the value seen. */
export function positiveSeconds(raw: string, flag: string): number {
  const n = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(n) || n <= 0) {
    throw new FlagError(`invalid --${flag} "${raw}": must be a positive number of seconds`);
  }
  return Math.round(n * 1000);
}

/**
 * A reader of a number `ok` accepts, times `scale` (1000 for seconds to milliseconds), else `invalid --FLAG "VALUE":
 * SAY`; a row with a default sees it when the flag is absent.
 */
export function bounded(ok: (n: number) => boolean, say: string, scale = 1) {
  return (raw: string | undefined, flag: string): number => {
    const n = Number(raw);
    if (raw!.trim() === "" || !Number.isFinite(n) || !ok(n)) throw new FlagError(`invalid --${flag} "${raw}": ${say}`);
    return n * scale;
  };
}

/** A reader refusing an empty value: `invalid --FLAG "": WHAT`. */
export function nonEmpty(what: string) {
  return (raw: string | undefined, flag: string): string | undefined => {
    if (raw !== undefined && raw.trim() === "") throw new FlagError(`invalid --${flag} "": ${what}`);
    return raw;
  };
}

/**
 * A reader of a Kubernetes name: at most `max` characters matching `pattern` (DNS_LABEL, DNS_SUBDOMAIN), else
 * `invalid --FLAG "VALUE": SAY`. `T` is `string` for a row with a default, `string | undefined` for one without.
 */
export function kubeName<T extends string | undefined = string>(pattern: RegExp, max: number, say: string) {
  return (raw: string | undefined, flag: string): T => {
    if (raw !== undefined && (raw.length > max || !pattern.test(raw))) {
      throw new FlagError(`invalid --${flag} "${raw}": ${say}`);
    }
    return raw as T;
  };
}

/**
 * A reader of one of `choices`, as spelled there: case-insensitive with `fold`; the value seen is quoted as JSON with
 * `json` (else between plain double quotes) in `invalid --FLAG "VALUE": SAY`.
 */
export function oneOf<T extends string>(
  choices: readonly T[],
  say: string,
  o: { fold?: boolean; json?: boolean } = {},
) {
  return (raw: string | undefined, flag: string): T => {
    const found = choices.find((c) => o.fold ? c.toLowerCase() === raw!.toLowerCase() : c === raw);
    if (found === undefined) {
      throw new FlagError(`invalid --${flag} ${o.json ? JSON.stringify(raw) : `"${raw}"`}: ${say}`);
    }
    return found;
  };
}

/** `--cluster-api *` and `--cluster-profiles *`: every namespace (the providers' word; a test keeps them equal). */
export const ALL_NAMESPACES = "*";

/** A reader of namespaces of the home cluster, `*` for all; `undefined` when the flag is absent. */
export function namespacesOrAll(allWord: string) {
  return (raw: string[] | undefined, flag: string): string[] | undefined => {
    if (raw === undefined) return undefined;
    if (raw.length === 0) {
      throw new FlagError(`invalid --${flag}: give a namespace name or '${ALL_NAMESPACES}' ${allWord}`);
    }
    const bad = raw.find((n) => n !== ALL_NAMESPACES && !isNamespace(n));
    if (bad !== undefined) {
      throw new FlagError(
        `invalid --${flag} "${bad}": must be a namespace name (a lowercase DNS label) or '${ALL_NAMESPACES}'`,
      );
    }
    return raw.includes(ALL_NAMESPACES) ? [ALL_NAMESPACES] : [...new Set(raw)];
  };
}

/** A repeatable flag's values, each split at commas, trimmed, empties dropped. */
export function commaList(v: readonly string[] | undefined): string[] {
  return (v ?? []).flatMap((s) => s.split(",")).map((s) => s.trim()).filter(Boolean);
}

/**
 * controller-runtime's `HOST:PORT` form (`:8443`, `0.0.0.0:8443`, `[::]:8443`, `localhost:8443`); an empty host is
 * every address. Throws FlagError naming `--flag`, the value and examples on `examplePort`.
 */
export function parseBindAddress(raw: string, flag: string, examplePort: number): { hostname: string; port: number } {
  const m = raw.match(/^(?:\[([0-9a-fA-F:.]+)\]|([^:\[\]\s]*)):(\d{1,5})$/);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) {
    const p = examplePort;
    throw new FlagError(
      `invalid --${flag} "${raw}": expected HOST:PORT, e.g. :${p}, 127.0.0.1:${p} or [::]:${p}`,
    );
  }
  return { hostname: m[1] ?? (m[2] || "0.0.0.0"), port };
}

const BYTE_SUFFIXES: Record<string, number> = { "": 1, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 };

/** A byte size such as `4194304`, `512Ki` or `4Mi`, or undefined when `raw` is not a positive whole one. */
export function parseByteSize(raw: string): number | undefined {
  const m = /^\s*(\d+)(Ki|Mi|Gi)?\s*$/.exec(raw);
  if (!m) return undefined;
  const n = Number(m[1]) * BYTE_SUFFIXES[m[2] ?? ""];
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/** Where Kopf's `--liveness http://HOST:PORT/PATH` serves. */
export interface LivenessFlag {
  hostname: string;
  port: number;
  path: string;
}

/** Parses Kopf's `--liveness http://HOST:PORT/PATH` form; throws FlagError naming the value and the form. */
export function parseLiveness(raw: string): LivenessFlag {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new FlagError(`invalid --liveness "${raw}": expected a URL like http://0.0.0.0:8080/healthz`);
  }
  if (url.protocol !== "http:") {
    throw new FlagError(`invalid --liveness "${raw}": only http:// is served, e.g. http://0.0.0.0:8080/healthz`);
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new FlagError(`invalid --liveness "${raw}": no credentials, query or fragment allowed`);
  }
  const port = url.port === "" ? 80 : Number(url.port);
  const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
  return { hostname, port, path: url.pathname };
}
