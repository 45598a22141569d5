// Ports for processes a test or bench starts: free now, and not about to be taken by a client socket.

/** Where freePort() draws from: below Linux's ephemeral range (32768-60999), above the local clusters' ports. */
export const FREE_PORT_RANGE: readonly [number, number] = [20_000, 32_767];
const handedOut = new Set<number>();
/**
 * The longest a port another process handed out stays reserved from this one (its reservation file's age); the
 * reservation ends sooner when that process has exited.
 */
const RESERVED_FOR_MS = 15 * 60_000;

/**
 * A port free on 127.0.0.1 and 0.0.0.0 now, for a process started next to bind.
 *
 * Guarantees: never one this process handed out before; never from the kernel's ephemeral range, which every
 * outgoing connection of every process (kubectl, hubs, apiservers) draws its local port from, so no client socket
 * takes the port between this check and the bind (a port from `port: 0` is in that range: under the parallel suite
 * one was taken that way); never one another process that still runs handed out in the last 15 minutes: each port
 * handed out is reserved by a file in `$TMPDIR/operator-hub-ports/` that names the process (created exclusively, so
 * two processes never both get it; without write access to it, ports are only checked), and a reservation whose
 * process has exited is taken over, so suites run one after the other do not run out of ports; the search starts at
 * a random port.
 */
export function freePort(): number {
  const [lo, hi] = FREE_PORT_RANGE;
  const size = hi - lo + 1;
  const start = Math.floor(Math.random() * size);
  for (let i = 0; i < size; i++) {
    const port = lo + (start + i) % size;
    if (handedOut.has(port) || !bindable(port) || !reserve(port)) continue;
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

/** Claims `port` for this process by creating its reservation file; false when another holds a fresh one. */
function reserve(port: number): boolean {
  const dir = `${Deno.env.get("TMPDIR") ?? "/tmp"}/operator-hub-ports`;
  const path = `${dir}/${port}`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      Deno.mkdirSync(dir, { recursive: true });
      const file = Deno.openSync(path, { createNew: true, write: true });
      file.writeSync(new TextEncoder().encode(String(Deno.pid)));
      file.close();
      return true;
    } catch (err) {
      if (!(err instanceof Deno.errors.AlreadyExists)) return true; // no reservations here: checked only
      try {
        const age = Date.now() - (Deno.statSync(path).mtime?.getTime() ?? 0);
        if (age < RESERVED_FOR_MS && holderRuns(Deno.readTextFileSync(path))) return false;
        Deno.removeSync(path);
      } catch { /* removed by another process meanwhile: try again */ }
    }
  }
  return false;
}

/**
 * Whether the process a reservation file names still runs: true for a file not written yet (empty, just created) or
 * where processes cannot be looked up (no /proc), so the reservation then lasts its whole age.
 */
function holderRuns(content: string): boolean {
  const pid = Number(content.trim());
  if (!Number.isInteger(pid) || pid <= 0) return true;
  try {
    Deno.statSync(`/proc/${pid}`);
    return true;
  } catch (err) {
    return !(err instanceof Deno.errors.NotFound) || !exists("/proc/self");
  }
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}
