// Process helpers for local control planes (the test kit's clusters and dev/clusters): detached spawn with a log file,
// liveness by pid, what binary and flags a running process has, graceful stop, port checks.
//
// Guarantees:
// - A spawned control-plane process runs in its own session (setsid) with stdin closed and stdout/stderr appended to
//   its log file; its parent is a short-lived shell, so it outlives the Deno process that started it and holds no
//   Deno resource (test sanitizers stay quiet).
// - A pid counts as alive only while /proc shows a non-zombie process whose argv[0] is the expected binary and whose
//   arguments contain the expected marker, so a recycled pid is never mistaken for (or killed as) our process.

/** A control-plane process could not be started or stopped. */
export class ProcessError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ProcessError";
  }
}

/** Starts `binary args...` detached, appending its output to `logFile`; returns its pid. */
export async function spawnDetached(binary: string, args: string[], logFile: string): Promise<number> {
  const script = 'log="$1"; shift; setsid "$@" >>"$log" 2>&1 </dev/null & echo $!';
  const out = await new Deno.Command("/bin/sh", {
    args: ["-c", script, "sh", logFile, binary, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const pid = Number.parseInt(new TextDecoder().decode(out.stdout).trim(), 10);
  if (!out.success || !Number.isInteger(pid) || pid <= 0) {
    throw new ProcessError(
      `could not start ${binary}: the launcher shell exited with code ${out.code}: ${
        new TextDecoder().decode(out.stderr).trim()
      }`,
    );
  }
  // `$!` is known before the child has exec'd setsid and then the binary: wait until /proc shows the binary, so
  // that liveness checks right after this call see the real process.
  const deadline = performance.now() + 5_000;
  while (procArgs(pid)?.[0] !== binary) {
    if (!pidRunning(pid)) {
      throw new ProcessError(`${binary} (pid ${pid}) exited immediately; see its log ${logFile}`);
    }
    if (performance.now() > deadline) {
      throw new ProcessError(`${binary} (pid ${pid}) did not start within 5 s (argv ${procArgs(pid)?.join(" ")})`);
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return pid;
}

/** Process state letter from /proc/<pid>/stat, or null when there is no such process. */
function procState(pid: number): string | null {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  } catch {
    return null;
  }
}

/** The argv of a running process, or null. */
export function procArgs(pid: number): string[] | null {
  try {
    const raw = Deno.readTextFileSync(`/proc/${pid}/cmdline`);
    return raw.split("\0").filter((part) => part.length > 0);
  } catch {
    return null;
  }
}

/**
 * True while `pid` is a live process. A zombie thread-group leader still counts as running while any of its other
 * threads exist, because those threads still hold the process's files and listening sockets.
 */
export function pidRunning(pid: number): boolean {
  const state = procState(pid);
  if (state === null) return false;
  if (state !== "Z" && state !== "X") return true;
  try {
    let threads = 0;
    for (const _ of Deno.readDirSync(`/proc/${pid}/task`)) threads++;
    return threads > 1;
  } catch {
    return false;
  }
}

/** True while `pid` is a live process running `binary` with `marker` among its arguments. */
export function isOurProcess(pid: number | null | undefined, binary: string, marker: string): boolean {
  if (!pid || !pidRunning(pid)) return false;
  const args = procArgs(pid);
  return args !== null && args[0] === binary && args.includes(marker);
}

/** Pids of live processes whose executable is one of `binaries` (for cleanup when the state file is lost). */
export function findProcessesByExe(binaries: string[]): number[] {
  const found: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const pid = Number(entry.name);
    try {
      const exe = Deno.readLinkSync(`/proc/${pid}/exe`).replace(/ \(deleted\)$/, "");
      if (binaries.includes(exe) && pidRunning(pid)) found.push(pid);
    } catch {
      // The process exited or is not ours to inspect.
    }
  }
  return found;
}

function sendSignal(pid: number, signal: Deno.Signal): void {
  try {
    Deno.kill(pid, signal);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return;
    throw new ProcessError(`could not send ${signal} to pid ${pid}`, { cause: error });
  }
}

/** Resolves true once `pid` is gone (or a zombie), false after `timeoutMs`. */
export async function waitExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (pidRunning(pid)) {
    if (performance.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return true;
}

/** Options of {@linkcode stopPid}. */
export interface StopOptions {
  /** First signal; SIGKILL skips the graceful phase. Default SIGTERM. */
  signal?: "SIGTERM" | "SIGKILL";
  /** How long to wait after SIGTERM before SIGKILL. Default 10 s. */
  graceMs?: number;
}

/** Stops `pid`: SIGTERM, then SIGKILL after the grace period. Resolves once the process is gone. */
export async function stopPid(pid: number, options: StopOptions = {}): Promise<void> {
  if (!pidRunning(pid)) return;
  if ((options.signal ?? "SIGTERM") === "SIGTERM") {
    sendSignal(pid, "SIGTERM");
    if (await waitExit(pid, options.graceMs ?? 10_000)) return;
  }
  sendSignal(pid, "SIGKILL");
  if (!(await waitExit(pid, 5_000))) {
    throw new ProcessError(`pid ${pid} is still running 5 s after SIGKILL`);
  }
}

/**
 * Resolves once 127.0.0.1:`port` can be bound; throws a clear error when something still listens there after
 * `timeoutMs` (a process that was just killed may need a moment to release it).
 */
export async function waitPortFree(port: number, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let listener: Deno.TcpListener | undefined;
  while (listener === undefined) {
    try {
      listener = Deno.listen({ hostname: "127.0.0.1", port });
    } catch (error) {
      if (!(error instanceof Deno.errors.AddrInUse)) throw error;
      if (performance.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        continue;
      }
      throw new ProcessError(
        `could not start ${what}: port 127.0.0.1:${port} is already in use by another process ` +
          "(another checkout's clusters? run its `deno task clusters:down`, or free the port)",
        { cause: error },
      );
    }
  }
  listener.close();
}

/** The last `lines` lines of a log file, for error messages. */
export async function logTail(path: string, lines = 15): Promise<string> {
  try {
    const text = await Deno.readTextFile(path);
    return text.trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

/** True when the running process still executes the binary file it was started from (not a since-rebuilt one). */
export function runsCurrentBinary(pid: number): boolean {
  try {
    return !Deno.readLinkSync(`/proc/${pid}/exe`).endsWith(" (deleted)");
  } catch {
    return false;
  }
}

/** True when the running process was started with exactly `args` (so a changed flag set forces a restart). */
export function runsWithArgs(pid: number, args: string[]): boolean {
  const running = procArgs(pid);
  return running !== null && JSON.stringify(running.slice(1)) === JSON.stringify(args);
}
