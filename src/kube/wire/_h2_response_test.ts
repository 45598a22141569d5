// Unit tests of one HTTP/2 stream's response, on a stand-in for node:http2's stream (the real one is exercised against
// the apiserver in _h2_streams_test.ts): backpressure, the size limit, how a body ends, and the session's last frame.
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import type * as http2 from "node:http2";
import { constants } from "node:http2";
import { VirtualClock } from "../../util/mod.ts";
import { BodyLimitError } from "./_body_limit.ts";
import { Call } from "./_call.ts";
import { H2Response, H2StreamError } from "./_h2_response.ts";

/** What H2Response uses of a ClientHttp2Stream. */
class FakeStream extends EventEmitter {
  paused = false;
  closedWith: number | undefined;
  rstCode = 0;
  closed = false;
  destroyed = false;
  pause() {
    this.paused = true;
  }
  resume() {
    this.paused = false;
  }
  isPaused() {
    return this.paused;
  }
  close(code: number) {
    this.closedWith = code;
    this.closed = true;
  }
  destroy() {
    this.destroyed = true;
  }
}

function response(head: Record<string, string | number> = { ":status": 200 }) {
  const stream = new FakeStream();
  const session = { lastFrame: -Infinity, killed: false };
  const call = new Call(new VirtualClock(0), undefined, new Set());
  const res = new H2Response(
    session,
    stream as unknown as http2.ClientHttp2Stream,
    head as http2.IncomingHttpHeaders,
    call,
  );
  return { stream, session, res };
}

Deno.test("H2Response pauses the stream above 256 KiB unread and resumes it once read, and notes each frame's time", async () => {
  const { stream, session, res } = response();
  assert.equal(res.status, 200);
  assert.equal(res.ok, true);
  const chunks = res.chunks()[Symbol.asyncIterator]();
  for (let i = 0; i < 5; i++) stream.emit("data", new Uint8Array(64 * 1024));
  assert.equal(stream.paused, true, "320 KiB unread");
  assert.ok(session.lastFrame > 0);
  await chunks.next();
  assert.equal(stream.paused, false, "256 KiB unread: at the mark, resumed");
  stream.emit("end");
  let rest = 0;
  for (let r = await chunks.next(); !r.done; r = await chunks.next()) rest++;
  assert.equal(rest, 4);
});

Deno.test("H2Response.text() refuses a body past its limit, cancelling the stream, and a declared length past it before reading", async () => {
  const { stream, res } = response();
  const reading = res.text(100);
  stream.emit("data", new TextEncoder().encode("x".repeat(60)));
  stream.emit("data", new TextEncoder().encode("x".repeat(60)));
  await assert.rejects(reading, BodyLimitError);
  assert.equal(stream.closedWith, constants.NGHTTP2_CANCEL);

  const declared = response({ ":status": 200, "content-length": 1000 });
  await assert.rejects(declared.res.text(100), BodyLimitError);
  assert.equal(declared.stream.closedWith, constants.NGHTTP2_CANCEL);
});

Deno.test("H2Response ends a body only on the server's END_STREAM: a reset or a destroyed session errors the read", async () => {
  const whole = response();
  const text = whole.res.text();
  whole.stream.emit("data", new TextEncoder().encode('{"kind":"Status"}'));
  whole.stream.emit("end");
  assert.equal(await text, '{"kind":"Status"}');

  const reset = response();
  const cut = reset.res.text();
  reset.stream.rstCode = constants.NGHTTP2_INTERNAL_ERROR;
  reset.stream.emit("end");
  await assert.rejects(
    cut,
    (err: Error) => err instanceof H2StreamError && /reset the stream \(HTTP\/2 error 2\)/.test(err.message),
  );

  const killed = response();
  const lost = killed.res.text();
  killed.session.killed = true;
  killed.stream.emit("end");
  await assert.rejects(lost, /the connection closed before the response ended/);

  const closed = response();
  const gone = closed.res.text();
  closed.stream.emit("close");
  await assert.rejects(gone, H2StreamError);
});

Deno.test("H2Response.header() reads any header by name in any case, joins repeated ones and leaves pseudo-headers out", () => {
  const head = {
    ":status": 429,
    "content-type": "application/json",
    "retry-after": "3",
    "content-length": 17,
    "warning": ['299 - "a"', '299 - "b"'],
  } as unknown as Record<string, string | number>;
  const { res } = response(head);
  assert.equal(res.status, 429);
  assert.equal(res.ok, false);
  assert.equal(res.header("Retry-After"), "3");
  assert.equal(res.header("content-type"), "application/json");
  assert.equal(res.header("content-length"), "17", "a number is read as text");
  assert.equal(res.header("warning"), '299 - "a", 299 - "b"');
  assert.equal(res.header(":status"), null, "the status is `status`, not a header");
  assert.equal(res.header("audit-id"), null);
});
