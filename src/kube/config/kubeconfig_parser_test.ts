// Tests of KubeconfigParser: a worker started on first use, one text at a time, a time limit that replaces the worker,
// and refusals of one line.

import assert from "node:assert/strict";
import { VirtualClock } from "../../util/mod.ts";
import { ConfigError } from "../errors.ts";
import { KubeconfigParser, type ParseWorker } from "./kubeconfig_parser.ts";
import { answer, type ParseAnswer, type ParseRequest, READY } from "./_kubeconfig_worker.ts";

/** A stand-in worker: records requests; answers them when the test says so (with the real worker's answer). */
class FakeWorker implements ParseWorker {
  onmessage: ((event: MessageEvent<ParseAnswer | typeof READY>) => void) | null = null;
  onerror: ((event: ErrorEvent) => void) | null = null;
  readonly requests: ParseRequest[] = [];
  terminated = false;

  postMessage(request: ParseRequest): void {
    this.requests.push(request);
  }
  terminate(): void {
    this.terminated = true;
  }
  /** Says its modules are loaded, as the real worker does first. */
  ready(): this {
    this.onmessage?.({ data: READY } as MessageEvent<typeof READY>);
    return this;
  }
  /** Answers the latest request (or the one at `index`) as the real worker would. */
  reply(index = this.requests.length - 1): void {
    this.onmessage?.({ data: answer(this.requests[index]) } as MessageEvent<ParseAnswer>);
  }
  fail(): void {
    this.onerror?.({ preventDefault() {} } as ErrorEvent);
  }
}

function fakes() {
  const workers: FakeWorker[] = [];
  return {
    workers,
    spawn: () => {
      const w = new FakeWorker();
      workers.push(w);
      return w;
    },
  };
}

const OK = "apiVersion: v1\nkind: Config\ncontexts: []\n";

Deno.test("KubeconfigParser parses on the caller's thread before start(), and starts no worker", async () => {
  const { workers, spawn } = fakes();
  const parser = new KubeconfigParser({ spawn });
  assert.deepEqual(await parser.parse("/a", OK), { apiVersion: "v1", kind: "Config", contexts: [] });
  await assert.rejects(parser.parse("/b", "a: &x [1]\nb: *x\n"), (err: Error) => {
    assert.ok(err instanceof ConfigError);
    assert.match(err.message, /^invalid kubeconfig \/b: uses a YAML alias/);
    return true;
  });
  assert.equal(workers.length, 0);
  assert.equal(parser.spawned, 0);
});

Deno.test("KubeconfigParser starts its worker only on the first text, then parses texts there one at a time, in order", async () => {
  const { workers, spawn } = fakes();
  const clock = new VirtualClock();
  const parser = new KubeconfigParser({ spawn, clock });
  const ac = new AbortController();
  const running = parser.start(ac.signal);
  assert.equal(parser.spawned, 0, "nothing parsed, no worker");
  const first = parser.parse("/one", OK);
  const second = parser.parse("/two", "x: 1\n");
  assert.equal(workers.length, 1);
  assert.deepEqual(workers[0].requests.map((r) => r.path), ["/one"], "the second waits for the first");
  assert.equal(parser.pending, 2);
  workers[0].ready().reply();
  assert.deepEqual(await first, { apiVersion: "v1", kind: "Config", contexts: [] });
  assert.deepEqual(workers[0].requests.map((r) => r.path), ["/one", "/two"]);
  workers[0].reply();
  assert.deepEqual(await second, { x: 1 });
  assert.equal(parser.pending, 0);
  assert.equal(clock.pending, 0, "no time limit left running");
  ac.abort();
  await running;
  assert.equal(workers[0].terminated, true);
  assert.equal(parser.spawned, 1);
});

