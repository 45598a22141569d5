// Tests of the folder provider on real files in a temporary folder, with a registry of our own that records calls.

import assert from "node:assert/strict";
import { join } from "node:path";
import { waitFor } from "../../../../dev/support/cluster_api.ts";
import { withTempDir } from "../../../../dev/support/local_client.ts";
import { ConfigError, MAX_UNTRUSTED_KUBECONFIG_BYTES } from "../../../kube/mod.ts";
import { Logger, silentLogger } from "../../../util/mod.ts";
import { FolderProvider } from "./folder_provider.ts";
import type { ClusterOffer, ProviderWatch } from "../cluster_offer.ts";
import type { ClusterRegistry } from "../registry.ts";
import { kubeconfigText } from "../../../../dev/support/kubeconfig_text.ts";

/** What the provider told the registry, in order. */
class RecordingRegistry {
  readonly calls: string[] = [];
  readonly offers = new Map<string, ClusterOffer[]>();
  readonly unusables = new Map<string, string>();
  watch: (() => ProviderWatch) | undefined;
  attach(_provider: string, watch: () => ProviderWatch): void {
    this.watch = watch;
  }
  offer(_provider: string, source: string, offers: ClusterOffer[]): void {
    this.calls.push(`offer ${source.split("/").pop()} ${offers.map((o) => o.name).join(",")}`);
    this.offers.set(source, offers);
  }
  withdraw(_provider: string, source: string): void {
    this.calls.push(`withdraw ${source.split("/").pop()}`);
    this.offers.delete(source);
  }
  unusable(_provider: string, source: string, error: string | undefined): void {
    if (error) this.unusables.set(source, error);
    else this.unusables.delete(source);
  }
}

function kubeconfig(contexts: string[], server = "https://127.0.0.1:6443", token = "t0ken"): string {
  return kubeconfigText(contexts.map((name) => ({ name, server, user: { token } })));
}

function provider(dir: string, files?: string[]) {
  const registry = new RecordingRegistry();
  const p = new FolderProvider({
    registry: registry as unknown as ClusterRegistry,
    dir,
    files,
    debounceMs: 20,
    resyncMs: 200,
    logger: silentLogger(),
  });
  return { p, registry };
}

Deno.test("FolderProvider offers every context of each *.yaml file, skipping dot files, other names and subfolders", () =>
  withTempDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "a.yaml"), kubeconfig(["one", "two"]));
    await Deno.writeTextFile(join(dir, ".hidden.yaml"), kubeconfig(["hidden"]));
    await Deno.writeTextFile(join(dir, "notes.txt"), kubeconfig(["txt"]));
    await Deno.mkdir(join(dir, "sub.yaml"));
    await Deno.writeTextFile(join(dir, "sub.yaml", "deep.yaml"), kubeconfig(["deep"]));
    const { p, registry } = provider(dir);
    assert.equal(registry.watch?.().synced, false, "not synced before its first scan");
    await p.scan({ strict: true });
    assert.deepEqual(registry.calls, ["offer a.yaml one,two"]);
    assert.deepEqual(p.files(), [join(dir, "a.yaml")]);
    const [one] = registry.offers.get(join(dir, "a.yaml"))!;
    assert.equal(one.access?.server, "https://127.0.0.1:6443");
    assert.deepEqual(registry.watch?.(), { state: "watching", synced: true, watches: [dir], lastError: null });
  }));

Deno.test("FolderProvider re-offers only a file whose bytes changed, and withdraws a file removed", () =>
  withTempDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "a.yaml"), kubeconfig(["one"]));
    await Deno.writeTextFile(join(dir, "b.yaml"), kubeconfig(["two"]));
    const { p, registry } = provider(dir);
    await p.scan();
    await Deno.writeTextFile(join(dir, "a.yaml"), kubeconfig(["one"], undefined, "new-token"));
    await Deno.remove(join(dir, "b.yaml"));
    await p.scan();
    assert.deepEqual(registry.calls, ["offer a.yaml one", "offer b.yaml two", "offer a.yaml one", "withdraw b.yaml"]);
  }));

Deno.test("FolderProvider keeps a file's last good offers while it does not parse, and clears the error once it does again", () =>
  withTempDir(async (dir) => {
    const path = join(dir, "a.yaml");
    await Deno.writeTextFile(path, kubeconfig(["one"]));
    const { p, registry } = provider(dir);
    await p.scan();
    await Deno.writeTextFile(path, "clusters: [\n");
    await p.scan();
    assert.deepEqual(registry.calls, ["offer a.yaml one"], "no withdraw for a file mid-write");
    assert.match(registry.unusables.get(path) ?? "", /still serving what it registered before \(one\)/);
    await Deno.writeTextFile(path, kubeconfig(["one"]));
    await p.scan();
    assert.equal(registry.unusables.has(path), false, "the error clears once the file parses again");
  }));

