import assert from "node:assert/strict";
import { pidRunning } from "../process.ts";

/** A child Deno process that starts a watchdog for a folder and a process, prints both, and then dies unannounced. */
const CHILD = `
import { startWatchdog } from "${new URL("./_env_watchdog.ts", import.meta.url)}";
import { spawnDetached } from "${new URL("../process.ts", import.meta.url)}";
const dir = await Deno.makeTempDir({ prefix: "operator-hub-testenv-" });
const watchdog = await startWatchdog(dir);
// A long sleeper whose command line names the environment, as the apiservers' do (their --cert-dir).
const pid = await spawnDetached("/bin/sh", ["-c", "sleep 300", dir], "/dev/null");
await watchdog.track([pid]);
console.log(JSON.stringify({ dir, pid }));
Deno.exit(Deno.args[0] === "dispose" ? (await watchdog.cleanUp(), 0) : 0);
`;

async function runChild(mode: "die" | "dispose"): Promise<{ dir: string; pid: number }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--no-config", CHILD, mode],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  assert.ok(out.success);
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

async function gone(check: () => boolean, ms = 5_000): Promise<boolean> {
  const deadline = performance.now() + ms;
  while (!check()) {
    if (performance.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
}

const exists = (path: string) => {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
};

Deno.test("when the test process dies without disposing, the watchdog kills the environment's processes and removes its folder", async () => {
  const { dir, pid } = await runChild("die");
  try {
    assert.ok(await gone(() => !pidRunning(pid)), `pid ${pid} still runs`);
    assert.ok(await gone(() => !exists(dir)), `${dir} still exists`);
  } finally {
    if (pidRunning(pid)) Deno.kill(pid, "SIGKILL");
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});

Deno.test("after a normal dispose the watchdog leaves a process it was given alone (the folder is gone, its job is done)", async () => {
  const { dir, pid } = await runChild("dispose");
  try {
    assert.equal(exists(dir), false);
    await new Promise((r) => setTimeout(r, 1_500));
    assert.equal(pidRunning(pid), true, "a disposed environment's watchdog killed nothing");
  } finally {
    if (pidRunning(pid)) Deno.kill(pid, "SIGKILL");
  }
});