Deno.test("KubeconfigParser refuses a text over the size cap without sending it to the worker", async () => {
  const { workers, spawn } = fakes();
  const parser = new KubeconfigParser({ spawn, maxBytes: 100 });
  const ac = new AbortController();
  const running = parser.start(ac.signal);
  await assert.rejects(
    parser.parse("/secret ns/big", "token: " + "s".repeat(200)),
    /^ConfigError: invalid kubeconfig \/secret ns\/big: 207 bytes, larger than 100 bytes, the limit for an untrusted kubeconfig$/,
  );
  assert.equal(workers.length, 0);
  ac.abort();
  await running;
});

Deno.test("KubeconfigParser refuses a text not answered within the time limit with one line, terminates the worker, and starts a new one for the next text", async () => {
  const { workers, spawn } = fakes();
  const clock = new VirtualClock();
  const parser = new KubeconfigParser({ spawn, clock, timeLimitMs: 5_000 });
  const ac = new AbortController();
  const running = parser.start(ac.signal);
  const slow = parser.parse("/secret ns/slow", OK);
  const next = parser.parse("/secret ns/next", "y: 2\n");
  let settled = false;
  slow.catch(() => {}).finally(() => settled = true);
  // Loading the worker's modules is not counted.
  await clock.advance(20_000);
  assert.equal(settled, false);
  workers[0].ready();
  await clock.advance(4_999);
  assert.equal(settled, false);
  await clock.advance(1);
  await assert.rejects(slow, (err: Error) => {
    assert.ok(err instanceof ConfigError);
    assert.equal(
      err.message,
      "invalid kubeconfig /secret ns/slow: not parsed within 5000 ms, the limit for an untrusted kubeconfig",
    );
    return true;
  });
  assert.equal(workers[0].terminated, true);
  assert.equal(parser.timedOut, 1);
  // A late answer of the terminated worker changes nothing.
  workers[0].reply(0);
  assert.equal(workers.length, 2, "a new worker for the next text");
  assert.deepEqual(workers[1].requests.map((r) => r.path), ["/secret ns/next"]);
  workers[1].ready().reply();
  assert.deepEqual(await next, { y: 2 });
  ac.abort();
  await running;
  assert.equal(workers[1].terminated, true);
});

Deno.test("KubeconfigParser refuses the text sent to a worker that does not load within the start limit, and tries a new worker for the next", async () => {
  const { workers, spawn } = fakes();
  const clock = new VirtualClock();
  const parser = new KubeconfigParser({ spawn, clock, startLimitMs: 60_000 });
  const ac = new AbortController();
  const running = parser.start(ac.signal);
  const stuck = parser.parse("/secret ns/a", OK);
  const next = parser.parse("/secret ns/b", OK);
  await clock.advance(60_000);
  await assert.rejects(
    stuck,
    /^ConfigError: invalid kubeconfig \/secret ns\/a: not parsed, the parser did not start within 60000 ms$/,
  );
  assert.equal(workers[0].terminated, true);
  workers[1].ready().reply();
  assert.ok(await next);
  ac.abort();
  await running;
  assert.equal(clock.pending, 0);
});

Deno.test("KubeconfigParser refuses the text of a worker that fails, and replaces the worker", async () => {
  const { workers, spawn } = fakes();
  const parser = new KubeconfigParser({ spawn, clock: new VirtualClock() });
  const ac = new AbortController();
  const running = parser.start(ac.signal);
  const lost = parser.parse("/secret ns/lost", OK);
  workers[0].ready().fail();
  await assert.rejects(lost, /^ConfigError: invalid kubeconfig \/secret ns\/lost: the parser failed$/);
  assert.equal(workers[0].terminated, true);
  const again = parser.parse("/secret ns/again", OK);
  workers[1].ready().reply();
  assert.ok(await again);
  ac.abort();
  await running;
});

