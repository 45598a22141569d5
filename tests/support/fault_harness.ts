// Glue for fault tests: a hub on the local clusters plus private ones, log queries, and the "no credential leaks" check.
// deno-lint-ignore-file no-explicit-any -- JSON from the hub is checked by the tests themselves.
//
// Every fault test ends with {@linkcode finishHub}: it snapshots /status and /metrics, stops the hub, appends its
// whole log to .cache/faults/hub-logs/<label>.log and fails the test if any known credential appears in the log,
// /status or /metrics. Together, the fault tests thus grep every line any hub of the suite printed.

import assert from "node:assert/strict";
import { KUBECONFIG_PATH } from "../../dev/clusters/clusters.ts";
import { type ClusterApi, localApi, type ObserveOptions, type UuidObserver } from "../../dev/support/cluster_api.ts";
import {
  FaultApiserver,
  type FaultApiserverOptions,
  FAULTS_DIR,
  localClusterTokens,
  type TempDir,
  tempDir,
} from "../../dev/support/fault_cluster.ts";
import { kubeconfigText, type KubeContext } from "../../dev/support/kubeconfig_text.ts";
import { HubProcess, type HubProcessOptions } from "../../dev/support/hub_process.ts";
import { type TestNamespace, testNamespace } from "../../dev/support/namespace.ts";

/** One parsed JSON log line of the hub. */
export interface HubLogLine {
  time: string;
  level: string;
  msg: string;
  cluster?: string;
  [k: string]: unknown;
}

/** The hub's log lines that parse as JSON, optionally filtered. */
export function logLines(hub: HubProcess, filter: (l: HubLogLine) => boolean = () => true): HubLogLine[] {
  const out: HubLogLine[] = [];
  for (const raw of hub.logs) {
    try {
      const l = JSON.parse(raw);
      if (l && typeof l.msg === "string" && filter(l)) out.push(l);
    } catch { /* not JSON (a Deno warning) */ }
  }
  return out;
}

/**
 * Starts the hub with clusters/local.yaml plus `extraKubeconfigs`, JSON logs, on a free port. `namespaces` become
 * `--namespace` flags: tests that check prod or staging watch only their own namespaces there, so that objects other
 * tests (or the bench) left behind in the shared clusters neither slow the hub's start nor queue ahead of theirs.
 */
export function startHub(
  clusters: string[],
  options: { extraKubeconfigs?: string[]; args?: string[]; env?: Record<string, string>; namespaces?: string[] } = {},
): HubProcess {
  const opts: HubProcessOptions = {
    clusters,
    kubeconfigs: [KUBECONFIG_PATH, ...(options.extraKubeconfigs ?? [])],
    args: [...(options.namespaces ?? []).flatMap((n) => ["--namespace", n]), ...(options.args ?? [])],
    env: options.env,
  };
  return HubProcess.start(opts);
}

/** What {@linkcode finishHub} captured. */
export interface FinishedHub {
  status: any;
  metrics: string;
  logs: string[];
  code: number;
  /** What the credential check read: the log, plus /status and /metrics unless the hub had exited already. */
  checked: string[];
}

/**
 * Snapshots /status and /metrics, stops the hub (SIGTERM, SIGKILL after 15 s), saves its log, and asserts that no
 * credential in `secrets` (plus every local cluster's admin token) appears in the log, /status or /metrics.
 *
 * Guarantees: a hub still running must answer both snapshots (200, non-empty); when it does not, the log is still
 * saved and checked, and then finishHub fails: the leak check never passes on text it could not read. A hub that had
 * exited already (a test killed it) is checked on its log alone, and `checked` says so.
 */
export async function finishHub(hub: HubProcess, label: string, secrets: string[] = []): Promise<FinishedHub> {
  let status: any = null;
  let statusText = "";
  let metrics = "";
  let unread: string | undefined;
  const running = !hub.exited;
  if (running) {
    try {
      const s = await hub.get("/status");
      const m = await hub.get("/metrics");
      if (s.status !== 200 || !s.text || m.status !== 200 || !m.text) {
        unread = `/status answered ${s.status} (${s.text.length} bytes), /metrics ${m.status} (${m.text.length} bytes)`;
      }
      status = s.body;
      statusText = s.text;
      metrics = m.text;
    } catch (err) {
      unread = String((err as Error)?.message ?? err);
    }
  }
  const timer = setTimeout(() => void hub.kill().catch(() => {}), 15_000);
  const { code } = await hub.stop();
  clearTimeout(timer);
  const dir = `${FAULTS_DIR}/hub-logs`;
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  await Deno.writeTextFile(`${dir}/${label}.log`, hub.logs.join("\n") + "\n", { mode: 0o600 });
  assertNoSecrets(
    { log: hub.logs.join("\n"), "/status": statusText, "/metrics": metrics },
    [...secrets, ...localClusterTokens()],
    label,
  );
  if (unread !== undefined) {
    throw new Error(
      `${label}: the final /status and /metrics could not be read, so they were not checked for leaks: ${unread}`,
    );
  }
  return { status, metrics, logs: hub.logs, code, checked: running ? ["log", "/status", "/metrics"] : ["log"] };
}

