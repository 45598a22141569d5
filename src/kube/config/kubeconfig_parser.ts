// Untrusted kubeconfig text parsed off the event loop: in one Worker, started on first use, one text at a time, each
// within a time limit.
//
// Guarantees:
// - while started, `parse()` never runs the YAML parser on the caller's thread: the text goes to the worker (started
//   on the first text, so a hub that parses nothing untrusted pays nothing), texts are parsed one at a time in the order
//   given, and one not answered within `timeLimitMs` (counted once the worker has loaded) is refused with one line
//   while the worker is terminated and a new one started for the next text;
// - before `start()` and once it settled, `parse()` parses on the caller's thread under the same linear-time rules
//   (start-up reads happen before the hub serves anything; unit tests need no worker); so it does, for good, once a
//   worker could not load its module (a `deno run` without read access to it, a binary compiled without
//   `--include`): a hub that cannot start the worker still judges every text, only on its own thread;
// - a text over the size cap is refused before it is sent anywhere; every error is a ConfigError of one line naming
//   the path, never the text;
// - when `start`'s signal aborts, the worker is terminated and texts still waiting are refused; `start` then settles.
//
// Assumptions: the worker needs no permission beyond the hub's own (it inherits them, and reads nothing); `deno
// compile` must `--include` _kubeconfig_worker.ts (deno.json's `compile` task does), since nothing imports it statically.

import { type Clock, oneLine, SystemClock, type Timer } from "../../util/mod.ts";
import { ConfigError } from "../errors.ts";
import { MAX_UNTRUSTED_KUBECONFIG_BYTES, oversized, parseKubeconfigYaml } from "./kubeconfig_yaml.ts";
import type { ParseAnswer, ParseRequest, READY } from "./_kubeconfig_worker.ts";

/** What KubeconfigParser needs of a worker (a `Worker` fits). */
export interface ParseWorker {
  postMessage(request: ParseRequest): void;
  onmessage: ((event: MessageEvent<ParseAnswer | typeof READY>) => void) | null;
  onerror: ((event: ErrorEvent) => void) | null;
  terminate(): void;
}

/**
 * What parseKubeconfigText needs of a parser.
 *
 * @example
 * ```ts
 * import {
 *   ConfigError,
 *   parseKubeconfigText,
 *   STRICT_CREDENTIAL_POLICY,
 *   type UntrustedKubeconfigParser,
 * } from "../../../kube.ts";
 *
 * // Accepts JSON kubeconfigs only (JSON.parse takes linear time), refusing any other YAML.
 * const jsonOnly: UntrustedKubeconfigParser = {
 *   parse: (path, text) =>
 *     Promise.resolve().then(() => JSON.parse(text)).catch(() => Promise.reject(new ConfigError(`${path}: not JSON`))),
 * };
 * declare const text: string; // from a labelled Secret
 * await parseKubeconfigText(text, { source: "secret hub/a", untrusted: STRICT_CREDENTIAL_POLICY, parser: jsonOnly });
 * ```
 */
export interface UntrustedKubeconfigParser {
  /** The document `text` holds, as plain data, or a ConfigError naming `path`. */
  parse(path: string, text: string): Promise<unknown>;
}

export interface KubeconfigParserOptions {
  /**
   * A text not answered within this long is refused and the worker replaced. Default 5,000 ms: the largest text
   * allowed (256 KiB) parses in well under a second even on a loaded machine, and one text over the limit holds up
   * only the texts queued behind it, never the hub.
   */
  timeLimitMs?: number;
  /**
   * A worker that has not loaded its modules (and said so) this long after it was started is terminated and the text
   * sent to it refused. Default 60,000 ms: loading is not counted in `timeLimitMs`, as the first start of a hub may
   * compile the modules.
   */
  startLimitMs?: number;
  /** Overrides the untrusted size cap (tests). Default MAX_UNTRUSTED_KUBECONFIG_BYTES. */
  maxBytes?: number;
  /** Starts a worker. Default: a module Worker running _kubeconfig_worker.ts. */
  spawn?: () => ParseWorker;
  clock?: Clock;
}

