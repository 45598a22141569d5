// A small structured logger: JSON or text lines, levels, bound fields, and credential redaction.

/**
 * Severity of a log line; lines below the logger's level are dropped.
 *
 * @example
 * ```ts
 * import { Logger, type LogLevel } from "../../hub.ts";
 * const level: LogLevel = Deno.env.get("DEBUG") ? "debug" : "info";
 * const logger = new Logger({ level });
 * if (logger.enabled("debug")) logger.debug("settings", { level });
 * ```
 */
export type LogLevel = "debug" | "info" | "warn" | "error";
/**
 * One JSON object per line, or `key=value` text.
 *
 * @example
 * ```ts
 * import { type LogFormat, Logger } from "../../hub.ts";
 * const format: LogFormat = Deno.stderr.isTerminal() ? "text" : "json";
 * new Logger({ format }).info("hub started");
 * ```
 */
export type LogFormat = "json" | "text";
/**
 * Structured fields of a log line (credentials among them are masked).
 *
 * @example
 * ```ts
 * import { type LogFields, Logger } from "../../hub.ts";
 * const fields: LogFields = { cluster: "prod", objects: 3, token: "abc" }; // `token` is written as [redacted]
 * new Logger({ format: "text" }).info("synced", fields);
 * ```
 */
export type LogFields = Record<string, unknown>;

export const LOG_LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error"];
const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** Field names whose values are never written, whatever their content. */
const SECRET_KEY = /token|password|secret|authorization|client-?key|bearer|credential/i;
/** Values that look like credentials are masked even under innocent field names. */
const SECRET_VALUE = [
  /Bearer\s+[A-Za-z0-9._~+/=-]+/g,
  /eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g, // JWTs
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g,
];

/** The user info of any URL (`https://user:pass@host`), up to its last `@` before the host. */
const URL_USER_INFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#]*@/gi;

/**
 * Masks anything in `text` that looks like a credential: bearer tokens, JWTs, private keys, and the user info of
 * every URL. The one redaction every log line, error text and server URL shown anywhere goes through.
 */
export function redact(text: string): string {
  let out = text.replace(URL_USER_INFO, "$1[redacted]@");
  for (const re of SECRET_VALUE) out = out.replace(re, "[redacted]");
  return out;
}

/**
 * `text` on one line: control characters (a newline in a cluster or context name from a Secret) written as their JSON
 * escapes, so untrusted text can neither split a log line nor forge the next one.
 */
export function oneLine(text: string): string {
  // deno-lint-ignore no-control-regex
  return text.replace(/[\u0000-\u001f\u007f]/g, (c) => c === "\u007f" ? "\\u007f" : JSON.stringify(c).slice(1, -1));
}

/**
 * How a Logger writes.
 *
 * @example
 * ```ts
 * import { Logger, type LoggerOptions } from "../../hub.ts";
 * // Keep the lines, on a fixed time, for a test to read.
 * const lines: string[] = [];
 * const options: LoggerOptions = { level: "debug", format: "json", write: (line) => lines.push(line), now: () => 0 };
 * new Logger(options).debug("hello");
 * console.log(lines[0]); // {"time":"1970-01-01T00:00:00.000Z","level":"debug","msg":"hello"}
 * ```
 */
export interface LoggerOptions {
  /** Lines below this level are dropped. Default info. */
  level?: LogLevel;
  /** Default json. */
  format?: LogFormat;
  /** Where lines go; defaults to stderr. */
  write?: (line: string) => void;
  /** Time source for the `time` field. Default Date.now. */
  now?: () => number;
}

interface Sink {
  min: number;
  format: LogFormat;
  write: (line: string) => void;
  now: () => number;
}

function makeSink(options: LoggerOptions): Sink {
  const encoder = new TextEncoder();
  return {
    min: RANK[options.level ?? "info"],
    format: options.format ?? "json",
    write: options.write ?? ((line) => Deno.stderr.writeSync(encoder.encode(line + "\n"))),
    now: options.now ?? Date.now,
  };
}

/**
 * Writes one line per call. Child loggers carry bound fields such as `cluster`.
 *
 * @example
 * ```ts
 * import { Logger } from "../../hub.ts";
 * const logger = new Logger({ level: "debug", format: "text" }).child({ cluster: "prod" });
 * logger.warn("watch restarted", { resource: "configmaps" });
 * // 2026-01-05T10:00:00.000Z WARN  watch restarted cluster=prod resource=configmaps
 * ```
 */
export class Logger {
  readonly #sink: Sink;
  readonly #fields: LogFields;

  /**
   * A logger writing at or above `options.level`, with `fields` on every line.
   *
   * @example
   * ```ts
   * import { Logger } from "./logger.ts";
   * new Logger({ level: "info", format: "text" }).info("hub started", { clusters: 3 });
   * ```
   */
  constructor(options: LoggerOptions = {}, fields: LogFields = {}, /** @ignore */ sink?: Sink) {
    // Children share their parent's sink: the controller makes one child per reconcile.
    this.#sink = sink ?? makeSink(options);
    this.#fields = fields;
  }

  /** A logger that adds `fields` to every line. */
  child(fields: LogFields): Logger {
    return new Logger({}, { ...this.#fields, ...fields }, this.#sink);
  }

  /** Whether a line at `level` would be written. */
  enabled(level: LogLevel): boolean {
    return RANK[level] >= this.#sink.min;
  }

  /** Writes a debug line. */
  debug(msg: string, fields?: LogFields): void {
    this.#log("debug", msg, fields);
  }
  /** Writes an info line. */
  info(msg: string, fields?: LogFields): void {
    this.#log("info", msg, fields);
  }
  /** Writes a warning line. */
  warn(msg: string, fields?: LogFields): void {
    this.#log("warn", msg, fields);
  }
  /** Writes an error line. */
  error(msg: string, fields?: LogFields): void {
    this.#log("error", msg, fields);
  }

  #log(level: LogLevel, msg: string, fields?: LogFields): void {
    if (RANK[level] < this.#sink.min) return;
    const all: LogFields = { ...this.#fields, ...fields };
    const clean: LogFields = {};
    for (const [k, v] of Object.entries(all)) {
      if (v === undefined) continue;
      clean[k] = SECRET_KEY.test(k) ? "[redacted]" : plain(v);
    }
    const time = new Date(this.#sink.now()).toISOString();
    const line = this.#sink.format === "json"
      ? JSON.stringify({ time, level, msg: redact(msg), ...clean })
      : `${time} ${level.toUpperCase().padEnd(5)} ${oneLine(redact(msg))}${
        Object.entries(clean).map(([k, v]) => ` ${k}=${typeof v === "string" ? oneLine(v) : JSON.stringify(v)}`)
          .join("")
      }`;
    this.#sink.write(line);
  }
}

/** Turns errors into loggable text and masks credential-looking strings. */
function plain(v: unknown): unknown {
  if (v instanceof Error) return redact(errorText(v));
  if (typeof v === "string") return redact(v);
  return v;
}

/** An error's message with its chain of causes, one level per ": ". */
export function errorText(err: unknown): string {
  const parts: string[] = [];
  let cur: unknown = err;
  for (let depth = 0; cur !== undefined && cur !== null && depth < 5; depth++) {
    if (cur instanceof Error) {
      parts.push(cur.message);
      cur = cur.cause;
    } else {
      parts.push(String(cur));
      break;
    }
  }
  return redact(parts.filter((p, i) => p && !parts[i - 1]?.includes(p)).join(": "));
}

/** A logger that drops everything, for tests that do not look at logs. */
export function silentLogger(): Logger {
  return new Logger({ level: "error", write: () => {} });
}
