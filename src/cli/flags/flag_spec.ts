// One row of the hub's flag table (flag_table.ts): what a flag is called, takes, defaults to and does, and how its
// value is checked. The parser (parse_flags.ts) and --help (help_text.ts) both read these rows. Pure.

import type { HubLimits } from "../../hub/hub_limits.ts";

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
