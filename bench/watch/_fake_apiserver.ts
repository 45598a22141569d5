// watch_compare's fake apiserver: a raw HTTP/1.1 server on loopback for one namespace of Uuids, which breaks its
// lists and watches as each fault scenario says.

import { GROUP, VERSION } from "./_compare_child.ts";

/** The apiserver's answer to a resourceVersion it no longer has: a 410 response, or an ERROR event on a watch. */
const EXPIRED = {
  kind: "Status",
  apiVersion: "v1",
  status: "Failure",
  code: 410,
  reason: "Expired",
  message: "too old resource version",
};

/** The injected faults. */
export type Scenario = "clean-close" | "reset" | "error-410" | "http-410" | "silent" | "list-500" | "watch-500";

/** Each fault, what it does, and how long a child watches it. */
export const SCENARIOS: { id: Scenario; what: string; windowMs: number }[] = [
  { id: "clean-close", what: "the server ends the watch cleanly (its timeout)", windowMs: 8_000 },
  { id: "reset", what: "the connection breaks mid-stream (no final chunk)", windowMs: 45_000 },
  { id: "error-410", what: "an ERROR event with code 410, then the server closes", windowMs: 8_000 },
  { id: "http-410", what: "the watch request answers HTTP 410 Gone", windowMs: 8_000 },
  { id: "silent", what: "the stream goes silent but stays open (half-open)", windowMs: 45_000 },
  { id: "list-500", what: "the first list answers HTTP 500", windowMs: 8_000 },
  { id: "watch-500", what: "the first watch answers HTTP 500", windowMs: 8_000 },
];

/** A tiny HTTP/1.1 apiserver for one namespace of Uuids, scripted per scenario. */
export class FakeApiserver {
  readonly listener: Deno.Listener;
  lists = 0;
  watches = 0;
  readonly #scenario: Scenario;
  readonly #ns: string;
  readonly #conns = new Set<Deno.Conn>();
  #rv = 100;

  constructor(scenario: Scenario, ns: string) {
    this.#scenario = scenario;
    this.#ns = ns;
    this.listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    this.#accept();
  }

  get url(): string {
    return `http://127.0.0.1:${(this.listener.addr as Deno.NetAddr).port}`;
  }

  async #accept(): Promise<void> {
    try {
      for await (const conn of this.listener) {
        this.#conns.add(conn);
        this.#serve(conn).catch(() => {}).finally(() => this.#conns.delete(conn));
      }
    } catch { /* closed */ }
  }

  #obj(name: string, status?: Record<string, unknown>) {
    return {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: "Uuid",
      metadata: { name, namespace: this.#ns, uid: `uid-${name}`, resourceVersion: String(++this.#rv), generation: 1 },
      spec: {},
      ...(status ? { status } : {}),
    };
  }

  async #serve(conn: Deno.Conn): Promise<void> {
    const enc = new TextEncoder();
    const dec = new TextDecoder();
    let buf = "";
    const chunk = new Uint8Array(16384);
    for (;;) {
      let end = buf.indexOf("\r\n\r\n");
      while (end < 0) {
        const n = await conn.read(chunk);
        if (n === null) return;
        buf += dec.decode(chunk.subarray(0, n));
        end = buf.indexOf("\r\n\r\n");
      }
      const head = buf.slice(0, end);
      buf = buf.slice(end + 4);
      const target = head.split("\r\n")[0].split(" ")[1] ?? "/";
      const url = new URL(target, "http://x");
      const write = (s: string) => conn.write(enc.encode(s));
      const json = async (status: number, body: unknown) => {
        const text = JSON.stringify(body);
        await write(
          `HTTP/1.1 ${status} ${
            status === 200 ? "OK" : status === 410 ? "Gone" : "Internal Server Error"
          }\r\nContent-Type: application/json\r\nContent-Length: ${enc.encode(text).length}\r\n\r\n${text}`,
        );
      };
      if (url.searchParams.get("watch") !== "true" && url.searchParams.get("watch") !== "1") {
        this.lists++;
        if (this.#scenario === "list-500" && this.lists === 1) {
          await json(500, { kind: "Status", apiVersion: "v1", status: "Failure", code: 500, message: "etcd is down" });
          continue;
        }
        // After a relist, o-2 is gone (deleted while the client was not watching) and the canary exists.
        const relist = this.lists > 1 && (this.#scenario === "error-410" || this.#scenario === "http-410");
        const items = relist ? [this.#obj("o-1"), this.#obj("o-3"), this.#obj("canary")] : [
          this.#obj("o-1"),
          this.#obj("o-2"),
          this.#obj("o-3"),
        ];
        await json(200, {
          apiVersion: `${GROUP}/${VERSION}`,
          kind: "UuidList",
          metadata: { resourceVersion: String(this.#rv) },
          items,
        });
        continue;
      }
      this.watches++;
      const first = this.watches === 1;
      if (first && this.#scenario === "http-410") {
        await json(410, EXPIRED);
        continue;
      }
      if (first && this.#scenario === "watch-500") {
        await json(500, { kind: "Status", apiVersion: "v1", status: "Failure", code: 500, message: "internal error" });
        continue;
      }
      await write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
      const event = async (e: unknown) => {
        const line = JSON.stringify(e) + "\n";
        await write(`${enc.encode(line).length.toString(16)}\r\n${line}\r\n`);
      };
      if (!first || this.#scenario === "list-500") {
        // The watch after the fault delivers the canary: seeing it means the client recovered.
        if (!(this.#scenario === "error-410" || this.#scenario === "http-410")) {
          await event({ type: "ADDED", object: this.#obj("canary") });
        }
        await new Promise(() => {}); // stay open until the test ends
      }
      await event({ type: "MODIFIED", object: this.#obj("o-1", { state: "Ok" }) });
      await new Promise((r) => setTimeout(r, 300));
      switch (this.#scenario) {
        case "clean-close":
          await write("0\r\n\r\n");
          continue;
        case "reset":
          conn.close();
          return;
        case "error-410":
          await event({ type: "ERROR", object: EXPIRED });
          await write("0\r\n\r\n");
          continue;
        case "silent":
          await new Promise(() => {});
          break;
        default:
          await new Promise(() => {});
      }
    }
  }

  close(): void {
    try {
      this.listener.close();
    } catch { /* already */ }
    for (const c of this.#conns) {
      try {
        c.close();
      } catch { /* already */ }
    }
  }
}
