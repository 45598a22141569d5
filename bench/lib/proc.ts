// Linux /proc readings for the benchmark: a process's CPU time and memory, and the machine's CPU use.

const TICKS_PER_SECOND = 100; // getconf CLK_TCK on Linux x86-64 and arm64.

/** User plus system CPU time of `pid` in milliseconds (utime + stime of /proc/<pid>/stat); NaN when gone. */
export function cpuMs(pid: number): number {
  let text: string;
  try {
    text = Deno.readTextFileSync(`/proc/${pid}/stat`);
  } catch {
    return NaN;
  }
  // utime and stime are fields 14 and 15, counted from after the comm field (which may hold spaces).
  return statCpu(text).ms;
}

/** User plus system ticks of one /proc `stat` line, in milliseconds, and its comm (the thread's or process's name). */
export function statCpu(text: string): { name: string; ms: number } {
  // Field 2 (comm) may hold spaces and parentheses: it runs from the first "(" to the last ")".
  const name = text.slice(text.indexOf("(") + 1, text.lastIndexOf(")"));
  const rest = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return { name, ms: (Number(rest[11]) + Number(rest[12])) * 1000 / TICKS_PER_SECOND };
}

/**
 * CPU time of each of `pid`'s threads (/proc/<pid>/task/<tid>/stat), summed by thread name, in milliseconds: for a
 * Deno process, `deno` is the main thread (JavaScript, and the Tokio event loop with its TLS and sockets), `V8
 * DefaultWorke` V8's background threads (concurrent marking, sweeping, compilation), `tokio-runtime-w` blocking work.
 * Empty when the process is gone. Threads that ended between two readings are missing from the later one.
 */
export function cpuMsByThread(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  try {
    for (const e of Deno.readDirSync(`/proc/${pid}/task`)) {
      try {
        const { name, ms } = statCpu(Deno.readTextFileSync(`/proc/${pid}/task/${e.name}/stat`));
        out.set(name, (out.get(name) ?? 0) + ms);
      } catch {
        // The thread ended while listing.
      }
    }
  } catch {
    // The process is gone.
  }
  return out;
}

/** Per thread name, the CPU between two `cpuMsByThread` readings as percent of one core over `ms`; zeros left out. */
export function cpuPctByThread(
  before: Map<string, number>,
  after: Map<string, number>,
  ms: number,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, v] of after) {
    const d = v - (before.get(name) ?? 0);
    if (d > 0) out[name] = Math.round(d / ms * 100 * 1000) / 1000;
  }
  return out;
}

/** Sum of `cpuMs` over several processes, skipping any that are gone. */
export function cpuMsOf(pids: number[]): number {
  let sum = 0;
  for (const pid of pids) {
    const v = cpuMs(pid);
    if (Number.isFinite(v)) sum += v;
  }
  return sum;
}

/** Resident memory of `pid` now and at its peak (VmRSS, VmHWM), in MB (MiB); NaN when gone. */
export function memoryMb(pid: number): { rss: number; peak: number } {
  let text: string;
  try {
    text = Deno.readTextFileSync(`/proc/${pid}/status`);
  } catch {
    return { rss: NaN, peak: NaN };
  }
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, "m").exec(text)?.[1] ?? NaN);
  return { rss: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
}

/** Machine-wide CPU counters from /proc/stat, in milliseconds summed over all cores. */
export function machineCpu(): { busyMs: number; totalMs: number } {
  const line = Deno.readTextFileSync("/proc/stat").split("\n", 1)[0];
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal guest guest_nice; guest time is already in user.
  const idle = f[3] + (f[4] ?? 0);
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busyMs: (total - idle) * 1000 / TICKS_PER_SECOND, totalMs: total * 1000 / TICKS_PER_SECOND };
}

/** A description of the machine for the report. */
export function machine(): Record<string, unknown> {
  const cpuinfo = safeRead("/proc/cpuinfo");
  const model = /^model name\s*:\s*(.*)$/m.exec(cpuinfo)?.[1]?.trim() ?? "unknown";
  const memKb = Number(/^MemTotal:\s+(\d+)/m.exec(safeRead("/proc/meminfo"))?.[1] ?? 0);
  return {
    cpus: navigator.hardwareConcurrency,
    cpu_model: model,
    memory_gb: Math.round(memKb / 1024 / 1024 * 10) / 10,
    kernel: safeRead("/proc/sys/kernel/osrelease").trim(),
    deno: Deno.version.deno,
    v8: Deno.version.v8,
    load_average: Deno.loadavg(),
  };
}

function safeRead(path: string): string {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return "";
  }
}
