import { Client } from "@modelcontextprotocol/client"; import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
const n = process.argv[3] ?? "github";
const mode = process.argv[2];
for (let i = 0; i < 2; i++) {
const t0 = performance.now();
const tr = new StdioClientTransport({ command: process.execPath, args: ["/work/main/tests/fixtures/server.mjs"], env: { ...process.env, FIXTURE_CATALOG: `/tmp/exp/${n}.json` } as Record<string,string>, stderr: "inherit" });
const cl = new Client({ name: "x", version: "1" }, { capabilities: {}, versionNegotiation: mode === "auto" ? { mode: "auto", probe: { timeoutMs: 10000 } } : { mode: "legacy" } });
await cl.connect(tr);
const a = performance.now() - t0;
const c0 = process.cpuUsage();
const r = await cl.listTools();
const b = performance.now() - t0;
const cpu = process.cpuUsage(c0);
const r2 = await cl.listTools();
const d = performance.now() - t0;
console.log(mode, n, r.tools.length, cl.getProtocolEra(), `connect ${a.toFixed(0)} list ${(b-a).toFixed(0)} (client cpu ${((cpu.user+cpu.system)/1000).toFixed(0)}) list2 ${(d-b).toFixed(0)}`);
await cl.close();
}
