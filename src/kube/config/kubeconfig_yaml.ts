// A kubeconfig's YAML text parsed under limits: for untrusted text a size cap, no aliases and a cap on its contexts,
// users and clusters, parsed in linear time; for every text a nesting cap; and an error that names the position only
// (the parsers' own messages quote the line, which may hold a token).
//
// Guarantees: `parseKubeconfigYaml` throws ConfigError naming `path`, never the text. A document nested more than
// MAX_KUBECONFIG_DEPTH levels in flow style (`[[[…` or `{{{…`) is refused by a linear scan before a parser sees it:
// the `yaml` package takes about 30 µs a level, so 500 KiB of brackets held the event loop for 9.6 s. Untrusted text
// is parsed in time and memory linear in its size, whatever it holds:
// - it may be at most MAX_UNTRUSTED_KUBECONFIG_BYTES long, checked before anything reads it;
// - it is parsed by js-yaml, not by the `yaml` package: `yaml` resolves each alias by scanning every earlier anchor and
//   alias, so 24,000 anchors each aliased once (1 MiB) held the event loop for 45 s alone, over 90 s in a loaded hub
//   (`maxAliasCount` never fires on that shape: each alias expands to one node), and it compares each mapping key with
//   every earlier key of its mapping, so 75,000 keys in one mapping (1 MiB) took over 150 s. js-yaml keeps anchors in a map and keys in an
//   object, and parses either 1 MiB shape in under a second with a fifth of the memory;
// - aliases are refused (js-yaml's `maxAliases: 0`): nothing in a kubeconfig needs one, and without them no node can
//   stand for more than itself (no alias bomb, nothing shared in what the hub then walks and digests); an anchor alone
//   names a node and changes nothing;
// - block nesting deeper than js-yaml's `maxDepth` (100) is refused;
// - more than MAX_UNTRUSTED_KUBECONFIG_ENTRIES contexts, users or clusters are refused.
// Trusted text (the command line's kubeconfig files) is parsed by js-yaml too, without the size and entry caps, with
// aliases allowed up to MAX_TRUSTED_KUBECONFIG_ALIASES and block nesting up to MAX_TRUSTED_KUBECONFIG_DEPTH, as
// kubectl parses its own kubeconfig. js-yaml reads the YAML 1.2 core schema (no timestamps, no merge keys), as the
// `yaml` package does by default; the `yaml` package is not loaded at start, which keeps about 5 MB out of the idle
// hub (docs/benchmarks.md, "What loading costs").
//
// Assumptions: a real kubeconfig nests fewer than ten levels, has no aliases (kubectl, clusterctl and the cloud CLIs
// never write them) and is rarely over 64 KiB; a Secret holds at most 1 MiB.

import { load } from "js-yaml";
import { ConfigError } from "../errors.ts";

/**
 * The largest untrusted kubeconfig text read, in bytes: four times the 64 KiB that kubeconfigs are rarely over (one
 * context with a CA bundle and a client certificate is 5-10 KiB), so a large CA bundle still fits, while a Secret
 * could carry 1 MiB. The bound is a kubeconfig's, not a Secret's: it caps what is parsed and held per source.
 */
export const MAX_UNTRUSTED_KUBECONFIG_BYTES = 256 * 1024;
/**
 * The most contexts, users or clusters (each list on its own) an untrusted kubeconfig may hold. A Secret names one
 * cluster and a dropped file a few; 200 leaves room for a merged kubeconfig of a large fleet while what the hub does
 * for each context after parsing (validate, digest, hold to the policy, on its event loop) stays a bounded amount.
 */
export const MAX_UNTRUSTED_KUBECONFIG_ENTRIES = 200;
/** Flow-style nesting allowed in any kubeconfig document. */
export const MAX_KUBECONFIG_DEPTH = 64;
/** Aliases a trusted kubeconfig may use (the `yaml` package's default `maxAliasCount`). */
export const MAX_TRUSTED_KUBECONFIG_ALIASES = 100;
/** Block nesting allowed in a trusted kubeconfig (an untrusted one: js-yaml's own 100). */
export const MAX_TRUSTED_KUBECONFIG_DEPTH = 1000;

/** The lists that {@linkcode MAX_UNTRUSTED_KUBECONFIG_ENTRIES} caps. */
const CAPPED_LISTS = ["contexts", "users", "clusters"] as const;

/** How a kubeconfig text is parsed. */
export interface KubeconfigYamlOptions {
  /** Parse under the untrusted rules (size cap, js-yaml without aliases, entries capped). Default false. */
  untrusted?: boolean;
  /** Overrides the size cap of untrusted text (tests). Default MAX_UNTRUSTED_KUBECONFIG_BYTES. */
  maxBytes?: number;
}

/** Parses `text` (the kubeconfig at `path`) or throws ConfigError; see the file's guarantees. */
export function parseKubeconfigYaml(path: string, text: string, options: KubeconfigYamlOptions = {}): unknown {
  if (options.untrusted) {
    const over = oversized(text, options.maxBytes ?? MAX_UNTRUSTED_KUBECONFIG_BYTES);
    if (over) throw new ConfigError(`invalid kubeconfig ${path}: ${over}`);
  }
  const depth = flowDepthOver(text, MAX_KUBECONFIG_DEPTH);
  if (depth !== undefined) {
    throw new ConfigError(
      `invalid kubeconfig ${path}: nested more than ${MAX_KUBECONFIG_DEPTH} levels deep (line ${depth.line})`,
    );
  }
  return options.untrusted ? parseUntrusted(path, text) : parseJsYaml(path, text, true);
}