Deno.test("KubeconfigParser parses on the caller's thread, for good, once a worker's module does not load", async () => {
  const { workers, spawn } = fakes();
  const parser = new KubeconfigParser({ spawn, clock: new VirtualClock() });
  const ac = new AbortController();
  const running = parser.start(ac.signal);
  const first = parser.parse("/a", OK);
  const second = parser.parse("/b", "a: &x [1]\nb: *x\n");
  workers[0].fail();
  assert.deepEqual(await first, { apiVersion: "v1", kind: "Config", contexts: [] });
  await assert.rejects(second, /^ConfigError: invalid kubeconfig \/b: uses a YAML alias/);
  assert.ok(await parser.parse("/c", OK));
  assert.equal(workers.length, 1, "no other worker tried");
  assert.ok(parser.workerProblem);
  ac.abort();
  await running;
});

Deno.test("KubeconfigParser falls back to the caller's thread when a real worker's module cannot be loaded", async () => {
  // Deno prints the worker's uncaught error on stderr as well; the parser only needs its error event.
  const parser = new KubeconfigParser({
    spawn: () =>
      new Worker("data:application/javascript,throw new Error('the module did not load')", {
        type: "module",
      }) as unknown as ParseWorker,
  });
  const ac = new AbortController();
  const running = parser.start(ac.signal);
  try {
    assert.deepEqual(await parser.parse("/a", OK), { apiVersion: "v1", kind: "Config", contexts: [] });
    assert.match(parser.workerProblem ?? "", /\S/);
  } finally {
    ac.abort();
    await running;
  }
});

Deno.test("KubeconfigParser refuses what still waits when its signal aborts, terminates the worker and settles", async () => {
  const { workers, spawn } = fakes();
  const clock = new VirtualClock();
  const parser = new KubeconfigParser({ spawn, clock });
  const ac = new AbortController();
  const running = parser.start(ac.signal);
  const waiting = [parser.parse("/a", OK), parser.parse("/b", OK)];
  ac.abort();
  await running;
  for (const [i, p] of waiting.entries()) {
    await assert.rejects(
      p,
      new RegExp(`^ConfigError: invalid kubeconfig /${"ab"[i]}: not parsed, the hub is stopping$`),
    );
  }
  assert.equal(workers[0].terminated, true);
  assert.equal(clock.pending, 0);
  // Stopped: parsed on the caller's thread again.
  assert.ok(await parser.parse("/c", OK));
  assert.equal(workers.length, 1);
});

Deno.test("KubeconfigParser parses in a real worker: the document, a refusal of one line, and nothing left running once stopped", async () => {
  const parser = new KubeconfigParser();
  const ac = new AbortController();
  const running = parser.start(ac.signal);
  try {
    const anchors = ["apiVersion: v1", "x-pad:"];
    for (let i = 0; i < 2_000; i++) anchors.push(`- &a${i} [s3cret]`, `- *a${i}`);
    const [doc, refused] = await Promise.allSettled([
      parser.parse("/secret ns/ok", OK),
      parser.parse("/secret ns/pad", anchors.join("\n")),
    ]);
    assert.deepEqual(doc, { status: "fulfilled", value: { apiVersion: "v1", kind: "Config", contexts: [] } });
    assert.equal(refused.status, "rejected");
    const err = (refused as PromiseRejectedResult).reason as Error;
    assert.ok(err instanceof ConfigError);
    assert.match(err.message, /^invalid kubeconfig \/secret ns\/pad: uses a YAML alias \(line 4\)/);
    assert.doesNotMatch(err.message, /s3cret/);
    assert.equal(parser.spawned, 1);
  } finally {
    ac.abort();
    await running;
  }
});

Deno.test("deno.json's compile task includes the worker's module, which nothing imports statically", async () => {
  const config = JSON.parse(await Deno.readTextFile(new URL("../../../deno.json", import.meta.url)));
  const words: string[] = config.tasks.compile.split(/\s+/);
  const included = words.flatMap((w, i) => w === "--include" ? [words[i + 1]] : []);
  assert.ok(included.includes("src/kube/config/_kubeconfig_worker.ts"), `--include ${included.join(", ")}`);
  assert.ok((await Deno.stat(new URL("./_kubeconfig_worker.ts", import.meta.url))).isFile);
});
