import { loadContexts } from "./src/kube/mod.ts";
const cat = await loadContexts({ files: ["/tmp/kx/kc.yaml"] });
const [a, b] = cat.select(["a", "b"]);
console.log((await a.auth()).headers);
console.log((await a.auth()).headers);
await new Promise((r) => setTimeout(r, 2500));
console.log((await a.auth()).headers);
try { await b.auth(); } catch (e) { console.log("B ERR", (e as Error).name, (e as Error).message); }