/**
 * Why `text` is too large for an untrusted kubeconfig (one line naming its size and the cap), or undefined. A UTF-16
 * length over the cap is over it in UTF-8 too; the exact count is taken only near the cap.
 */
export function oversized(text: string, max: number = MAX_UNTRUSTED_KUBECONFIG_BYTES): string | undefined {
  if (text.length * 3 <= max) return undefined;
  const bytes = text.length > max ? text.length : new TextEncoder().encode(text).length;
  return bytes > max ? tooLarge(bytes, max) : undefined;
}

/** The one line for an untrusted kubeconfig of `bytes` bytes, over the cap `max`. */
export function tooLarge(bytes: number, max: number = MAX_UNTRUSTED_KUBECONFIG_BYTES): string {
  return `${bytes} bytes, larger than ${max} bytes, the limit for an untrusted kubeconfig`;
}

/**
 * Where flow brackets outside quotes and comments first nest deeper than `limit`, or undefined. Over-counts only
 * on text no kubeconfig holds (brackets in plain scalars), which is then refused as too deep.
 */
export function flowDepthOver(text: string, limit: number): { line: number } | undefined {
  let depth = 0;
  let line = 1;
  let quote = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "\n") line++;
    if (quote) {
      if (c === "\\" && quote === '"') i++;
      else if (c === quote) quote = "";
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (c === "#" && (i === 0 || /\s/.test(text[i - 1]))) {
      const end = text.indexOf("\n", i);
      if (end < 0) break;
      i = end - 1;
    } else if (c === "[" || c === "{") {
      if (++depth > limit) return { line };
    } else if ((c === "]" || c === "}") && depth > 0) depth--;
  }
  return undefined;
}

/**
 * One YAML document by js-yaml, or null for an empty one (as kubectl reads it). Trusted text may use aliases (up to
 * MAX_TRUSTED_KUBECONFIG_ALIASES) and nest deeper; untrusted text may use none.
 */
function parseJsYaml(path: string, text: string, trusted: boolean): unknown {
  try {
    return trusted
      ? load(text, { maxAliases: MAX_TRUSTED_KUBECONFIG_ALIASES, maxDepth: MAX_TRUSTED_KUBECONFIG_DEPTH })
      : load(text, { maxAliases: 0 });
  } catch (err) {
    const e = err as { reason?: unknown; mark?: { line?: unknown; column?: unknown } };
    const reason = typeof e.reason === "string" ? e.reason : "";
    const line = typeof e.mark?.line === "number" ? e.mark.line + 1 : undefined;
    const col = typeof e.mark?.column === "number" ? e.mark.column + 1 : undefined;
    // An empty document (or comments only) is null, as kubectl reads it.
    if (/input is empty/.test(reason)) return null;
    if (/maxAliases/.test(reason)) {
      throw new ConfigError(
        trusted
          ? `invalid kubeconfig ${path}: uses more than ${MAX_TRUSTED_KUBECONFIG_ALIASES} YAML aliases` +
            `${line ? ` (line ${line})` : ""}`
          : `invalid kubeconfig ${path}: uses a YAML alias${line ? ` (line ${line})` : ""}, which an untrusted ` +
            `kubeconfig may not; write each entry out in full`,
      );
    }
    // js-yaml's reasons are fixed phrases, but some quote a tag, an alias or a handle from the text: only those made
    // of plain words are shown.
    throw notYaml(path, line ? { line, col: col ?? 1 } : undefined, /^[A-Za-z0-9 ,.()-]+$/.test(reason) ? reason : "");
  }
}

/** The untrusted pipeline: js-yaml without aliases, then the entries counted. */
function parseUntrusted(path: string, text: string): unknown {
  const doc = parseJsYaml(path, text, false);
  const top = typeof doc === "object" && doc !== null && !Array.isArray(doc) ? doc as Record<string, unknown> : {};
  for (const list of CAPPED_LISTS) {
    const value = top[list];
    const count = Array.isArray(value) ? value.length : 0;
    if (count > MAX_UNTRUSTED_KUBECONFIG_ENTRIES) {
      throw new ConfigError(
        `invalid kubeconfig ${path}: ${count} ${list}, more than the ${MAX_UNTRUSTED_KUBECONFIG_ENTRIES} an ` +
          `untrusted kubeconfig may hold`,
      );
    }
  }
  return doc;
}

/** `not valid YAML`, with the position and the parser's code or reason when known. */
function notYaml(path: string, pos: { line: number; col: number } | undefined, code: string | undefined): ConfigError {
  const where = [pos ? `line ${pos.line}, column ${pos.col}` : "", code ?? ""].filter((s) => s !== "").join(", ");
  return new ConfigError(`invalid kubeconfig ${path}: not valid YAML${where ? ` (${where})` : ""}`);
}
