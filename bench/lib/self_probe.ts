// What this process holds, read from /proc/self: CPU seconds, resident memory by mapping kind, fds and sockets.

/** A reader of the CPU seconds this process (every thread: the hub, its HTTP and TLS, malloc) has used: utime + stime. */
export async function cpuSecondsReader(): Promise<() => number> {
  const clockTicks = Number(
    new TextDecoder().decode((await new Deno.Command("getconf", { args: ["CLK_TCK"] }).output()).stdout),
  );
  return () => {
    const fields = Deno.readTextFileSync("/proc/self/stat").split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) / clockTicks;
  };
}

/** Resident MiB by kind of mapping (/proc/self/smaps): the brk heap, anonymous mappings, files. */
export function mappedMiB(): Record<string, number> {
  const out: Record<string, number> = { brk: 0, anon: 0, file: 0 };
  let kind = "anon";
  for (const line of Deno.readTextFileSync("/proc/self/smaps").split("\n")) {
    const head = line.match(/^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/);
    if (head) kind = head[1] === "[heap]" ? "brk" : head[1].startsWith("/") ? "file" : "anon";
    else if (line.startsWith("Rss:")) out[kind] += Number(line.split(/\s+/)[1]) / 1024;
  }
  for (const k in out) out[k] = Math.round(out[k]);
  return out;
}

/** TCP sockets this process holds to 127.0.0.1:`port` (its fds matched against /proc/net/tcp). */
export function socketsTo(port: number): number {
  const inodes = new Set<string>();
  for (const e of Deno.readDirSync("/proc/self/fd")) {
    try {
      const m = Deno.readLinkSync(`/proc/self/fd/${e.name}`).match(/^socket:\[(\d+)\]$/);
      if (m) inodes.add(m[1]);
    } catch { /* closed meanwhile */ }
  }
  const hex = port.toString(16).toUpperCase().padStart(4, "0");
  let n = 0;
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of Deno.readTextFileSync(file).split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && f[2]?.endsWith(`:${hex}`) && inodes.has(f[9])) n++;
    }
  }
  return n;
}

/** Open file descriptors of this process. */
export const fds = () => [...Deno.readDirSync("/proc/self/fd")].length;
/** Open sockets of this process. */
export const sockets = () =>
  [...Deno.readDirSync("/proc/self/fd")].filter((e) => {
    try {
      return Deno.readLinkSync(`/proc/self/fd/${e.name}`).startsWith("socket:");
    } catch {
      return false;
    }
  }).length;
