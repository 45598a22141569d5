// Unit tests for reading one admission body: the size cap, the deadline on virtual time, the budget, what goes back.
import assert from "node:assert/strict";
import { VirtualClock } from "../../util/mod.ts";
import { ReviewInputError } from "./admission_review.ts";
import { BodyBudget } from "./body_budget.ts";
import { readReviewBody } from "./review_body.ts";

/** A request whose body sends `chunks` (each a byte count) and then stays open until cancelled. */
function stalled(chunks: number[]): { req: Request; cancelled: () => boolean } {
  let cancelled = false;
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      if (i < chunks.length) c.enqueue(new Uint8Array(chunks[i++]));
      else return new Promise(() => {}); // nothing more, ever
    },
    cancel() {
      cancelled = true;
    },
  });
  return { req: new Request("http://x/", { method: "POST", body }), cancelled: () => cancelled };
}

const status = (code: number) => (e: unknown) => e instanceof ReviewInputError && e.status === code;

Deno.test("readReviewBody() refuses a body over the cap with 413, by Content-Length or while streaming", async () => {
  const big = new Uint8Array(100);
  await assert.rejects(
    readReviewBody(
      new Request("http://x/", { method: "POST", body: big, headers: { "content-length": "100" } }),
      { maxBytes: 10 },
    ),
    status(413),
  );
  const stream = new ReadableStream<Uint8Array>({
    pull(c) {
      c.enqueue(new Uint8Array(8));
    },
  });
  await assert.rejects(
    readReviewBody(new Request("http://x/", { method: "POST", body: stream }), { maxBytes: 64 }),
    status(413),
  );
  assert.equal(
    (await readReviewBody(new Request("http://x/", { method: "POST", body: big }), { maxBytes: 100 })).length,
    100,
  );
});

Deno.test("readReviewBody() answers 408 when the body has not all arrived by the deadline, cancels it and frees its bytes", async () => {
  const clock = new VirtualClock();
  const budget = new BodyBudget({ perBodyBytes: 10, sharedBytes: 1_000 });
  const { req, cancelled } = stalled([300, 200]);
  let outcome: unknown;
  outcome = "pending";
  const reading = readReviewBody(req, { timeoutMs: 5_000, budget, clock }).then((b) => outcome = b, (e) => outcome = e);
  await clock.advance(4_999);
  assert.equal(outcome, "pending", "still within the deadline");
  assert.equal(budget.pooled, 490, "500 bytes held, 10 of them the allowance");
  await clock.advance(1);
  await reading;
  assert.ok(status(408)(outcome), String(outcome));
  assert.match(String((outcome as { message?: string }).message), /not received within 5000 ms \(500 bytes came\)/);
  assert.ok(cancelled(), "the stream was cancelled");
  assert.equal(budget.pooled, 0, "its bytes went back");
});

Deno.test("readReviewBody() answers 429 when the port's budget has no room, and a body read whole gives its bytes back", async () => {
  const budget = new BodyBudget({ perBodyBytes: 100, sharedBytes: 500 });
  const hog = stalled([550]);
  const clock = new VirtualClock();
  const holding = readReviewBody(hog.req, { budget, clock, timeoutMs: 1_000 }).catch((e) => e);
  await clock.advance(0);
  assert.equal(budget.pooled, 450);
  const { req, cancelled } = stalled([100, 100]);
  await assert.rejects(readReviewBody(req, { budget, clock }), status(429));
  assert.ok(cancelled());
  assert.equal(budget.pooled, 450, "the refused body's bytes went back; the hog's stay");
  const ok = await readReviewBody(new Request("http://x/", { method: "POST", body: "x".repeat(90) }), {
    budget,
    clock,
  });
  assert.equal(ok.length, 90, "a small body fits within its allowance");
  await clock.advance(1_000);
  assert.ok(status(408)(await holding));
  assert.equal(budget.pooled, 0);
});
