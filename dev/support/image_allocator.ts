// The image's malloc, read off the Dockerfile (pinned Debian package, where its library goes, the LD_PRELOAD that loads
// it), and the same package's library on this machine, so tests and benches can run the hub with the image's allocator.
//
// Assumptions: the Dockerfile installs the package with `apt-get install … NAME=VERSION` in a stage of its own, copies
// the library out of Debian's multiarch folder with `cp GLOB DEST` in that stage, and the final stage copies it with
// `COPY --from=STAGE DEST PATH` and loads it with `ENV LD_PRELOAD=PATH`.

/** The allocator stage and the final stage of the Dockerfile, as far as the allocator goes. */
export interface ImageAllocator {
  /** The Debian package, e.g. `libjemalloc2`. */
  package: string;
  /** Its pinned version, e.g. `5.3.0-1`. */
  version: string;
  /** The stage that installs it (`FROM … AS stage`) and that stage's base image. */
  stage: string;
  stageFrom: string;
  /** What the stage's `cp` copies from (a glob over Debian's multiarch folders) and to. */
  sourceGlob: string;
  stagePath: string;
  /** The final stage's `COPY --from=stage SOURCE PATH`, and its `--chmod`. */
  copySource: string;
  path: string;
  chmod: string | undefined;
  /** The final stage's environment (`ENV`), LD_PRELOAD and MALLOC_CONF among it. */
  env: Record<string, string>;
}

/** Error for a Dockerfile that does not say how its allocator gets in, or a machine without the pinned package. */
export class ImageAllocatorError extends Error {
  override name = "ImageAllocatorError";
}

interface Stage {
  from: string;
  name?: string;
  lines: string[];
}

/** The Dockerfile's stages: continuation lines joined, comments dropped. */
export function dockerStages(text: string): Stage[] {
  const lines = text.replace(/\\\n/g, " ").split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("#"));
  const stages: Stage[] = [];
  for (const line of lines) {
    const from = line.match(/^FROM\s+(\S+)(?:\s+AS\s+(\S+))?$/i);
    if (from) stages.push({ from: from[1], name: from[2], lines: [] });
    else stages.at(-1)?.lines.push(line.replace(/\s+/g, " "));
  }
  return stages;
}

/** `ENV A=1 B=2` and `ENV A 1`, in order. */
function envOf(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of stage.lines.filter((l) => /^ENV /.test(l))) {
    const rest = line.slice(4).trim();
    if (!/^\w+=/.test(rest)) {
      const [k, ...v] = rest.split(" ");
      env[k] = v.join(" ");
    } else {
      for (const m of rest.matchAll(/(\w+)=("[^"]*"|\S+)/g)) env[m[1]] = m[2].replace(/^"|"$/g, "");
    }
  }
  return env;
}

/** Reads how the Dockerfile's final stage gets its allocator (see the module's assumptions). */
export function imageAllocator(dockerfile: string): ImageAllocator {
  const stages = dockerStages(dockerfile);
  const final = stages.at(-1);
  if (!final) throw new ImageAllocatorError("the Dockerfile has no FROM");
  const env = envOf(final);
  const preload = env.LD_PRELOAD;
  if (!preload) throw new ImageAllocatorError(`the Dockerfile's final stage (${final.from}) sets no LD_PRELOAD`);
  const copy = final.lines.map((l) => l.match(/^COPY (.*)$/)?.[1].split(" ")).find((w) => w?.at(-1) === preload);
  if (!copy) throw new ImageAllocatorError(`no COPY in the final stage puts a file at LD_PRELOAD=${preload}`);
  const stageName = copy.find((w) => w.startsWith("--from="))?.slice("--from=".length);
  const stage = stages.find((s) => s.name === stageName);
  if (!stage) throw new ImageAllocatorError(`LD_PRELOAD's file is copied from "${stageName}", which is no stage`);
  const copySource = copy.filter((w) => !w.startsWith("--"))[0];
  const run = stage.lines.filter((l) => l.startsWith("RUN ")).join(" && ");
  const pin = run.match(/apt-get install [^&;]*?\b([a-z0-9][a-z0-9.+-]*)=([0-9][^\s&;]*)/);
  if (!pin) {
    throw new ImageAllocatorError(`stage "${stageName}" installs no pinned package (apt-get install NAME=VERSION)`);
  }
  const cp = [...run.matchAll(/\bcp (\S+) (\S+)/g)].find((m) => m[2] === copySource);
  if (!cp) throw new ImageAllocatorError(`stage "${stageName}" has no cp to ${copySource}, the file COPY takes`);
  return {
    package: pin[1],
    version: pin[2],
    stage: stageName!,
    stageFrom: stage.from,
    sourceGlob: cp[1],
    stagePath: cp[2],
    copySource,
    path: preload,
    chmod: copy.find((w) => w.startsWith("--chmod="))?.slice("--chmod=".length),
    env,
  };
}

/** Whether `path` matches a shell glob of `*` (within one path segment) and literal characters. */
export function globMatches(glob: string, path: string): boolean {
  const re = glob.split("*").map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join("[^/]*");
  return new RegExp(`^${re}$`).test(path);
}

async function run(cmd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const out = await new Deno.Command(cmd, { args, stdin: "null" }).output();
    const d = new TextDecoder();
    return { code: out.code, stdout: d.decode(out.stdout), stderr: d.decode(out.stderr) };
  } catch (err) {
    return { code: 127, stdout: "", stderr: String(err) };
  }
}

/**
 * The pinned package's library on this machine: the one file of `dpkg -L PACKAGE` that the Dockerfile's `cp` glob
 * matches, provided the installed version is the pinned one. Throws, naming the `apt-get install` that fixes it.
 */
export async function hostLibrary(image: ImageAllocator): Promise<{ path: string; version: string; files: string[] }> {
  const fix = `apt-get install -y ${image.package}=${image.version}`;
  const q = await run("dpkg-query", ["-W", "-f", "${Status} ${Version}", image.package]);
  const [want, , status, version] = q.stdout.trim().split(" ");
  if (q.code !== 0 || want !== "install" || status !== "installed") {
    throw new ImageAllocatorError(`${image.package} is not installed here (the image pins ${image.version}): ${fix}`);
  }
  if (version !== image.version) {
    throw new ImageAllocatorError(
      `${image.package} ${version} is installed here, the image pins ${image.version}: ${fix}`,
    );
  }
  const files = (await run("dpkg", ["-L", image.package])).stdout.split("\n").filter(Boolean);
  const matches = files.filter((f) => globMatches(image.sourceGlob, f));
  if (matches.length !== 1) {
    throw new ImageAllocatorError(
      `the Dockerfile copies ${image.sourceGlob}, which matches ${matches.length} files of ${image.package} ` +
        `(${files.join(", ")}); want exactly one`,
    );
  }
  return { path: matches[0], version, files };
}

/** The jemalloc library mapped into a process (`/proc/PID/maps`), or undefined for glibc's own malloc. */
export function mappedJemalloc(pid: number | "self" = "self"): string | undefined {
  const maps = Deno.readTextFileSync(`/proc/${pid}/maps`);
  return maps.split("\n").map((l) => l.split(/\s+/)[5]).find((p) => p && /\/libjemalloc\.so[.\d]*$/.test(p));
}
