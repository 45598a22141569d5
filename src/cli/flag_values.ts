// What every flag group shares: the error a bad flag raises, and the checks of seconds, lists and Kubernetes names.

/** A bad flag: main.ts prints the message on one line and exits with code 2. */
export class FlagError extends Error {
  override name = "FlagError";
}

/** node:util parseArgs's values, as each group's parser reads them. */
export type FlagValues = Record<string, unknown>;

/** A lowercase RFC 1123 DNS subdomain (Lease names). */
export const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** A lowercase RFC 1123 DNS label (namespaces); at most 63 characters, checked beside it. */
export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** A flag of positive seconds, in ms; `fallbackMs` when absent. */
export function positiveSeconds(values: FlagValues, flag: string, fallbackMs: number): number {
  const raw = values[flag] as string | undefined;
  if (raw === undefined) return fallbackMs;
  const n = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(n) || n <= 0) {
    throw new FlagError(`invalid --${flag} "${raw}": must be a positive number of seconds`);
  }
  return Math.round(n * 1000);
}

/** A repeatable flag's values, each split at commas, trimmed, empties dropped. */
export function commaList(v: unknown): string[] {
  return ((v as string[] | undefined) ?? []).flatMap((s) => s.split(",")).map((s) => s.trim()).filter(Boolean);
}
