// DNS-rebinding guard of a loopback-bound port: only loopback names and addresses in the Host header.

/** Whether a bind address is loopback: 127.0.0.0/8, ::1 or localhost. */
export function isLoopbackBind(hostname: string): boolean {
  return isLoopbackName(hostname.replace(/^\[(.*)\]$/, "$1"));
}

/**
 * Why a request to a loopback-bound port is refused for its Host header, or undefined when the header names a
 * loopback host (`localhost`, `127.x.y.z`, `[::1]`, each with or without a port) or is absent.
 *
 * Guarantees: a browser led to the port by a rebound DNS name (evil.example resolving to 127.0.0.1) always sends that
 * name as its Host, so it is refused before anything is read or reviewed. Assumptions: clients without a Host header
 * (HTTP/1.0 tools) are not browsers, so they are let through.
 */
export function foreignHostRefusal(host: string | null): string | undefined {
  if (host === null) return undefined;
  const name = hostName(host.trim());
  if (name !== undefined && isLoopbackName(name)) return undefined;
  const shown = host.length > 100 ? `${host.slice(0, 100)}…` : host;
  return `misdirected request: this port is bound to loopback and answers only Host localhost, 127.0.0.1 or [::1]` +
    ` (with its port); got Host ${JSON.stringify(shown)}\n`;
}

/** The 421 a loopback-bound port answers to a foreign Host header, or undefined when the request may go on. */
export function refuseForeignHost(req: Request): Response | undefined {
  const refusal = foreignHostRefusal(req.headers.get("host"));
  if (refusal === undefined) return undefined;
  return new Response(refusal, {
    status: 421,
    headers: { "content-type": "text/plain", "cache-control": "no-store" },
  });
}

/** The host of a Host header without its port; undefined when it is not a well-formed host[:port]. */
function hostName(host: string): string | undefined {
  const m = host.match(/^(?:\[([0-9a-fA-F:.]+)\]|([^:\[\]\s]+))(?::\d{1,5})?$/);
  if (!m) return undefined;
  return (m[1] ?? m[2]).toLowerCase().replace(/\.$/, "");
}

function isLoopbackName(name: string): boolean {
  const n = name.toLowerCase();
  if (n === "localhost" || n === "::1" || n === "0:0:0:0:0:0:0:1") return true;
  const v4 = n.match(/^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/);
  return v4 !== null && v4.slice(1).every((o) => Number(o) <= 255);
}