interface Job {
  id: number;
  path: string;
  text: string;
  resolve(doc: unknown): void;
  reject(err: ConfigError): void;
}

/** The default worker: _kubeconfig_worker.ts as a module worker, with the hub's own permissions. */
export function spawnKubeconfigWorker(): ParseWorker {
  return new Worker(new URL("./_kubeconfig_worker.ts", import.meta.url), {
    type: "module",
    name: "kubeconfig-parser",
  }) as unknown as ParseWorker;
}

/** Parses untrusted kubeconfig text in a worker; see the file's guarantees. */
export class KubeconfigParser implements UntrustedKubeconfigParser {
  readonly #timeLimitMs: number;
  readonly #startLimitMs: number;
  readonly #maxBytes: number;
  readonly #spawn: () => ParseWorker;
  readonly #clock: Clock;
  readonly #queue: Job[] = [];
  #started = false;
  #worker: ParseWorker | undefined;
  /** Whether the worker posted READY. */
  #ready = false;
  /** The text being parsed, and the limit running for it (unset while the worker loads). */
  #current: { job: Job; timer: Timer | undefined } | undefined;
  /** The start limit of a worker loading. */
  #starting: Timer | undefined;
  /** Why no worker can be started (its module did not load), once that happened. */
  #unavailable: string | undefined;
  #nextId = 1;
  #spawned = 0;
  #timedOut = 0;

  constructor(options: KubeconfigParserOptions = {}) {
    this.#timeLimitMs = options.timeLimitMs ?? 5_000;
    this.#startLimitMs = options.startLimitMs ?? 60_000;
    this.#maxBytes = options.maxBytes ?? MAX_UNTRUSTED_KUBECONFIG_BYTES;
    this.#spawn = options.spawn ?? spawnKubeconfigWorker;
    this.#clock = options.clock ?? new SystemClock();
  }

  /** Workers started so far. */
  get spawned(): number {
    return this.#spawned;
  }

  /** Texts refused for taking longer than the time limit. */
  get timedOut(): number {
    return this.#timedOut;
  }

  /** Why texts are parsed on the caller's thread although started: the worker's module did not load. */
  get workerProblem(): string | undefined {
    return this.#unavailable;
  }

  /** Texts waiting or being parsed. */
  get pending(): number {
    return this.#queue.length + (this.#current ? 1 : 0);
  }

