// Unit tests for the incremental NDJSON decoder of watch streams.
import assert from "node:assert/strict";
import { BodyLimitError } from "./_body_limit.ts";
import { NdjsonDecoder, NdjsonError } from "./_ndjson.ts";

const enc = new TextEncoder();

Deno.test("NdjsonDecoder yields each value once, whatever the chunk boundaries, including inside multi-byte characters", () => {
  const text = '{"a":"héllo ✓"}\n{"b":[1,2]}\n{"c":"😀"}\n';
  const bytes = enc.encode(text);
  const expected = [{ a: "héllo ✓" }, { b: [1, 2] }, { c: "😀" }];
  for (let size = 1; size <= bytes.length; size++) {
    const d = new NdjsonDecoder();
    const out: unknown[] = [];
    for (let i = 0; i < bytes.length; i += size) out.push(...d.push(bytes.subarray(i, i + size)));
    out.push(...d.end());
    assert.deepEqual(out, expected, `chunk size ${size}`);
  }
});

Deno.test("NdjsonDecoder returns a value only once its newline has arrived, and reports the partial line meanwhile", () => {
  const d = new NdjsonDecoder();
  assert.deepEqual(d.push(enc.encode('{"a":')), []);
  assert.equal(d.partial, true);
  assert.deepEqual(d.push(enc.encode("1}")), []);
  assert.deepEqual(d.push(enc.encode("\n")), [{ a: 1 }]);
  assert.equal(d.partial, false);
});

Deno.test("NdjsonDecoder skips blank lines and tolerates CRLF endings", () => {
  const d = new NdjsonDecoder();
  assert.deepEqual(d.push(enc.encode('\n\r\n{"a":1}\r\n  \n{"b":2}\r\n')), [{ a: 1 }, { b: 2 }]);
  assert.deepEqual(d.end(), []);
});

Deno.test("NdjsonDecoder.end() returns a final line that had no newline, and then nothing more", () => {
  const d = new NdjsonDecoder();
  d.push(enc.encode('{"a":1}\n{"b":'));
  d.push(enc.encode("2}"));
  assert.deepEqual(d.end(), [{ b: 2 }]);
  assert.equal(d.partial, false);
  assert.deepEqual(d.end(), []);
});

Deno.test("NdjsonDecoder rejects a line that is not JSON with its size, never its content", () => {
  const d = new NdjsonDecoder();
  assert.throws(() => d.push(enc.encode('{"token":"secret-value"\n')), (err: Error) => {
    assert.ok(err instanceof NdjsonError);
    assert.equal(err.name, "NdjsonError");
    assert.match(err.message, /a line of 23 characters in the stream is not valid JSON/);
    assert.doesNotMatch(err.message, /secret/);
    return true;
  });
});

Deno.test("NdjsonDecoder refuses a line longer than maxLineBytes as soon as it is, without waiting for its newline", () => {
  const d = new NdjsonDecoder({ maxLineBytes: 16 });
  assert.deepEqual(d.push(enc.encode('{"a":"0123')), []);
  assert.deepEqual(d.push(enc.encode("45")), []);
  assert.throws(() => d.push(enc.encode("6789abcdef")), (err: Error) => {
    assert.ok(err instanceof BodyLimitError);
    assert.equal(err.name, "BodyLimitError");
    assert.equal(err.limitBytes, 16);
    assert.equal(err.message, "a watch event of more than 16 bytes");
    return true;
  });
  assert.equal(d.partial, false, "what was held of the line is dropped");
});

Deno.test("NdjsonDecoder refuses an over-long line inside one chunk even when its newline is in the same chunk", () => {
  const d = new NdjsonDecoder({ maxLineBytes: 8 });
  assert.throws(() => d.push(enc.encode('{"a":1}\n{"b":"xxxxxxxx"}\n')), BodyLimitError);
});

Deno.test("NdjsonDecoder keeps lines of exactly maxLineBytes, in one chunk or split byte by byte", () => {
  const line = '{"a":"éé"}'; // 12 bytes, 10 characters
  const bytes = enc.encode(`${line}\n${line}\n`);
  for (const size of [1, 5, bytes.length]) {
    const d = new NdjsonDecoder({ maxLineBytes: 12 });
    const out: unknown[] = [];
    for (let i = 0; i < bytes.length; i += size) out.push(...d.push(bytes.subarray(i, i + size)));
    assert.deepEqual(out, [{ a: "éé" }, { a: "éé" }], `chunk size ${size}`);
  }
  assert.throws(() => new NdjsonDecoder({ maxLineBytes: 11 }).push(bytes), BodyLimitError);
});
