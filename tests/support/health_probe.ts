// Polls a hub's /healthz from a Worker (its own thread and event loop), so a test that is busy parsing a large /status
// cannot delay a probe and make the hub look unresponsive.
//
// Guarantees: every probe that does not answer 200 within `timeoutMs` is kept in `failures`, with when it started
// (ms since the probe began) and how long it took; `longestOutageMs` is the longest stretch covered by probes in a row
// that failed or took longer than `slowMs` (from the start of the first to the end of the last): how long the hub did
// not answer promptly; `unresponsiveMs` adds up every failed or slow probe's time; `stop()` settles once the worker has
// ended.

/** Options of {@linkcode HealthProbe.start}. */
export interface HealthProbeOptions {
  /** Pause between probes. Default 500 ms. */
  everyMs?: number;
  /** A probe not answered within this is a failure. Default 5,000 ms. */
  timeoutMs?: number;
  /** An answer slower than this counts toward an outage (kubelet's default timeoutSeconds). Default 1,000 ms. */
  slowMs?: number;
}

/** One probe that failed. */
export interface ProbeFailure {
  /** Milliseconds after the probe started. */
  at: number;
  tookMs: number;
  error: string;
}

/** What the worker posts after each probe. */
interface ProbeMessage {
  at: number;
  tookMs: number;
  status?: number;
  error?: string;
}

const WORKER = `
let stopped = false;
self.onmessage = (e) => { if (e.data === "stop") stopped = true; else run(e.data); };
async function run({ url, everyMs, timeoutMs }) {
  const start = performance.now();
  while (!stopped) {
    const t0 = performance.now();
    const msg = { at: Math.round(t0 - start) };
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
      await res.body?.cancel();
      msg.status = res.status;
    } catch (err) {
      msg.error = String(err?.message ?? err);
    }
    msg.tookMs = Math.round(performance.now() - t0);
    self.postMessage(msg);
    await new Promise((r) => setTimeout(r, everyMs));
  }
  self.postMessage("stopped");
}
`;

/** A background /healthz prober on its own thread. */
export class HealthProbe {
  readonly failures: ProbeFailure[] = [];
  probes = 0;
  /** The slowest answer seen, in ms. */
  slowestMs = 0;
  /** The longest stretch of consecutive failed or slow probes, in ms (0 when none). */
  longestOutageMs = 0;
  /** The time of every failed or slow probe added up, in ms. */
  unresponsiveMs = 0;
  #outageStart: number | undefined;
  readonly #worker: Worker;
  readonly #stopped: Promise<void>;

  private constructor(url: string, options: HealthProbeOptions) {
    const slowMs = options.slowMs ?? 1_000;
    const source = URL.createObjectURL(new Blob([WORKER], { type: "application/javascript" }));
    this.#worker = new Worker(source, { type: "module" });
    URL.revokeObjectURL(source);
    this.#stopped = new Promise((resolve) => {
      this.#worker.onmessage = (e: MessageEvent<ProbeMessage | "stopped">) => {
        if (e.data === "stopped") return resolve();
        const m = e.data;
        this.probes++;
        this.slowestMs = Math.max(this.slowestMs, m.tookMs);
        if (m.status !== 200) {
          this.failures.push({ at: m.at, tookMs: m.tookMs, error: m.error ?? `answered ${m.status}` });
        } else if (m.tookMs <= slowMs) {
          this.#outageStart = undefined;
          return;
        }
        this.unresponsiveMs += m.tookMs;
        this.#outageStart ??= m.at;
        this.longestOutageMs = Math.max(this.longestOutageMs, m.at + m.tookMs - this.#outageStart);
      };
    });
    this.#worker.postMessage({ url, everyMs: options.everyMs ?? 500, timeoutMs: options.timeoutMs ?? 5_000 });
  }

  /** Starts probing `http://127.0.0.1:PORT/healthz`. */
  static start(port: number, options: HealthProbeOptions = {}): HealthProbe {
    return new HealthProbe(`http://127.0.0.1:${port}/healthz`, options);
  }

  /** Stops after the probe in flight; settles once the worker has ended. */
  async stop(): Promise<void> {
    this.#worker.postMessage("stop");
    await this.#stopped;
    this.#worker.terminate();
  }
}
