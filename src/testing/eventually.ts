// eventually(): retry a check until it passes or a deadline, and fail saying what the check last saw.

/**
 * Options of {@linkcode eventually}.
 *
 * @example
 * ```ts
 * import { eventually, type EventuallyOptions } from "../../testing.ts";
 *
 * declare function copyIn(cluster: string): Promise<{ data?: Record<string, string> } | undefined>;
 * const options: EventuallyOptions = { timeoutMs: 30_000, intervalMs: 100, what: "the copy in west" };
 * const copy = await eventually(() => copyIn("west"), options);
 * console.log(copy.data);
 * ```
 */
export interface EventuallyOptions {
  /** Give up after this long. Default 10 s. */
  timeoutMs?: number;
  /** Pause between attempts. Default 200 ms. */
  intervalMs?: number;
  /** What is awaited, for the failure message (e.g. "the ConfigMap in west"). */
  what?: string;
  /** Stops waiting early (the test was cancelled). */
  signal?: AbortSignal;
  /** Injected for tests: the clock and the pause. */
  now?: () => number;
  /** Injected for tests: waits `ms`. */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * {@linkcode eventually} gave up: `lastValue` or `lastError` is what the check saw last.
 *
 * @example
 * ```ts
 * import { eventually, EventuallyTimeoutError } from "../../testing.ts";
 *
 * try {
 *   await eventually(() => ({ phase: "Pending" }).phase === "Ready", { timeoutMs: 300, what: "the Website ready" });
 * } catch (err) {
 *   if (!(err instanceof EventuallyTimeoutError)) throw err;
 *   console.log(err.attempts, err.lastValue, err.lastError); // 3 false undefined
 * }
 * ```
 */
export class EventuallyTimeoutError extends Error {
  /** How many times the check ran. */
  readonly attempts: number;
  /** What the check returned last (undefined when it threw). */
  readonly lastValue: unknown;
  /** What the check threw last (undefined when it returned). */
  readonly lastError: unknown;
  /** An error whose `detail` is what the check saw last, and how many times it ran. */
  constructor(message: string, detail: { attempts: number; lastValue?: unknown; lastError?: unknown }) {
    super(message, detail.lastError instanceof Error ? { cause: detail.lastError } : undefined);
    this.name = "EventuallyTimeoutError";
    this.attempts = detail.attempts;
    this.lastValue = detail.lastValue;
    this.lastError = detail.lastError;
  }
}

const MAX_SHOWN = 600;

/** A one-line, bounded rendering of what a check returned or threw. */
export function describeSeen(seen: { value?: unknown; error?: unknown }): string {
  if ("error" in seen) {
    const e = seen.error;
    const text = e instanceof Error ? `${e.name}: ${e.message}` : `thrown ${String(e)}`;
    return `last error ${clip(text)}`;
  }
  let text: string;
  try {
    text = seen.value === undefined ? "undefined" : JSON.stringify(seen.value) ?? String(seen.value);
  } catch {
    text = String(seen.value);
  }
  return `last value ${clip(text)}`;
}

function clip(text: string): string {
  const line = text.replace(/\s*\n\s*/g, " ");
  return line.length > MAX_SHOWN ? `${line.slice(0, MAX_SHOWN)}… (${line.length} characters)` : line;
}

/**
 * Calls `check` until it returns a value other than `undefined`, `null` or `false` without throwing, and resolves
 * with that value. After `timeoutMs` it rejects with an {@linkcode EventuallyTimeoutError} whose message says what the
 * check last returned or threw (a 404, a stale field), so a failed wait explains itself.
 *
 * @example Wait for an operator's child in another cluster
 * ```ts
 * import { eventually } from "./eventually.ts";
 *
 * let calls = 0;
 * const value = await eventually(() => ++calls >= 3 ? "ready" : undefined, { timeoutMs: 2_000, intervalMs: 10 });
 * console.log(value); // "ready"
 * ```
 */
export async function eventually<T>(
  check: () => T | Promise<T>,
  options: EventuallyOptions = {},
): Promise<Exclude<T, undefined | null | false>> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const intervalMs = options.intervalMs ?? 200;
  const now = options.now ?? (() => performance.now());
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const deadline = now() + timeoutMs;
  let attempts = 0;
  let seen: { value?: unknown; error?: unknown } = { value: undefined };
  while (true) {
    options.signal?.throwIfAborted();
    attempts++;
    try {
      const value = await check();
      if (value !== undefined && value !== null && value !== false) {
        return value as Exclude<T, undefined | null | false>;
      }
      seen = { value };
    } catch (error) {
      seen = { error };
    }
    if (now() >= deadline) {
      const what = options.what ? ` waiting for ${options.what}` : "";
      throw new EventuallyTimeoutError(
        `eventually${what}: gave up after ${timeoutMs / 1000} s and ${attempts} attempt(s); ${describeSeen(seen)}`,
        { attempts, lastValue: seen.value, lastError: seen.error },
      );
    }
    await sleep(Math.max(0, Math.min(intervalMs, deadline - now())));
  }
}
