// One row of the hub's flag table (flag_table.ts): what a flag is called, takes, defaults to and does, and how its
// value is checked; and the builders of rows (bool, text, list, seconds, limit). The parser (parse_flags.ts) and
// --help (help_text.ts) both read these rows. Pure.

import {
  CONCURRENCY_PER_CLUSTER,
  DEFAULT_LIMITS,
  type HubLimits,
  MAX_SCALED_CONCURRENCY,
} from "../../hub/hub_limits.ts";
import { bounded, FlagError, parseByteSize, positiveSeconds } from "./flag_values.ts";

/**
 * One flag.
 *
 * Guarantees: `read` sees the value as typed (the last one for a `string` flag, every one split at commas for a
 * `list`), or `default` when the flag is absent; what it returns is what parseFlags() hands on.
 */
export interface Flag<T> {
  /** `boolean`: given or not; `string`: one value (the last given wins); `list`: repeatable, each split at commas. */
  readonly kind: "boolean" | "string" | "list";
  /** The heading of its --help section (set by `section()`); `undefined` for the untitled last one. */
  readonly section?: string;
  /** A one-letter alias (`-n`). */
  readonly short?: string;
  /** The value's placeholder in --help (`FILE`, `SECONDS`); one starting with `=` is written without a space. */
  readonly arg?: string;
  /** What the flag does, one paragraph without its default; --help wraps it. */
  readonly help: string;
  /** The value used when the flag is absent, as typed on the command line; --help prints it. */
  readonly default?: string;
  /** The default in words where it is not one value (or a note on `default`); --help prints it. */
  readonly defaultText?: string;
  /** The flag this one is part of: given without it, "--THIS needs --FLAG HINT". */
  readonly needs?: { readonly flag: string; readonly hint?: string };
  /** A negative number may follow as the value (`--qps -5`), so `read` refuses it with its own message. */
  readonly signed?: boolean;
  /** Given bare it means `=true`, as Go's boolean flags do (`--metrics-secure` = `--metrics-secure=true`). */
  readonly bareTrue?: boolean;
  /** The HubLimits field the flag sets (parseFlags() collects the limits given). */
  readonly limit?: keyof HubLimits;
  /** Converts and checks the value; throws FlagError naming the flag, the value seen and what is valid. */
  readonly read: (raw: never, name: string) => T;
}

type Row = Omit<Flag<unknown>, "kind" | "read" | "section">;

/** The rows of one --help section, under `heading`, in the order --help lists them. */
export function section<R extends Record<string, unknown>>(heading: string | undefined, rows: R): R {
  const stamped = Object.entries(rows).map(([name, row]) => [name, { ...row as Flag<unknown>, section: heading }]);
  return Object.fromEntries(stamped) as R;
}

/** A flag given or not. */
export function bool(row: Row): Flag<boolean> {
  return { ...row, kind: "boolean", read: (raw: boolean | undefined) => raw === true };
}

/** A flag with one value, `undefined` when absent and without a default; `read` checks and converts it. */
export function text<T = string | undefined>(
  row: Row & { read?: (raw: string | undefined, name: string) => T },
): Flag<T> {
  return { ...row, kind: "string", read: row.read ?? ((raw: string | undefined) => raw as T) };
}

/** A repeatable flag; `read` sees every value split at commas, trimmed, or `undefined` when it is absent. */
export function list<T = string[]>(
  row: Row & { read?: (raw: string[] | undefined, name: string) => T },
): Flag<T> {
  return { ...row, kind: "list", read: row.read ?? ((raw: string[] | undefined) => (raw ?? []) as T) };
}

/** Defaults --help explains rather than gives as one number: those that scale with the clusters, and why. */
const SCALED_DEFAULTS: Partial<Record<keyof HubLimits, string>> = {
  concurrency: `16, or ${CONCURRENCY_PER_CLUSTER} per cluster engaged beyond four, at most ${MAX_SCALED_CONCURRENCY}`,
  qps: "500 per cluster engaged: it bounds the hub's own work, not an API server's",
  burst: "1000 per cluster engaged",
  clusterQps: "200: this limit protects each API server",
  maxObjectBytes: "4Mi, twice the JSON of the largest object etcd stores",
};

/** A limit flag: a positive number (× 1000 for seconds), unset unless given, since the hub scales some defaults. */
export function limit(
  key: keyof HubLimits,
  unit: "N" | "WHOLE" | "SECONDS" | "SIZE",
  help: string,
): Flag<number | undefined> {
  const scale = unit === "SECONDS" ? 1000 : 1;
  return text({
    arg: unit === "WHOLE" ? "N" : unit,
    help,
    defaultText: SCALED_DEFAULTS[key] ?? String(DEFAULT_LIMITS[key] / scale),
    signed: true,
    limit: key,
    read: (raw, name) => {
      if (raw === undefined) return undefined;
      if (unit === "SIZE") {
        const size = parseByteSize(raw);
        if (size !== undefined) return size;
        throw new FlagError(
          `invalid --${name} "${raw}": must be a positive whole number of bytes, optionally with Ki, Mi or Gi (e.g. 4Mi)`,
        );
      }
      const whole = unit === "WHOLE";
      const ok = (n: number) => n > 0 && (!whole || Number.isInteger(n));
      return bounded(ok, `must be a positive ${whole ? "whole " : ""}number`, scale)(raw, name);
    },
  });
}

/** A flag of positive seconds with a default, read in milliseconds. */
export function seconds(dflt: string, help: string, needs?: Flag<unknown>["needs"]): Flag<number> {
  return text({ arg: "SECONDS", help, default: dflt, needs, read: (raw, name) => positiveSeconds(raw!, name) });
}
