import assert from "node:assert/strict";
import { FREE_PORT_RANGE, freePort } from "./free_port.ts";

Deno.test("freePort() hands out distinct ports below the ephemeral range that bind on 127.0.0.1 and 0.0.0.0", () => {
  const [lo, hi] = FREE_PORT_RANGE;
  const [ephemeralLo] = Deno.readTextFileSync("/proc/sys/net/ipv4/ip_local_port_range").trim().split(/\s+/).map(Number);
  assert.ok(hi < ephemeralLo, `the range ends at ${hi}, the kernel's ephemeral ports start at ${ephemeralLo}`);
  const ports = Array.from({ length: 200 }, () => freePort());
  assert.equal(new Set(ports).size, ports.length, "no port handed out twice");
  for (const port of ports) assert.ok(port >= lo && port <= hi, `${port} in ${lo}-${hi}`);
  for (const hostname of ["127.0.0.1", "0.0.0.0"]) Deno.listen({ hostname, port: ports[0] }).close();
});

Deno.test("freePort() skips a port something listens on", () => {
  const [lo, hi] = FREE_PORT_RANGE;
  // Hold every port of the range but a handful: freePort() must find one of those, never a held one.
  const held: Deno.Listener[] = [];
  const heldPorts = new Set<number>();
  try {
    for (let port = lo; port <= hi; port++) {
      if (port % 1000 === 7) continue;
      try {
        held.push(Deno.listen({ hostname: "0.0.0.0", port }));
        heldPorts.add(port);
      } catch { /* taken already */ }
    }
    const port = freePort();
    assert.ok(!heldPorts.has(port), `${port} is held`);
    assert.equal(port % 1000, 7);
  } finally {
    for (const l of held) l.close();
  }
});

Deno.test("freePort() never hands out a port another process reserved within 15 minutes", async () => {
  const dir = `${Deno.env.get("TMPDIR") ?? "/tmp"}/operator-hub-ports`;
  const mine = freePort();
  assert.ok(Deno.statSync(`${dir}/${mine}`).isFile, "the port handed out is reserved by a file");
  // Another process, with every other port of the range held, asks for one: it must not get this one.
  const code = `import { FREE_PORT_RANGE, freePort } from ${
    JSON.stringify(new URL("./free_port.ts", import.meta.url).href)
  };
    const held = [];
    for (let port = FREE_PORT_RANGE[0]; port <= FREE_PORT_RANGE[1]; port++) {
      if (port === ${mine}) continue;
      try { held.push(Deno.listen({ hostname: "0.0.0.0", port })); } catch { /* taken already */ }
    }
    try { console.log(freePort()); } catch (err) { console.log(err.message); }`;
  const out = await new Deno.Command(Deno.execPath(), { args: ["eval", code], stdout: "piped", stderr: "inherit" })
    .output();
  assert.ok(out.success);
  assert.match(new TextDecoder().decode(out.stdout), /every port in \d+-\d+ is taken/, `the other process got ${mine}`);
});

Deno.test("freePort() takes over a port whose reservation names a process that has exited", async () => {
  const dir = `${Deno.env.get("TMPDIR") ?? "/tmp"}/operator-hub-ports`;
  const port = freePort();
  const exited = new Deno.Command("true").spawn();
  await exited.status;
  Deno.writeTextFileSync(`${dir}/${port}`, String(exited.pid));
  // Another process, with every other port of the range held, asks for one: the exited process's port is free.
  const code = `import { FREE_PORT_RANGE, freePort } from ${
    JSON.stringify(new URL("./free_port.ts", import.meta.url).href)
  };
    const held = [];
    for (let port = FREE_PORT_RANGE[0]; port <= FREE_PORT_RANGE[1]; port++) {
      if (port === ${port}) continue;
      try { held.push(Deno.listen({ hostname: "0.0.0.0", port })); } catch { /* taken already */ }
    }
    try { console.log(freePort()); } catch (err) { console.log(err.message); }`;
  const out = await new Deno.Command(Deno.execPath(), { args: ["eval", code], stdout: "piped", stderr: "inherit" })
    .output();
  assert.ok(out.success);
  assert.equal(new TextDecoder().decode(out.stdout).trim(), String(port));
  assert.notEqual(Deno.readTextFileSync(`${dir}/${port}`), String(exited.pid), "the reservation names its new holder");
});
