// For the HTTP/2 tests: a TLS peer that offers HTTP/1.1 only (ALPN), with the prod apiserver's own certificate.
import { STATE_DIR } from "../clusters/_layout.ts";

/** A listening TLS peer that answers nothing and counts the request bytes it receives. */
export interface Http1OnlyPeer {
  port: number;
  /** Request bytes received so far. */
  received(): number;
  close(): Promise<void>;
}

/** Starts the peer on a free loopback port; a client trusts it through the prod apiserver's CA. */
export function http1OnlyPeer(): Http1OnlyPeer {
  const certFile = `${STATE_DIR}/prod/certs/apiserver.crt`;
  const listener = Deno.listenTls({
    hostname: "127.0.0.1",
    port: 0,
    cert: Deno.readTextFileSync(certFile),
    key: Deno.readTextFileSync(certFile.replace(/\.crt$/, ".key")),
    alpnProtocols: ["http/1.1"],
  });
  let received = 0;
  const serving = (async () => {
    for await (const conn of listener) {
      const buf = new Uint8Array(4096);
      try {
        await conn.handshake();
        for (let n; (n = await conn.read(buf)) !== null;) received += n;
      } catch {
        // The client gave up after the handshake: expected.
      } finally {
        try {
          conn.close();
        } catch { /* closed */ }
      }
    }
  })();
  return {
    port: listener.addr.port,
    received: () => received,
    close: async () => {
      listener.close();
      await serving.catch(() => {});
    },
  };
}
