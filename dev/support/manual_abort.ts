// Test support: a cancellation handle (Abortable) that a test aborts by hand, for the unit tests of the HTTP/1.1 code.

/**
 * A cancellation handle of the HTTP/1.1 code's Abortable shape (`onAbort`, `aborted`; matched structurally, since
 * that interface is private to src/kube/wire/) that runs its hooks once, when the test calls `abort`; later aborts change nothing. */
export class TestAbort {
  aborted: unknown = undefined;
  #hooks: (() => void)[] = [];

  onAbort(fn: () => void): void {
    if (this.aborted === undefined) this.#hooks.push(fn);
  }

  abort(reason: unknown = new Error("aborted by the test")): void {
    if (this.aborted !== undefined) return;
    this.aborted = reason;
    for (const fn of this.#hooks.splice(0)) fn();
  }
}