/**
 * What any credential of the fault suite looks like, known or not: the test tokens (64 hex digits), service-account
 * tokens (JWTs) and private keys. A hub output matching one of these is a leak even if the test did not list it.
 */
export const CREDENTIAL_SHAPES: readonly RegExp[] = [
  /(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])/,
  /eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\./,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
  /Bearer [A-Za-z0-9._~+/=-]{8,}/,
];

/**
 * Fails when any of `secrets` (ignoring ones shorter than 8 characters), or anything shaped like a credential
 * ({@linkcode CREDENTIAL_SHAPES}), occurs in any of `texts`. Leaks are reported without the secret itself.
 */
export function assertNoSecrets(texts: Record<string, string>, secrets: string[], label: string): void {
  const leaks: string[] = [];
  for (const secret of new Set(secrets)) {
    if (secret.length < 8) continue;
    for (const [where, text] of Object.entries(texts)) {
      if (text.includes(secret)) leaks.push(`${where} contains the credential ${secret.slice(0, 4)}…`);
    }
  }
  for (const shape of CREDENTIAL_SHAPES) {
    for (const [where, text] of Object.entries(texts)) {
      const m = shape.exec(text);
      if (m) leaks.push(`${where} contains something shaped like a credential (${shape}) at offset ${m.index}`);
    }
  }
  assert.deepEqual(leaks, [], `${label}: credentials leaked`);
}

/** Waits until a predicate over the hub's /status holds; a shorter alias with a default label. */
export function waitStatus(
  hub: HubProcess,
  what: string,
  check: (s: any) => boolean,
  timeoutMs = 60_000,
): Promise<any> {
  return hub.waitStatus(
    (s) => {
      try {
        return check(s);
      } catch {
        return false;
      }
    },
    timeoutMs,
    what,
  );
}

/** Seconds since `start` (performance.now()), one decimal. */
export function secondsSince(start: number): number {
  return Math.round((performance.now() - start) / 100) / 10;
}

/** Appends one line to the fault suite's figures file (.cache/faults/figures.jsonl) and prints it. */
export async function recordFigure(figure: Record<string, unknown>): Promise<void> {
  await Deno.mkdir(FAULTS_DIR, { recursive: true, mode: 0o700 });
  const line = JSON.stringify({ at: new Date().toISOString(), ...figure });
  console.log(`figure: ${line}`);
  await Deno.writeTextFile(`${FAULTS_DIR}/figures.jsonl`, line + "\n", { append: true });
}

/** One /status snapshot taken by a {@linkcode StatusSampler}. */
export interface StatusSample {
  /** performance.now() when it was taken. */
  t: number;
  status: any;
}

/** Polls the hub's /status in the background, for timelines ("was prod watching the whole time?"). */
export class StatusSampler {
  readonly samples: StatusSample[] = [];
  readonly #stop = new AbortController();
  readonly #done: Promise<void>;

  constructor(hub: HubProcess, everyMs = 500) {
    this.#done = (async () => {
      while (!this.#stop.signal.aborted) {
        try {
          const s = await hub.get("/status");
          if (s.body) this.samples.push({ t: performance.now(), status: s.body });
        } catch { /* not serving yet */ }
        await new Promise((r) => setTimeout(r, everyMs));
      }
    })();
  }

  /** Samples taken between `from` and `to` (performance.now() values). */
  between(from: number, to = Infinity): StatusSample[] {
    return this.samples.filter((s) => s.t >= from && s.t <= to);
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#done;
  }
}

/**
 * A stack of cleanup steps run in reverse order, each one even if an earlier one failed: register each resource as
 * soon as it exists, so a test that fails half-way through its setup leaks nothing.
 */
export class Cleanup implements AsyncDisposable {
  readonly #steps: { what: string; fn: () => unknown }[] = [];

  /** Registers `fn` and returns `value`, for `const x = cleanup.add(await make(), (x) => x.close())`. */
  add<T>(value: T, fn: (value: T) => unknown, what = "cleanup step"): T {
    this.#steps.push({ what, fn: () => fn(value) });
    return value;
  }

  /** Registers a step with no value. */
  defer(fn: () => unknown, what = "cleanup step"): void {
    this.#steps.push({ what, fn });
  }

