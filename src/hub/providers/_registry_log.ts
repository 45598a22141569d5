// The registry's log lines about single names, each message rate-limited and summarised (a burst of 10,000 Secrets is a
// few lines, not 10,000).

import { type Clock, LogBurst, type LogFields, type Logger } from "../../util/mod.ts";

/** What the registry logs per name: a fixed set of messages, each with its level. */
export const REGISTRY_MESSAGES = {
  registered: ["info", "cluster registered"],
  reregistered: ["info", "cluster re-registered: its server changed"],
  unregistered: ["info", "cluster unregistered"],
  swapped: ["info", "cluster credentials replaced in place"],
  notServed: ["warn", "cluster not served"],
  notUsable: ["warn", "cluster not usable"],
  reserved: ["warn", "cluster name reserved; source ignored"],
  shadowed: ["warn", "cluster name already registered by another source; source ignored"],
} as const;

/** One of the registry's per-name messages. */
export type RegistryMessage = keyof typeof REGISTRY_MESSAGES;

/**
 * One LogBurst per message: per 10 s window, the first 5 lines of each message in full, the rest as one summary line
 * (`suppressed`, the first names, the first suppressed line's fields).
 *
 * Guarantees: at most 6 lines per message per window, whatever the number of names; `flush` writes what is pending.
 */
export class RegistryLog {
  readonly #bursts = new Map<RegistryMessage, LogBurst>();
  readonly #logger: Logger;
  readonly #clock: Clock;

  constructor(logger: Logger, clock: Clock) {
    this.#logger = logger;
    this.#clock = clock;
  }

  /** Logs `message` about cluster `name` (its fields should name it as `cluster`). */
  note(message: RegistryMessage, name: string, fields: LogFields): void {
    let b = this.#bursts.get(message);
    if (!b) {
      const [level, msg] = REGISTRY_MESSAGES[message];
      this.#bursts.set(message, b = new LogBurst({ logger: this.#logger, level, msg, clock: this.#clock }));
    }
    b.note(name, fields);
  }

  /** Writes every pending summary now and cancels their timers (at stop). */
  flush(): void {
    for (const b of this.#bursts.values()) b.flush();
  }
}
