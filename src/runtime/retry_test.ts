// Unit tests for retryOnConflict: which failures are retried, and how often.
import assert from "node:assert/strict";
import { ApiError } from "../kube/mod.ts";
import { retryOnConflict } from "./retry.ts";

const conflict = () => new ApiError({ method: "PATCH", path: "/apis/g/v1/namespaces/ns/ks/x", status: 409 });

Deno.test("retryOnConflict retries a conflict and resolves to the first successful attempt's value, counting attempts from 0", async () => {
  const seen: number[] = [];
  const value = await retryOnConflict((attempt) => {
    seen.push(attempt);
    return attempt < 2 ? Promise.reject(conflict()) : Promise.resolve(`written on ${attempt}`);
  });
  assert.equal(value, "written on 2");
  assert.deepEqual(seen, [0, 1, 2]);
});

Deno.test("retryOnConflict throws any other error at once, without another attempt", async () => {
  for (const err of [new ApiError({ method: "PATCH", path: "/x", status: 404 }), new Error("connection reset")]) {
    let calls = 0;
    await assert.rejects(
      retryOnConflict(() => {
        calls++;
        return Promise.reject(err);
      }),
      (thrown) => thrown === err,
    );
    assert.equal(calls, 1, err.message);
  }
});

Deno.test("retryOnConflict throws the last conflict once its three default attempts are used up", async () => {
  const thrown: Error[] = [];
  await assert.rejects(
    retryOnConflict(() => {
      const err = conflict();
      thrown.push(err);
      return Promise.reject(err);
    }),
    (err) => err === thrown.at(-1),
  );
  assert.equal(thrown.length, 3);
});

Deno.test("retryOnConflict makes exactly as many attempts as asked, and at least one", async () => {
  for (const [asked, made] of [[5, 5], [1, 1], [0, 1], [-3, 1]]) {
    let calls = 0;
    await assert.rejects(retryOnConflict(() => {
      calls++;
      return Promise.reject(conflict());
    }, { attempts: asked }));
    assert.equal(calls, made, `attempts: ${asked}`);
  }
});

Deno.test("retryOnConflict retries a Status-shaped conflict that is not an ApiError (status 409)", async () => {
  let calls = 0;
  await retryOnConflict(() =>
    ++calls === 1 ? Promise.reject(Object.assign(new Error("c"), { status: 409 })) : Promise.resolve()
  );
  assert.equal(calls, 2);
});
