// Unit tests of FirstRulesReview: first attempts share one review, retries ask again.
import assert from "node:assert/strict";
import type { ResourceRule } from "../../kube/mod.ts";
import { FirstRulesReview } from "./_first_rules.ts";

const rule: ResourceRule = { verbs: ["list"], apiGroups: [""], resources: ["configmaps"] };

Deno.test("FirstRulesReview: two operators' first attempts send one review, a retry sends its own", async () => {
  let asked = 0;
  const review = new FirstRulesReview(() => Promise.resolve([{ ...rule, verbs: [`v${++asked}`] }]), 2);
  const [a, b] = await Promise.all([review.rules(true), review.rules(true)]);
  assert.equal(asked, 1);
  assert.equal(a, b, "the same answer");
  review.firstAttemptEnded();
  const retry = await review.rules(false);
  assert.equal(asked, 2, "a retry asks again");
  assert.deepEqual(retry[0].verbs, ["v2"]);
  review.firstAttemptEnded();
  await review.rules(true);
  assert.equal(asked, 3, "once every first attempt ended, nothing is shared any more");
});

Deno.test("FirstRulesReview: a failed review fails every first attempt that shared it, and the next asks again", async () => {
  let asked = 0;
  const review = new FirstRulesReview(
    () => ++asked === 1 ? Promise.reject(new Error("connection reset")) : Promise.resolve([rule]),
    2,
  );
  await assert.rejects(review.rules(true), /connection reset/);
  await assert.rejects(review.rules(true), /connection reset/);
  review.firstAttemptEnded();
  review.firstAttemptEnded();
  assert.deepEqual(await review.rules(false), [rule]);
  assert.equal(asked, 2);
});