  /** Runs every step (last first); throws the first failure after running all of them. */
  async run(): Promise<void> {
    const errors: unknown[] = [];
    while (this.#steps.length > 0) {
      const step = this.#steps.pop()!;
      try {
        await step.fn();
      } catch (err) {
        errors.push(new Error(`${step.what} failed: ${(err as Error)?.message ?? err}`, { cause: err }));
      }
    }
    // Printed too: when the test body failed as well, Deno reports only a SuppressedError without either message.
    for (const err of errors) console.error(`cleanup: ${(err as Error).message}`);
    if (errors.length > 0) throw errors[0];
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.run();
  }
}

/**
 * A test namespace in local clusters (see testNamespace), registered with `cleanup`. Its Uuids are deleted in one
 * request per cluster first, so that testNamespace's cleanup has no object left to patch one kubectl call at a time.
 */
export async function localNamespace(cleanup: Cleanup, prefix: string, contexts: string[]): Promise<TestNamespace> {
  const ns = cleanup.add(
    await testNamespace(prefix, { contexts }),
    (n) => n.cleanup(),
    `cleanup of namespace ${prefix}`,
  );
  cleanup.defer(async () => {
    for (const context of contexts) {
      const api = localApi(context);
      try {
        await api.deleteAllUuids(ns.name);
      } catch {
        /* testNamespace's cleanup handles what is left */
      } finally {
        api.close();
      }
    }
  });
  return ns;
}

/** Options of {@linkcode faultScenario}. */
export interface FaultScenarioOptions {
  /** Options of the private apiserver; its name defaults to the scenario's label. */
  apiserver?: Partial<FaultApiserverOptions>;
  /** Contexts of clusters/local.yaml that get the test namespace too (cleaned up); their admin clients in `local`. */
  local?: string[];
}

/** What every fault test starts from: a private apiserver, a folder, admin clients and a namespace, all cleaned up. */
export interface FaultScenario extends AsyncDisposable {
  readonly label: string;
  readonly cleanup: Cleanup;
  readonly f: FaultApiserver;
  readonly dir: TempDir;
  /** Admin client of `f`. */
  readonly api: ClusterApi;
  /** The test namespace, created in `f` and in every `local` cluster. */
  readonly ns: string;
  /** Admin clients of the `local` contexts. */
  readonly local: Record<string, ClusterApi>;
  /** Writes `kubeconfig.yaml` in `dir` with these contexts; resolves with its path. */
  kubeconfig(contexts: KubeContext[]): Promise<string>;
  /** Observes the namespace through `api` (default the fault cluster's) until cleanup, which fails on its errors. */
  observe(api?: ClusterApi, options?: ObserveOptions): UuidObserver;
  /**
   * Starts the hub (see {@linkcode startHub}); cleanup runs {@linkcode finishHub} with the apiserver's admin token and
   * `secrets` as the credentials to look for.
   */
  startHub(
    clusters: string[],
    options?: Parameters<typeof startHub>[1] & { secrets?: string[]; label?: string },
  ): HubProcess;
}

/**
 * The opening block of a fault test, once: `await using s = await faultScenario("stall", { local: ["prod"] })`.
 * Everything it makes is registered with `s.cleanup` as soon as it exists, so a setup that fails half-way leaks
 * nothing. The namespace is `<label>-ns`, or a fresh test namespace when `local` names clusters.
 */
export async function faultScenario(label: string, options: FaultScenarioOptions = {}): Promise<FaultScenario> {
  const cleanup = new Cleanup();
  try {
    const f = cleanup.add(await FaultApiserver.start({ name: label, ...options.apiserver }), (x) => x.destroy());
    const dir = cleanup.add(await tempDir(label), (d) => d.remove());
    const contexts = options.local ?? [];
    const ns = contexts.length > 0 ? (await localNamespace(cleanup, label, contexts)).name : `${label}-ns`;
    const api = cleanup.add(f.api(label), (a) => a.close());
    const local = Object.fromEntries(contexts.map((c) => [c, cleanup.add(localApi(c), (a) => a.close())]));
    await api.createNamespace(ns);
    return {
      label,
      cleanup,
      f,
      dir,
      api,
      ns,
      local,
      kubeconfig: (list) => dir.write("kubeconfig.yaml", kubeconfigText(list)),
      observe: (through = api, observeOptions = {}) =>
        cleanup.add(through.observe(ns, observeOptions), (o) => o.stop(), `observer of ${through.name}/${ns}`),
      startHub(clusters, hubOptions = {}) {
        const hub = startHub(clusters, hubOptions);
        const secrets = [f.adminToken, ...(hubOptions.secrets ?? [])];
        cleanup.defer(() => finishHub(hub, hubOptions.label ?? label, secrets), `finishHub ${label}`);
        return hub;
      },
      [Symbol.asyncDispose]: () => cleanup.run(),
    };
  } catch (err) {
    await cleanup.run().catch(() => {});
    throw err;
  }
}
