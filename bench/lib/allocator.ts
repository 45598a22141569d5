// The bench's malloc: glibc's, or the image's (the Dockerfile's LD_PRELOAD, with this machine's copy of the same pinned
// Debian package), by re-running this very command with it preloaded; and what that malloc holds, through FFI.

import { hostLibrary, imageAllocator, mappedJemalloc } from "../../dev/support/image_allocator.ts";

/** What the bench ran with, as its JSON reports it. */
export interface AllocatorInfo {
  /** `image` (as the Dockerfile runs the binary) or `glibc` (no LD_PRELOAD). */
  choice: "image" | "glibc";
  /** The malloc this process actually has (read from /proc/self/maps, not from what was asked). */
  malloc: "jemalloc" | "glibc";
  /** The image's LD_PRELOAD and package, and the library preloaded here (the same package's file). */
  image_ld_preload?: string;
  package?: string;
  ld_preload?: string;
  /** MALLOC_CONF the image sets (null: none) and the one this run had; they differ only when the caller set one. */
  image_malloc_conf?: string | null;
  malloc_conf: string | null;
  /** Whether this run's allocator and its settings are exactly the image's. */
  as_image: boolean;
}

const root = new URL("../..", import.meta.url).pathname;

/**
 * Makes this process run with `choice`'s malloc. For `image` without the library preloaded, re-runs the same command
 * line (`/proc/self/cmdline`) with LD_PRELOAD (and the image's MALLOC_CONF unless the caller set one) and exits with
 * its code: nothing after this call runs in the first process.
 */
export async function useAllocator(choice: string): Promise<AllocatorInfo> {
  if (choice !== "image" && choice !== "glibc") {
    console.error(`--allocator must be image or glibc, not "${choice}"`);
    Deno.exit(2);
  }
  const mapped = mappedJemalloc();
  const conf = Deno.env.get("MALLOC_CONF") ?? null;
  if (choice === "glibc") {
    if (mapped) {
      console.error(`--allocator glibc: this process has ${mapped} preloaded (LD_PRELOAD); run it without`);
      Deno.exit(2);
    }
    return { choice, malloc: "glibc", malloc_conf: conf, as_image: false };
  }
  const image = imageAllocator(Deno.readTextFileSync(`${root}Dockerfile`));
  const host = await hostLibrary(image);
  const imageConf = image.env.MALLOC_CONF ?? null;
  if (mapped !== host.path) {
    const argv = Deno.readTextFileSync("/proc/self/cmdline").split("\0").filter(Boolean);
    const env: Record<string, string> = { LD_PRELOAD: host.path };
    if (imageConf !== null && conf === null) env.MALLOC_CONF = imageConf;
    const child = new Deno.Command(Deno.execPath(), { args: argv.slice(1), env, stdin: "inherit" }).spawn();
    for (const sig of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(sig, () => child.kill(sig));
    Deno.exit((await child.status).code);
  }
  return {
    choice,
    malloc: "jemalloc",
    image_ld_preload: image.path,
    package: `${image.package}=${image.version}`,
    ld_preload: host.path,
    image_malloc_conf: imageConf,
    malloc_conf: conf,
    as_image: conf === imageConf,
  };
}

const mib = (x: number | bigint) => Math.round(Number(x) / 1048576);

/** What malloc holds: bytes in use by the program and resident bytes it keeps free; `release()` gives those back. */
export interface MallocProbe {
  /** MiB: `in_use` handed out; `free` kept by malloc (glibc: free in its arenas; jemalloc: resident − allocated). */
  info(): { malloc_in_use: number; malloc_free: number };
  /** glibc: `malloc_trim(0)`; jemalloc: purge every arena's unused dirty pages. */
  release(): void;
}

/** The probe for this process's malloc (needs --allow-ffi); undefined when FFI is refused. */
export function mallocProbe(info: AllocatorInfo): MallocProbe | undefined {
  try {
    return info.malloc === "jemalloc" ? jemallocProbe(info.ld_preload!) : glibcProbe();
  } catch {
    return undefined;
  }
}

function glibcProbe(): MallocProbe {
  const lib = Deno.dlopen(
    "libc.so.6",
    {
      mallinfo2: { parameters: [], result: { struct: Array(10).fill("usize") } },
      malloc_trim: { parameters: ["usize"], result: "i32" },
    } as const,
  );
  return {
    info() {
      // mallinfo2 sums every arena: arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks, uordblks, fordblks, keepcost
      const v = new BigUint64Array((lib.symbols.mallinfo2() as Uint8Array).buffer);
      return { malloc_in_use: mib(v[7]), malloc_free: mib(v[8]) };
    },
    release: () => void lib.symbols.malloc_trim(0n),
  };
}

function jemallocProbe(path: string): MallocProbe {
  // The library is already mapped (LD_PRELOAD): dlopen returns the same one.
  const lib = Deno.dlopen(
    path,
    {
      mallctl: { parameters: ["buffer", "buffer", "buffer", "buffer", "usize"], result: "i32" },
    } as const,
  );
  const name = (s: string) => new TextEncoder().encode(`${s}\0`);
  const ctl = (key: string, newValue?: BigUint64Array) => {
    const old = new BigUint64Array(1);
    const len = new BigUint64Array([8n]);
    const rc = newValue
      ? lib.symbols.mallctl(name(key), null, null, newValue, 8n)
      : lib.symbols.mallctl(name(key), old, len, null, 0n);
    if (rc !== 0) throw new Error(`mallctl("${key}") failed with ${rc}`);
    return old[0];
  };
  return {
    info() {
      ctl("epoch", new BigUint64Array([1n])); // refreshes the stats
      const allocated = ctl("stats.allocated");
      const resident = ctl("stats.resident");
      return { malloc_in_use: mib(allocated), malloc_free: mib(resident - allocated) };
    },
    // MALLCTL_ARENAS_ALL (4096): every arena.
    release: () => void lib.symbols.mallctl(name("arena.4096.purge"), null, null, null, 0n),
  };
}