Deno.test("FolderProvider.scan({ strict }) throws a ConfigError for a missing --kubeconfig file or an invalid one", () =>
  withTempDir(async (dir) => {
    const missing = join(dir, "missing.yaml");
    await assert.rejects(
      provider(join(dir, "none"), [missing]).p.scan({ strict: true }),
      (err: Error) => err instanceof ConfigError && err.message.includes(missing) && /not found/.test(err.message),
    );
    await Deno.writeTextFile(join(dir, "bad.yaml"), "clusters: [\n");
    await assert.rejects(provider(dir).p.scan({ strict: true }), ConfigError);
    const lenient = provider(dir);
    await lenient.p.scan();
    assert.deepEqual(lenient.registry.calls, [], "outside start-up a bad file is only reported");
    assert.ok(lenient.registry.unusables.has(join(dir, "bad.yaml")));
  }));

Deno.test("FolderProvider.start picks up a file added and a file removed while it watches, and settles on abort", () =>
  withTempDir(async (dir) => {
    const { p, registry } = provider(dir);
    await p.scan();
    const ac = new AbortController();
    const running = p.start(ac.signal);
    try {
      await Deno.writeTextFile(join(dir, "new.yaml"), kubeconfig(["fresh"]));
      await waitFor(() => registry.calls.includes("offer new.yaml fresh"), "the new file offered", 30_000, 20);
      await Deno.remove(join(dir, "new.yaml"));
      await waitFor(() => registry.calls.includes("withdraw new.yaml"), "the file withdrawn", 30_000, 20);
    } finally {
      ac.abort();
      await running;
    }
  }));

Deno.test("FolderProvider reports a folder that cannot be listed as unreachable, and one that does not exist as fine", () =>
  withTempDir(async (dir) => {
    const notAFolder = join(dir, "file");
    await Deno.writeTextFile(notAFolder, "x");
    const broken = provider(notAFolder);
    await broken.p.scan();
    const w = broken.registry.watch?.();
    assert.equal(w?.state, "unreachable");
    assert.match(w?.lastError ?? "", /cannot list --cluster-dir/);
    await assert.rejects(provider(notAFolder).p.scan({ strict: true }), ConfigError);
    const absent = provider(join(dir, "later"));
    await absent.p.scan({ strict: true });
    assert.equal(absent.registry.watch?.().state, "watching");
  }));

Deno.test("FolderProvider parses a dropped file that does not parse only once until its bytes change, and refuses one over the size cap unread", () =>
  withTempDir(async (dir) => {
    const lines: string[] = [];
    const registry = new RecordingRegistry();
    const p = new FolderProvider({
      registry: registry as unknown as ClusterRegistry,
      dir,
      debounceMs: 20,
      resyncMs: 200,
      logger: new Logger({ level: "info", write: (l) => lines.push(l) }),
    });
    const deep = join(dir, "deep.yaml");
    await Deno.writeTextFile(deep, "x: " + "[".repeat(100_000) + "]".repeat(100_000));
    for (let i = 0; i < 3; i++) await p.scan();
    assert.match(registry.unusables.get(deep) ?? "", /nested more than 64 levels deep/);
    const parsed = () => lines.filter((l) => l.includes("kubeconfig file is invalid")).length;
    assert.equal(parsed(), 1, "three scans, one parse of the same bytes");
    await Deno.writeTextFile(deep, "x: " + "{".repeat(100_000));
    await p.scan();
    assert.equal(parsed(), 2, "new bytes are parsed again");
    await Deno.writeTextFile(deep, kubeconfig(["fixed"]));
    await p.scan();
    assert.equal(registry.unusables.has(deep), false);
    assert.deepEqual(registry.calls, ["offer deep.yaml fixed"]);
    const big = join(dir, "big.yaml");
    await Deno.writeTextFile(big, kubeconfig(["big"]) + `# ${"x".repeat(MAX_UNTRUSTED_KUBECONFIG_BYTES)}\n`);
    await p.scan();
    assert.match(
      registry.unusables.get(big) ?? "",
      /big.yaml: \d+ bytes, larger than 262144 bytes, the limit for an untrusted kubeconfig$/,
    );
    assert.equal(registry.offers.has(big), false);
  }));
