// Unit tests for the structured logger.
import assert from "node:assert/strict";
import { errorText, Logger, oneLine, redact } from "./logger.ts";

function capture(level: "debug" | "info" = "info", format: "json" | "text" = "json") {
  const lines: string[] = [];
  return { lines, log: new Logger({ level, format, write: (l) => lines.push(l), now: () => 0 }) };
}

Deno.test("Logger writes one JSON line with bound and call fields", () => {
  const { lines, log } = capture();
  log.child({ cluster: "prod" }).info("listed", { objects: 3 });
  assert.deepEqual(JSON.parse(lines[0]), {
    time: "1970-01-01T00:00:00.000Z",
    level: "info",
    msg: "listed",
    cluster: "prod",
    objects: 3,
  });
});

Deno.test("Logger drops lines below its level", () => {
  const { lines, log } = capture("info");
  log.debug("hidden");
  assert.equal(lines.length, 0);
});

Deno.test("Logger never writes credential fields or credential-looking values", () => {
  const { lines, log } = capture("info", "text");
  const jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW0iLCJleHAiOjF9.c2lnbmF0dXJlLXZhbHVl";
  log.info(`request failed with Authorization: Bearer abc.def-123`, {
    token: "s3cr3t",
    "client-key-data": "LS0tLS1CRUdJTi",
    error: new Error(`bad token ${jwt}`),
  });
  const line = lines.join("\n");
  for (const secret of ["s3cr3t", "LS0tLS1CRUdJTi", jwt, "abc.def-123"]) assert.ok(!line.includes(secret), line);
  assert.match(line, /\[redacted\]/);
});

Deno.test("errorText() joins the chain of causes and redacts it", () => {
  const err = new Error("cannot list", { cause: new Error("connection refused: Bearer xyz") });
  assert.equal(errorText(err), "cannot list: connection refused: [redacted]");
  assert.equal(redact("-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----"), "[redacted]");
});

Deno.test("redact() hides the user info of every URL in a text, even a password holding @, and leaves the host", () => {
  assert.equal(redact("https://admin:hunter2@10.0.0.1:6443"), "https://[redacted]@10.0.0.1:6443");
  assert.equal(
    redact("cannot reach https://u:p@ss@host:6443/api via socks5://x:y@proxy:1080 (see https://host/a@b)"),
    "cannot reach https://[redacted]@host:6443/api via socks5://[redacted]@proxy:1080 (see https://host/a@b)",
  );
  assert.equal(redact("mail ops@example.com"), "mail ops@example.com");
});

Deno.test("Logger's text lines stay one line whatever a field holds: a newline in an untrusted name cannot forge the next line", () => {
  const { lines, log } = capture("info", "text");
  log.warn("cluster not usable\nINFO forged", { cluster: "k1\n1970-01-01T00:00:00.000Z INFO  hub ready", n: 2 });
  assert.equal(lines.length, 1);
  assert.doesNotMatch(lines[0], /\n/);
  assert.match(lines[0], /cluster=k1\\n1970/);
  assert.equal(oneLine("a\r\nb\u0000c\u007f"), "a\\r\\nb\\u0000c\\u007f");
  assert.equal(oneLine("plain text"), "plain text");
});
