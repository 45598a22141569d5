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
  // Field 2 (comm) may hold spaces: count fields from the closing parenthesis.
  const rest = text.slice(text.lastIndexOf(")") + 2).split(" ");
  // rest[0] is field 3 (state); utime and stime are fields 14 and 15.
  return (Number(rest[11]) + Number(rest[12])) * 1000 / TICKS_PER_SECOND;
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
