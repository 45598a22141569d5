// The structure drawing of src/ in numbers: rooms, floors, arrows running back up, import circles, files per folder,
// the largest file. `deno task structure [--root DIR] [--json]`.
//
// How imports are read: each non-test .ts file of src/ is tokenised (import_specifiers.ts) and its relative
// specifiers resolved against its own path: static `import ... from`, `import type`, side-effect `import "x"`,
// `export ... from` and dynamic `import("x")` with a string literal. This was chosen over `deno info --json` because
// it needs no entry points (a file nothing imports still counts), sees type-only imports the same way as code
// imports, runs on any checkout (`--root`, e.g. a worktree of an older commit) in well under a second, and needs only
// --allow-read. npm:, node: and URL specifiers are not edges; `_test.ts` files are left out (tests stay beside their
// modules and may import anything).

import { floors, type Graph, stronglyConnected } from "./graph.ts";
import { importSpecifiers } from "./import_specifiers.ts";

/** Folders with more non-test files than this are marked as crowded. */
export const CROWDED = 15;

/** One folder of src/ and its non-test .ts files directly inside it. */
export interface FolderCount {
  folder: string;
  files: number;
  crowded: boolean;
}

/** The numbers of the structure drawing of one checkout's src/. */
export interface Structure {
  root: string;
  /** Non-test .ts files under src/, and their lines. */
  files: number;
  lines: number;
  /** Top-level folders of src/ (files directly in src/ form the room "."). */
  rooms: string[];
  /** Room → floor (0: imports no other room). */
  floors: Record<string, number>;
  floorCount: number;
  /** Room-level imports `from → to` that run against the layering (both ends in one room-level cycle). */
  arrowsBackUp: { from: string; to: string; imports: number }[];
  /** Import circles between files: strongly connected components of more than one file, each sorted. */
  circles: string[][];
  /** Every folder under src/ (src itself included), sorted by path. */
  folders: FolderCount[];
  largest: { file: string; lines: number };
  /** Non-test files of src/ that import a module outside src/ (dev/, tests/, ...): `file → specifier`. */
  leavingSrc: { file: string; target: string }[];
  /** Non-test files of src/ with a "Guarantees" doc comment. */
  withGuarantees: number;
}

const isTest = (path: string) => path.endsWith("_test.ts");

/** Repo-relative paths of the .ts files under `dir` (relative to `root`), sorted. */
function listTs(root: string, dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const e of Deno.readDirSync(`${root}/${rel}`)) {
      const p = `${rel}/${e.name}`;
      if (e.isDirectory) walk(p);
      else if (e.isFile && e.name.endsWith(".ts") && !e.name.endsWith(".d.ts")) out.push(p);
    }
  };
  walk(dir);
  return out.sort();
}

/** `spec` resolved against the file `from` (both repo-relative); undefined for a non-relative specifier. */
export function resolveRelative(from: string, spec: string): string | undefined {
  if (!spec.startsWith("./") && !spec.startsWith("../")) return undefined;
  const parts = from.split("/").slice(0, -1);
  for (const seg of spec.split("/")) {
    if (seg === "." || seg === "") continue;
    if (seg === "..") parts.pop();
    else parts.push(seg);
  }
  return parts.join("/");
}

/** The room of a src/ file: its top-level folder under src/, or "." for a file directly in src/. */
export function roomOf(path: string): string {
  const parts = path.split("/");
  return parts.length > 2 ? parts[1] : ".";
}

