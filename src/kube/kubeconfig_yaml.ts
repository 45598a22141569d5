// A kubeconfig's YAML text parsed under limits: a size cap for untrusted text, a nesting cap for every document, and
// an error that names the position only (the parser's own message quotes the line, which may hold a token).
//
// Guarantees: `parseKubeconfigYaml` parses at most once and throws ConfigError naming `path`, never the text. A
// document nested more than MAX_KUBECONFIG_DEPTH levels in flow style (`[[[…` or `{{{…`) is refused by a linear scan
// before the parser sees it: the `yaml` package takes about 30 µs a level, so 500 KiB of brackets held the event loop
// for 9.6 s. Block-style nesting needs an indent per level, so the size cap bounds it (1 MiB allows about 1,400 levels,
// some 40 ms). Alias bombs are refused by the parser's own `maxAliasCount` (100).
//
// Assumptions: a real kubeconfig nests fewer than ten levels and a Secret holds at most 1 MiB.

import { parse as parseYaml } from "yaml";
import { ConfigError } from "./errors.ts";

/** The largest untrusted kubeconfig text read: a Secret's own limit. */
export const MAX_UNTRUSTED_KUBECONFIG_BYTES = 1024 * 1024;
/** Flow-style nesting allowed in any kubeconfig document. */
export const MAX_KUBECONFIG_DEPTH = 64;

/** Parses `text` (the kubeconfig at `path`) or throws ConfigError; `maxBytes` caps untrusted text. */
export function parseKubeconfigYaml(path: string, text: string, options: { maxBytes?: number } = {}): unknown {
  const max = options.maxBytes ?? Infinity;
  // A UTF-16 length over the cap is over it in UTF-8 too; the exact count is taken only near the cap.
  if (text.length > max || (text.length * 3 > max && new TextEncoder().encode(text).length > max)) {
    throw new ConfigError(`invalid kubeconfig ${path}: larger than ${max} bytes, the limit for a kubeconfig`);
  }
  const depth = flowDepthOver(text, MAX_KUBECONFIG_DEPTH);
  if (depth !== undefined) {
    throw new ConfigError(
      `invalid kubeconfig ${path}: nested more than ${MAX_KUBECONFIG_DEPTH} levels deep (line ${depth.line})`,
    );
  }
  try {
    return parseYaml(text);
  } catch (err) {
    const pos = (err as { linePos?: { line: number; col: number }[] }).linePos?.[0];
    const code = (err as { code?: unknown }).code;
    throw new ConfigError(
      `invalid kubeconfig ${path}: not valid YAML${pos ? ` (line ${pos.line}, column ${pos.col}` : " ("}${
        typeof code === "string" ? `${pos ? ", " : ""}${code})` : ")"
      }`,
    );
  }
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
