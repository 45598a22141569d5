// A stand-in for an attacker's server: plain HTTP and HTTPS (self-signed) on 127.0.0.1, recording the Authorization
// header of every request it gets and answering 401, so tests can prove a token never left the hub.
//
// Guarantees: binds 127.0.0.1 only; `close()` settles once both listeners stopped. Never forwards anything.

import { selfSignedTls } from "../../src/hub/http/tls_material.ts";

/** One request the attacker saw. */
export interface StolenRequest {
  scheme: "http" | "https";
  method: string;
  path: string;
  /** The Authorization header, or "" when none came. */
  authorization: string;
}

/** Two listeners (http, https) that record what reaches them. */
export class AttackerServer implements AsyncDisposable {
  readonly requests: StolenRequest[] = [];
  readonly httpUrl: string;
  readonly httpsUrl: string;
  /** The HTTPS listener's self-signed certificate (for 127.0.0.1), PEM: what an attacker puts in its kubeconfig. */
  readonly caPem: string;
  readonly #servers: Deno.HttpServer[];
  readonly #stop: AbortController;

  private constructor(servers: Deno.HttpServer[], stop: AbortController, caPem: string) {
    this.caPem = caPem;
    this.#servers = servers;
    this.#stop = stop;
    this.httpUrl = `http://127.0.0.1:${(servers[0].addr as Deno.NetAddr).port}`;
    this.httpsUrl = `https://127.0.0.1:${(servers[1].addr as Deno.NetAddr).port}`;
  }

  static async start(): Promise<AttackerServer> {
    const tls = await selfSignedTls(["127.0.0.1"]);
    const stop = new AbortController();
    const holder: { a?: AttackerServer } = {};
    const handler = (scheme: "http" | "https") => (req: Request) => {
      holder.a!.requests.push({
        scheme,
        method: req.method,
        path: new URL(req.url).pathname,
        authorization: req.headers.get("authorization") ?? "",
      });
      return Response.json({ kind: "Status", apiVersion: "v1", status: "Failure", code: 401 }, { status: 401 });
    };
    const opts = { hostname: "127.0.0.1", port: 0, signal: stop.signal, onListen: () => {} };
    const servers = [
      Deno.serve(opts, handler("http")),
      Deno.serve({ ...opts, cert: tls.cert, key: tls.key }, handler("https")),
    ];
    holder.a = new AttackerServer(servers, stop, tls.cert);
    return holder.a;
  }

  /** Whether any request carried `token` (as a bearer token or anywhere in its Authorization header). */
  sawToken(token: string): boolean {
    return this.requests.some((r) => r.authorization.includes(token));
  }

  async close(): Promise<void> {
    this.#stop.abort();
    await Promise.all(this.#servers.map((s) => s.finished));
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
