// For tests of the ports: which accepted sockets this process still holds a file descriptor of (Linux /proc).

/**
 * The sockets of this process accepted on `port` that a file descriptor still holds: entries of /proc/net/tcp(6)
 * whose local port is `port` (the listener aside) and whose inode is one of /proc/self/fd's. A socket the server
 * closed for good has no descriptor (inode 0, or not among ours).
 */
export async function heldSockets(port: number): Promise<number> {
  const ours = await socketInodes();
  let held = 0;
  for (const file of ["/proc/self/net/tcp", "/proc/self/net/tcp6"]) {
    const text = await Deno.readTextFile(file).catch(() => "");
    for (const line of text.split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10) continue;
      const local = parseInt(cols[1].split(":").pop()!, 16);
      if (local === port && cols[3] !== "0A" && cols[9] !== "0" && ours.has(cols[9])) held++;
    }
  }
  return held;
}

/** The inodes of the sockets this process holds a file descriptor of (/proc/self/fd). */
export async function socketInodes(): Promise<Set<string>> {
  const ours = new Set<string>();
  for await (const e of Deno.readDir("/proc/self/fd")) {
    const link = await Deno.readLink(`/proc/self/fd/${e.name}`).catch(() => "");
    const m = /^socket:\[(\d+)\]$/.exec(link);
    if (m) ours.add(m[1]);
  }
  return ours;
}

/** Opens `n` connections to `port` that never send a byte, and waits until the server closed each (or `ms` passed). */
export async function silentStrangers(port: number, n: number, ms = 3_000): Promise<{
  conns: Deno.Conn[];
  stillOpen: number;
  close(): void;
}> {
  const conns: Deno.Conn[] = [];
  for (let i = 0; i < n; i++) conns.push(await Deno.connect({ hostname: "127.0.0.1", port }));
  const ended = await Promise.all(conns.map((c) =>
    Promise.race([
      c.read(new Uint8Array(16)).catch(() => null),
      new Promise((r) => setTimeout(() => r("open"), ms)),
    ])
  ));
  return {
    conns,
    stillOpen: ended.filter((e) => e === "open").length,
    close() {
      for (const c of conns) {
        try {
          c.close();
        } catch { /* closed */ }
      }
    },
  };
}
