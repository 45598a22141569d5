// Private to src/testing: the leak guard of a test environment. A detached shell polls the test process once a
// second; when the process is gone and the environment's folder is still there (it was never disposed: SIGKILL,
// Deno.exit, a crash), it kills the environment's processes and removes its files.
//
// Guarantees: it kills only pids it was given whose command line still names an operator-hub-testenv folder (a pid
// reused by another program is left alone); a normal dispose removes the folder and
// then stops it.

import { spawnDetached, stopPid } from "../process.ts";

/** The leak guard of one environment. */
export interface Watchdog {
  /** Adds processes to kill and folders to remove if the test process dies without disposing. */
  track(pids: readonly number[], dirs?: readonly string[]): Promise<void>;
  /** A normal dispose: removes the environment's folder and the extra folders (the watchdog then exits). */
  cleanUp(): Promise<void>;
}

const SCRIPT = `
owner="$1"; dir="$2"
while kill -0 "$owner" 2>/dev/null && [ -d "$dir" ]; do sleep 1; done
[ -d "$dir" ] || exit 0
for pid in $(cat "$dir/.watchdog-pids" 2>/dev/null); do
  if tr '\\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q operator-hub-testenv-; then kill -9 "$pid"; fi
done
while IFS= read -r extra; do case "$extra" in */operator-hub-testenv-*) rm -rf "$extra";; esac; done \\
  < "$dir/.watchdog-dirs"
rm -rf "$dir"
`;

/** Starts the leak guard of the environment in `dir` (a folder named operator-hub-testenv-…). */
export async function startWatchdog(dir: string): Promise<Watchdog> {
  const pids: number[] = [];
  const dirs: string[] = [];
  await Deno.writeTextFile(`${dir}/.watchdog-dirs`, "");
  const watchdog = await spawnDetached("/bin/sh", [
    "-c",
    SCRIPT,
    "operator-hub-testenv-watchdog",
    String(Deno.pid),
    dir,
  ], "/dev/null");
  return {
    async track(more, moreDirs = []) {
      pids.push(...more);
      dirs.push(...moreDirs);
      await Deno.writeTextFile(`${dir}/.watchdog-pids`, pids.join("\n") + "\n");
      await Deno.writeTextFile(`${dir}/.watchdog-dirs`, dirs.join("\n") + (dirs.length ? "\n" : ""));
    },
    async cleanUp() {
      for (const extra of dirs) await Deno.remove(extra, { recursive: true }).catch(() => {});
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      await stopPid(watchdog, { signal: "SIGKILL" }).catch(() => {});
    },
  };
}
