// Rate-limited, summarised log lines: a few lines of a burst in full, the rest as one line with a count and some names.

import type { Clock, Timer } from "./clock.ts";
import type { LogFields, Logger, LogLevel } from "./logger.ts";

/** How a LogBurst writes. */
export interface LogBurstOptions {
  logger: Logger;
  level: LogLevel;
  /** The message of every line, full and summary alike. */
  msg: string;
  clock: Clock;
  /** The length of one window, in ms. Default 10 s. */
  windowMs?: number;
  /** Lines written in full per window, before the rest are only counted. Default 5. */
  full?: number;
  /** Names the summary line lists (the first ones counted). Default 5. */
  sample?: number;
}

/**
 * Writes at most `full` lines per window in full and summarises the rest of the window in one line.
 *
 * Guarantees:
 * - in any window of `windowMs`, at most `full + 1` lines are written, however many events come in;
 * - the summary line (same message and level, written when the window ends) carries `suppressed` (the count),
 *   `names` (the first `sample` names counted) and `windowSeconds`, and the fields of the first suppressed event;
 * - nothing is lost silently: every event is either a full line or counted in a summary; `flush` writes the summary
 *   now (e.g. at shutdown) and cancels the timer; memory is bounded by `sample` names per instance.
 *
 * Assumptions: callers pass names and fields that may be logged (never a credential); one instance per message.
 */
export class LogBurst {
  readonly #o: Required<Omit<LogBurstOptions, "logger" | "clock" | "msg" | "level">> & LogBurstOptions;
  #written = 0;
  #suppressed = 0;
  #names: string[] = [];
  #firstFields: LogFields | undefined;
  #timer: Timer | undefined;

  /** Events written in full or counted since this instance was made. */
  total = 0;

  constructor(options: LogBurstOptions) {
    this.#o = { windowMs: 10_000, full: 5, sample: 5, ...options };
  }

  /** One event about `name`: a full line while the window has room, else counted for its summary. */
  note(name: string, fields: LogFields = {}): void {
    this.total++;
    if (!this.#timer) this.#timer = this.#o.clock.setTimer(this.#o.windowMs, () => this.#end());
    if (this.#written < this.#o.full) {
      this.#written++;
      this.#write(fields);
      return;
    }
    this.#suppressed++;
    if (this.#names.length < this.#o.sample) this.#names.push(name);
    this.#firstFields ??= fields;
  }

  /** Writes the pending summary now, if any, and starts a fresh window with the next event. */
  flush(): void {
    this.#timer?.cancel();
    this.#end();
  }

  #end(): void {
    this.#timer = undefined;
    if (this.#suppressed > 0) {
      this.#write({
        ...this.#firstFields,
        suppressed: this.#suppressed,
        names: this.#names,
        windowSeconds: this.#o.windowMs / 1000,
      });
    }
    this.#written = 0;
    this.#suppressed = 0;
    this.#names = [];
    this.#firstFields = undefined;
  }

  #write(fields: LogFields): void {
    const log = this.#o.logger;
    if (this.#o.level === "debug") log.debug(this.#o.msg, fields);
    else if (this.#o.level === "info") log.info(this.#o.msg, fields);
    else if (this.#o.level === "warn") log.warn(this.#o.msg, fields);
    else log.error(this.#o.msg, fields);
  }
}
