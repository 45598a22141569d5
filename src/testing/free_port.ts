// Ports for processes a test or bench starts: free now, and not about to be taken by a client socket.

/** Where freePort() draws from: below Linux's ephemeral range (32768-60999), above the local clusters' ports. */
export const FREE_PORT_RANGE: readonly [number, number] = [20_000, 32_767];
const handedOut = new Set<number>();

/**
 * A port free on 127.0.0.1 and 0.0.0.0 now, for a process started next to bind.
 *
 * Guarantees: never one this process handed out before; never from the kernel's ephemeral range, which every
 * outgoing connection of every process (kubectl, hubs, apiservers) draws its local port from, so no client socket
 * takes the port between this check and the bind (a port from `port: 0` is in that range: under the parallel suite
 * one was taken that way); the search starts at a random port, so parallel test processes rarely try the same one.
 */
export function freePort(): number {
  const [lo, hi] = FREE_PORT_RANGE;
  const size = hi - lo + 1;
  const start = Math.floor(Math.random() * size);
  for (let i = 0; i < size; i++) {
    const port = lo + (start + i) % size;
    if (handedOut.has(port) || !bindable(port)) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`freePort: every port in ${lo}-${hi} is taken or was handed out`);
}

function bindable(port: number): boolean {
  for (const hostname of ["127.0.0.1", "0.0.0.0"]) {
    try {
      Deno.listen({ hostname, port }).close();
    } catch {
      return false;
    }
  }
  return true;
}