/** Measures the structure of `sources` (repo-relative path → text; only src/ files are counted). */
export function measure(root: string, sources: Map<string, string>): Structure {
  const files = [...sources.keys()].filter((p) => p.startsWith("src/") && p.endsWith(".ts") && !isTest(p)).sort();
  const fileSet = new Set(files);
  const fileGraph: Graph = new Map();
  const roomEdges = new Map<string, Map<string, number>>();
  const leavingSrc: { file: string; target: string }[] = [];
  let lines = 0;
  let largest = { file: "", lines: 0 };
  let withGuarantees = 0;
  const rooms = new Set<string>();
  for (const file of files) {
    const text = sources.get(file)!;
    const n = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
    lines += n;
    if (n > largest.lines) largest = { file, lines: n };
    if (/\bGuarantees\b/.test(text)) withGuarantees++;
    const room = roomOf(file);
    rooms.add(room);
    const succ = new Set<string>();
    fileGraph.set(file, succ);
    for (const { specifier } of importSpecifiers(text)) {
      const target = resolveRelative(file, specifier);
      if (target === undefined) continue;
      if (!target.startsWith("src/")) {
        leavingSrc.push({ file, target });
        continue;
      }
      if (!fileSet.has(target)) continue; // a test file, or a file that is not there (deno check reports it)
      succ.add(target);
      const to = roomOf(target);
      if (to === room) continue;
      const m = roomEdges.get(room) ?? new Map<string, number>();
      m.set(to, (m.get(to) ?? 0) + 1);
      roomEdges.set(room, m);
    }
  }
  const roomGraph: Graph = new Map([...rooms].map((r) => [r, new Set(roomEdges.get(r)?.keys() ?? [])]));
  const layering = floors(roomGraph);
  const circles = stronglyConnected(fileGraph).filter((c) => c.length > 1)
    .sort((a, b) => a[0].localeCompare(b[0]));
  const perFolder = new Map<string, number>();
  for (const file of files) {
    const parts = file.split("/");
    for (let k = 1; k < parts.length; k++) {
      const folder = parts.slice(0, k).join("/");
      if (!perFolder.has(folder)) perFolder.set(folder, 0);
    }
    const folder = parts.slice(0, -1).join("/");
    perFolder.set(folder, perFolder.get(folder)! + 1);
  }
  const folders = [...perFolder].sort((a, b) => a[0].localeCompare(b[0]))
    .map(([folder, count]) => ({ folder, files: count, crowded: count > CROWDED }));
  return {
    root,
    files: files.length,
    lines,
    rooms: [...rooms].sort(),
    floors: Object.fromEntries([...layering.floor].sort((a, b) => a[0].localeCompare(b[0]))),
    floorCount: layering.count,
    arrowsBackUp: layering.backEdges.map(([from, to]) => ({ from, to, imports: roomEdges.get(from)!.get(to)! })),
    circles,
    folders,
    largest,
    leavingSrc,
    withGuarantees,
  };
}

/** Reads every .ts file under `root`/src and measures it. */
export function measureTree(root: string): Structure {
  const sources = new Map<string, string>();
  for (const p of listTs(root, "src")) sources.set(p, Deno.readTextFileSync(`${root}/${p}`));
  return measure(root, sources);
}

/** The drawing as text, one figure per paragraph. */
export function formatText(s: Structure): string {
  const out: string[] = [];
  out.push(`structure of ${s.root}/src: ${s.files} files (non-test .ts), ${s.lines} lines`);
  const byFloor = new Map<number, string[]>();
  for (const [room, f] of Object.entries(s.floors)) byFloor.set(f, [...(byFloor.get(f) ?? []), room]);
  out.push(`rooms: ${s.rooms.length} on ${s.floorCount} floors`);
  for (const f of [...byFloor.keys()].sort((a, b) => b - a)) out.push(`  floor ${f}: ${byFloor.get(f)!.join(", ")}`);
  out.push(`arrows running back up: ${s.arrowsBackUp.length}`);
  for (const a of s.arrowsBackUp) out.push(`  ${a.from} -> ${a.to} (${a.imports} imports)`);
  out.push(`import circles (files): ${s.circles.length}`);
  for (const c of s.circles) out.push(`  ${c.join(" <-> ")}`);
  const crowded = s.folders.filter((f) => f.crowded);
  out.push(`files per folder (* over ${CROWDED}): ${s.folders.length} folders, ${crowded.length} over ${CROWDED}`);
  for (const f of s.folders) out.push(`  ${String(f.files).padStart(4)} ${f.folder}${f.crowded ? " *" : ""}`);
  out.push(`largest file: ${s.largest.file} (${s.largest.lines} lines)`);
  out.push(`imports leaving src/ (non-test files): ${s.leavingSrc.length}`);
  for (const l of s.leavingSrc) out.push(`  ${l.file} -> ${l.target}`);
  out.push(`files with a Guarantees comment: ${s.withGuarantees} of ${s.files}`);
  return out.join("\n");
}

/** Command-line options: `--root DIR` (default: the current directory), `--json`. */
export function parseArgs(args: string[]): { root: string; json: boolean } {
  let root = ".";
  let json = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--json") json = true;
    else if (a === "--root" && i + 1 < args.length) root = args[++i];
    else if (a.startsWith("--root=")) root = a.slice("--root=".length);
    else throw new Error(`structure: cannot read the argument ${JSON.stringify(a)}: expected --root DIR or --json`);
  }
  return { root: root.replace(/\/+$/, "") || "/", json };
}

if (import.meta.main) {
  try {
    const { root, json } = parseArgs(Deno.args);
    const s = measureTree(root);
    console.log(json ? JSON.stringify(s, null, 2) : formatText(s));
  } catch (e) {
    console.error(e instanceof Error ? e.message : String(e));
    Deno.exit(2);
  }
}