  parse(path: string, text: string): Promise<unknown> {
    const over = oversized(text, this.#maxBytes);
    if (over) return Promise.reject(new ConfigError(`invalid kubeconfig ${path}: ${over}`));
    if (!this.#started || this.#unavailable !== undefined) return this.#here(path, text);
    return new Promise((resolve, reject) => {
      this.#queue.push({ id: this.#nextId++, path, text, resolve, reject });
      this.#next();
    });
  }

  /** Parses in the worker until `signal` aborts; then terminates it and refuses what still waits. */
  async start(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    this.#started = true;
    await new Promise<void>((r) => signal.addEventListener("abort", () => r(), { once: true }));
    this.#started = false;
    const waiting = [...(this.#current ? [this.#current.job] : []), ...this.#queue.splice(0)];
    this.#current?.timer?.cancel();
    this.#current = undefined;
    this.#stopWorker();
    for (const job of waiting) {
      job.reject(new ConfigError(`invalid kubeconfig ${job.path}: not parsed, the hub is stopping`));
    }
  }

  /** Parses on the caller's thread. */
  #here(path: string, text: string): Promise<unknown> {
    try {
      return Promise.resolve(parseKubeconfigYaml(path, text, { untrusted: true, maxBytes: this.#maxBytes }));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  #next(): void {
    if (this.#current || this.#queue.length === 0 || !this.#started) return;
    if (this.#unavailable !== undefined) {
      for (const job of this.#queue.splice(0)) this.#here(job.path, job.text).then(job.resolve, job.reject);
      return;
    }
    const job = this.#queue.shift()!;
    const worker = this.#worker ?? this.#startWorker();
    if (this.#worker !== worker) {
      // It failed while starting (see #startWorker): parse here, or in the next worker.
      this.#queue.unshift(job);
      this.#next();
      return;
    }
    this.#current = { job, timer: undefined };
    if (this.#ready) this.#armLimit();
    const request: ParseRequest = { id: job.id, path: job.path, text: job.text };
    if (this.#maxBytes !== MAX_UNTRUSTED_KUBECONFIG_BYTES) request.maxBytes = this.#maxBytes;
    try {
      worker.postMessage(request);
    } catch {
      this.#stopWorker();
      this.#finish(job, { id: job.id, error: `invalid kubeconfig ${job.path}: cannot be handed to the parser` });
    }
  }

  /** Starts the time limit of the text being parsed. */
  #armLimit(): void {
    const current = this.#current;
    if (!current || current.timer) return;
    current.timer = this.#clock.setTimer(this.#timeLimitMs, () => {
      this.#timedOut++;
      this.#stopWorker();
      this.#finish(current.job, {
        id: current.job.id,
        error: `invalid kubeconfig ${current.job.path}: not parsed within ${this.#timeLimitMs} ms, the limit for an ` +
          `untrusted kubeconfig`,
      });
    });
  }

  #startWorker(): ParseWorker {
    const worker = this.#spawn();
    this.#spawned++;
    this.#ready = false;
    worker.onmessage = (event) => {
      if (this.#worker !== worker) return;
      const data = event.data;
      if ("ready" in data) {
        this.#ready = true;
        this.#starting?.cancel();
        this.#starting = undefined;
        this.#armLimit();
        return;
      }
      if (this.#current?.job.id === data.id) this.#finish(this.#current.job, data);
    };
    const onError = (event: ErrorEvent) => {
      event.preventDefault?.();
      if (this.#worker !== worker) return;
      const loaded = this.#ready;
      this.#stopWorker();
      const current = this.#current;
      if (!loaded) {
        // Its module did not load: no worker will. This text and every later one are parsed here.
        this.#unavailable = oneLine(String(event.message ?? "the worker's module did not load"));
        this.#current?.timer?.cancel();
        this.#current = undefined;
        if (current) this.#queue.unshift(current.job);
        this.#next();
        return;
      }
      // An error the loaded worker did not catch (it catches every parse error): it is done, and so is its text.
      if (current) {
        this.#finish(current.job, {
          id: current.job.id,
          error: `invalid kubeconfig ${current.job.path}: the parser failed`,
        });
      }
    };
    worker.onerror = onError;
    this.#worker = worker;
    // Only now the start limit: the first timer a process sets loads Deno's timer module, which runs queued
    // microtasks, and with them the error event of a worker whose module failed at once. Set before the handlers
    // above, that event found none and ended the process ("Unhandled error in child worker"; about 1 run in 10 of
    // kubeconfig_parser_test.ts). The event may still arrive here: then the worker is already stopped.
    const starting = this.#clock.setTimer(this.#startLimitMs, () => {
      this.#stopWorker();
      const job = this.#current?.job;
      if (job) {
        this.#finish(job, {
          id: job.id,
          error: `invalid kubeconfig ${job.path}: not parsed, the parser did not start within ${this.#startLimitMs} ms`,
        });
      }
    });
    if (this.#worker === worker && !this.#ready) this.#starting = starting;
    else starting.cancel();
    return worker;
  }

  #stopWorker(): void {
    const worker = this.#worker;
    this.#worker = undefined;
    this.#ready = false;
    this.#starting?.cancel();
    this.#starting = undefined;
    if (!worker) return;
    worker.onmessage = null;
    worker.onerror = null;
    worker.terminate();
  }

  #finish(job: Job, answer: ParseAnswer): void {
    this.#current?.timer?.cancel();
    this.#current = undefined;
    if ("error" in answer) job.reject(new ConfigError(oneLine(answer.error)));
    else job.resolve(answer.doc);
    this.#next();
  }
}
