// Per-provider cluster name prefixes (`--cluster-name-prefix PROVIDER=PREFIX`): several providers side by side
// without name collisions, as multicluster-runtime's `multi` provider prefixes each provider's names.

import type { ProviderName } from "./cluster_offer.ts";

/** The providers a prefix may be given to: every provider that reads untrusted sources (never `flag`). */
export const PREFIXABLE_PROVIDERS = ["folder", "secret", "cluster-profile", "cluster-api"] as const;

/** A provider that may be given a prefix. */
export type PrefixableProvider = typeof PREFIXABLE_PROVIDERS[number];

/** Each prefixed provider's prefix. */
export type NamePrefixes = Partial<Record<PrefixableProvider, string>>;

/** A bad `PROVIDER=PREFIX` entry; the message is one line naming the value and the valid choices. */
export class NamePrefixError extends Error {
  override name = "NamePrefixError";
}

/** At most this many characters: a prefix is a label's worth, the name it prefixes brings its own length. */
export const MAX_PREFIX_LENGTH = 63;

/**
 * Lowercase letters and digits first, then those or `-`, `.`, `_`, `:`, `#`, `/`: what every place a cluster name goes
 * (`--clusters a,b` lists, queue keys, metric labels, Lease names, the Mirror's `spec.clusters`) takes as it is.
 */
const PREFIX = /^[a-z0-9][a-z0-9._:#/-]*$/;

/** Why `prefix` would make cluster names invalid, or undefined when it is fine. */
export function prefixProblem(prefix: string): string | undefined {
  if (prefix === "") return "the prefix is empty";
  if (prefix.length > MAX_PREFIX_LENGTH) return `the prefix is longer than ${MAX_PREFIX_LENGTH} characters`;
  if (!PREFIX.test(prefix)) {
    return "a prefix starts with a lowercase letter or digit and holds only those and - . _ : # / " +
      "(no commas, spaces or upper case: the names must stay selectable with --clusters)";
  }
  return undefined;
}

/**
 * Parses `PROVIDER=PREFIX` entries (already split at commas). Throws NamePrefixError naming the entry and the valid
 * choices for an unknown provider, a missing `=`, a provider given twice, or a prefix that would make names invalid.
 */
export function parseNamePrefixes(entries: readonly string[]): NamePrefixes {
  const out: NamePrefixes = {};
  const choices = PREFIXABLE_PROVIDERS.join(", ");
  for (const entry of entries) {
    const eq = entry.indexOf("=");
    const where = `invalid --cluster-name-prefix ${JSON.stringify(entry)}`;
    if (eq < 0) throw new NamePrefixError(`${where}: expected PROVIDER=PREFIX, PROVIDER one of ${choices}`);
    const provider = entry.slice(0, eq).trim();
    const prefix = entry.slice(eq + 1).trim();
    if (!(PREFIXABLE_PROVIDERS as readonly string[]).includes(provider)) {
      throw new NamePrefixError(
        `${where}: unknown provider ${JSON.stringify(provider)}; choose one of ${choices} ` +
          `(the command line's names are never prefixed)`,
      );
    }
    const problem = prefixProblem(prefix);
    if (problem) throw new NamePrefixError(`${where}: ${problem}`);
    const p = provider as PrefixableProvider;
    if (out[p] !== undefined && out[p] !== prefix) {
      throw new NamePrefixError(`${where}: provider ${p} already has the prefix ${JSON.stringify(out[p])}; give one`);
    }
    out[p] = prefix;
  }
  return out;
}

/**
 * The name an untrusted source's cluster `name` of `provider` is registered under: the provider's prefix before it.
 * Trusted sources (the command line's) and `flag` are never prefixed.
 */
export function prefixedName(prefixes: NamePrefixes, provider: ProviderName, trusted: boolean, name: string): string {
  if (trusted) return name;
  const prefix = (prefixes as Partial<Record<ProviderName, string>>)[provider];
  return prefix ? `${prefix}${name}` : name;
}
