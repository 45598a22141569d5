// Counts the process's live timers: wraps setTimeout/setInterval (and their clears) so a bench can see what is left.

/**
 * Replaces the global setTimeout, clearTimeout, setInterval and clearInterval with counting wrappers and returns the
 * set of live timer ids: every timer made from now on is in it until it fires (timeouts) or is cleared.
 */
export function countLiveTimers(): Set<unknown> {
  const liveTimers = new Set<unknown>();
  const st = globalThis.setTimeout, ct = globalThis.clearTimeout, si = globalThis.setInterval;
  const ci = globalThis.clearInterval;
  // deno-lint-ignore no-explicit-any
  const g = globalThis as any;
  g.setTimeout = (fn: (...a: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    const id = st(
      (...a: unknown[]) => {
        liveTimers.delete(id);
        fn(...a);
      },
      ms,
      ...args,
    );
    liveTimers.add(id);
    return id;
  };
  g.clearTimeout = (id?: number) => {
    if (id !== undefined) liveTimers.delete(id);
    ct(id);
  };
  g.setInterval = (fn: (...a: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    const id = si(fn, ms, ...args);
    liveTimers.add(id);
    return id;
  };
  g.clearInterval = (id?: number) => {
    if (id !== undefined) liveTimers.delete(id);
    ci(id);
  };
  return liveTimers;
}
